//! What a crash, a restart or a shutdown leaves behind, closed by the runtime itself:
//! commands still running on their hosts (EXEC-8), turns without a `turn.done`
//! (TURN-11), and the end of a turn or a command the store could not take at first
//! (TURN-1, EXEC-2, EXEC-9).

use std::collections::HashMap;
use std::time::Duration;

use nomos_core::event::DomainEvent;
use nomos_core::ports::store::{ExecutionFilter, StoreError};
use nomos_core::session::Session;
use nomos_core::sweep::{TURN_INTERRUPTED_BY_RESTART, TURN_INTERRUPTED_BY_SHUTDOWN};
use nomos_core::{ExecutionStatus, SessionId, Timestamp};

use crate::agent::Agent;
use crate::error::AgentError;
use crate::replica::Reach;

/// How long stopping one orphaned command may take at start-up.
const STOP_BOUND: Duration = Duration::from_secs(20);

/// How many events the open-turn scan reads per page.
const PAGE: u32 = 1000;

/// Waits between attempts to record a turn's end while the store fails (about a minute
/// in all); the session stays held meanwhile, so no other turn starts under it.
const TURN_END_BACKOFF: [Duration; 9] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(15),
    Duration::from_secs(15),
    Duration::from_secs(15),
];

/// Why an open turn is closed by the runtime rather than by its own loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnInterruption {
    /// Found open at start-up: the process that ran it is gone.
    Restart,
    /// Stopped by a graceful shutdown of this process.
    Shutdown,
}

impl TurnInterruption {
    fn reason(self) -> &'static str {
        match self {
            TurnInterruption::Restart => TURN_INTERRUPTED_BY_RESTART,
            TurnInterruption::Shutdown => TURN_INTERRUPTED_BY_SHUTDOWN,
        }
    }
}

impl Agent {
    /// EXEC-8: at start-up, before the reconcile marks them, stops every command found
    /// `running` through the executor's clean-up by marker (a local command normally died
    /// with the server already). Returns how many clean-ups succeeded; a failed one is
    /// logged and the execution is marked all the same, its outcome unknown.
    pub(crate) async fn stop_orphaned_commands(&self) -> Result<u32, AgentError> {
        let filter = ExecutionFilter {
            statuses: vec![ExecutionStatus::Running],
            ..ExecutionFilter::default()
        };
        let running = self.inner.store.list_executions(&filter).await?;
        let ids: Vec<_> = running.iter().map(|e| e.id).collect();
        let owners = self.owners(&ids, &[]).await?;
        let mut stopped = 0;
        for execution in running {
            // REPLICA-2: a live instance's command is running, not orphaned.
            if owners.leaves_execution(Reach::Orphans, execution.id) {
                continue;
            }
            let marker = execution.id.to_string();
            let stop = self.inner.executor.stop_marked(&execution.host, &marker);
            match tokio::time::timeout(STOP_BOUND, stop).await {
                Ok(Ok(())) => stopped += 1,
                Ok(Err(error)) => tracing::warn!(
                    execution = %execution.id, host = %execution.host, %error,
                    "could not stop a command left running by a previous run"
                ),
                Err(_) => tracing::warn!(
                    execution = %execution.id, host = %execution.host,
                    "stopping a command left running by a previous run took longer than {STOP_BOUND:?}"
                ),
            }
        }
        Ok(stopped)
    }

