//! SQLite under the shared store code: its SQL text, how it binds each argument (ids as
//! text, times as integer milliseconds, lists as JSON arrays for `json_each`), and the
//! statements run on the reader pool or on the single writer.

use nomos_core::ports::store::StoreError;
use nomos_store_sql::backend::Arg;
use nomos_store_sql::codec::to_json;
use nomos_store_sql::sql::{ExecutionLists, SessionLists, Sql};
use rusqlite::types::Value;
use sqlx::Sqlite;
use sqlx::sqlite::{SqliteArguments, SqliteRow};

use crate::error::{db_error, migrate_error};
use crate::open::{MIGRATOR, SqliteStore};

pub(crate) type SqliteQuery = sqlx::query::Query<'static, Sqlite, SqliteArguments>;

/// The session list's filters in one order; `?6, ?7` is the newest-first cursor.
macro_rules! list_sessions_sql {
    ($order:literal) => {
        concat!(
            "SELECT * FROM sessions
             WHERE (?1 IS NULL OR status IN (SELECT value FROM json_each(?1)))
               AND (?2 IS NULL OR last_activity_at < ?2)
               AND (?3 = 'any' OR (?3 = 'set' AND goal IS NOT NULL)
                    OR (?3 = 'unset' AND goal IS NULL))
               AND (?4 IS NULL OR id > ?4)
               AND (?6 IS NULL OR created_at < ?6 OR (created_at = ?6 AND id < ?7))
               AND (?8 IS NULL
                    OR instr(lower(coalesce(goal, '') || ' ' || coalesce(summary, '')), lower(?8)) > 0)
               AND (?9 = 'any' OR (?9 = 'listed' AND archived_at IS NULL)
                    OR (?9 = 'archived' AND archived_at IS NOT NULL))
               AND (?10 IS NULL OR created_by = ?10)
             ORDER BY ",
            $order,
            " LIMIT ?5"
        )
    };
}

/// The execution list's filters; `?6, ?7` is the `(created_at, id)` cursor. Ids are
/// lowercase hyphenated UUIDs, whose text order is their byte order.
///
/// Without a cursor the bound is a no-op; with one it is a plain row-value comparison,
/// so the `(created_at, id)` index seeks to the cursor instead of scanning up to it.
macro_rules! list_executions_sql {
    ($cursor:literal, $order:literal) => {
        concat!(
            "SELECT * FROM executions
             WHERE (?1 IS NULL OR status IN (SELECT value FROM json_each(?1)))
               AND (?2 IS NULL OR session_id = ?2)
               AND (?3 IS NULL OR started_at < ?3)
               AND (?4 IS NULL OR created_at < ?4)
               AND ",
            $cursor,
            "
             ORDER BY ",
            $order,
            " LIMIT ?5"
        )
    };
}

