//! REPLICA-1: a session's lease is a PostgreSQL session-level advisory lock, taken with
//! `pg_try_advisory_lock` on a key derived from the session id and held on a connection of
//! its own for as long as the turn runs. The server drops it when that connection ends, so
//! a process that dies (even by `kill -9`) gives its leases back at once, with no expiry to
//! tune and no renewal to miss. The lease on running the sweeps (REPLICA-2) is the same
//! kind of lock on a fixed key.

use async_trait::async_trait;
use nomos_core::SessionId;
use nomos_core::ports::replica::{Lease, SessionLeases};
use nomos_core::ports::store::StoreError;
use sqlx::pool::PoolConnection;
use sqlx::postgres::PgPoolOptions;
use sqlx::{PgPool, Postgres};

use crate::error::db_error;
use crate::open::PgStore;

/// The two-key advisory lock that one process at a time holds while it sweeps. Two-key
/// locks never conflict with the one-key locks of sessions and of the event log.
const SWEEP_LOCK: (i32, i32) = (0x6e6f_6d6f, 0x7377);

/// The session leases of one process: a pool of its own, each held lease keeping one of
/// its connections, so leases never starve the store's pool.
#[derive(Clone, Debug)]
pub struct PgLeases {
    pool: PgPool,
}

impl PgStore {
    /// The session leases, on a pool of `max_leases` connections next to the store's
    /// (one per turn running in this process), opened lazily.
    pub fn leases(&self, max_leases: u32) -> PgLeases {
        let options = (*self.pool.connect_options()).clone();
        let pool = PgPoolOptions::new()
            .max_connections(max_leases.max(1))
            .acquire_timeout(std::time::Duration::from_secs(10))
            .connect_lazy_with(options);
        PgLeases { pool }
    }
}

/// The one-key advisory lock of a session: the id's two halves folded together.
pub fn session_key(id: SessionId) -> i64 {
    let bits = id.as_uuid().as_u128();
    ((bits >> 64) as u64 ^ bits as u64) as i64
}

/// Which advisory lock a lease holds.
#[derive(Clone, Copy, Debug)]
enum Key {
    Session(i64),
    Sweep,
}

/// A held advisory lock and the connection that holds it.
struct PgLease {
    conn: Option<PoolConnection<Postgres>>,
    key: Key,
}

impl PgLeases {
    async fn try_take(&self, key: Key) -> Result<Option<Box<dyn Lease>>, StoreError> {
        let mut conn = self
            .pool
            .acquire()
            .await
            .map_err(|e| db_error(e, "taking a connection for a lease"))?;
        let taken: bool = match key {
            Key::Session(key) => {
                sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
                    .bind(key)
                    .fetch_one(&mut *conn)
                    .await
            }
            Key::Sweep => {
                sqlx::query_scalar("SELECT pg_try_advisory_lock($1, $2)")
                    .bind(SWEEP_LOCK.0)
                    .bind(SWEEP_LOCK.1)
                    .fetch_one(&mut *conn)
                    .await
            }
        }
        .map_err(|e| db_error(e, "taking a lease"))?;
        if !taken {
            return Ok(None);
        }
        Ok(Some(Box::new(PgLease {
            conn: Some(conn),
            key,
        })))
    }
}

#[async_trait]
impl SessionLeases for PgLeases {
    async fn try_lease(&self, id: SessionId) -> Result<Option<Box<dyn Lease>>, StoreError> {
        self.try_take(Key::Session(session_key(id))).await
    }

    async fn try_sweep_lease(&self) -> Result<Option<Box<dyn Lease>>, StoreError> {
        self.try_take(Key::Sweep).await
    }
}

/// Unlocks on the holding connection; a connection that cannot say it unlocked is closed,
/// which unlocks too.
async fn unlock(mut conn: PoolConnection<Postgres>, key: Key) {
    let unlocked: Result<bool, sqlx::Error> = match key {
        Key::Session(key) => {
            sqlx::query_scalar("SELECT pg_advisory_unlock($1)")
                .bind(key)
                .fetch_one(&mut *conn)
                .await
        }
        Key::Sweep => {
            sqlx::query_scalar("SELECT pg_advisory_unlock($1, $2)")
                .bind(SWEEP_LOCK.0)
                .bind(SWEEP_LOCK.1)
                .fetch_one(&mut *conn)
                .await
        }
    };
    if !matches!(unlocked, Ok(true)) {
        tracing::warn!(
            ?key,
            ?unlocked,
            "a lease did not unlock; closing its connection"
        );
        drop(conn.detach());
    }
}

#[async_trait]
impl Lease for PgLease {
    async fn release(mut self: Box<Self>) {
        if let Some(conn) = self.conn.take() {
            unlock(conn, self.key).await;
        }
    }
}

impl Drop for PgLease {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(unlock(conn, self.key));
            }
            // No runtime to unlock on: closing the connection unlocks.
            Err(_) => drop(conn.detach()),
        }
    }
}
