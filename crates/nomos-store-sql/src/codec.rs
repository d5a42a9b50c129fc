//! Conversions both backends make when they bind a value: JSON text and a `u64` as a
//! signed 64-bit integer, each failure naming what it was.

use nomos_core::ports::store::StoreError;

use crate::json_error;

/// Encodes a value as JSON text.
pub fn to_json<T: serde::Serialize>(value: &T, what: &str) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| json_error(e, what))
}

/// A `u64` as a signed 64-bit integer column.
pub fn from_u64(value: u64, what: &str) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::Invalid(format!("{what} {value} is too large")))
}
