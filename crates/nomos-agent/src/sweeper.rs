//! The background work that keeps sessions from getting stuck: the start-up reconcile
//! (EXEC-3, EXEC-6), the execution sweep (EXEC-3), the idle-session sweep (SWEEP-1..3),
//! approval expiry (GATE-7) and the close of expired assent windows (GATE-4).

use nomos_core::event::TurnCause;
use nomos_core::ports::store::{ExecutionFilter, SessionFilter};
use nomos_core::resume::ResumeKind;
use nomos_core::sweep::{
    ExecutionVerdict, LastMessage, SessionVerdict, SweepPhase, approval_expired, classify_execution,
};
use nomos_core::{ExecutionStatus, SessionId, SessionStatus};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::agent::Agent;
use crate::error::AgentError;
use crate::turn::TurnReport;

/// What one sweep changed, by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Executions marked `failed` (timed out, or interrupted at start-up).
    pub executions_failed: u32,
    /// Executions marked `cancelled` (stale at start-up).
    pub executions_cancelled: u32,
    /// Approvals that expired.
    pub approvals_expired: u32,
    /// Sessions nudged (SWEEP-1).
    pub sessions_nudged: u32,
    /// Sessions completed as `success` (SESSION-4 catching up).
    pub sessions_completed: u32,
    /// Sessions closed as `partial` (SWEEP-2).
    pub sessions_closed: u32,
    /// Commands a previous run left running, stopped at start-up (EXEC-8).
    pub commands_stopped: u32,
    /// Turns left open by a previous run, closed at start-up (TURN-11).
    pub turns_closed: u32,
}

/// Stops the background workers.
#[derive(Debug)]
pub struct Workers {
    agent: Agent,
    stop: watch::Sender<bool>,
    handle: JoinHandle<()>,
}

impl Workers {
    /// Asks the workers to stop and waits until they did; the session timers stop too.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.handle.await;
        self.agent.inner.timers.disable();
    }
}

const NON_TERMINAL_EXECUTIONS: [ExecutionStatus; 3] = [
    ExecutionStatus::PendingApproval,
    ExecutionStatus::Approved,
    ExecutionStatus::Running,
];

impl Agent {
    /// EXEC-3, EXEC-6, EXEC-8, TURN-11: run once at start-up, before serving. Commands
    /// found `running` are stopped on their hosts, then marked failed ("interrupted:
    /// outcome unknown") and never re-run; old non-terminal ones are cancelled. Each
    /// affected session gets a note saying so. Turns left open get their `turn.done`.
    /// With a shared store (REPLICA-2) it touches only what no live instance owns, and
    /// waits a little for another process's sweep to end (each session it changes is
    /// leased all the same, so two reconciles never change one session at once).
    pub async fn reconcile_startup(&self) -> Result<SweepReport, AgentError> {
        let lease = self
            .sweep_lease(crate::replica::STARTUP_SWEEP_WAIT)
            .await?
            .flatten();
        let report = self.reconcile_orphans().await;
        if let Some(lease) = lease {
            lease.release().await;
        }
        report
    }

    /// The start-up reconcile's work, on what no live instance owns.
    pub(crate) async fn reconcile_orphans(&self) -> Result<SweepReport, AgentError> {
        let open_turns = self.open_orphan_turns().await?;
        let commands_stopped = self.stop_orphaned_commands().await?;
        let mut report = self.sweep_executions(SweepPhase::Startup).await?;
        report.commands_stopped = commands_stopped;
        report.turns_closed = self.close_open_turns(open_turns).await?;
        Ok(report)
    }

    /// One pass of every periodic sweep. The nudge turns it starts (SWEEP-1) run side by
    /// side, each holding its session, and the pass ends when they have.
    /// With a shared store one process at a time sweeps (REPLICA-2): a pass that finds
    /// the sweep lease taken does nothing; the sweeper first closes what instances whose
    /// heartbeat lapsed left behind.
    pub async fn sweep_once(&self) -> Result<SweepReport, AgentError> {
        let Some(lease) = self.sweep_lease(std::time::Duration::ZERO).await? else {
            return Ok(SweepReport::default());
        };
        let report = self.sweep_pass().await;
        if let Some(lease) = lease {
            lease.release().await;
        }
        report
    }

