//! AUDIT-2 on PostgreSQL: reading events with their chain hashes, and hashing the rows
//! written before migration 3 (in Rust at open: the canonical JSON is not `jsonb`'s
//! text form, so SQL cannot build it).

use nomos_core::chain::{ChainCursor, ChainedEvent};
use nomos_core::ports::store::StoreError;
use nomos_store_sql::chain::missing_hashes;
use nomos_store_sql::record;
use sqlx::Row;
use uuid::Uuid;

use crate::commit::EVENT_LOG_LOCK;
use crate::error::db_error;
use crate::open::PgStore;

impl PgStore {
    pub(crate) async fn select_chained_events(
        &self,
        cursor: ChainCursor,
        limit: u32,
    ) -> Result<Vec<ChainedEvent>, StoreError> {
        let rows = match cursor {
            ChainCursor::Session { session, after_seq } => {
                sqlx::query(
                    "SELECT session_id, seq, at, kind, payload, hash FROM events
                     WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                )
                .bind(session.as_uuid())
                .bind(after_seq)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await
            }
            ChainCursor::All { after } => {
                let (session, seq) = after.map_or((Uuid::nil(), 0), |(s, q)| (s.as_uuid(), q));
                sqlx::query(
                    "SELECT session_id, seq, at, kind, payload, hash FROM events
                     WHERE (session_id, seq) > ($1, $2) ORDER BY session_id, seq LIMIT $3",
                )
                .bind(session)
                .bind(seq)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await
            }
        }
        .map_err(|e| db_error(e, "reading chained events"))?;
        rows.iter().map(record::chained_event).collect()
    }

    /// Hashes every event row that has no hash yet, session by session in seq order,
    /// each session in its own transaction under the event-log lock.
    pub(crate) async fn hash_unhashed_events(&self) -> Result<u64, StoreError> {
        let sessions: Vec<Uuid> =
            sqlx::query("SELECT DISTINCT session_id FROM events WHERE hash IS NULL")
                .fetch_all(&self.pool)
                .await
                .map_err(|e| db_error(e, "finding unhashed events"))?
                .iter()
                .map(|row| row.try_get("session_id"))
                .collect::<Result<_, _>>()
                .map_err(|e| db_error(e, "events.session_id"))?;
        let mut hashed = 0;
        for sid in sessions {
            let mut tx = self
                .pool
                .begin()
                .await
                .map_err(|e| db_error(e, "beginning a transaction"))?;
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(EVENT_LOG_LOCK)
                .execute(&mut *tx)
                .await
                .map_err(|e| db_error(e, "locking the event log"))?;
            let events = sqlx::query(
                "SELECT session_id, seq, at, kind, payload, hash FROM events
                 WHERE session_id = $1 ORDER BY seq",
            )
            .bind(sid)
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| db_error(e, "reading events to hash"))?
            .iter()
            .map(record::chained_event)
            .collect::<Result<Vec<_>, _>>()?;
            for (seq, hash) in missing_hashes(&events) {
                sqlx::query("UPDATE events SET hash = $1 WHERE session_id = $2 AND seq = $3")
                    .bind(hash)
                    .bind(sid)
                    .bind(seq)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| db_error(e, &format!("hashing event {seq} of session {sid}")))?;
                hashed += 1;
            }
            tx.commit().await.map_err(|e| db_error(e, "committing"))?;
        }
        if hashed > 0 {
            tracing::info!(
                events = hashed,
                "hashed event rows written before the chain"
            );
        }
        Ok(hashed)
    }
}
