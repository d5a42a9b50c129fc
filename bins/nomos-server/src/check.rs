//! `nomos-server check-config`: validates what start-up would read, without starting.
//!
//! The configuration itself is validated before this runs (a bad one exits 2 naming the
//! key); this checks what the configuration points at: the inventory, the policy file and
//! the model settings, each reported on one line, all of them even when one fails.

use std::path::Path;
use std::process::ExitCode;

use nomos_ssh::Target;

use crate::config::{Config, Database};
use crate::runtime;

/// One line of the report.
enum Verdict {
    Ok(String),
    Bad(String),
}

/// Prints one line per part (`ok    PART  what` or `error PART  what`); exit 0 when all
/// are valid, 2 otherwise.
pub fn check_config(config: &Config, source: Option<&Path>) -> ExitCode {
    let parts = [
        ("configuration", configuration(config, source)),
        ("database", database(config)),
        ("inventory", inventory(config)),
        ("policy", policy(config)),
        ("model", model(config)),
    ];
    let mut bad = 0;
    for (part, verdict) in parts {
        match verdict {
            Verdict::Ok(text) => println!("ok     {part:<14} {text}"),
            Verdict::Bad(text) => {
                bad += 1;
                println!("error  {part:<14} {text}");
            }
        }
    }
    if bad == 0 {
        println!("configuration is valid");
        ExitCode::SUCCESS
    } else {
        eprintln!("nomos-server: {bad} part(s) of the configuration are not valid");
        ExitCode::from(crate::EXIT_CONFIG)
    }
}

fn configuration(config: &Config, source: Option<&Path>) -> Verdict {
    let from = match source {
        Some(path) => path.display().to_string(),
        None => "no file (defaults and NOMOS_* variables)".to_owned(),
    };
    Verdict::Ok(format!("{from}; listen {}", config.listen))
}

fn database(config: &Config) -> Verdict {
    Verdict::Ok(match &config.database {
        Database::SqliteInDataDir => format!(
            "SQLite {} (not opened by this check)",
            config.data_dir.join(nomos_sqlite::DATABASE_FILE).display()
        ),
        Database::Sqlite(url) => format!("SQLite {url} (not opened by this check)"),
        #[cfg(feature = "postgres")]
        Database::Postgres(url) => format!(
            "PostgreSQL {} (not connected by this check)",
            nomos_postgres::redact_url(url)
        ),
        // Validation refuses a PostgreSQL URL without the feature.
        #[cfg(not(feature = "postgres"))]
        Database::Postgres(_) => "PostgreSQL (not built in: the `postgres` feature)".to_owned(),
    })
}

fn inventory(config: &Config) -> Verdict {
    match runtime::load_inventory(config) {
        Ok(inventory) => {
            let ssh = inventory
                .hosts()
                .iter()
                .filter(|host| matches!(host.target, Target::Ssh(_)))
                .count();
            let mut text = format!(
                "{}: {} host(s): {}",
                inventory.origin(),
                inventory.hosts().len(),
                inventory.slugs().join(", ")
            );
            if ssh > 0 && !config.known_hosts.exists() {
                text.push_str(&format!(
                    "; known_hosts {} does not exist yet (`nomos-server hosts check --trust-new` \
                     records the host keys)",
                    config.known_hosts.display()
                ));
            }
            Verdict::Ok(text)
        }
        Err(error) => Verdict::Bad(format!("{error:#}")),
    }
}

fn policy(config: &Config) -> Verdict {
    match &config.policy_file {
        None => Verdict::Ok("none (the built-in classifier rules only)".to_owned()),
        Some(path) => match runtime::load_policy(path) {
            Ok(_) => Verdict::Ok(format!("{} loads and its examples check", path.display())),
            Err(error) => Verdict::Bad(format!("{error:#}")),
        },
    }
}

fn model(config: &Config) -> Verdict {
    match runtime::model(config) {
        Ok((_, true)) => Verdict::Ok("none configured: the scripted demo model answers".into()),
        Ok((model, false)) => Verdict::Ok(format!("{} (not called by this check)", model.name())),
        Err(error) => Verdict::Bad(format!("{error:#}")),
    }
}
