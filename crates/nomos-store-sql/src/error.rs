//! The database errors every backend maps the same way: constraint violations.

use nomos_core::ports::store::StoreError;
use sqlx::error::{DatabaseError, ErrorKind};

/// A constraint violation as the port's error (a taken unique key is a duplicate; a
/// broken foreign key, check or NOT NULL is invalid data), naming what was being done;
/// `None` for any other database error, which the backend maps itself.
pub fn constraint_error(db: &dyn DatabaseError, context: &str) -> Option<StoreError> {
    let kind = match db.kind() {
        ErrorKind::UniqueViolation => Constraint::Unique,
        ErrorKind::ForeignKeyViolation => Constraint::ForeignKey,
        ErrorKind::CheckViolation => Constraint::Check,
        ErrorKind::NotNullViolation => Constraint::NotNull,
        _ => return None,
    };
    Some(constraint_violation(kind, db.message(), context))
}

/// The kind of constraint a write broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constraint {
    /// A unique key or primary key already taken.
    Unique,
    /// A foreign key naming no row.
    ForeignKey,
    /// A `CHECK`.
    Check,
    /// A `NOT NULL`.
    NotNull,
}

/// A broken constraint as the port's error: a taken unique key is a duplicate, any other
/// is invalid data; `message` is the database's own, `context` what was being done.
pub fn constraint_violation(kind: Constraint, message: &str, context: &str) -> StoreError {
    match kind {
        Constraint::Unique => StoreError::Duplicate {
            what: format!("{context} ({message})"),
        },
        Constraint::ForeignKey | Constraint::Check | Constraint::NotNull => {
            StoreError::Invalid(format!("{context}: {message}"))
        }
    }
}
