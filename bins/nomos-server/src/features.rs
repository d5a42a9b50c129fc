//! The optional parts of `nomos-server`, one Cargo feature each, and the refusal of a
//! setting or command that needs a part this binary was built without: it names the
//! setting and the rebuild (`cargo run --release -p nomos-server --features NAME`).
//!
//! The first build has none of them, so it compiles no PostgreSQL driver, MCP SDK, JWT
//! crates or OpenTelemetry exporter.

use std::fmt;

/// An optional part of the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// PostgreSQL as the store (REPLICA-1..3).
    Postgres,
    /// The MCP server: `/mcp` and `nomos-server mcp` (MCP-1).
    Mcp,
    /// OIDC bearer tokens.
    Oidc,
    /// Decisions exported as OTLP log records (AUTHZ-4).
    Otlp,
}

impl Feature {
    /// The Cargo feature's name.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Postgres => "postgres",
            Feature::Mcp => "mcp",
            Feature::Oidc => "oidc",
            Feature::Otlp => "otlp",
        }
    }

    /// What it adds, as the refusal says it.
    fn part(self) -> &'static str {
        match self {
            Feature::Postgres => "PostgreSQL",
            Feature::Mcp => "the MCP server",
            Feature::Oidc => "OIDC",
            Feature::Otlp => "the OTLP log export",
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which optional parts a binary has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Built {
    postgres: bool,
    mcp: bool,
    oidc: bool,
    otlp: bool,
}

impl Built {
    /// This binary's parts.
    pub const THIS: Built = Built {
        postgres: cfg!(feature = "postgres"),
        mcp: cfg!(feature = "mcp"),
        oidc: cfg!(feature = "oidc"),
        otlp: cfg!(feature = "otlp"),
    };

    /// A binary with none of them (the first build's).
    #[cfg(test)]
    pub const NONE: Built = Built {
        postgres: false,
        mcp: false,
        oidc: false,
        otlp: false,
    };

    /// A binary with all of them.
    #[cfg(test)]
    pub const ALL: Built = Built {
        postgres: true,
        mcp: true,
        oidc: true,
        otlp: true,
    };

    /// Whether `feature` is built in.
    pub fn has(self, feature: Feature) -> bool {
        match feature {
            Feature::Postgres => self.postgres,
            Feature::Mcp => self.mcp,
            Feature::Oidc => self.oidc,
            Feature::Otlp => self.otlp,
        }
    }

    /// `Ok` when `feature` is built in; else the refusal naming `setting` (a config key,
    /// or the command) and the rebuild.
    pub fn require(self, feature: Feature, setting: &str) -> Result<(), NotBuilt> {
        if self.has(feature) {
            Ok(())
        } else {
            Err(NotBuilt::new(feature, setting))
        }
    }
}

/// A setting asks for a part this binary was built without.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{setting} needs {}, which this nomos-server was built without: rebuild it with the `{feature}` feature (cargo run --release -p nomos-server --features {feature})",
    feature.part()
)]
pub struct NotBuilt {
    /// The config key (`database_url`, `auth.mode`, ...) or the command.
    pub setting: String,
    /// The feature to enable.
    pub feature: Feature,
}

impl NotBuilt {
    /// `setting` needs `feature`.
    pub fn new(feature: Feature, setting: &str) -> NotBuilt {
        NotBuilt {
            setting: setting.to_owned(),
            feature,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_part_names_the_setting_and_the_rebuild() {
        let err = Built::NONE
            .require(Feature::Postgres, "database_url")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "database_url needs PostgreSQL, which this nomos-server was built without: rebuild it with the `postgres` feature (cargo run --release -p nomos-server --features postgres)"
        );
        for feature in [
            Feature::Postgres,
            Feature::Mcp,
            Feature::Oidc,
            Feature::Otlp,
        ] {
            let err = Built::NONE.require(feature, "x").unwrap_err();
            assert!(
                err.to_string()
                    .ends_with(&format!("--features {})", feature.name())),
                "{err}"
            );
        }
    }

    #[test]
    fn this_binary_has_exactly_the_features_it_was_compiled_with() {
        assert_eq!(
            Built::THIS.has(Feature::Postgres),
            cfg!(feature = "postgres")
        );
        assert_eq!(Built::THIS.has(Feature::Mcp), cfg!(feature = "mcp"));
        assert_eq!(Built::THIS.has(Feature::Oidc), cfg!(feature = "oidc"));
        assert_eq!(Built::THIS.has(Feature::Otlp), cfg!(feature = "otlp"));
        assert!(Built::THIS.require(Feature::Mcp, "x").is_ok() == cfg!(feature = "mcp"));
    }
}
