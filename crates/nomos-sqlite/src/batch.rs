//! Set-based reads of several sessions at once, for callers that work a page at a time
//! (the backfill tool): four queries per page instead of four per session.

use nomos_core::SessionId;
use nomos_core::ports::store::{SessionSnapshot, StoreError};
use nomos_core::record::Message;
use nomos_store_sql::{record, snapshot};

use crate::codec::to_json;
use crate::error::db_error;
use crate::open::SqliteStore;

impl SqliteStore {
    pub(crate) async fn read_sessions(
        &self,
        ids: &[SessionId],
    ) -> Result<Vec<SessionSnapshot>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let id_list = id_list(ids)?;
        // One read transaction, so every aggregate is a consistent snapshot.
        let mut tx = self
            .read
            .begin()
            .await
            .map_err(|e| db_error(e, "beginning a read"))?;
        let records = sqlx::query(
            "SELECT * FROM sessions WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id",
        )
        .bind(&id_list)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| db_error(e, "loading sessions"))?
        .iter()
        .map(record::session)
        .collect::<Result<Vec<_>, _>>()?;
        let steps = sqlx::query(
            "SELECT * FROM plan_steps WHERE session_id IN (SELECT value FROM json_each(?1))
             ORDER BY session_id, generation, seq",
        )
        .bind(&id_list)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| db_error(e, "loading plan steps"))?
        .iter()
        .map(record::step)
        .collect::<Result<Vec<_>, _>>()?;
        let executions = sqlx::query(
            "SELECT * FROM executions WHERE session_id IN (SELECT value FROM json_each(?1))
             ORDER BY session_id, created_at, id",
        )
        .bind(&id_list)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| db_error(e, "loading executions"))?
        .iter()
        .map(record::execution)
        .collect::<Result<Vec<_>, _>>()?;
        let approvals = sqlx::query(
            "SELECT * FROM approvals WHERE session_id IN (SELECT value FROM json_each(?1))
             ORDER BY session_id, requested_at, id",
        )
        .bind(&id_list)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| db_error(e, "loading approvals"))?
        .iter()
        .map(record::approval)
        .collect::<Result<Vec<_>, _>>()?;
        let mut snapshots = snapshot::assemble(records, steps, executions, approvals);
        for s in &mut snapshots {
            s.fanouts = crate::fanout::load_fanouts(&mut tx, &s.record.id.to_string()).await?;
        }
        tx.commit()
            .await
            .map_err(|e| db_error(e, "ending a read"))?;
        Ok(snapshots)
    }

    pub(crate) async fn select_last_messages(
        &self,
        ids: &[SessionId],
    ) -> Result<Vec<Message>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        sqlx::query(
            "SELECT m.* FROM messages m
             JOIN (SELECT MAX(position) AS position FROM messages
                   WHERE session_id IN (SELECT value FROM json_each(?1)) AND role <> 'note'
                   GROUP BY session_id) last ON m.position = last.position
             ORDER BY m.session_id",
        )
        .bind(id_list(ids)?)
        .fetch_all(&self.read)
        .await
        .map_err(|e| db_error(e, "loading last messages"))?
        .iter()
        .map(record::message)
        .collect()
    }
}

/// The ids as a JSON array of their text, for `json_each`.
fn id_list(ids: &[SessionId]) -> Result<String, StoreError> {
    let texts: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    to_json(&texts, "session ids")
}
