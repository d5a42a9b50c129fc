//! Columns as SQLite stores them: ids as UUID text, timestamps as INTEGER milliseconds,
//! JSON as text. Reading goes through [`RecordRow`]; each failure names the column.

use nomos_core::Timestamp;
use nomos_core::ports::store::StoreError;
use nomos_store_sql::{JsonColumn, invalid_value};
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

use crate::error::db_error;
use crate::open::SqliteStore;

nomos_store_sql::record_row!(SqliteStore, SqliteRow, error = db_error, {
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
});

/// An optional timestamp as milliseconds.
pub(crate) fn ms(at: Option<Timestamp>) -> Option<i64> {
    at.map(|t| t.as_millis())
}
