//! Choosing and opening the store from a database URL: SQLite by default, Postgres for
//! `postgres://` URLs; a schema that is missing or newer than this binary is refused.

use std::path::Path;
use std::sync::Arc;

use nomos_core::ports::store::{Store, StoreError};
use nomos_postgres::PgStore;
use nomos_sqlite::SqliteStore;
use serde::Serialize;

/// The database the server uses when nothing is configured.
pub const DEFAULT_DATABASE_URL: &str = "./data/nomos.db";

/// Which adapter a URL selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// A SQLite file (a path or a `sqlite:` URL).
    Sqlite,
    /// A PostgreSQL server (`postgres://` or `postgresql://`).
    Postgres,
}

impl Backend {
    /// The adapter for a URL.
    pub fn of(url: &str) -> Backend {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        }
    }
}

/// Whether opening may change the schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaPolicy {
    /// Refuse a database without the current schema (the default).
    Refuse,
    /// Apply the migrations first (`--migrate`).
    Migrate,
}

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// There is no SQLite file at that path (with or without `--migrate`: a mistyped path
    /// must not become a new, empty database).
    #[error("no database at {0}; check --database-url (or NOMOS_DATABASE_URL)")]
    NoDatabase(String),
    /// The database has no Nomos schema, or an older one.
    #[error(
        "the database at {url} does not have the current Nomos schema; pass --migrate to apply the migrations first"
    )]
    NotMigrated {
        /// The database, with any password hidden.
        url: String,
    },
    /// The database is at a migration this binary does not know.
    #[error(
        "the database at {url} is at migration {found}, newer than this tool knows ({known}); use a newer nomos-backfill"
    )]
    SchemaTooNew {
        /// The database, with any password hidden.
        url: String,
        /// Its newest migration.
        found: i64,
        /// The newest this binary ships.
        known: i64,
    },
    /// Any other failure to open.
    #[error("cannot open {url}: {source}")]
    Store {
        /// The database, with any password hidden.
        url: String,
        /// The store's error.
        source: StoreError,
    },
}

impl OpenError {
    /// Whether this is a refusal of the database's schema (exit status 2), as opposed to
    /// a failure to reach it.
    pub fn is_schema_refusal(&self) -> bool {
        matches!(
            self,
            OpenError::NoDatabase(_)
                | OpenError::NotMigrated { .. }
                | OpenError::SchemaTooNew { .. }
        )
    }
}

/// Opens the store a URL names.
pub async fn open_store(url: &str, policy: SchemaPolicy) -> Result<Arc<dyn Store>, OpenError> {
    let shown = nomos_postgres::redact_url(url);
    if Backend::of(url) == Backend::Sqlite
        && let Some(path) = sqlite_path(url)
        && !Path::new(path).exists()
    {
        return Err(OpenError::NoDatabase(path.to_owned()));
    }
    let opened: Result<Arc<dyn Store>, StoreError> = match (Backend::of(url), policy) {
        (Backend::Postgres, SchemaPolicy::Refuse) => PgStore::connect_without_migrating(url)
            .await
            .map(|s| Arc::new(s) as Arc<dyn Store>),
        (Backend::Postgres, SchemaPolicy::Migrate) => PgStore::connect(url)
            .await
            .map(|s| Arc::new(s) as Arc<dyn Store>),
        (Backend::Sqlite, SchemaPolicy::Refuse) => SqliteStore::open_existing(url)
            .await
            .map(|s| Arc::new(s) as Arc<dyn Store>),
        (Backend::Sqlite, SchemaPolicy::Migrate) => SqliteStore::open(url)
            .await
            .map(|s| Arc::new(s) as Arc<dyn Store>),
    };
    opened.map_err(|source| match source {
        StoreError::NotMigrated => OpenError::NotMigrated { url: shown },
        StoreError::SchemaTooNew { found, known } => OpenError::SchemaTooNew {
            url: shown,
            found,
            known,
        },
        source => OpenError::Store { url: shown, source },
    })
}

/// The file path of a SQLite URL, when it names a file (`sqlite::memory:` does not).
fn sqlite_path(url: &str) -> Option<&str> {
    let path = match url.strip_prefix("sqlite://") {
        Some(rest) => rest,
        None => url.strip_prefix("sqlite:").unwrap_or(url),
    };
    let path = path.split('?').next().unwrap_or(path);
    if path.is_empty() || path.starts_with(":memory:") {
        None
    } else {
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_urls_pick_postgres_and_everything_else_sqlite() {
        assert_eq!(Backend::of("postgres://u@h/db"), Backend::Postgres);
        assert_eq!(Backend::of("postgresql://u@h/db"), Backend::Postgres);
        assert_eq!(Backend::of("./data/nomos.db"), Backend::Sqlite);
        assert_eq!(Backend::of("sqlite:///tmp/x.db"), Backend::Sqlite);
    }

    #[test]
    fn sqlite_paths_are_read_from_urls_and_plain_paths() {
        assert_eq!(sqlite_path("./data/nomos.db"), Some("./data/nomos.db"));
        assert_eq!(sqlite_path("sqlite:///tmp/x.db"), Some("/tmp/x.db"));
        assert_eq!(sqlite_path("sqlite:x.db?mode=rw"), Some("x.db"));
        assert_eq!(sqlite_path("sqlite::memory:"), None);
    }
}