    /// TURN-11: the sessions whose last `turn.started` has no `turn.done`, less those a
    /// live instance owns (REPLICA-2). Read before anything is closed: closing writes the
    /// session, and the writer owns it.
    pub(crate) async fn open_orphan_turns(&self) -> Result<Vec<SessionId>, AgentError> {
        let mut open: HashMap<SessionId, bool> = HashMap::new();
        let mut after = 0;
        loop {
            let page = self.inner.store.events_after(None, after, PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.global_seq;
            for record in &page {
                match record.event {
                    DomainEvent::TurnStarted { .. } => {
                        open.insert(record.session_id, true);
                    }
                    DomainEvent::TurnDone { .. } => {
                        open.insert(record.session_id, false);
                    }
                    _ => {}
                }
            }
        }
        let mut ids: Vec<SessionId> = open
            .into_iter()
            .filter_map(|(id, open)| open.then_some(id))
            .collect();
        ids.sort();
        // REPLICA-2: a live instance's open turn is running.
        let owners = self.owners(&[], &ids).await?;
        ids.retain(|id| !owners.leaves_session(Reach::Orphans, *id));
        Ok(ids)
    }

    /// TURN-11: at start-up, ends each of these turns (found by
    /// [`Agent::open_orphan_turns`]) with a `turn.done` (error: "interrupted by a
    /// restart"), unless it ended meanwhile. Returns how many it closed.
    pub(crate) async fn close_open_turns(&self, ids: Vec<SessionId>) -> Result<u32, AgentError> {
        let mut closed = 0;
        for id in ids {
            // Nothing else of this process runs them; the lock orders us with the sweeps.
            let _guard = self.inner.locks.lock(id).await;
            if !self.turn_is_open(id).await? {
                continue;
            }
            self.close_turn(id, TurnInterruption::Restart).await?;
            closed += 1;
        }
        Ok(closed)
    }

    /// TURN-11 at a graceful shutdown: ends the open turns of `sessions` (those whose
    /// turns this process stopped) with a `turn.done` saying so. A session whose turn
    /// ended meanwhile, or that another task of this process still holds, is left alone.
    pub async fn end_interrupted_turns(&self, sessions: &[SessionId]) -> Result<u32, AgentError> {
        let mut closed = 0;
        for &id in sessions {
            let Some(_guard) = self.inner.locks.try_lock(id).await else {
                continue;
            };
            if self.turn_is_open(id).await? {
                self.close_turn(id, TurnInterruption::Shutdown).await?;
                closed += 1;
            }
        }
        Ok(closed)
    }

    /// Whether the session's last turn event is a `turn.started`.
    async fn turn_is_open(&self, id: SessionId) -> Result<bool, AgentError> {
        let mut open = false;
        let mut after = 0;
        loop {
            let page = self.inner.store.events_after(Some(id), after, PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.global_seq;
            for record in &page {
                match record.event {
                    DomainEvent::TurnStarted { .. } => open = true,
                    DomainEvent::TurnDone { .. } => open = false,
                    _ => {}
                }
            }
        }
        Ok(open)
    }

    async fn close_turn(&self, id: SessionId, why: TurnInterruption) -> Result<(), AgentError> {
        tracing::info!(session = %id, reason = why.reason(), "closing a turn left open");
        // Found open in the store: decided on what it holds.
        self.inner.cache.forget(id);
        self.mutate(id, |session, now| {
            session.handle_turn_done(now, Some(why.reason().to_owned()), 0);
        })
        .await
    }

    /// TURN-1 and EXEC-2 when writes fail (EXEC-9): commits the end of a turn or of an
    /// execution, and while the store itself fails (a full disk, a lost connection) tries
    /// again with back-off for about a minute, so what was in flight when the disk filled
    /// still ends once space is back.
    pub(crate) async fn mutate_recovering<T>(
        &self,
        id: SessionId,
        mut decide: impl FnMut(&mut Session, Timestamp) -> T,
    ) -> Result<(T, Vec<nomos_core::event::EventRecord>), AgentError> {
        let mut backoff = TURN_END_BACKOFF.iter();
        loop {
            match self.mutate_unpublished(id, &mut decide).await {
                Err(AgentError::Store(error)) if store_may_recover(&error) => {
                    let Some(wait) = backoff.next() else {
                        return Err(AgentError::Store(error));
                    };
                    tracing::warn!(session = %id, %error, "could not record an end; trying again in {wait:?}");
                    tokio::time::sleep(*wait).await;
                }
                res => return res,
            }
        }
    }
}

/// A failure of the store that may pass (EXEC-9), not a refusal of the data.
fn store_may_recover(error: &StoreError) -> bool {
    matches!(error, StoreError::Unavailable(_) | StoreError::Backend(_))
}
