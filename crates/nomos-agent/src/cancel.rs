//! CONTROL-1: stopping a running turn. The core decides what a stop means
//! ([`Session::handle_stop`](nomos_core::session::Session::handle_stop)); this module owns
//! the mechanics: one [`TurnControl`] per running turn (a stop signal and a count of the
//! command tasks it dispatched), the race of the turn's work against the signal (dropping
//! the model request's stream), stopping each running command through the executor (the
//! process group locally, the marked remote processes over SSH), and the wait for all of
//! that before the turn's one `turn.done`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nomos_core::event::{DomainEvent, EventRecord};
use nomos_core::ports::exec::{ExecError, ExecLimits};
use nomos_core::record::{Decider, ExecOutput};
use nomos_core::session::TurnState;
use nomos_core::{ExecutionId, ExecutionStatus, SessionId};
use tokio::sync::watch;

use crate::agent::Agent;
use crate::error::AgentError;
use crate::turn::TurnFailure;

/// How long a stop waits for the commands it stopped to be recorded before it ends the
/// turn anyway (each executor's own clean-up has shorter bounds).
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

/// How often a stop for a turn elsewhere reads the log again when the session changed
/// between the read and the commit.
const CAS_ATTEMPTS: u32 = 5;

/// How many events one read of a session's log takes.
const PAGE: u32 = 1000;

/// What a stop did, as the caller hears of it at once (the turn ends a moment later).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopReport {
    /// The session.
    pub session_id: SessionId,
    /// The commands that were running when the stop was recorded.
    pub running: Vec<ExecutionId>,
    /// The generation whose assent window the stop closed, if one was open.
    pub closed_generation: Option<u32>,
}

/// The running turns of this process, by session.
#[derive(Debug, Default)]
pub(crate) struct TurnControls {
    controls: Mutex<HashMap<SessionId, Arc<TurnControl>>>,
}

/// One running turn's stop signal and the command tasks it dispatched.
#[derive(Debug)]
pub(crate) struct TurnControl {
    stop: watch::Sender<bool>,
    tasks: watch::Sender<usize>,
}

/// Held by a command task for as long as it runs and records its end.
pub(crate) struct TaskGuard {
    control: Arc<TurnControl>,
}

/// How a stoppable command ended.
pub(crate) enum RunEnd {
    /// It ended by itself (or failed) before any stop.
    Finished(Result<ExecOutput, ExecError>),
    /// The operator stopped it; what is left of it was stopped.
    Stopped,
}

impl TurnControls {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Arc<TurnControl>>> {
        match self.controls.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The control of the session's turn, made when the turn (or the decision that leads
    /// to one) takes the session. The session's lock makes it the only one.
    pub(crate) fn open(&self, id: SessionId) -> Arc<TurnControl> {
        self.map()
            .entry(id)
            .or_insert_with(|| {
                Arc::new(TurnControl {
                    stop: watch::channel(false).0,
                    tasks: watch::channel(0).0,
                })
            })
            .clone()
    }

    /// The running turn's control, if the session has a running turn here.
    pub(crate) fn get(&self, id: SessionId) -> Option<Arc<TurnControl>> {
        self.map().get(&id).cloned()
    }

    /// The turn ended.
    pub(crate) fn close(&self, id: SessionId) {
        self.map().remove(&id);
    }
}

impl TurnControl {
    pub(crate) fn is_stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Resolves once the operator stopped the turn.
    pub(crate) async fn stopped(&self) {
        let mut rx = self.stop.subscribe();
        // The sender lives as long as `self`, so the wait ends only on a stop.
        let _ = rx.wait_for(|stopped| *stopped).await;
    }

    fn request_stop(&self) {
        self.stop.send_replace(true);
    }

    /// Counts a command task until the guard is dropped.
    pub(crate) fn task(self: &Arc<Self>) -> TaskGuard {
        self.tasks.send_modify(|n| *n += 1);
        TaskGuard {
            control: self.clone(),
        }
    }

