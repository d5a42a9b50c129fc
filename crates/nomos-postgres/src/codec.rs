//! Reading columns back into core values, each failure naming the column and value.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use nomos_core::Timestamp;
use nomos_core::ports::store::StoreError;
use serde::de::DeserializeOwned;
use sqlx::Row;
use sqlx::postgres::PgRow;
use uuid::Uuid;

use crate::error::{db_error, json_error};

/// A non-null text column.
pub(crate) fn text(row: &PgRow, column: &str) -> Result<String, StoreError> {
    row.try_get::<String, _>(column)
        .map_err(|e| db_error(e, column))
}

/// A nullable text column.
pub(crate) fn opt_text(row: &PgRow, column: &str) -> Result<Option<String>, StoreError> {
    row.try_get::<Option<String>, _>(column)
        .map_err(|e| db_error(e, column))
}

/// A text array column.
pub(crate) fn texts(row: &PgRow, column: &str) -> Result<Vec<String>, StoreError> {
    row.try_get::<Vec<String>, _>(column)
        .map_err(|e| db_error(e, column))
}

/// A non-null bigint column.
pub(crate) fn int(row: &PgRow, column: &str) -> Result<i64, StoreError> {
    row.try_get::<i64, _>(column)
        .map_err(|e| db_error(e, column))
}

/// A uuid column.
pub(crate) fn uuid(row: &PgRow, column: &str) -> Result<Uuid, StoreError> {
    row.try_get::<Uuid, _>(column)
        .map_err(|e| db_error(e, column))
}

/// A timestamptz column.
pub(crate) fn ts(row: &PgRow, column: &str) -> Result<Timestamp, StoreError> {
    row.try_get::<DateTime<Utc>, _>(column)
        .map(Timestamp::from)
        .map_err(|e| db_error(e, column))
}

/// A nullable timestamptz column.
pub(crate) fn opt_ts(row: &PgRow, column: &str) -> Result<Option<Timestamp>, StoreError> {
    row.try_get::<Option<DateTime<Utc>>, _>(column)
        .map(|at| at.map(Timestamp::from))
        .map_err(|e| db_error(e, column))
}

/// A non-negative bigint that fits a `u32`.
pub(crate) fn u32_col(row: &PgRow, column: &str) -> Result<u32, StoreError> {
    let value = int(row, column)?;
    u32::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("column {column} holds {value}, not a u32")))
}

/// A nullable bigint that fits a `u32`.
pub(crate) fn opt_u32(row: &PgRow, column: &str) -> Result<Option<u32>, StoreError> {
    match row
        .try_get::<Option<i64>, _>(column)
        .map_err(|e| db_error(e, column))?
    {
        None => Ok(None),
        Some(value) => u32::try_from(value)
            .map(Some)
            .map_err(|_| StoreError::Invalid(format!("column {column} holds {value}, not a u32"))),
    }
}

/// A non-negative bigint that fits a `u64`.
pub(crate) fn u64_col(row: &PgRow, column: &str) -> Result<u64, StoreError> {
    let value = int(row, column)?;
    u64::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("column {column} holds {value}, not a u64")))
}

/// An enum-like column parsed with `FromStr`.
pub(crate) fn spelled<T>(row: &PgRow, column: &str) -> Result<T, StoreError>
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
    row: &PgRow,
    column: &str,
    parse: fn(&str) -> Option<T>,
) -> Result<T, StoreError> {
    let value = text(row, column)?;
    parse(&value).ok_or_else(|| {
        StoreError::Invalid(format!("column {column} holds unknown value `{value}`"))
    })
}

/// A jsonb column.
pub(crate) fn json<T: DeserializeOwned>(row: &PgRow, column: &str) -> Result<T, StoreError> {
    let value: serde_json::Value = row.try_get(column).map_err(|e| db_error(e, column))?;
    serde_json::from_value(value).map_err(|e| json_error(e, &format!("column {column}")))
}

/// A nullable jsonb column.
pub(crate) fn opt_json<T: DeserializeOwned>(
    row: &PgRow,
    column: &str,
) -> Result<Option<T>, StoreError> {
    let value: Option<serde_json::Value> = row.try_get(column).map_err(|e| db_error(e, column))?;
    value
        .map(|v| serde_json::from_value(v).map_err(|e| json_error(e, &format!("column {column}"))))
        .transpose()
}

/// Encodes a value as a JSON value.
pub(crate) fn to_json<T: serde::Serialize>(
    value: &T,
    what: &str,
) -> Result<serde_json::Value, StoreError> {
    serde_json::to_value(value).map_err(|e| json_error(e, what))
}

/// A `u64` as a bigint.
pub(crate) fn from_u64(value: u64, what: &str) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::Invalid(format!("{what} {value} is too large")))
}

/// A timestamp as a timestamptz.
pub(crate) fn dt(at: Timestamp) -> DateTime<Utc> {
    at.as_datetime()
}

/// An optional timestamp as a timestamptz.
pub(crate) fn opt_dt(at: Option<Timestamp>) -> Option<DateTime<Utc>> {
    at.map(|t| t.as_datetime())
}