    async fn sweep_pass(&self) -> Result<SweepReport, AgentError> {
        let mut report = SweepReport::default();
        self.close_lapsed(&mut report).await?;
        let swept = self.sweep_executions(SweepPhase::Periodic).await?;
        report.executions_failed += swept.executions_failed;
        report.executions_cancelled += swept.executions_cancelled;
        self.expire_approvals(&mut report).await?;
        let mut nudges = Vec::new();
        let res = self.sweep_sessions(&mut report, &mut nudges).await;
        for nudge in nudges {
            if let Err(join) = nudge.await {
                tracing::error!(error = %join, "a nudge turn ended abnormally");
            }
        }
        res.map(|()| report)
    }

    /// Starts the background work: the periodic sweeps on the configured interval, and
    /// the session timers that expire approvals and assent windows at their deadlines
    /// (GATE-4, GATE-7), armed from the core's next deadline after every commit.
    pub fn start_workers(&self) -> Workers {
        self.start_workers_with(|_| {})
    }

    /// [`Agent::start_workers`], handing every sweep's report to `on_sweep` (a server's
    /// metrics count them).
    pub fn start_workers_with(
        &self,
        on_sweep: impl Fn(&SweepReport) + Send + Sync + 'static,
    ) -> Workers {
        let (stop, mut stopped) = watch::channel(false);
        let agent = self.clone();
        let period = self.inner.config.sweep_interval.to_std();
        self.inner.timers.enable();
        let handle = tokio::spawn(async move {
            agent.arm_pending_expiries().await;
            let mut interval = tokio::time::interval(period);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            interval.tick().await;
            loop {
                tokio::select! {
                    _ = interval.tick() => {
                        match agent.sweep_once().await {
                            Ok(report) => {
                                if report != SweepReport::default() {
                                    tracing::info!(?report, "sweep");
                                }
                                on_sweep(&report);
                            }
                            Err(err) => tracing::error!(error = %err, "sweep failed"),
                        }
                    }
                    _ = stopped.changed() => break,
                }
            }
        });
        Workers {
            agent: self.clone(),
            stop,
            handle,
        }
    }

    /// Arms the timers of sessions whose approvals a previous run left pending.
    async fn arm_pending_expiries(&self) {
        let pending = match self.inner.store.pending_approvals(None).await {
            Ok(pending) => pending,
            Err(error) => {
                tracing::warn!(%error, "could not read pending approvals; the sweep expires them");
                return;
            }
        };
        let mut earliest: std::collections::HashMap<SessionId, nomos_core::Timestamp> =
            std::collections::HashMap::new();
        for approval in pending {
            let at = earliest
                .entry(approval.session_id)
                .or_insert(approval.expires_at);
            *at = (*at).min(approval.expires_at);
        }
        for (id, at) in earliest {
            self.inner.timers.arm(self, id, Some(at));
        }
    }

    async fn sweep_executions(&self, phase: SweepPhase) -> Result<SweepReport, AgentError> {
        let mut report = SweepReport::default();
        let statuses = match phase {
            SweepPhase::Periodic => vec![ExecutionStatus::Running],
            SweepPhase::Startup => NON_TERMINAL_EXECUTIONS.to_vec(),
        };
        let filter = ExecutionFilter {
            statuses,
            ..ExecutionFilter::default()
        };
        let executions = self.inner.store.list_executions(&filter).await?;
        let ids: Vec<_> = executions.iter().map(|e| e.id).collect();
        let owners = self.owners(&ids, &[]).await?;
        let now = self.now();
        for execution in executions {
            // REPLICA-2: a live instance's executions are its own business.
            if owners.leaves_execution(phase.into(), execution.id) {
                continue;
            }
            let verdict = classify_execution(&execution, now, &self.inner.config.sweep, phase);
            if verdict == ExecutionVerdict::Keep {
                continue;
            }
            let id = execution.session_id;
            // A live turn owns its executions; the sweep waits its turn.
            let Some(_guard) = self.lock_for_sweep(id, phase).await else {
                continue;
            };
            let note = match (&verdict, phase) {
                (ExecutionVerdict::Fail { reason }, SweepPhase::Startup) => Some(format!(
                    "The command `{}` on {} was running when Nomos stopped: {reason}. Check its effect read-only before trying again; it needs a new approval to run.",
                    execution.command, execution.host
                )),
                _ => None,
            };
            // The verdict is on what the store holds: decided on it, not on a cached
            // aggregate that a write outside this agent may have left behind.
            self.inner.cache.forget(id);
            let applied = self
                .mutate(id, |session, now| {
                    let res = session.apply_execution_verdict(now, execution.id, &verdict);
                    if res.is_ok()
                        && let Some(note) = &note
                    {
                        session.append_note(now, note);
                    }
                    // FLEET-2: the fan-out's queued hosts never start now; said once,
                    // when its last open host is settled.
                    if res.is_ok()
                        && phase == SweepPhase::Startup
                        && let Some(note) = session.interrupted_fanout_note(execution.id)
                    {
                        session.append_note(now, &note);
                    }
                    res
                })
                .await?;
            if applied.is_ok() {
                match verdict {
                    ExecutionVerdict::Fail { .. } => report.executions_failed += 1,
                    ExecutionVerdict::Cancel { .. } => report.executions_cancelled += 1,
                    ExecutionVerdict::Keep => {}
                }
            }
        }
        Ok(report)
    }