/// The statements SQLite writes in its own dialect.
static SQL: Sql = Sql {
    sessions_in: "SELECT * FROM sessions WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id",
    steps_in: "SELECT * FROM plan_steps WHERE session_id IN (SELECT value FROM json_each(?1))
               ORDER BY session_id, generation, seq",
    executions_in: "SELECT * FROM executions WHERE session_id IN (SELECT value FROM json_each(?1))
                    ORDER BY session_id, created_at, id",
    approvals_in: "SELECT * FROM approvals WHERE session_id IN (SELECT value FROM json_each(?1))
                   ORDER BY session_id, requested_at, id",
    fanouts_in: "SELECT * FROM fanouts WHERE session_id IN (SELECT value FROM json_each(?1))
                 ORDER BY session_id, created_at, id",
    last_messages: "SELECT m.* FROM messages m
                    JOIN (SELECT MAX(position) AS position FROM messages
                          WHERE session_id IN (SELECT value FROM json_each(?1)) AND role <> 'note'
                          GROUP BY session_id) last ON m.position = last.position
                    ORDER BY m.session_id",
    list_sessions: SessionLists {
        oldest_first: list_sessions_sql!("id"),
        newest_first: list_sessions_sql!("created_at DESC, id DESC"),
    },
    executions: ExecutionLists {
        oldest_first: list_executions_sql!(
            "(?6 IS NULL OR (created_at, id) < (?6, ?7))",
            "created_at, id"
        ),
        oldest_first_before: list_executions_sql!("(created_at, id) < (?6, ?7)", "created_at, id"),
        newest_first: list_executions_sql!(
            "(?6 IS NULL OR (created_at, id) < (?6, ?7))",
            "created_at DESC, id DESC"
        ),
        newest_first_before: list_executions_sql!(
            "(created_at, id) < (?6, ?7)",
            "created_at DESC, id DESC"
        ),
    },
    pending_approvals: "SELECT * FROM approvals
                        WHERE status = 'pending' AND (?1 IS NULL OR session_id = ?1)
                        ORDER BY requested_at, id",
    entities: "SELECT * FROM entities WHERE (?1 IS NULL OR kind = ?1) ORDER BY slug",
    entity_for_update: "SELECT * FROM entities WHERE slug = ?1",
    lock_event_log: None,
    last_audited: "SELECT s.value AS slug,
                  (SELECT MAX(k.updated_at) FROM knowledge k
                  JOIN knowledge_about a ON a.key = k.key
                  WHERE a.slug = s.value
                  AND EXISTS (SELECT 1 FROM knowledge_tags t
                  WHERE t.key = k.key AND t.tag IN ('audit', 'update'))
                  ) AS last_audited_at
                  FROM json_each(?1) s ORDER BY s.key",
    migrations_table: "SELECT COUNT(*) AS present FROM sqlite_master
                       WHERE type = 'table' AND name = '_sqlx_migrations'",
    applied_version: "SELECT MAX(version) AS version FROM _sqlx_migrations WHERE success = 1",
};

/// One argument as the SQLite schema stores it: ids as text, times as integer
/// milliseconds, lists as JSON arrays for `json_each`, an empty status filter as NULL.
/// Both drivers bind what this gives.
pub(crate) fn value(arg: Arg) -> Result<Value, StoreError> {
    let text = |t: String| Value::Text(t);
    let opt_text = |t: Option<String>| t.map_or(Value::Null, Value::Text);
    Ok(match arg {
        Arg::Ids(ids) => {
            let texts: Vec<String> = ids.iter().map(ToString::to_string).collect();
            text(to_json(&texts, "ids")?)
        }
        Arg::Statuses(names) if names.is_empty() => Value::Null,
        Arg::Statuses(names) => text(to_json(&names, "status filter")?),
        Arg::Json(value) => text(to_json(&value, "a JSON value")?),
        Arg::OptJson(value) => opt_text(value.map(|v| to_json(&v, "a JSON value")).transpose()?),
        Arg::Time(at) => Value::Integer(at.as_millis()),
        Arg::OptTime(at) => at.map_or(Value::Null, |t| Value::Integer(t.as_millis())),
        Arg::Limit(limit) => Value::Integer(limit.map_or(-1, i64::from)),
        Arg::Id(id) => text(id.to_string()),
        Arg::OptId(id) => opt_text(id.map(|id| id.to_string())),
        Arg::Texts(texts) => text(to_json(&texts, "texts")?),
        Arg::Int(n) => Value::Integer(n),
        Arg::Text(t) => text(t),
        Arg::OptText(t) => opt_text(t),
    })
}

/// Binds one argument the way the SQLite schema stores it ([`value`]).
pub(crate) fn bind(query: SqliteQuery, arg: Arg) -> Result<SqliteQuery, StoreError> {
    Ok(match value(arg)? {
        Value::Null => query.bind(None::<String>),
        Value::Integer(n) => query.bind(n),
        Value::Real(x) => query.bind(x),
        Value::Text(t) => query.bind(t),
        Value::Blob(b) => query.bind(b),
    })
}

nomos_store_sql::sqlx_backend! {
    SqliteStore, db = Sqlite, row = SqliteRow, sql = SQL, reader = read,
    writer = write, bind = bind, error = db_error, begin_write = "BEGIN IMMEDIATE",
    snapshot = [], migrator = MIGRATOR, migrate_error = migrate_error
}

nomos_store_sql::impl_store!(SqliteStore);
