//! Set-based reads of several sessions at once, for callers that work a page at a time
//! (the backfill tool): four queries per page instead of four per session.

use nomos_core::SessionId;
use nomos_core::ports::store::{SessionSnapshot, StoreError};
use nomos_core::record::Message;
use nomos_store_sql::{record, snapshot};
use uuid::Uuid;

use crate::error::db_error;
use crate::open::PgStore;

impl PgStore {
    pub(crate) async fn read_sessions(
        &self,
        ids: &[SessionId],
    ) -> Result<Vec<SessionSnapshot>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let uuids: Vec<Uuid> = ids.iter().map(|id| id.as_uuid()).collect();
        // One repeatable-read transaction, so every aggregate is a consistent snapshot.
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(|e| db_error(e, "beginning a read"))?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(e, "beginning a read"))?;
        let records = sqlx::query("SELECT * FROM sessions WHERE id = ANY($1) ORDER BY id")
            .bind(&uuids)
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| db_error(e, "loading sessions"))?
            .iter()
            .map(record::session)
            .collect::<Result<Vec<_>, _>>()?;
        let steps = sqlx::query(
            "SELECT * FROM plan_steps WHERE session_id = ANY($1)
             ORDER BY session_id, generation, seq",
        )
        .bind(&uuids)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| db_error(e, "loading plan steps"))?
        .iter()
        .map(record::step)
        .collect::<Result<Vec<_>, _>>()?;
        let executions = sqlx::query(
            "SELECT * FROM executions WHERE session_id = ANY($1)
             ORDER BY session_id, created_at, id",
        )
        .bind(&uuids)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| db_error(e, "loading executions"))?
        .iter()
        .map(record::execution)
        .collect::<Result<Vec<_>, _>>()?;
        let approvals = sqlx::query(
            "SELECT * FROM approvals WHERE session_id = ANY($1)
             ORDER BY session_id, requested_at, id",
        )
        .bind(&uuids)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| db_error(e, "loading approvals"))?
        .iter()
        .map(record::approval)
        .collect::<Result<Vec<_>, _>>()?;
        let mut snapshots = snapshot::assemble(records, steps, executions, approvals);
        for s in &mut snapshots {
            s.fanouts = crate::fanout::load_fanouts(&mut tx, s.record.id.as_uuid()).await?;
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
        let uuids: Vec<Uuid> = ids.iter().map(|id| id.as_uuid()).collect();
        sqlx::query(
            "SELECT DISTINCT ON (session_id) * FROM messages
             WHERE session_id = ANY($1) AND role <> 'note'
             ORDER BY session_id, position DESC",
        )
        .bind(&uuids)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| db_error(e, "loading last messages"))?
        .iter()
        .map(record::message)
        .collect()
    }
}
