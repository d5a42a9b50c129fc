//! What to do with a database, given the newest migration applied to it and the newest
//! one this binary ships, and the migrations a store embeds.

use std::borrow::Cow;

use nomos_core::ports::store::StoreError;
use sqlx::SqlSafeStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

/// Whether opening a database runs the migrations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Migrate {
    /// Bring the schema up to date.
    Run,
    /// Refuse a database whose schema is missing or behind.
    Refuse,
}

/// What opening a database does about its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaStep {
    /// The schema is current; nothing to do.
    Current,
    /// Run the migrations.
    Migrate,
}

/// Decides what opening does: a schema newer than the binary is always refused, a
/// missing or older one is migrated or refused as `migrate` says.
pub fn schema_step(
    found: Option<i64>,
    known: i64,
    migrate: Migrate,
) -> Result<SchemaStep, StoreError> {
    match found {
        Some(found) if found > known => Err(StoreError::SchemaTooNew { found, known }),
        Some(found) if found == known => Ok(SchemaStep::Current),
        _ if migrate == Migrate::Refuse => Err(StoreError::NotMigrated),
        _ => Ok(SchemaStep::Migrate),
    }
}

/// The health check of an open store: the schema must be exactly the one this binary
/// ships.
pub fn check_schema(found: Option<i64>, known: i64) -> Result<(), StoreError> {
    match found {
        None => Err(StoreError::NotMigrated),
        Some(found) if found > known => Err(StoreError::SchemaTooNew { found, known }),
        Some(found) if found < known => Err(StoreError::NotMigrated),
        Some(_) => Ok(()),
    }
}

/// The migrations of a table a store's build script wrote with
/// `build_support/embed_migrations.rs` (`(version, description, SQL)` rows): the same
/// versions, descriptions and checksums `sqlx::migrate!` embeds, so a database migrated by
/// either is current for the other.
pub fn embedded_migrator(files: &'static [(i64, &'static str, &'static str)]) -> Migrator {
    let migrations = files
        .iter()
        .map(|&(version, description, sql)| {
            Migration::new(
                version,
                Cow::Borrowed(description),
                MigrationType::Simple,
                sql.into_sql_str(),
                sql.starts_with("-- no-transaction"),
            )
        })
        .collect();
    Migrator::with_migrations(migrations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_schema_is_refused_even_when_migrating() {
        assert_eq!(
            schema_step(Some(9), 7, Migrate::Run),
            Err(StoreError::SchemaTooNew { found: 9, known: 7 })
        );
        assert_eq!(
            check_schema(Some(9), 7),
            Err(StoreError::SchemaTooNew { found: 9, known: 7 })
        );
    }

    #[test]
    fn a_missing_or_older_schema_is_migrated_or_refused() {
        assert_eq!(schema_step(None, 7, Migrate::Run), Ok(SchemaStep::Migrate));
        assert_eq!(
            schema_step(Some(6), 7, Migrate::Run),
            Ok(SchemaStep::Migrate)
        );
        assert_eq!(
            schema_step(Some(6), 7, Migrate::Refuse),
            Err(StoreError::NotMigrated)
        );
        assert_eq!(check_schema(None, 7), Err(StoreError::NotMigrated));
        assert_eq!(check_schema(Some(6), 7), Err(StoreError::NotMigrated));
    }

    #[test]
    fn the_current_schema_needs_nothing() {
        assert_eq!(
            schema_step(Some(7), 7, Migrate::Refuse),
            Ok(SchemaStep::Current)
        );
        assert_eq!(check_schema(Some(7), 7), Ok(()));
    }
}
