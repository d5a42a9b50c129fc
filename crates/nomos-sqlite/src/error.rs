//! The one place where `sqlx::Error` becomes a `StoreError`.

use nomos_core::ports::store::StoreError;
use sqlx::error::ErrorKind;

/// Maps a database error into the port's error, naming what was being done.
pub(crate) fn db_error(err: sqlx::Error, context: &str) -> StoreError {
    match &err {
        sqlx::Error::Database(db) => match db.kind() {
            ErrorKind::UniqueViolation => StoreError::Duplicate {
                what: format!("{context} ({})", db.message()),
            },
            ErrorKind::ForeignKeyViolation
            | ErrorKind::CheckViolation
            | ErrorKind::NotNullViolation => {
                StoreError::Invalid(format!("{context}: {}", db.message()))
            }
            _ => {
                let message = db.message();
                if message.contains("database is locked") || message.contains("unable to open") {
                    StoreError::Unavailable(format!("{context}: {message}"))
                } else {
                    StoreError::Backend(format!("{context}: {message}"))
                }
            }
        },
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

/// Maps a migration error.
pub(crate) fn migrate_error(err: sqlx::migrate::MigrateError) -> StoreError {
    match err {
        sqlx::migrate::MigrateError::Execute(inner) => db_error(inner, "running migrations"),
        other => StoreError::Backend(format!("running migrations: {other}")),
    }
}
