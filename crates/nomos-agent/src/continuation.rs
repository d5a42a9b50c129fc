//! Decisions and resumes: an operator's decision runs or cancels the execution and
//! resumes the session with the outcome (EXEC-4); a resume retries with escalating
//! notes and back-off, and ends visibly when it cannot get a reply (RESUME-1..3).

use nomos_core::event::TurnCause;
use nomos_core::fanout::FanoutId;
use nomos_core::plan_digest::PlanDigest;
use nomos_core::record::Decider;
use nomos_core::resume::{
    PlanInFlight, ResumeKind, continuation_outcome, resume_note, terminal_note,
};
use nomos_core::session::{Action, PlanDecided, PlanDecision};
use nomos_core::{ApprovalId, ApprovalStatus, Decision, ExecutionId, SessionId};
use tokio::task::JoinHandle;

use crate::agent::Agent;
use crate::error::AgentError;
use crate::history::last_operator_message;
use crate::locks::SessionGuard;
use crate::turn::{TurnFailure, TurnReport};

/// What a decision did.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionReport {
    /// The session.
    pub session_id: SessionId,
    /// The execution the approval guarded.
    pub execution_id: ExecutionId,
    /// Whether it ran (approve) or not (deny).
    pub dispatched: bool,
    /// FLEET-1: the fan-out the approval covered, when it covered a group.
    pub fanout: Option<FanoutId>,
    /// AUTHZ-3: an approval short of the number of distinct operators the request needs:
    /// nothing ran and nothing resumes; the request still waits for the others.
    pub awaiting: Option<Awaiting>,
}

/// AUTHZ-3: how far a request that needs several operators got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Awaiting {
    /// Distinct operators who approved it so far.
    pub approvals: u32,
    /// How many it needs.
    pub required: u32,
}

/// What an explicit plan decision did (GATE-4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanDecisionReport {
    /// The session.
    pub session_id: SessionId,
    /// The generation decided.
    pub generation: u32,
    /// What was decided.
    pub decision: PlanDecision,
    /// AUTHZ-3: an approval short of the distinct operators the plan needs: the window
    /// stays shut, nothing runs and no turn starts.
    pub awaiting: Option<Awaiting>,
}

impl Agent {
    /// GATE-7, EXEC-4: decides an approval by its id, runs the execution when approved,
    /// then resumes the session with the outcome and waits for that turn to end.
    pub async fn decide(
        &self,
        approval_id: ApprovalId,
        decision: Decision,
        decided_by: Option<&str>,
    ) -> Result<(DecisionReport, TurnReport), AgentError> {
        let decider = decided_by.map(Decider::named);
        let (report, guard) = self
            .record_decision(approval_id, decision, decider.as_ref(), None)
            .await?;
        let turn = self.continue_after_decision(&report, guard).await;
        Ok((report, turn))
    }

    /// Like [`Agent::decide`], but only the decision is awaited: the execution and the
    /// continuation run in a task of their own.
    pub async fn spawn_decide(
        &self,
        approval_id: ApprovalId,
        decision: Decision,
        decided_by: Option<&str>,
    ) -> Result<(DecisionReport, JoinHandle<TurnReport>), AgentError> {
        let decider = decided_by.map(Decider::named);
        self.spawn_decide_by(approval_id, decision, decider.as_ref())
            .await
    }

    /// [`Agent::spawn_decide`] recording who decided and the request that carried the
    /// decision (AUDIT-1).
    pub async fn spawn_decide_by(
        &self,
        approval_id: ApprovalId,
        decision: Decision,
        decided_by: Option<&Decider>,
    ) -> Result<(DecisionReport, JoinHandle<TurnReport>), AgentError> {
        self.spawn_decide_with(approval_id, decision, decided_by, None)
            .await
    }

    /// [`Agent::spawn_decide_by`] with the operator's reason for a denial (CONTROL-4):
    /// the continuation tells the model the operator denied the command and why.
    pub async fn spawn_decide_with(
        &self,
        approval_id: ApprovalId,
        decision: Decision,
        decided_by: Option<&Decider>,
        reason: Option<&str>,
    ) -> Result<(DecisionReport, JoinHandle<TurnReport>), AgentError> {
        let (report, guard) = self
            .record_decision(approval_id, decision, decided_by, reason)
            .await?;
        let agent = self.clone();
        let task_report = report.clone();
        let handle =
            tokio::spawn(async move { agent.continue_after_decision(&task_report, guard).await });
        Ok((report, handle))
    }

