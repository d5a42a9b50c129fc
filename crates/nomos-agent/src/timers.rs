//! One timer per session, armed from the core's [`Session::poll_timeout`] after every
//! commit, so an approval expires (GATE-7) and an assent window closes (GATE-4) at its
//! deadline instead of at the next sweep. Timers run only while the background workers
//! do ([`Agent::start_workers`]); a fired timer is one more input to the core
//! ([`Session::handle_timeout`]), decided and committed like any other.
//!
//! [`Session::poll_timeout`]: nomos_core::session::Session::poll_timeout
//! [`Session::handle_timeout`]: nomos_core::session::Session::handle_timeout

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use nomos_core::{SessionId, Timestamp};
use tokio::task::JoinHandle;

use crate::agent::Agent;

/// The armed timers, by session.
#[derive(Debug, Default)]
pub(crate) struct SessionTimers {
    enabled: AtomicBool,
    armed: Mutex<HashMap<SessionId, Armed>>,
}

#[derive(Debug)]
struct Armed {
    at: Timestamp,
    task: JoinHandle<()>,
}

impl SessionTimers {
    /// From now on, commits arm timers.
    pub(crate) fn enable(&self) {
        self.enabled.store(true, Ordering::SeqCst);
    }

    /// Stops every timer; commits arm none until enabled again.
    pub(crate) fn disable(&self) {
        self.enabled.store(false, Ordering::SeqCst);
        for (_, armed) in self.lock().drain() {
            armed.task.abort();
        }
    }

    /// Arms the session's one timer for `deadline` (replacing an earlier one), or disarms
    /// it when there is none.
    pub(crate) fn arm(&self, agent: &Agent, id: SessionId, deadline: Option<Timestamp>) {
        if !self.enabled.load(Ordering::SeqCst) {
            return;
        }
        let mut armed = self.lock();
        let Some(at) = deadline else {
            if let Some(old) = armed.remove(&id) {
                old.task.abort();
            }
            return;
        };
        if armed
            .get(&id)
            .is_some_and(|a| a.at == at && !a.task.is_finished())
        {
            return;
        }
        let wait = at.since(agent.now()).to_std();
        // The task holds the agent weakly: an agent dropped with timers armed goes away.
        let inner = Arc::downgrade(&agent.inner);
        let task = tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            if let Some(inner) = inner.upgrade() {
                Agent { inner }.fire_timer(id, at).await;
            }
        });
        if let Some(old) = armed.insert(id, Armed { at, task }) {
            old.task.abort();
        }
    }

    /// Forgets the timer that fired for `at` (without stopping the task that runs it).
    fn fired(&self, id: SessionId, at: Timestamp) {
        let mut armed = self.lock();
        if armed.get(&id).is_some_and(|a| a.at == at) {
            armed.remove(&id);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Armed>> {
        self.armed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Agent {
    /// A session's timer fired: like a decision, it waits for a running turn of the session
    /// to end, then lets the core expire what is due. The commit re-arms the next timer.
    async fn fire_timer(&self, id: SessionId, at: Timestamp) {
        self.inner.timers.fired(id, at);
        let _guard = self.inner.locks.lock(id).await;
        match self
            .mutate(id, |session, now| session.handle_timeout(now))
            .await
        {
            Ok(expired) if !expired.is_empty() => {
                tracing::info!(session = %id, n = expired.len(), "approvals expired at their deadline");
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(session = %id, %error, "a session timer could not expire what was due; the sweep will");
            }
        }
    }
}
