//! The last committed aggregate of recently written sessions, so that a turn's many small
//! decisions do not reload the session from the store each time.
//!
//! A cached aggregate is only a starting point: every commit still carries the version it
//! was decided at, so a change made elsewhere (another process, a direct store write) is
//! caught as a conflict, the entry is dropped, and the decision is made again on a fresh
//! load.

use std::collections::HashMap;
use std::sync::Mutex;

use nomos_core::SessionId;
use nomos_core::session::Session;

/// How many sessions the cache keeps before it starts over.
const CAPACITY: usize = 1024;

/// Committed aggregates by session.
#[derive(Debug, Default)]
pub(crate) struct SessionCache {
    sessions: Mutex<HashMap<SessionId, Session>>,
}

impl SessionCache {
    /// A copy of the cached aggregate, if any.
    pub(crate) fn get(&self, id: SessionId) -> Option<Session> {
        self.lock().get(&id).cloned()
    }

    /// Remembers an aggregate that matches what the store holds.
    pub(crate) fn put(&self, session: Session) {
        let mut sessions = self.lock();
        if sessions.len() >= CAPACITY && !sessions.contains_key(&session.id()) {
            sessions.clear();
        }
        sessions.insert(session.id(), session);
    }

    /// Forgets a session (after a conflict or a failed commit).
    pub(crate) fn forget(&self, id: SessionId) {
        self.lock().remove(&id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
