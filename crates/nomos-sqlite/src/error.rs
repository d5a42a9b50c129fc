//! The one place where `sqlx::Error` becomes a `StoreError`.

use nomos_core::ports::store::StoreError;
use nomos_store_sql::error::constraint_error;

/// Maps a database error into the port's error, naming what was being done.
pub(crate) fn db_error(err: sqlx::Error, context: &str) -> StoreError {
    match &err {
        sqlx::Error::Database(db) => {
            if let Some(mapped) = constraint_error(db.as_ref(), context) {
                return mapped;
            }
            let message = db.message();
            if message.contains("database is locked")
                || message.contains("unable to open")
                || is_full_or_io(db.code().as_deref())
            {
                StoreError::Unavailable(format!("{context}: {message}"))
            } else {
                StoreError::Backend(format!("{context}: {message}"))
            }
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

/// `SQLITE_FULL` (13) and `SQLITE_IOERR` (10, with its extended codes): the disk, not
/// the data, is at fault, and the same write may succeed once the cause is gone (EXEC-9).
fn is_full_or_io(code: Option<&str>) -> bool {
    let Some(code) = code.and_then(|c| c.parse::<i32>().ok()) else {
        return false;
    };
    matches!(code & 0xff, 10 | 13)
}

/// Maps a migration error.
pub(crate) fn migrate_error(err: sqlx::migrate::MigrateError) -> StoreError {
    match err {
        sqlx::migrate::MigrateError::Execute(inner) => db_error(inner, "running migrations"),
        other => StoreError::Backend(format!("running migrations: {other}")),
    }
}
