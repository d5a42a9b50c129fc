//! Reading columns back into core values: ids, timestamps (INTEGER milliseconds),
//! spelled enums and JSON, each failure naming the column and the value.

use std::str::FromStr;

use nomos_core::Timestamp;
use nomos_core::ports::store::StoreError;
use serde::de::DeserializeOwned;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

use crate::error::{db_error, json_error};

/// A non-null text column.
pub(crate) fn text(row: &SqliteRow, column: &str) -> Result<String, StoreError> {
    row.try_get::<String, _>(column)
        .map_err(|e| db_error(e, column))
}

/// A nullable text column.
pub(crate) fn opt_text(row: &SqliteRow, column: &str) -> Result<Option<String>, StoreError> {
    row.try_get::<Option<String>, _>(column)
        .map_err(|e| db_error(e, column))
}

/// A non-null integer column.
pub(crate) fn int(row: &SqliteRow, column: &str) -> Result<i64, StoreError> {
    row.try_get::<i64, _>(column)
        .map_err(|e| db_error(e, column))
}

/// A nullable integer column.
pub(crate) fn opt_int(row: &SqliteRow, column: &str) -> Result<Option<i64>, StoreError> {
    row.try_get::<Option<i64>, _>(column)
        .map_err(|e| db_error(e, column))
}

/// A UUID stored as text.
pub(crate) fn uuid(row: &SqliteRow, column: &str) -> Result<Uuid, StoreError> {
    let value = text(row, column)?;
    Uuid::parse_str(&value)
        .map_err(|e| StoreError::Invalid(format!("column {column} holds `{value}`: {e}")))
}

/// A timestamp stored as milliseconds.
pub(crate) fn ts(row: &SqliteRow, column: &str) -> Result<Timestamp, StoreError> {
    int(row, column).map(Timestamp::from_millis)
}

/// A nullable timestamp stored as milliseconds.
pub(crate) fn opt_ts(row: &SqliteRow, column: &str) -> Result<Option<Timestamp>, StoreError> {
    Ok(opt_int(row, column)?.map(Timestamp::from_millis))
}

/// A non-negative integer that fits a `u32`.
pub(crate) fn u32_col(row: &SqliteRow, column: &str) -> Result<u32, StoreError> {
    let value = int(row, column)?;
    u32::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("column {column} holds {value}, not a u32")))
}

/// A nullable non-negative integer that fits a `u32`.
pub(crate) fn opt_u32(row: &SqliteRow, column: &str) -> Result<Option<u32>, StoreError> {
    match opt_int(row, column)? {
        None => Ok(None),
        Some(value) => u32::try_from(value)
            .map(Some)
            .map_err(|_| StoreError::Invalid(format!("column {column} holds {value}, not a u32"))),
    }
}

/// A non-negative integer that fits a `u64`.
pub(crate) fn u64_col(row: &SqliteRow, column: &str) -> Result<u64, StoreError> {
    let value = int(row, column)?;
    u64::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("column {column} holds {value}, not a u64")))
}

/// An enum-like column parsed with `FromStr`.
pub(crate) fn spelled<T>(row: &SqliteRow, column: &str) -> Result<T, StoreError>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    let value = text(row, column)?;
    value
        .parse()
        .map_err(|e: T::Err| StoreError::Invalid(format!("column {column}: {e}")))
}

/// An enum-like column parsed by a `parse` function returning `Option`.
pub(crate) fn parsed<T>(
    row: &SqliteRow,
    column: &str,
    parse: fn(&str) -> Option<T>,
) -> Result<T, StoreError> {
    let value = text(row, column)?;
    parse(&value).ok_or_else(|| {
        StoreError::Invalid(format!("column {column} holds unknown value `{value}`"))
    })
}

/// A JSON column.
pub(crate) fn json<T: DeserializeOwned>(row: &SqliteRow, column: &str) -> Result<T, StoreError> {
    let value = text(row, column)?;
    serde_json::from_str(&value).map_err(|e| json_error(e, &format!("column {column}")))
}

/// A nullable JSON column.
pub(crate) fn opt_json<T: DeserializeOwned>(
    row: &SqliteRow,
    column: &str,
) -> Result<Option<T>, StoreError> {
    match opt_text(row, column)? {
        None => Ok(None),
        Some(value) => serde_json::from_str(&value)
            .map(Some)
            .map_err(|e| json_error(e, &format!("column {column}"))),
    }
}

/// Encodes a value as JSON text.
pub(crate) fn to_json<T: serde::Serialize>(value: &T, what: &str) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| json_error(e, what))
}

/// A `u64` as a SQLite integer.
pub(crate) fn from_u64(value: u64, what: &str) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::Invalid(format!("{what} {value} is too large")))
}

/// An optional timestamp as milliseconds.
pub(crate) fn ms(at: Option<Timestamp>) -> Option<i64> {
    at.map(|t| t.as_millis())
}
