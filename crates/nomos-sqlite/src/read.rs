//! Reads: the session aggregate, lists for the sweeps, the transcript and the event log.

use nomos_core::event::EventRecord;
use nomos_core::ports::store::{
    ExecutionFilter, GoalFilter, ListOrder, SessionFilter, SessionSnapshot, StoreError,
};
use nomos_core::record::{Approval, Execution, Message, SessionRecord, ToolCallRecord};
use nomos_core::{ApprovalId, ExecutionId, SessionId};
use nomos_store_sql::record;

use crate::codec::{ms, to_json};
use crate::error::db_error;
use crate::open::SqliteStore;

/// SQLite's "no limit".
fn limit(limit: Option<u32>) -> i64 {
    limit.map_or(-1, i64::from)
}

/// A status list as a JSON array, or NULL for "any".
fn statuses<T: serde::Serialize>(statuses: &[T]) -> Result<Option<String>, StoreError> {
    if statuses.is_empty() {
        return Ok(None);
    }
    to_json(&statuses, "status filter").map(Some)
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

/// Executions oldest first.
const LIST_EXECUTIONS_OLDEST_FIRST: &str = list_executions_sql!(
    "(?6 IS NULL OR (created_at, id) < (?6, ?7))",
    "created_at, id"
);

/// Executions oldest first, before a cursor.
const LIST_EXECUTIONS_OLDEST_FIRST_BEFORE: &str =
    list_executions_sql!("(created_at, id) < (?6, ?7)", "created_at, id");

/// Executions newest first.
const LIST_EXECUTIONS_NEWEST_FIRST: &str = list_executions_sql!(
    "(?6 IS NULL OR (created_at, id) < (?6, ?7))",
    "created_at DESC, id DESC"
);

/// Executions newest first, before a cursor: the next page.
const LIST_EXECUTIONS_NEWEST_FIRST_BEFORE: &str =
    list_executions_sql!("(created_at, id) < (?6, ?7)", "created_at DESC, id DESC");

impl SqliteStore {
    pub(crate) async fn read_session(
        &self,
        id: SessionId,
    ) -> Result<Option<SessionSnapshot>, StoreError> {
        let sid = id.to_string();
        // One read transaction, so the aggregate is a consistent snapshot.
        let mut tx = self
            .read
            .begin()
            .await
            .map_err(|e| db_error(e, "beginning a read"))?;
        let Some(row) = sqlx::query("SELECT * FROM sessions WHERE id = ?1")
            .bind(&sid)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(e, "loading a session"))?
        else {
            return Ok(None);
        };
        let record = record::session(&row)?;
        let steps =
            sqlx::query("SELECT * FROM plan_steps WHERE session_id = ?1 ORDER BY generation, seq")
                .bind(&sid)
                .fetch_all(&mut *tx)
                .await
                .map_err(|e| db_error(e, "loading plan steps"))?
                .iter()
                .map(record::step)
                .collect::<Result<_, _>>()?;
        let executions =
            sqlx::query("SELECT * FROM executions WHERE session_id = ?1 ORDER BY created_at, id")
                .bind(&sid)
                .fetch_all(&mut *tx)
                .await
                .map_err(|e| db_error(e, "loading executions"))?
                .iter()
                .map(record::execution)
                .collect::<Result<_, _>>()?;
        let approvals =
            sqlx::query("SELECT * FROM approvals WHERE session_id = ?1 ORDER BY requested_at, id")
                .bind(&sid)
                .fetch_all(&mut *tx)
                .await
                .map_err(|e| db_error(e, "loading approvals"))?
                .iter()
                .map(record::approval)
                .collect::<Result<_, _>>()?;
        tx.commit()
            .await
            .map_err(|e| db_error(e, "ending a read"))?;
        Ok(Some(SessionSnapshot {
            record,
            steps,
            executions,
            approvals,
        }))
    }

    pub(crate) async fn remove_session(&self, id: SessionId) -> Result<(), StoreError> {
        let done = sqlx::query("DELETE FROM sessions WHERE id = ?1")
            .bind(id.to_string())
            .execute(&self.write)
            .await
            .map_err(|e| db_error(e, &format!("deleting session {id}")))?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound {
                what: format!("session {id}"),
            });
        }
        Ok(())
    }

    pub(crate) async fn select_sessions(
        &self,
        filter: &SessionFilter,
    ) -> Result<Vec<SessionRecord>, StoreError> {
        let goal = match filter.goal {
            GoalFilter::Any => "any",
            GoalFilter::Set => "set",
            GoalFilter::Unset => "unset",
        };
        let status_names: Vec<&str> = filter.statuses.iter().map(|s| s.as_str()).collect();
        // The order is one of two fixed clauses: the text is static either way.
        macro_rules! sessions_query {
            ($order:literal) => {
                concat!(
                    "SELECT * FROM sessions
             WHERE (?1 IS NULL OR status IN (SELECT value FROM json_each(?1)))
               AND (?2 IS NULL OR last_activity_at < ?2)
               AND (?3 = 'any' OR (?3 = 'set' AND goal IS NOT NULL)
                    OR (?3 = 'unset' AND goal IS NULL))
               AND (?4 IS NULL OR id > ?4)
               AND (?6 IS NULL OR created_at < ?6 OR (created_at = ?6 AND id < ?7))
               AND (?8 IS NULL OR instr(lower(coalesce(goal, '') || ' ' || coalesce(summary, '')), lower(?8)) > 0)
             ORDER BY ",
                    $order,
                    " LIMIT ?5"
                )
            };
        }
        let sql: &'static str = match filter.order {
            ListOrder::OldestFirst => sessions_query!("id"),
            ListOrder::NewestFirst => sessions_query!("created_at DESC, id DESC"),
        };
        sqlx::query(sql)
            .bind(statuses(&status_names)?)
            .bind(ms(filter.idle_since))
            .bind(goal)
            .bind(filter.after.map(|a| a.to_string()))
            .bind(limit(filter.limit))
            .bind(ms(filter.before.map(|c| c.created_at)))
            .bind(filter.before.map(|c| c.id.to_string()))
            .bind(filter.text.as_deref())
            .fetch_all(&self.read)
            .await
            .map_err(|e| db_error(e, "listing sessions"))?
            .iter()
            .map(record::session)
            .collect()
    }

    pub(crate) async fn select_messages(&self, id: SessionId) -> Result<Vec<Message>, StoreError> {
        sqlx::query("SELECT * FROM messages WHERE session_id = ?1 ORDER BY position")
            .bind(id.to_string())
            .fetch_all(&self.read)
            .await
            .map_err(|e| db_error(e, "loading messages"))?
            .iter()
            .map(record::message)
            .collect()
    }

    pub(crate) async fn select_tool_calls(
        &self,
        id: SessionId,
    ) -> Result<Vec<ToolCallRecord>, StoreError> {
        sqlx::query("SELECT * FROM tool_calls WHERE session_id = ?1 ORDER BY position")
            .bind(id.to_string())
            .fetch_all(&self.read)
            .await
            .map_err(|e| db_error(e, "loading tool calls"))?
            .iter()
            .map(record::tool_call)
            .collect()
    }

    pub(crate) async fn select_execution(
        &self,
        id: ExecutionId,
    ) -> Result<Option<Execution>, StoreError> {
        sqlx::query("SELECT * FROM executions WHERE id = ?1")
            .bind(id.to_string())
            .fetch_optional(&self.read)
            .await
            .map_err(|e| db_error(e, "loading an execution"))?
            .as_ref()
            .map(record::execution)
            .transpose()
    }

    pub(crate) async fn select_executions(
        &self,
        filter: &ExecutionFilter,
    ) -> Result<Vec<Execution>, StoreError> {
        let status_names: Vec<&str> = filter.statuses.iter().map(|s| s.as_str()).collect();
        let sql = match (filter.order, filter.before.is_some()) {
            (ListOrder::OldestFirst, false) => LIST_EXECUTIONS_OLDEST_FIRST,
            (ListOrder::OldestFirst, true) => LIST_EXECUTIONS_OLDEST_FIRST_BEFORE,
            (ListOrder::NewestFirst, false) => LIST_EXECUTIONS_NEWEST_FIRST,
            (ListOrder::NewestFirst, true) => LIST_EXECUTIONS_NEWEST_FIRST_BEFORE,
        };
        sqlx::query(sql)
            .bind(statuses(&status_names)?)
            .bind(filter.session.map(|s| s.to_string()))
            .bind(ms(filter.started_before))
            .bind(ms(filter.created_before))
            .bind(limit(filter.limit))
            .bind(ms(filter.before.map(|c| c.created_at)))
            .bind(filter.before.map(|c| c.id.to_string()))
            .fetch_all(&self.read)
            .await
            .map_err(|e| db_error(e, "listing executions"))?
            .iter()
            .map(record::execution)
            .collect()
    }

    pub(crate) async fn select_approval(
        &self,
        id: ApprovalId,
    ) -> Result<Option<Approval>, StoreError> {
        sqlx::query("SELECT * FROM approvals WHERE id = ?1")
            .bind(id.to_string())
            .fetch_optional(&self.read)
            .await
            .map_err(|e| db_error(e, "loading an approval"))?
            .as_ref()
            .map(record::approval)
            .transpose()
    }

    pub(crate) async fn select_pending_approvals(
        &self,
        session: Option<SessionId>,
    ) -> Result<Vec<Approval>, StoreError> {
        sqlx::query(
            "SELECT * FROM approvals
             WHERE status = 'pending' AND (?1 IS NULL OR session_id = ?1)
             ORDER BY requested_at, id",
        )
        .bind(session.map(|s| s.to_string()))
        .fetch_all(&self.read)
        .await
        .map_err(|e| db_error(e, "listing pending approvals"))?
        .iter()
        .map(record::approval)
        .collect()
    }

    pub(crate) async fn select_events(
        &self,
        session: Option<SessionId>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let rows = match session {
            Some(id) => {
                sqlx::query(
                    "SELECT * FROM events WHERE session_id = ?1 AND seq > ?2
                     ORDER BY seq LIMIT ?3",
                )
                .bind(id.to_string())
                .bind(after)
                .bind(i64::from(limit))
                .fetch_all(&self.read)
                .await
            }
            None => {
                sqlx::query(
                    "SELECT * FROM events WHERE global_seq > ?1 ORDER BY global_seq LIMIT ?2",
                )
                .bind(after)
                .bind(i64::from(limit))
                .fetch_all(&self.read)
                .await
            }
        }
        .map_err(|e| db_error(e, "reading events"))?;
        rows.iter().map(record::event).collect()
    }
}
