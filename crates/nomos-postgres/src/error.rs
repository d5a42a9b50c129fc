//! The one place where `sqlx::Error` becomes a `StoreError`.

use nomos_core::ports::store::StoreError;
use nomos_store_sql::error::constraint_error;

/// SQLSTATE of a serialization failure.
const SERIALIZATION_FAILURE: &str = "40001";
/// SQLSTATE of a detected deadlock.
const DEADLOCK_DETECTED: &str = "40P01";
/// SQLSTATE of a query cancelled by `statement_timeout`.
const QUERY_CANCELED: &str = "57014";

/// Maps a database error into the port's error, naming what was being done. The
/// SQLSTATE is kept in backend messages so a transaction can be retried.
pub(crate) fn db_error(err: sqlx::Error, context: &str) -> StoreError {
    match &err {
        sqlx::Error::Database(db) => {
            if let Some(mapped) = constraint_error(db.as_ref(), context) {
                return mapped;
            }
            let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
            match () {
                _ if code == QUERY_CANCELED => StoreError::Unavailable(format!(
                    "{context}: {} (SQLSTATE {code}; statement timeout)",
                    db.message()
                )),
                _ if code.starts_with("08") || code.starts_with("53") || code.starts_with("57") => {
                    StoreError::Unavailable(format!(
                        "{context}: {} (SQLSTATE {code})",
                        db.message()
                    ))
                }
                _ => StoreError::Backend(format!("{context}: {} (SQLSTATE {code})", db.message())),
            }
        }
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Protocol(_)
        | sqlx::Error::Configuration(_) => StoreError::Unavailable(format!("{context}: {err}")),
        sqlx::Error::ColumnDecode { .. } | sqlx::Error::Decode(_) => {
            StoreError::Invalid(format!("{context}: {err}"))
        }
        _ => StoreError::Backend(format!("{context}: {err}")),
    }
}

/// Whether a failed transaction may succeed when run again from the start.
pub(crate) fn is_retryable(err: &StoreError) -> bool {
    match err {
        StoreError::Backend(message) => {
            message.contains(&format!("SQLSTATE {SERIALIZATION_FAILURE}"))
                || message.contains(&format!("SQLSTATE {DEADLOCK_DETECTED}"))
        }
        _ => false,
    }
}

/// Maps a migration error.
pub(crate) fn migrate_error(err: sqlx::migrate::MigrateError) -> StoreError {
    match err {
        sqlx::migrate::MigrateError::Execute(inner) => db_error(inner, "running migrations"),
        other => StoreError::Backend(format!("running migrations: {other}")),
    }
}

/// A URL with its password replaced by `***`, safe to show in errors and logs.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_owned();
    };
    let rest = &url[scheme_end..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_owned();
    };
    let userinfo = &authority[..at];
    match userinfo.split_once(':') {
        Some((user, _password)) => {
            format!("{}{user}:***{}", &url[..scheme_end], &rest[at..])
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted_from_urls() {
        assert_eq!(
            redact_url("postgres://nomos:s3cr@t@db:5432/nomos"),
            "postgres://nomos:***@db:5432/nomos"
        );
        assert_eq!(
            redact_url("postgres://nomos@db/nomos"),
            "postgres://nomos@db/nomos"
        );
        assert_eq!(
            redact_url("postgres://db/nomos?user=x"),
            "postgres://db/nomos?user=x"
        );
        assert_eq!(redact_url("not a url"), "not a url");
    }

    #[test]
    fn only_serialization_failures_and_deadlocks_are_retried() {
        assert!(is_retryable(&StoreError::Backend(
            "x: deadlock detected (SQLSTATE 40P01)".into()
        )));
        assert!(is_retryable(&StoreError::Backend(
            "x: could not serialize (SQLSTATE 40001)".into()
        )));
        assert!(!is_retryable(&StoreError::Backend(
            "x: syntax error (SQLSTATE 42601)".into()
        )));
        assert!(!is_retryable(&StoreError::Duplicate {
            what: "SQLSTATE 40001".into()
        }));
    }
}
