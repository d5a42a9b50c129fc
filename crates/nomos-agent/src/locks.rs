//! One writer per session (TURN-8): a turn, a decision or a sweep holds the session's lock
//! while it decides and commits. In this process that is a mutex per session; when several
//! processes share the store (REPLICA-1) the holder also takes the session's lease from the
//! store's [`SessionLeases`], so a session busy in another process is busy here too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nomos_core::SessionId;
use nomos_core::ports::replica::{Lease, SessionLeases};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// How long [`SessionLocks::lock`] waits between tries of a lease another process holds.
const LEASE_RETRY: [Duration; 4] = [
    Duration::from_millis(10),
    Duration::from_millis(25),
    Duration::from_millis(50),
    Duration::from_millis(100),
];

/// How long [`SessionLocks::try_lock`] waits for a session a holder is giving back, when
/// the store is shared.
pub(crate) const SHARED_GRACE: Duration = Duration::from_millis(500);

/// The per-session locks, and the store's leases when the store is shared.
#[derive(Default)]
pub(crate) struct SessionLocks {
    locks: KeyedMutexes,
    leases: Option<Arc<dyn SessionLeases>>,
}

/// One async mutex per session, made on first use; mutexes nobody holds or waits for are
/// dropped once there are many, so the map does not grow without bound.
#[derive(Default)]
pub(crate) struct KeyedMutexes {
    mutexes: Mutex<HashMap<SessionId, Arc<AsyncMutex<()>>>>,
}

impl KeyedMutexes {
    /// The session's mutex.
    pub(crate) fn of(&self, id: SessionId) -> Arc<AsyncMutex<()>> {
        let mut mutexes = match self.mutexes.lock() {
            Ok(mutexes) => mutexes,
            Err(poisoned) => poisoned.into_inner(),
        };
        if mutexes.len() > 1024 {
            mutexes.retain(|_, mutex| Arc::strong_count(mutex) > 1);
        }
        mutexes.entry(id).or_default().clone()
    }

    /// Waits for the session's mutex.
    pub(crate) async fn lock(&self, id: SessionId) -> OwnedMutexGuard<()> {
        self.of(id).lock_owned().await
    }
}

/// Holding it means this task is the session's only writer in every process sharing the
/// store. Give it back with [`SessionGuard::release`] where the moment matters (the end of
/// a turn); dropping it gives the lease back a little later.
pub(crate) struct SessionGuard {
    lease: Option<Box<dyn Lease>>,
    _local: OwnedMutexGuard<()>,
}

impl SessionGuard {
    /// Gives the lease back, then the local lock.
    pub(crate) async fn release(mut self) {
        if let Some(lease) = self.lease.take() {
            lease.release().await;
        }
    }
}

impl SessionLocks {
    /// Locks that also take `leases`' lease on each session.
    pub(crate) fn with_leases(leases: Option<Arc<dyn SessionLeases>>) -> SessionLocks {
        SessionLocks {
            locks: KeyedMutexes::default(),
            leases,
        }
    }

    fn lock_of(&self, id: SessionId) -> Arc<AsyncMutex<()>> {
        self.locks.of(id)
    }

    /// Takes the lock now, or `None` when someone else holds it, here or (REPLICA-1) in
    /// another process. A store that cannot say counts as busy.
    ///
    /// With a shared store "now" allows [`SHARED_GRACE`]: another process hears of a
    /// turn's end when it is committed, a moment before its holder gives the session back,
    /// and a client that answers at once must not get the 409 meant for a running turn.
    pub(crate) async fn try_lock(&self, id: SessionId) -> Option<SessionGuard> {
        let Some(leases) = &self.leases else {
            let local = self.lock_of(id).try_lock_owned().ok()?;
            return Some(SessionGuard {
                lease: None,
                _local: local,
            });
        };
        let deadline = tokio::time::Instant::now() + SHARED_GRACE;
        let local = tokio::time::timeout_at(deadline, self.lock_of(id).lock_owned())
            .await
            .ok()?;
        let mut attempt = 0;
        loop {
            match leases.try_lease(id).await {
                Ok(Some(lease)) => {
                    return Some(SessionGuard {
                        lease: Some(lease),
                        _local: local,
                    });
                }
                Ok(None) if tokio::time::Instant::now() < deadline => {
                    let wait = LEASE_RETRY[attempt.min(LEASE_RETRY.len() - 1)];
                    attempt += 1;
                    tokio::time::sleep(wait).await;
                }
                Ok(None) => return None,
                Err(error) => {
                    tracing::warn!(session = %id, %error, "could not take the session's lease");
                    return None;
                }
            }
        }
    }

    /// Waits for the lock (and the lease).
    pub(crate) async fn lock(&self, id: SessionId) -> SessionGuard {
        let local = self.lock_of(id).lock_owned().await;
        let Some(leases) = &self.leases else {
            return SessionGuard {
                lease: None,
                _local: local,
            };
        };
        let mut attempt = 0;
        loop {
            match leases.try_lease(id).await {
                Ok(Some(lease)) => {
                    return SessionGuard {
                        lease: Some(lease),
                        _local: local,
                    };
                }
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(session = %id, %error, "could not take the session's lease; trying again");
                }
            }
            let wait = LEASE_RETRY[attempt.min(LEASE_RETRY.len() - 1)];
            attempt += 1;
            tokio::time::sleep(wait).await;
        }
    }
}

impl std::fmt::Debug for SessionLocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionLocks")
            .field("shared", &self.leases.is_some())
            .finish_non_exhaustive()
    }
}
