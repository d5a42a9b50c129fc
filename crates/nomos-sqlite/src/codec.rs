//! Columns as SQLite stores them: ids as UUID text, timestamps as INTEGER milliseconds,
//! JSON as text. Reading goes through [`RecordRow`]; each failure names the column.

use nomos_core::Timestamp;
use nomos_core::ports::store::StoreError;
use nomos_store_sql::{JsonColumn, RecordRow, invalid_value, json_error};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

use crate::error::db_error;
use crate::open::SqliteStore;

impl RecordRow<SqliteStore> for SqliteRow {
    fn text(&self, column: &str) -> Result<String, StoreError> {
        self.try_get::<String, _>(column)
            .map_err(|e| db_error(e, column))
    }

    fn opt_text(&self, column: &str) -> Result<Option<String>, StoreError> {
        self.try_get::<Option<String>, _>(column)
            .map_err(|e| db_error(e, column))
    }

    fn int(&self, column: &str) -> Result<i64, StoreError> {
        self.try_get::<i64, _>(column)
            .map_err(|e| db_error(e, column))
    }

    fn opt_int(&self, column: &str) -> Result<Option<i64>, StoreError> {
        self.try_get::<Option<i64>, _>(column)
            .map_err(|e| db_error(e, column))
    }

    fn uuid(&self, column: &str) -> Result<Uuid, StoreError> {
        let value = self.text(column)?;
        Uuid::parse_str(&value).map_err(|e| invalid_value(column, &value, e))
    }

    fn timestamp(&self, column: &str) -> Result<Timestamp, StoreError> {
        self.int(column).map(Timestamp::from_millis)
    }

    fn opt_timestamp(&self, column: &str) -> Result<Option<Timestamp>, StoreError> {
        Ok(self.opt_int(column)?.map(Timestamp::from_millis))
    }

    fn json_column(&self, column: &str) -> Result<JsonColumn, StoreError> {
        self.text(column).map(JsonColumn::Text)
    }

    fn opt_json_column(&self, column: &str) -> Result<Option<JsonColumn>, StoreError> {
        Ok(self.opt_text(column)?.map(JsonColumn::Text))
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