    async fn drained(&self) {
        let mut rx = self.tasks.subscribe();
        let _ = rx.wait_for(|n| *n == 0).await;
    }
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        self.control.tasks.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Agent {
    /// CONTROL-1, AUDIT-1: stops the session's running turn. The stop is recorded first
    /// (who, the request; the assent window closes), then the turn is signalled: its model
    /// request is dropped, every command it dispatched is stopped and ends `cancelled`
    /// ("stopped by the operator"), the model gets a note for its next request, and the turn
    /// ends with one `turn.done` (error "stopped by the operator"). Returns once the stop is
    /// recorded; [`AgentError::NoRunningTurn`] when no turn of the session runs here.
    pub async fn stop_turn(
        &self,
        id: SessionId,
        by: Option<&Decider>,
    ) -> Result<StopReport, AgentError> {
        let Some(control) = self.inner.controls.get(id) else {
            return self.stop_elsewhere(id, by).await;
        };
        if control.is_stopped() {
            return Err(AgentError::AlreadyStopping(id));
        }
        let effect = self
            .mutate(id, |session, now| session.handle_stop(now, by))
            .await?;
        control.request_stop();
        tracing::info!(
            target: "nomos::audit",
            session = %id,
            principal = by.map_or("-", |d| d.name.as_str()),
            request = by.and_then(|d| d.request_id.as_deref()).unwrap_or("-"),
            n_running = effect.running.len(),
            "operator stopped the turn"
        );
        Ok(StopReport {
            session_id: id,
            running: effect.running,
            closed_generation: effect.closed_generation,
        })
    }

    /// CONTROL-1, REPLICA-3: a stop for a session whose turn does not run here. With
    /// other processes on the store, a turn open in the session's event log runs in one
    /// of them: the stop is recorded here (the core's `turn.stopped`, the assent window
    /// closes) and the owner, hearing that commit ([`Agent::hear`]), stops its turn as a
    /// local stop does. The read of the log and the commit are one compare-and-set on the
    /// session's version, so two stops at once record one `turn.stopped`. Alone on the
    /// store (SQLite), no turn runs anywhere else: [`AgentError::NoRunningTurn`].
    async fn stop_elsewhere(
        &self,
        id: SessionId,
        by: Option<&Decider>,
    ) -> Result<StopReport, AgentError> {
        if self.inner.replication.is_none() {
            return Err(AgentError::NoRunningTurn(id));
        }
        for _ in 0..CAS_ATTEMPTS {
            let version = self.session(id).await?.record.version;
            let events = self.session_events(id).await?;
            match TurnState::after(events.iter().map(|r| &r.event)) {
                TurnState::Idle => return Err(AgentError::NoRunningTurn(id)),
                TurnState::Stopping => return Err(AgentError::AlreadyStopping(id)),
                TurnState::Running => {}
            }
            // The read above is the store's; so must be the version the commit checks.
            self.inner.cache.forget(id);
            let effect = self
                .mutate(id, |session, now| {
                    (session.record().version == version).then(|| session.handle_stop(now, by))
                })
                .await?;
            let Some(effect) = effect else { continue };
            tracing::info!(
                target: "nomos::audit",
                session = %id,
                principal = by.map_or("-", |d| d.name.as_str()),
                request = by.and_then(|d| d.request_id.as_deref()).unwrap_or("-"),
                "operator stopped a turn another process runs"
            );
            return Ok(StopReport {
                session_id: id,
                running: effect.running,
                closed_generation: effect.closed_generation,
            });
        }
        Err(AgentError::AlreadyStopping(id))
    }

    /// REPLICA-3: an event another process committed. A `turn.stopped` for a turn this
    /// process runs stops it as a local stop does (its one `turn.done` follows), if the
    /// stop still targets that turn: a stop recorded after its turn ended, or before the
    /// next one started, does nothing.
    pub fn hear(&self, record: &EventRecord) {
        if !matches!(record.event, DomainEvent::TurnStopped { .. }) {
            return;
        }
        let id = record.session_id;
        let Some(control) = self.inner.controls.get(id) else {
            return;
        };
        if control.is_stopped() {
            return;
        }
        let agent = self.clone();
        tokio::spawn(async move {
            match agent.session_events(id).await {
                Ok(events) => {
                    if TurnState::after(events.iter().map(|r| &r.event)) == TurnState::Stopping {
                        // The session's cache may hold the version before the stop.
                        agent.inner.cache.forget(id);
                        control.request_stop();
                        tracing::info!(session = %id, "another process recorded a stop; stopping the turn");
                    }
                }
                Err(error) => {
                    tracing::warn!(session = %id, %error, "could not read a stop another process recorded");
                }
            }
        });
    }

    /// Every event of a session, oldest first.
    async fn session_events(&self, id: SessionId) -> Result<Vec<EventRecord>, AgentError> {
        let mut all = Vec::new();
        loop {
            let after = all.last().map_or(0, |r: &EventRecord| r.seq);
            let page = self.inner.store.events_after(Some(id), after, PAGE).await?;
            let n = page.len();
            all.extend(page);
            if n < PAGE as usize {
                return Ok(all);
            }
        }
    }

    /// Runs a turn's work until it ends or the operator stops it. A stop drops the work
    /// (and with it the model request), waits for the stopped commands to be recorded,
    /// cancels any left `running`, adds the note for the model, and fails the turn with
    /// [`TurnFailure::Stopped`].
    pub(crate) async fn stoppable(
        &self,
        id: SessionId,
        work: impl Future<Output = Result<(), TurnFailure>>,
    ) -> Result<(), TurnFailure> {
        let control = self.inner.controls.open(id);
        let res = tokio::select! {
            biased;
            () = control.stopped() => None,
            res = work => Some(res),
        };
        match res {
            Some(res) if !control.is_stopped() => res,
            _ => {
                self.finish_stop(id, &control).await;
                Err(TurnFailure::Stopped)
            }
        }
    }

    async fn finish_stop(&self, id: SessionId, control: &TurnControl) {
        if tokio::time::timeout(DRAIN_LIMIT, control.drained())
            .await
            .is_err()
        {
            tracing::warn!(session = %id, "stopped commands were not recorded in time");
        }
        // A command committed `running` whose task never started (the turn was dropped
        // between the two) is stopped and cancelled here; so is any a task left behind.
        let leftovers: Vec<(ExecutionId, String)> = match self.session(id).await {
            Ok(snapshot) => snapshot
                .executions
                .into_iter()
                .filter(|e| e.status == ExecutionStatus::Running)
                .map(|e| (e.id, e.host))
                .collect(),
            Err(_) => Vec::new(),
        };
        for (execution_id, host) in leftovers {
            self.stop_process(&host, execution_id).await;
            let _ = self
                .mutate_recovering(id, |session, now| {
                    session.handle_execution_stopped(now, execution_id)
                })
                .await
                .map(|(_, events)| self.publish(&events));
        }
        let _ = self
            .mutate(id, |session, now| session.append_stopped_note(now))
            .await;
    }

    /// Runs one command for a turn that may be stopped: on a stop the run is dropped (the
    /// executor stops what it started: a local command's process group is killed), and a
    /// remote command's marked processes are stopped through the executor's clean-up,
    /// which returns once nothing of the command runs.
    pub(crate) async fn run_stoppable(
        &self,
        control: Option<&TurnControl>,
        host: &str,
        command: &str,
        limits: ExecLimits,
        execution_id: ExecutionId,
        session_id: SessionId,
    ) -> RunEnd {
        let marker = execution_id.to_string();
        // EXEC-10: the output streams live while the command runs; every chunk is out
        // before the end is recorded.
        let (live, published) =
            crate::live::live_output(self.inner.bus.clone(), session_id, execution_id);
        let run = self
            .inner
            .executor
            .run_streamed(host, command, limits, &marker, live);
        let end = self.race_stop(control, host, execution_id, run).await;
        let _ = tokio::time::timeout(Duration::from_secs(2), published).await;
        end
    }

    async fn race_stop(
        &self,
        control: Option<&TurnControl>,
        host: &str,
        execution_id: ExecutionId,
        run: impl Future<Output = Result<ExecOutput, ExecError>>,
    ) -> RunEnd {
        let Some(control) = control else {
            return RunEnd::Finished(run.await);
        };
        let res = tokio::select! {
            biased;
            () = control.stopped() => None,
            res = run => Some(res),
        };
        match res {
            Some(res) => RunEnd::Finished(res),
            None => {
                // Dropping the run killed a local command's process group at once; a
                // remote command's clean-up runs on a channel of its own, and is waited
                // for here so nothing of it runs once the turn ends.
                if !self.is_local(host) {
                    self.stop_process(host, execution_id).await;
                }
                RunEnd::Stopped
            }
        }
    }

    fn is_local(&self, host: &str) -> bool {
        self.inner
            .executor
            .hosts()
            .iter()
            .any(|h| h.slug == host && h.address == "local")
    }

    async fn stop_process(&self, host: &str, execution_id: ExecutionId) {
        let marker = execution_id.to_string();
        if let Err(error) = self.inner.executor.stop_marked(host, &marker).await {
            tracing::warn!(%execution_id, host, %error, "could not confirm a stopped command is gone");
        }
    }
}