    async fn record_decision(
        &self,
        approval_id: ApprovalId,
        decision: Decision,
        decided_by: Option<&Decider>,
        reason: Option<&str>,
    ) -> Result<(DecisionReport, SessionGuard), AgentError> {
        let approval = self
            .inner
            .store
            .approval(approval_id)
            .await?
            .ok_or(AgentError::ApprovalNotFound(approval_id))?;
        let id = approval.session_id;
        // Decisions wait for a running turn of the session to end, then act alone.
        let guard = self.inner.locks.lock(id).await;
        // Decided on what the store holds: another process sharing the store (an MCP
        // client's `nomos-server mcp`) may have requested the approval.
        self.inner.cache.forget(id);
        // EXEC-6: an approval that dispatches marks the execution `running` in the same
        // commit; a refused decision (second, late, void, or an execution that can no
        // longer start) is an error here and nothing runs.
        let (decided, actions) = self
            .mutate_acting(id, |session, now| {
                let decided =
                    session.handle_decision_with(now, approval_id, decision, decided_by, reason);
                // AUTHZ-3: an approval the core counted but that does not decide yet.
                let awaiting = session
                    .approvals()
                    .iter()
                    .find(|a| a.id == approval_id)
                    .filter(|a| a.status == ApprovalStatus::Pending && decided.is_ok())
                    .map(|a| Awaiting {
                        approvals: a.approved_by.len() as u32,
                        required: a.approvers_required,
                    });
                decided.map(|_| awaiting)
            })
            .await?;
        let awaiting = match decided {
            Ok(awaiting) => awaiting,
            Err(error) => {
                // AUTHZ-4: every decision is a structured audit line, a refused one too.
                tracing::warn!(
                    target: "nomos::audit",
                    session = %id,
                    approval = %approval_id,
                    principal = decided_by.map_or("-", |d| d.name.as_str()),
                    request = decided_by.and_then(|d| d.request_id.as_deref()).unwrap_or("-"),
                    decision = decision.as_str(),
                    %error,
                    "decision refused"
                );
                return Err(error.into());
            }
        };
        // The shell acts on what the core queued: at most the one dispatch of the
        // execution this approval guards, or the start of its fan-out (FLEET-2).
        let mut dispatched = false;
        let mut fanout: Option<FanoutId> = None;
        for action in actions {
            match action {
                Action::Dispatch { execution_id } if execution_id == approval.execution_id => {
                    dispatched = true;
                }
                Action::StartFanout { fanout_id } if fanout.is_none() => {
                    fanout = Some(fanout_id);
                    dispatched = true;
                }
                other => {
                    tracing::error!(?other, %approval_id, "a decision queued another action; not acting on it");
                }
            }
        }
        tracing::info!(
            target: "nomos::audit",
            session = %id,
            execution = %approval.execution_id,
            host = %approval.binding.host,
            class = approval.binding.class.as_str(),
            principal = decided_by.map_or("-", |d| d.name.as_str()),
            request = decided_by.and_then(|d| d.request_id.as_deref()).unwrap_or("-"),
            decision = decision.as_str(),
            dispatched,
            approvals = awaiting.map_or(0, |a| a.approvals),
            approvers_required = awaiting.map_or(0, |a| a.required),
            "operator decided"
        );
        // CONTROL-1: the command the decision runs and the continuation can be stopped.
        self.inner.controls.open(id);
        let report = DecisionReport {
            session_id: id,
            execution_id: approval.execution_id,
            dispatched,
            fanout,
            awaiting,
        };
        Ok((report, guard))
    }

