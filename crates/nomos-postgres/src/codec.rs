//! Columns as PostgreSQL stores them: `uuid`, `timestamptz`, `jsonb`, `bigint`, `text[]`.
//! Reading goes through [`RecordRow`]; each failure names the column.

use chrono::{DateTime, Utc};
use nomos_core::Timestamp;
use nomos_core::ports::store::StoreError;
use nomos_store_sql::{JsonColumn, json_error};
use sqlx::Row;
use sqlx::postgres::PgRow;
use uuid::Uuid;

use crate::error::db_error;
use crate::open::PgStore;

nomos_store_sql::record_row!(PgStore, PgRow, error = db_error, {
    fn uuid(&self, column: &str) -> Result<Uuid, StoreError> {
        self.try_get::<Uuid, _>(column)
            .map_err(|e| db_error(e, column))
    }

    fn timestamp(&self, column: &str) -> Result<Timestamp, StoreError> {
        self.try_get::<DateTime<Utc>, _>(column)
            .map(Timestamp::from)
            .map_err(|e| db_error(e, column))
    }

    fn opt_timestamp(&self, column: &str) -> Result<Option<Timestamp>, StoreError> {
        self.try_get::<Option<DateTime<Utc>>, _>(column)
            .map(|at| at.map(Timestamp::from))
            .map_err(|e| db_error(e, column))
    }

    fn json_column(&self, column: &str) -> Result<JsonColumn, StoreError> {
        self.try_get::<serde_json::Value, _>(column)
            .map(JsonColumn::Value)
            .map_err(|e| db_error(e, column))
    }

    fn opt_json_column(&self, column: &str) -> Result<Option<JsonColumn>, StoreError> {
        self.try_get::<Option<serde_json::Value>, _>(column)
            .map(|value| value.map(JsonColumn::Value))
            .map_err(|e| db_error(e, column))
    }
});

/// A text array column.
pub(crate) fn texts(row: &PgRow, column: &str) -> Result<Vec<String>, StoreError> {
    row.try_get::<Vec<String>, _>(column)
        .map_err(|e| db_error(e, column))
}

/// Encodes a value as a JSON value.
pub(crate) fn to_json<T: serde::Serialize>(
    value: &T,
    what: &str,
) -> Result<serde_json::Value, StoreError> {
    serde_json::to_value(value).map_err(|e| json_error(e, what))
}

/// A timestamp as a timestamptz.
pub(crate) fn dt(at: Timestamp) -> DateTime<Utc> {
    at.as_datetime()
}

/// An optional timestamp as a timestamptz.
pub(crate) fn opt_dt(at: Option<Timestamp>) -> Option<DateTime<Utc>> {
    at.map(|t| t.as_datetime())
}
