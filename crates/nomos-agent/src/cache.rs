//! The last committed aggregate of recently written sessions, so that a turn's many small
//! decisions do not reload the session from the store each time.
//!
//! A cached aggregate is only a starting point: every commit still carries the version it
//! was decided at, so a change made elsewhere (another process, a direct store write) is
//! caught as a conflict, the entry is dropped, and the decision is made again on a fresh
//! load.

use std::collections::HashMap;
use std::sync::Mutex;

use nomos_core::session::Session;
use nomos_core::{MessageId, SessionId};

/// How many sessions the cache keeps before it starts over.
const CAPACITY: usize = 1024;

/// Committed aggregates by session.
#[derive(Debug, Default)]
pub(crate) struct SessionCache {
    sessions: Mutex<HashMap<SessionId, Session>>,
}

impl SessionCache {
    /// The cached aggregate, taken out (no copy): the caller puts it back after its commit.
    /// A concurrent decision on the same session meanwhile loads it from the store.
    pub(crate) fn take(&self, id: SessionId) -> Option<Session> {
        self.lock().remove(&id)
    }

    /// Whether the cached session is driven by an outside client, if it is cached.
    pub(crate) fn client_driven(&self, id: SessionId) -> Option<bool> {
        self.lock().get(&id).map(|s| s.record().client.is_some())
    }

    /// The version of the cached aggregate, if any.
    pub(crate) fn version(&self, id: SessionId) -> Option<i64> {
        self.lock().get(&id).map(|s| s.record().version)
    }

    /// The id the cached session's next message gets, if it is cached.
    pub(crate) fn next_message_id(&self, id: SessionId) -> Option<MessageId> {
        self.lock().get(&id).map(|s| s.next_message_id())
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