    async fn continue_after_decision(
        &self,
        report: &DecisionReport,
        guard: SessionGuard,
    ) -> TurnReport {
        let id = report.session_id;
        // AUTHZ-3: the request still waits for another operator: nothing to continue.
        if report.awaiting.is_some() {
            drop(guard);
            return TurnReport::new(id);
        }
        // FLEET-2: an approved fan-out runs through its window; the model reads its table.
        if let (true, Some(fanout_id)) = (report.dispatched, report.fanout) {
            let (_, table) = self.drive_fanout(id, fanout_id, None).await;
            let outcome = format!("The operator approved the fan-out and it ran:\n{table}");
            return self
                .resume_locked(
                    id,
                    guard,
                    ResumeKind::Continuation { outcome },
                    TurnCause::Continuation,
                )
                .await;
        }
        if report.dispatched {
            let execution = self.session(id).await.ok().and_then(|snapshot| {
                snapshot
                    .executions
                    .into_iter()
                    .find(|e| e.id == report.execution_id)
            });
            if let Some(execution) = execution {
                let _ = self
                    .dispatch(id, execution.id, execution.host, execution.command, None)
                    .await;
            }
        }
        let outcome = match self.session(id).await {
            Ok(snapshot) => {
                let execution = snapshot
                    .executions
                    .iter()
                    .find(|e| e.id == report.execution_id);
                let approval = snapshot
                    .approvals
                    .iter()
                    .find(|a| a.execution_id == report.execution_id);
                execution
                    .map(|e| continuation_outcome(e, approval))
                    .unwrap_or_default()
            }
            Err(_) => String::new(),
        };
        self.resume_locked(
            id,
            guard,
            ResumeKind::Continuation { outcome },
            TurnCause::Continuation,
        )
        .await
    }

    /// GATE-4 (rev. 2), AUDIT-1: the operator's explicit decision on plan `generation` as
    /// shown to them (its `digest`, rev. 3), decided by the core ([`nomos_core::session::Session::handle_plan_decision`]); a
    /// generation that is not current or does not wait is refused
    /// ([`AgentError::PlanDecision`]) and nothing changes. Like an operator message, the
    /// decision then starts a turn (cause `operator`): on approval the model reads that the
    /// plan is approved and advances it, on rejection that it was rejected. The decision
    /// waits for a running turn of the session to end; the turn runs in a task of its own.
    /// AUTHZ-3: an approval short of the plan's distinct operators starts no turn (the
    /// handle is `None` and the report says how far the plan got).
    pub async fn spawn_decide_plan(
        &self,
        id: SessionId,
        generation: u32,
        digest: &PlanDigest,
        decision: PlanDecision,
        reason: Option<&str>,
        by: Option<&Decider>,
    ) -> Result<(PlanDecisionReport, Option<JoinHandle<TurnReport>>), AgentError> {
        self.session(id).await?;
        let guard = self.inner.locks.lock(id).await;
        // Decided on what the store holds: another process sharing the store may have
        // proposed or revised the plan.
        self.inner.cache.forget(id);
        let decided = self
            .mutate(id, |session, now| {
                let decided =
                    session.handle_plan_decision(now, generation, digest, decision, reason, by);
                if let Ok(PlanDecided::Decided { .. }) = decided {
                    session.handle_turn_started(now, TurnCause::Operator);
                }
                decided
            })
            .await?;
        let decided = match decided {
            Ok(decided) => decided,
            Err(err) => {
                // AUTHZ-4: every decision is a structured audit line, a refused one too.
                tracing::warn!(
                    target: "nomos::audit",
                    session = %id,
                    generation,
                    principal = by.map_or("-", |d| d.name.as_str()),
                    request = by.and_then(|d| d.request_id.as_deref()).unwrap_or("-"),
                    decision = decision.as_str(),
                    error = %err,
                    "plan decision refused"
                );
                return Err(err.into());
            }
        };
        let generation = decided.generation();
        if let PlanDecided::Awaiting {
            approvals,
            required,
            ..
        } = decided
        {
            tracing::info!(
                target: "nomos::audit",
                session = %id,
                generation,
                principal = by.map_or("-", |d| d.name.as_str()),
                request = by.and_then(|d| d.request_id.as_deref()).unwrap_or("-"),
                decision = decision.as_str(),
                approvals,
                required,
                "operator approved the plan; it needs more operators"
            );
            let report = PlanDecisionReport {
                session_id: id,
                generation,
                decision,
                awaiting: Some(Awaiting {
                    approvals,
                    required,
                }),
            };
            return Ok((report, None));
        }
        tracing::info!(
            target: "nomos::audit",
            session = %id,
            generation,
            principal = by.map_or("-", |d| d.name.as_str()),
            request = by.and_then(|d| d.request_id.as_deref()).unwrap_or("-"),
            decision = decision.as_str(),
            "operator decided the plan"
        );
        // CONTROL-1: from here the turn can be stopped.
        self.inner.controls.open(id);
        let agent = self.clone();
        let handle =
            tokio::spawn(async move { agent.drive_turn(id, guard, TurnCause::Operator).await });
        Ok((
            PlanDecisionReport {
                session_id: id,
                generation,
                decision,
                awaiting: None,
            },
            Some(handle),
        ))
    }