    async fn expire_approvals(&self, report: &mut SweepReport) -> Result<(), AgentError> {
        let now = self.now();
        let pending = self.inner.store.pending_approvals(None).await?;
        let mut sessions: Vec<SessionId> = pending
            .iter()
            .filter(|a| approval_expired(a, now))
            .map(|a| a.session_id)
            .collect();
        sessions.dedup();
        for id in sessions {
            let Some(_guard) = self.inner.locks.try_lock(id).await else {
                continue;
            };
            let expired = self
                .mutate(id, |session, now| session.handle_timeout(now))
                .await?;
            report.approvals_expired += expired.len() as u32;
        }
        Ok(())
    }

    async fn sweep_sessions(
        &self,
        report: &mut SweepReport,
        nudges: &mut Vec<JoinHandle<TurnReport>>,
    ) -> Result<(), AgentError> {
        let mut after = None;
        loop {
            let filter = SessionFilter {
                statuses: vec![
                    SessionStatus::Active,
                    SessionStatus::Planning,
                    SessionStatus::Executing,
                    SessionStatus::AwaitingInput,
                ],
                after,
                limit: Some(500),
                ..SessionFilter::default()
            };
            let page = self.inner.store.list_sessions(&filter).await?;
            let Some(last) = page.last() else { break };
            after = Some(last.id);
            for record in &page {
                if let Some(nudge) = self.sweep_session(record.id, report).await? {
                    nudges.push(nudge);
                }
            }
        }
        Ok(())
    }

    /// SWEEP-1..3 for one session. A nudge resumes the model with the nudge note through
    /// the resume path every turn takes (a turn whose cause is `nudge`); the returned task
    /// runs that turn and holds the session until it ends, so no sweep judges the session
    /// while its nudge turn runs, and the first sweep after it ends closes the session as
    /// `partial` when the turn did nothing (SWEEP-2).
    async fn sweep_session(
        &self,
        id: SessionId,
        report: &mut SweepReport,
    ) -> Result<Option<JoinHandle<TurnReport>>, AgentError> {
        // A session with a live turn is not idle.
        let Some(guard) = self.inner.locks.try_lock(id).await else {
            return Ok(None);
        };
        // The session's last word, read before the decision (the store holds transcripts).
        let last = self.inner.store.last_messages(&[id]).await?.pop();
        let thresholds = self.inner.config.sweep;
        // SWEEP-4: decided inside the commit, on the session as it is then, so a retry
        // after a conflict decides again instead of re-applying a stale verdict.
        let outcome = self
            .mutate(id, |session, now| {
                session.handle_sweep(now, &thresholds, last.as_ref().map(LastMessage::of))
            })
            .await?;
        report.approvals_expired += outcome.expired.len() as u32;
        let verdict = outcome.verdict;
        match verdict {
            SessionVerdict::Leave { .. } => return Ok(None),
            SessionVerdict::Nudge => report.sessions_nudged += 1,
            SessionVerdict::CompleteTrivial { .. } => report.sessions_completed += 1,
            SessionVerdict::ClosePartial { .. } => report.sessions_closed += 1,
        }
        // The nudge note (RESUME-1: it quotes the operator's last message and the plan in
        // flight) is written by the resume path, attempt by attempt.
        if verdict != SessionVerdict::Nudge {
            return Ok(None);
        }
        let agent = self.clone();
        Ok(Some(tokio::spawn(async move {
            agent
                .resume_locked(id, guard, ResumeKind::IdleNudge, TurnCause::Nudge)
                .await
        })))
    }

    async fn lock_for_sweep(
        &self,
        id: SessionId,
        phase: SweepPhase,
    ) -> Option<crate::locks::SessionGuard> {
        match phase {
            // At start-up nothing else runs yet.
            SweepPhase::Startup => Some(self.inner.locks.lock(id).await),
            SweepPhase::Periodic => self.inner.locks.try_lock(id).await,
        }
    }
}
