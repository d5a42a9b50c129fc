//! REPLICA-3: events committed by other processes, into this process's bus.
//!
//! Every commit that appends events sends one `NOTIFY nomos_events` carrying the
//! committing instance (a trigger of migration 5; PostgreSQL delivers it at commit and
//! folds equal ones of a transaction). [`PgEventFeed::run`] `LISTEN`s, and on a
//! notification from another instance reads the events after its cursor from the durable
//! log, in `global_seq` (commit) order, leaving out this process's own (it published them
//! itself), and hands each to the caller once. Notifications only wake the reader: any
//! number that arrive while it reads fold into one more read, so a storm costs a few reads
//! of what is new, and a notification lost while the listening connection reconnects is
//! made up by the next one or by the reader's periodic look.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use nomos_core::event::EventRecord;
use nomos_core::ports::replica::InstanceId;
use nomos_core::ports::store::StoreError;
use nomos_store_sql::record;
use sqlx::postgres::PgListener;
use sqlx::{PgPool, Row};
use tokio::sync::Notify;

use crate::error::db_error;
use crate::open::PgStore;

/// The channel commits notify on.
pub const CHANNEL: &str = "nomos_events";

/// How many events one read takes.
const PAGE: i64 = 500;

/// How often the reader looks without being woken (a notification lost on a reconnect).
const LOOK_EVERY: Duration = Duration::from_secs(2);

/// Follows the event log for one process.
#[derive(Clone, Debug)]
pub struct PgEventFeed {
    pool: PgPool,
    me: InstanceId,
}

impl PgStore {
    /// The feed of other processes' events, for a store opened with
    /// [`PgStore::connect_instance`]; `None` otherwise.
    pub fn event_feed(&self) -> Option<PgEventFeed> {
        self.instance.map(|me| PgEventFeed {
            pool: self.pool.clone(),
            me,
        })
    }
}

impl PgEventFeed {
    /// Listens, then hands every event other processes commit to `deliver`, in commit
    /// order and once each, until `stop` completes. Events committed before the listener
    /// was in place are the event log's business (a stream's catch-up reads them).
    pub async fn run<F>(self, deliver: F, stop: impl Future<Output = ()>) -> Result<(), StoreError>
    where
        F: Fn(EventRecord) + Send + Sync + 'static,
    {
        let mut listener = PgListener::connect_with(&self.pool)
            .await
            .map_err(|e| db_error(e, "connecting the event listener"))?;
        listener
            .listen(CHANNEL)
            .await
            .map_err(|e| db_error(e, "listening for events"))?;
        let mut cursor: i64 =
            sqlx::query("SELECT COALESCE(MAX(global_seq), 0) AS last FROM events")
                .fetch_one(&self.pool)
                .await
                .and_then(|row| row.try_get("last"))
                .map_err(|e| db_error(e, "reading the event log's end"))?;
        let wake = Arc::new(Notify::new());
        let me = self.me.to_string();
        let woken = wake.clone();
        let hear = tokio::spawn(async move {
            loop {
                match listener.try_recv().await {
                    Ok(Some(note)) if note.payload() == me => {}
                    Ok(_) => woken.notify_one(),
                    Err(error) => {
                        tracing::warn!(%error, "the event listener failed; listening again");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        woken.notify_one();
                    }
                }
            }
        });
        tokio::pin!(stop);
        let mut look = tokio::time::interval(LOOK_EVERY);
        loop {
            tokio::select! {
                () = &mut stop => break,
                () = wake.notified() => {}
                _ = look.tick() => {}
            }
            match self.read_after(&mut cursor, &deliver).await {
                Ok(()) => {}
                Err(error) => tracing::warn!(%error, "could not read other processes' events"),
            }
        }
        hear.abort();
        Ok(())
    }

    /// Delivers every event of other instances after `cursor`, page by page.
    async fn read_after<F: Fn(EventRecord)>(
        &self,
        cursor: &mut i64,
        deliver: &F,
    ) -> Result<(), StoreError> {
        loop {
            let rows = sqlx::query(
                "SELECT * FROM events WHERE global_seq > $1 AND origin IS DISTINCT FROM $2
                 ORDER BY global_seq LIMIT $3",
            )
            .bind(*cursor)
            .bind(self.me.0)
            .bind(PAGE)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| db_error(e, "reading other processes' events"))?;
            let n = rows.len();
            for row in &rows {
                let event = record::event(row)?;
                *cursor = event.global_seq;
                deliver(event);
            }
            if n < PAGE as usize {
                return Ok(());
            }
        }
    }
}
