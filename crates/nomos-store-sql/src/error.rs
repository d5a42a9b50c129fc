//! The database errors every backend maps the same way: constraint violations.

use nomos_core::ports::store::StoreError;
use sqlx::error::{DatabaseError, ErrorKind};

/// A constraint violation as the port's error (a taken unique key is a duplicate; a
/// broken foreign key, check or NOT NULL is invalid data), naming what was being done;
/// `None` for any other database error, which the backend maps itself.
pub fn constraint_error(db: &dyn DatabaseError, context: &str) -> Option<StoreError> {
    match db.kind() {
        ErrorKind::UniqueViolation => Some(StoreError::Duplicate {
            what: format!("{context} ({})", db.message()),
        }),
        ErrorKind::ForeignKeyViolation
        | ErrorKind::CheckViolation
        | ErrorKind::NotNullViolation => {
            Some(StoreError::Invalid(format!("{context}: {}", db.message())))
        }
        _ => None,
    }
}
