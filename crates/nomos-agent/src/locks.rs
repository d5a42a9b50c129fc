//! One writer per session in this process (TURN-8): a turn, a decision or a sweep holds
//! the session's lock while it decides and commits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use nomos_core::SessionId;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// The per-session locks.
#[derive(Debug, Default)]
pub(crate) struct SessionLocks {
    locks: Mutex<HashMap<SessionId, Arc<AsyncMutex<()>>>>,
}

/// Holding it means this task is the session's only writer in this process.
pub(crate) type SessionGuard = OwnedMutexGuard<()>;

impl SessionLocks {
    fn lock_of(&self, id: SessionId) -> Arc<AsyncMutex<()>> {
        let mut locks = match self.locks.lock() {
            Ok(locks) => locks,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Drop locks nobody holds or waits for, so the map does not grow without bound.
        if locks.len() > 1024 {
            locks.retain(|_, lock| Arc::strong_count(lock) > 1);
        }
        locks.entry(id).or_default().clone()
    }

    /// Takes the lock now, or `None` when someone else holds it.
    pub(crate) fn try_lock(&self, id: SessionId) -> Option<SessionGuard> {
        self.lock_of(id).try_lock_owned().ok()
    }

    /// Waits for the lock.
    pub(crate) async fn lock(&self, id: SessionId) -> SessionGuard {
        self.lock_of(id).lock_owned().await
    }
}
