//! The one place where a SQLite driver's error (`sqlx::Error` for reads and most
//! writes, `rusqlite::Error` for commits) becomes a `StoreError`.

use nomos_core::ports::store::StoreError;
use nomos_store_sql::error::{Constraint, constraint_error, constraint_violation};
use rusqlite::ffi;

/// Maps a database error into the port's error, naming what was being done.
pub(crate) fn db_error(err: sqlx::Error, context: &str) -> StoreError {
    match &err {
        sqlx::Error::Database(db) => {
            if let Some(mapped) = constraint_error(db.as_ref(), context) {
                return mapped;
            }
            let code = db.code().and_then(|c| c.parse::<i32>().ok());
            failure(code, db.message(), context)
        }
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Configuration(_) => StoreError::Unavailable(format!("{context}: {err}")),
        sqlx::Error::ColumnDecode { .. } | sqlx::Error::Decode(_) => {
            StoreError::Invalid(format!("{context}: {err}"))
        }
        _ => StoreError::Backend(format!("{context}: {err}")),
    }
}

/// Maps an error of the commit connection into the port's error, the same way
/// [`db_error`] maps the driver's.
pub(crate) fn sqlite_error(err: rusqlite::Error, context: &str) -> StoreError {
    match &err {
        rusqlite::Error::SqliteFailure(failed, message) => {
            let message = message.clone().unwrap_or_else(|| failed.to_string());
            match constraint_kind(failed.extended_code) {
                Some(kind) => constraint_violation(kind, &message, context),
                None => failure(Some(failed.extended_code), &message, context),
            }
        }
        rusqlite::Error::FromSqlConversionFailure(..)
        | rusqlite::Error::InvalidColumnType(..)
        | rusqlite::Error::IntegralValueOutOfRange(..) => {
            StoreError::Invalid(format!("{context}: {err}"))
        }
        _ => StoreError::Backend(format!("{context}: {err}")),
    }
}

/// The constraint an extended result code names, as the `sqlx` driver reads it.
fn constraint_kind(extended_code: i32) -> Option<Constraint> {
    match extended_code {
        ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
            Some(Constraint::Unique)
        }
        ffi::SQLITE_CONSTRAINT_FOREIGNKEY => Some(Constraint::ForeignKey),
        ffi::SQLITE_CONSTRAINT_CHECK => Some(Constraint::Check),
        ffi::SQLITE_CONSTRAINT_NOTNULL => Some(Constraint::NotNull),
        _ => None,
    }
}

/// A failure that is not a broken constraint: unavailable when the file or the disk is at
/// fault (locked, cannot be opened, full, an I/O error), since the same write may succeed
/// once the cause is gone (EXEC-9); otherwise a backend error.
fn failure(code: Option<i32>, message: &str, context: &str) -> StoreError {
    if message.contains("database is locked")
        || message.contains("unable to open")
        || code.is_some_and(is_full_or_io)
    {
        StoreError::Unavailable(format!("{context}: {message}"))
    } else {
        StoreError::Backend(format!("{context}: {message}"))
    }
}

/// `SQLITE_FULL` (13) and `SQLITE_IOERR` (10, with its extended codes).
fn is_full_or_io(code: i32) -> bool {
    matches!(code & 0xff, ffi::SQLITE_IOERR | ffi::SQLITE_FULL)
}

/// Maps a migration error.
pub(crate) fn migrate_error(err: sqlx::migrate::MigrateError) -> StoreError {
    match err {
        sqlx::migrate::MigrateError::Execute(inner) => db_error(inner, "running migrations"),
        other => StoreError::Backend(format!("running migrations: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(code: i32, message: &str) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(ffi::Error::new(code), Some(message.to_owned()))
    }

    #[test]
    fn a_commit_error_maps_as_the_drivers_would() {
        let unique = sqlite_error(
            failed(
                ffi::SQLITE_CONSTRAINT_PRIMARYKEY,
                "UNIQUE constraint failed: s.id",
            ),
            "session 1",
        );
        assert!(matches!(unique, StoreError::Duplicate { ref what } if what.contains("session 1")));
        let foreign = sqlite_error(failed(ffi::SQLITE_CONSTRAINT_FOREIGNKEY, "FK"), "step");
        assert!(matches!(foreign, StoreError::Invalid(_)), "{foreign:?}");
        let full = sqlite_error(failed(ffi::SQLITE_FULL, "database or disk is full"), "c");
        assert!(matches!(full, StoreError::Unavailable(_)), "{full:?}");
        let io = sqlite_error(failed(ffi::SQLITE_IOERR_WRITE, "disk I/O error"), "c");
        assert!(matches!(io, StoreError::Unavailable(_)), "{io:?}");
        let other = sqlite_error(failed(ffi::SQLITE_ERROR, "no such table: x"), "c");
        assert!(matches!(other, StoreError::Backend(ref m) if m == "c: no such table: x"));
    }
}
