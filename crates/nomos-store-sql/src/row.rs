//! Reading one column of a row as a core value, each failure naming the column and value.

use std::fmt::Display;
use std::str::FromStr;

use nomos_core::Timestamp;
use nomos_core::ports::store::StoreError;
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// One row of a query, read column by column.
///
/// A backend implements the required methods for its sqlx row type with its own
/// column encodings (SQLite: uuids as text, timestamps as integer milliseconds, JSON
/// as text; PostgreSQL: `uuid`, `timestamptz`, `jsonb`), mapping a failed read with
/// its own database-error mapping. The provided methods build on them.
///
/// `Backend` is a type of the implementing crate (its store type). It lets that crate
/// implement this trait for the foreign sqlx row type; callers never name it, because
/// each row type has exactly one implementation.
pub trait RecordRow<Backend> {
    /// A non-null text column.
    fn text(&self, column: &str) -> Result<String, StoreError>;

    /// A nullable text column.
    fn opt_text(&self, column: &str) -> Result<Option<String>, StoreError>;

    /// A non-null integer column.
    fn int(&self, column: &str) -> Result<i64, StoreError>;

    /// A nullable integer column.
    fn opt_int(&self, column: &str) -> Result<Option<i64>, StoreError>;

    /// A non-null uuid column.
    fn uuid(&self, column: &str) -> Result<Uuid, StoreError>;

    /// A non-null timestamp column.
    fn timestamp(&self, column: &str) -> Result<Timestamp, StoreError>;

    /// A nullable timestamp column.
    fn opt_timestamp(&self, column: &str) -> Result<Option<Timestamp>, StoreError>;

    /// A non-null JSON column, not yet decoded.
    fn json_column(&self, column: &str) -> Result<JsonColumn, StoreError>;

    /// A nullable JSON column, not yet decoded.
    fn opt_json_column(&self, column: &str) -> Result<Option<JsonColumn>, StoreError>;

    /// A non-negative integer column that fits a `u32`.
    fn u32(&self, column: &str) -> Result<u32, StoreError> {
        let value = self.int(column)?;
        narrow(column, value, "u32")
    }

    /// A nullable non-negative integer column that fits a `u32`.
    fn opt_u32(&self, column: &str) -> Result<Option<u32>, StoreError> {
        match self.opt_int(column)? {
            None => Ok(None),
            Some(value) => narrow(column, value, "u32").map(Some),
        }
    }

    /// A non-negative integer column that fits a `u64`.
    fn u64(&self, column: &str) -> Result<u64, StoreError> {
        let value = self.int(column)?;
        narrow(column, value, "u64")
    }

    /// An enum-like text column parsed with `FromStr`.
    fn spelled<T>(&self, column: &str) -> Result<T, StoreError>
    where
        T: FromStr,
        T::Err: Display,
    {
        let value = self.text(column)?;
        value
            .parse()
            .map_err(|e: T::Err| StoreError::Invalid(format!("column {column}: {e}")))
    }

    /// A nullable enum-like text column parsed with `FromStr`.
    fn opt_spelled<T>(&self, column: &str) -> Result<Option<T>, StoreError>
    where
        T: FromStr,
        T::Err: Display,
    {
        match self.opt_text(column)? {
            None => Ok(None),
            Some(value) => value
                .parse()
                .map(Some)
                .map_err(|e: T::Err| StoreError::Invalid(format!("column {column}: {e}"))),
        }
    }

    /// An enum-like text column parsed by a `parse` function returning `Option`.
    fn parsed<T>(&self, column: &str, parse: fn(&str) -> Option<T>) -> Result<T, StoreError> {
        let value = self.text(column)?;
        parse(&value).ok_or_else(|| {
            StoreError::Invalid(format!("column {column} holds unknown value `{value}`"))
        })
    }

    /// A non-null JSON column decoded into `T`.
    fn json<T: DeserializeOwned>(&self, column: &str) -> Result<T, StoreError> {
        self.json_column(column)?.decode(column)
    }

    /// A nullable JSON column decoded into `T`.
    fn opt_json<T: DeserializeOwned>(&self, column: &str) -> Result<Option<T>, StoreError> {
        self.opt_json_column(column)?
            .map(|value| value.decode(column))
            .transpose()
    }
}

/// Implements [`RecordRow`] for a backend's sqlx row type: the text and integer
/// columns, which every backend decodes the same way, with `error` (its
/// `fn(sqlx::Error, &str) -> StoreError`), and the methods given in braces (uuids,
/// timestamps and JSON, which each backend stores its own way).
#[macro_export]
macro_rules! record_row {
    ($store:ty, $row:ty, error = $error:path, { $($rest:tt)* }) => {
        impl $crate::RecordRow<$store> for $row {
            fn text(&self, column: &str) -> Result<String, ::nomos_core::ports::store::StoreError> {
                ::sqlx::Row::try_get::<String, _>(self, column).map_err(|e| $error(e, column))
            }

            fn opt_text(
                &self,
                column: &str,
            ) -> Result<Option<String>, ::nomos_core::ports::store::StoreError> {
                ::sqlx::Row::try_get::<Option<String>, _>(self, column)
                    .map_err(|e| $error(e, column))
            }

            fn int(&self, column: &str) -> Result<i64, ::nomos_core::ports::store::StoreError> {
                ::sqlx::Row::try_get::<i64, _>(self, column).map_err(|e| $error(e, column))
            }

            fn opt_int(
                &self,
                column: &str,
            ) -> Result<Option<i64>, ::nomos_core::ports::store::StoreError> {
                ::sqlx::Row::try_get::<Option<i64>, _>(self, column)
                    .map_err(|e| $error(e, column))
            }

            $($rest)*
        }
    };
}