    /// RESUME-1: resumes a session (reconnect, `/resume`). Refused while a turn runs.
    pub async fn resume(&self, id: SessionId, kind: ResumeKind) -> Result<TurnReport, AgentError> {
        self.session(id).await?;
        let guard = self
            .inner
            .locks
            .try_lock(id)
            .await
            .ok_or(AgentError::TurnInProgress(id))?;
        Ok(self.resume_locked(id, guard, kind, TurnCause::Resume).await)
    }

    /// Like [`Agent::resume`], but the resume runs in a task of its own; a turn already
    /// running is still refused here, before anything is spawned (TURN-8).
    pub async fn spawn_resume(
        &self,
        id: SessionId,
        kind: ResumeKind,
    ) -> Result<JoinHandle<TurnReport>, AgentError> {
        self.session(id).await?;
        let guard = self
            .inner
            .locks
            .try_lock(id)
            .await
            .ok_or(AgentError::TurnInProgress(id))?;
        let agent = self.clone();
        Ok(tokio::spawn(async move {
            agent
                .resume_locked(id, guard, kind, TurnCause::Resume)
                .await
        }))
    }

    /// RESUME-2/3: up to `max_attempts` turns, each with a more directive note and a
    /// back-off before it; when none gets a usable reply, an operator-visible terminal note
    /// with the last real error. One `turn.started` and one `turn.done` in all.
    pub(crate) async fn resume_locked(
        &self,
        id: SessionId,
        guard: SessionGuard,
        kind: ResumeKind,
        cause: TurnCause,
    ) -> TurnReport {
        let mut report = TurnReport {
            session_id: id,
            n_tool_calls: 0,
            final_text: None,
            error: None,
            approvals_requested: Vec::new(),
            usage: Default::default(),
        };
        if let Err(err) = self
            .mutate(id, |session, now| session.handle_turn_started(now, cause))
            .await
        {
            self.end_turn(id, &mut report, Some(TurnFailure::Agent(err)), cause, guard)
                .await;
            return report;
        }
        let retry = self.inner.config.resume.clone();
        let mut last_failure: Option<TurnFailure> = None;
        let mut attempt = 1;
        while let Some(delay) = retry.delay_before(attempt) {
            if delay.as_millis() > 0 {
                tokio::time::sleep(delay.to_std()).await;
            }
            if let Err(err) = self.append_resume_note(id, &kind, attempt).await {
                last_failure = Some(TurnFailure::Agent(err));
                break;
            }
            match self.stoppable(id, self.turn_loop(id, &mut report)).await {
                Ok(()) => {
                    self.end_turn(id, &mut report, None, cause, guard).await;
                    return report;
                }
                // CONTROL-1: a stop ends the turn; it is never retried.
                Err(TurnFailure::Stopped) => {
                    self.end_turn(id, &mut report, Some(TurnFailure::Stopped), cause, guard)
                        .await;
                    return report;
                }
                // A failure after progress is the turn's own error, not a failed resume.
                Err(failure) if report.n_tool_calls > 0 => {
                    self.end_turn(id, &mut report, Some(failure), cause, guard)
                        .await;
                    return report;
                }
                Err(failure) => {
                    tracing::warn!(session = %id, attempt, error = %failure, "resume got no usable reply");
                    last_failure = Some(failure);
                }
            }
            attempt += 1;
        }
        let error = last_failure
            .map(|f| f.to_string())
            .unwrap_or_else(|| "no reply".to_owned());
        let note = terminal_note(&error, attempt.saturating_sub(1).max(1));
        let _ = self
            .mutate(id, |session, now| session.append_note(now, &note))
            .await;
        self.end_turn(
            id,
            &mut report,
            Some(TurnFailure::Agent(AgentError::ResumeFailed(error))),
            cause,
            guard,
        )
        .await;
        report
    }

    async fn append_resume_note(
        &self,
        id: SessionId,
        kind: &ResumeKind,
        attempt: u32,
    ) -> Result<(), AgentError> {
        let snapshot = self.session(id).await?;
        let messages = self.inner.store.messages(id).await?;
        let plan = PlanInFlight::of(&snapshot);
        let note = resume_note(
            last_operator_message(&messages),
            plan.as_ref(),
            kind,
            attempt,
        );
        self.mutate(id, |session, now| {
            session.append_note(now, &note);
        })
        .await
    }
}