/// A JSON column as the backend stores it.
#[derive(Clone, Debug, PartialEq)]
pub enum JsonColumn {
    /// JSON text (SQLite).
    Text(String),
    /// A parsed JSON value (PostgreSQL `jsonb`).
    Value(serde_json::Value),
}

impl JsonColumn {
    /// Decodes the value into `T`; a failure names the column.
    pub fn decode<T: DeserializeOwned>(self, column: &str) -> Result<T, StoreError> {
        match self {
            JsonColumn::Text(text) => serde_json::from_str(&text),
            JsonColumn::Value(value) => serde_json::from_value(value),
        }
        .map_err(|e| json_error(e, &format!("column {column}")))
    }
}

/// A column that holds a value of the wrong shape (a uuid that does not parse, ...).
pub fn invalid_value(column: &str, value: impl Display, reason: impl Display) -> StoreError {
    StoreError::Invalid(format!("column {column} holds `{value}`: {reason}"))
}

/// A JSON value that could not be encoded or decoded, naming what it was.
pub fn json_error(err: serde_json::Error, what: &str) -> StoreError {
    StoreError::Invalid(format!("{what}: {err}"))
}

/// An integer column narrowed to an unsigned type, or an error naming the column.
fn narrow<T: TryFrom<i64>>(column: &str, value: i64, kind: &str) -> Result<T, StoreError> {
    T::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("column {column} holds {value}, not a {kind}")))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use nomos_core::StepStatus;

    use super::*;

    /// A row held in memory: every column is text or NULL, as SQLite would return it.
    struct TextRow(HashMap<&'static str, Option<&'static str>>);

    impl TextRow {
        fn cell(&self, column: &str) -> Result<Option<&'static str>, StoreError> {
            self.0
                .get(column)
                .copied()
                .ok_or_else(|| StoreError::Invalid(format!("no column {column}")))
        }

        fn required(&self, column: &str) -> Result<&'static str, StoreError> {
            self.cell(column)?
                .ok_or_else(|| StoreError::Invalid(format!("column {column} is null")))
        }
    }

    impl RecordRow<()> for TextRow {
        fn text(&self, column: &str) -> Result<String, StoreError> {
            self.required(column).map(str::to_owned)
        }

        fn opt_text(&self, column: &str) -> Result<Option<String>, StoreError> {
            Ok(self.cell(column)?.map(str::to_owned))
        }

        fn int(&self, column: &str) -> Result<i64, StoreError> {
            let value = self.required(column)?;
            value.parse().map_err(|e| invalid_value(column, value, e))
        }

        fn opt_int(&self, column: &str) -> Result<Option<i64>, StoreError> {
            match self.cell(column)? {
                None => Ok(None),
                Some(_) => self.int(column).map(Some),
            }
        }

        fn uuid(&self, column: &str) -> Result<Uuid, StoreError> {
            let value = self.required(column)?;
            Uuid::parse_str(value).map_err(|e| invalid_value(column, value, e))
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

    fn row(cells: &[(&'static str, Option<&'static str>)]) -> TextRow {
        TextRow(cells.iter().copied().collect())
    }

    fn invalid(err: StoreError) -> String {
        match err {
            StoreError::Invalid(message) => message,
            other => panic!("expected invalid data, got {other:?}"),
        }
    }

    #[test]
    fn a_negative_count_is_refused_naming_the_column_and_value() {
        let row = row(&[("seq", Some("-1")), ("n", Some("5000000000"))]);
        assert_eq!(
            invalid(row.u32("seq").unwrap_err()),
            "column seq holds -1, not a u32"
        );
        assert_eq!(
            invalid(row.u32("n").unwrap_err()),
            "column n holds 5000000000, not a u32"
        );
        assert_eq!(
            invalid(row.u64("seq").unwrap_err()),
            "column seq holds -1, not a u64"
        );
        assert_eq!(row.u64("n").unwrap(), 5_000_000_000);
    }

    #[test]
    fn a_null_optional_count_is_none() {
        let row = row(&[("step_seq", None), ("other", Some("3"))]);
        assert_eq!(row.opt_u32("step_seq").unwrap(), None);
        assert_eq!(row.opt_u32("other").unwrap(), Some(3));
    }

    #[test]
    fn an_unknown_spelling_is_refused_naming_the_column() {
        let row = row(&[("status", Some("sideways")), ("done", Some("done"))]);
        let err = invalid(row.spelled::<StepStatus>("status").unwrap_err());
        assert!(err.starts_with("column status: "), "{err}");
        assert_eq!(row.spelled::<StepStatus>("done").unwrap(), StepStatus::Done);
        assert_eq!(
            invalid(row.parsed("status", |_| None::<()>).unwrap_err()),
            "column status holds unknown value `sideways`"
        );
    }

    #[test]
    fn a_bad_uuid_is_refused_naming_the_column_and_value() {
        let row = row(&[("id", Some("not-a-uuid"))]);
        let err = invalid(row.uuid("id").unwrap_err());
        assert!(err.starts_with("column id holds `not-a-uuid`: "), "{err}");
    }

    #[test]
    fn bad_json_is_refused_naming_the_column() {
        let row = row(&[("binding", Some("{")), ("output", None)]);
        let err = invalid(row.json::<serde_json::Value>("binding").unwrap_err());
        assert!(err.starts_with("column binding: "), "{err}");
        assert_eq!(row.opt_json::<serde_json::Value>("output").unwrap(), None);
        let value = JsonColumn::Value(serde_json::json!({"a": 1}));
        assert_eq!(value.decode::<HashMap<String, i64>>("c").unwrap()["a"], 1);
    }
}
