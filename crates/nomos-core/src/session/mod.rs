//! The session aggregate: one chat, one task, and every rule that governs it.
//!
//! # Protocol
//!
//! A [`Session`] is built from a store snapshot ([`Session::from_snapshot`]) or created
//! fresh ([`Session::create`]). It never performs I/O and never reads a clock: the shell
//! feeds it inputs through `handle_*` methods, always passing the current time, and drains
//! what it decided through three outputs.
//!
//! Inputs:
//!
//! * operator input: [`Session::handle_operator_message`], [`Session::handle_decision`],
//!   the explicit plan decision [`Session::handle_plan_decision`] (GATE-4), and the
//!   operator's controls (CONTROL-1/2): [`Session::handle_stop`] (then
//!   [`Session::handle_execution_stopped`] per stopped command and
//!   [`Session::append_stopped_note`]), [`Session::handle_revoke_assent`],
//!   [`Session::handle_cancel_approval`];
//! * model output: [`Session::append_assistant_message`], [`Session::handle_tool`],
//!   [`Session::record_tool_call`], [`Session::handle_knowledge_use`],
//!   [`Session::handle_extra_tool`] (an embedder's tool the shell runs itself),
//!   [`Session::handle_turn_started`], [`Session::handle_turn_end`] (with a [`TurnEnd`]
//!   and the configured sweep thresholds), [`Session::handle_turn_done`]; a turn's tool
//!   calls are counted against TURN-6 by a [`StepBudget`];
//! * executor results: [`Session::handle_execution_finished`];
//! * time and sweeps: [`Session::handle_timeout`], [`Session::handle_sweep`] (with the
//!   configured thresholds), [`Session::apply_session_verdict`] and
//!   [`Session::apply_execution_verdict`] (backfill and start-up repairs).
//!
//! Outputs, drained after every decision, in this order:
//!
//! 1. [`Session::take_commit`]: the rows and [`DomainEvent`]s decided, as one [`Commit`]
//!    the shell stores atomically; it reports the new version with [`Session::committed`].
//!    On a version conflict the shell drops this `Session` (with everything it queued),
//!    reloads, and decides again.
//! 2. [`Session::poll_action`]: what the shell must do, called until it returns `None`,
//!    only after the commit is stored. An [`Action::Dispatch`] is the only way a command
//!    runs (EXEC-1, EXEC-6): the core queues it in the same decision that marks the
//!    execution `running` (a `run` the gate lets through, or an approval), never twice for
//!    one execution, and refuses every other start. The shell runs the command once and
//!    reports its end with [`Session::handle_execution_finished`]. An
//!    [`Action::AwaitApproval`] tells it a request waits for the operator; a request
//!    resolved in the same decision (denied by policy, cancelled) leaves the queue again.
//! 3. [`Session::poll_timeout`]: when [`Session::handle_timeout`] is next due (the earliest
//!    expiry of a pending approval or of the assent window). The shell keeps one timer per
//!    session, re-armed from this after every drain; a fired timer is one more input.
//!
//! An expired window is also closed, with its `assent.closed` event, by the first gate
//! decision that notices it, so a late `handle_timeout` never lets an expired window
//! count. The `ToolReply::action` of a call says what that call decided (for the model's
//! result and the log); the shell acts on the queue.

mod approval;
mod bound;
mod close;
mod edit;
mod execution;
mod fanout;
mod lifecycle;
mod plan;
mod plan_approvers;
mod plan_decision;
mod plan_note;
mod preview_start;
mod repair;
mod revert;
mod revoke;
mod rows;
mod run;
mod safety;
mod snapshot;
mod stop;
pub mod text;
mod tool;
mod turn;
mod verify;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::sync::Arc;

use crate::authz::ApproverPolicy;
use crate::declared::AssentScope;
use crate::event::{DomainEvent, PendingEvent};
use crate::id::SessionId;
use crate::ports::store::{Commit, SessionSnapshot};
use crate::record::{
    Approval, Execution, KnowledgeLoop, Message, PlanStep, SessionRecord, ToolCallRecord,
};
use crate::status::SessionStatus;
use crate::time::{Span, Timestamp};
use rows::{Rows, Steps};

pub use approval::{DENY_REASON_MAX_CHARS, DecisionError, binding_hash, denial_text};
pub use close::{CLOSE_NOTE_MAX_CHARS, CLOSED_BY_OPERATOR, CloseEffect, CloseError};
pub use edit::{ApprovalEdit, EditError, EditFiled};
pub use execution::ExecutionError;
pub use fanout::GroupRun;
pub use lifecycle::{OperatorMessageEffect, SweepOutcome};
pub use plan::{StepDraft, is_writeback_step};
pub use plan_decision::{PlanDecided, PlanDecision, PlanDecisionError, STEP_REJECTED};
pub use preview_start::PreviewFor;
pub use repair::LEFTOVER_STEP_NOTE;
pub use revert::{ConfirmError, SETTLE_GRACE};
pub use revoke::{CANCELLED_BY_OPERATOR, RevokeError};
pub use safety::{MAX_NETS, RestoreError, SafetyRun, SafetyVerdict};
pub use snapshot::RollbackError;
pub use stop::{OPERATOR_STOPPED_NOTE, STOPPED_BY_OPERATOR, StopEffect, TurnState};
pub use tool::{Action, ExtraToolKind, KnowledgeUse, Revision, ToolInput, ToolReply};
pub use turn::{StepBudget, StepVerdict, TurnEnd};

/// Tunable rules of a session. No `Default`: use [`SessionConfig::spec_defaults`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    /// GATE-4: how long an assent window stays open.
    pub assent_window: Span,
    /// GATE-7: how long an approval request waits before it expires (expiry means deny).
    pub approval_ttl: Span,
    /// GATE-9: what assent approves: the declared commands (the default) or the window.
    pub assent_scope: AssentScope,
}

impl SessionConfig {
    /// The values SPEC.md names: 30 minutes each.
    pub fn spec_defaults() -> SessionConfig {
        SessionConfig {
            assent_window: Span::from_mins(30),
            approval_ttl: Span::from_mins(30),
            assent_scope: AssentScope::Declared,
        }
    }
}

/// One session and the rules that govern it. See the module docs for the protocol.
///
/// Whatever the model asks, the gate decides: a command that changes state before a plan
/// is refused (GATE-2), a read-only one is dispatched at once (GATE-1), and everything
/// decided leaves in one [`Commit`] that the shell stores atomically.
///
/// ```
/// use nomos_core::classify::classify;
/// use nomos_core::record::{ExecOutput, ToolCallOutcome};
/// use nomos_core::session::{Action, Session, SessionConfig, ToolInput};
/// use nomos_core::{ExecutionStatus, SessionId, Timestamp};
///
/// let now = Timestamp::from_millis(1_800_000_000_000);
/// let id = SessionId(uuid::Uuid::from_u128(1));
/// let mut session = Session::create(id, now, SessionConfig::spec_defaults());
/// let run = |command: &str| ToolInput::Run {
///     host: "local".into(),
///     command: command.into(),
///     classification: classify(command),
///     preview: None,
/// };
///
/// // GATE-2: nothing that changes state before a plan exists.
/// let reply = session.handle_tool(now, "call-1", run("systemctl restart nginx"));
/// assert_eq!(reply.outcome, ToolCallOutcome::Refused);
/// assert!(reply.action.is_none());
///
/// // GATE-1: a read-only command is dispatched at once, already marked `running` (EXEC-6).
/// let reply = session.handle_tool(now, "call-2", run("uptime"));
/// assert_eq!(reply.outcome, ToolCallOutcome::Ok);
/// assert_eq!(session.executions()[0].status, ExecutionStatus::Running);
///
/// // Outputs, in order: the commit (the shell stores it and reports the version), then
/// // the actions until `None`, then the one timer to arm.
/// let commit = session.take_commit();
/// assert_eq!(commit.expected_version, None, "a new session is inserted");
/// session.committed(1);
/// let Some(Action::Dispatch { execution_id }) = session.poll_action() else {
///     panic!("uptime is read-only: {reply:?}");
/// };
/// assert_eq!(session.poll_action(), None);
/// assert_eq!(session.poll_timeout(), None, "nothing waits for time");
///
/// // The shell runs the command once and reports its end: one more input.
/// let output = ExecOutput { exit_code: Some(0), stdout: "up 3 days".into(), ..ExecOutput::default() };
/// session.handle_execution_finished(now, execution_id, Ok(output))?;
/// assert_eq!(session.executions()[0].status, ExecutionStatus::Completed);
/// assert_eq!(session.take_commit().executions.len(), 1);
/// session.committed(2);
/// assert!(session.take_commit().is_empty(), "nothing was decided since");
/// # Ok::<(), nomos_core::session::ExecutionError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Session {
    config: SessionConfig,
    record: SessionRecord,
    steps: Steps,
    executions: Rows<Execution>,
    approvals: Rows<Approval>,
    /// FLEET-1: every fan-out; each is written once, in the commit that creates it.
    fanouts: Rows<crate::fanout::Fanout>,
    /// The session row as last committed (`None` before the first commit); the rows
    /// above keep track of their own changes, so `take_commit` costs what changed.
    base: Option<SessionRecord>,
    messages: Vec<Message>,
    tool_calls: Vec<ToolCallRecord>,
    events: Vec<PendingEvent>,
    /// Actions decided and not yet polled ([`Session::poll_action`]).
    actions: VecDeque<Action>,
    /// AUTHZ-3: how many operators each new approval request needs.
    approvers: Arc<ApproverPolicy>,
}

impl Session {
    /// A new, empty session (status `active`).
    pub fn create(id: SessionId, now: Timestamp, config: SessionConfig) -> Session {
        let record = SessionRecord {
            id,
            status: SessionStatus::Active,
            goal: None,
            summary: None,
            board_outcome: None,
            plan_generation: 0,
            assent: None,
            knowledge: KnowledgeLoop::Untouched,
            nudged_at: None,
            client: None,
            owner: None,
            archived_at: None,
            plan_approvals: None,
            n_messages: 0,
            created_at: now,
            last_activity_at: now,
            version: 0,
        };
        let mut session = Session {
            config,
            record,
            steps: Steps::default(),
            executions: Rows::default(),
            approvals: Rows::default(),
            fanouts: Rows::default(),
            base: None,
            messages: Vec::new(),
            tool_calls: Vec::new(),
            events: Vec::new(),
            actions: VecDeque::new(),
            approvers: Arc::default(),
        };
        session.emit(now, DomainEvent::SessionCreated);
        session
    }

    /// MCP-1: a new session driven by an outside client (an MCP client's `name version`)
    /// instead of Nomos's model; the same rules govern it.
    pub fn create_for_client(
        id: SessionId,
        now: Timestamp,
        config: SessionConfig,
        client: &str,
    ) -> Session {
        let mut session = Session::create(id, now, config);
        session.record.client = Some(client.to_owned());
        session
    }

    /// Rebuilds a session from what the store holds.
    pub fn from_snapshot(snapshot: SessionSnapshot, config: SessionConfig) -> Session {
        Session {
            config,
            base: Some(snapshot.record.clone()),
            record: snapshot.record,
            steps: Steps::committed(snapshot.steps),
            executions: Rows::committed(snapshot.executions),
            approvals: Rows::committed(snapshot.approvals),
            fanouts: Rows::committed(snapshot.fanouts),
            messages: Vec::new(),
            tool_calls: Vec::new(),
            events: Vec::new(),
            actions: VecDeque::new(),
            approvers: Arc::default(),
        }
    }

    /// AUTHZ-1: the new session is owned by `owner` (the principal that created it). Only
    /// before its first commit: the owner is set at creation and never changed.
    pub fn owned_by(mut self, owner: &str) -> Session {
        if self.base.is_none() {
            self.record.owner = Some(owner.to_owned());
        }
        self
    }

    /// AUTHZ-3: the policy that says how many distinct operators a new approval request
    /// needs (one each when never set). Requests already made keep their number.
    pub fn set_approver_policy(&mut self, policy: Arc<ApproverPolicy>) {
        self.approvers = policy;
    }

    /// The session row.
    pub fn record(&self) -> &SessionRecord {
        &self.record
    }

    /// The session's id.
    pub fn id(&self) -> SessionId {
        self.record.id
    }

    /// Its status.
    pub fn status(&self) -> SessionStatus {
        self.record.status
    }

    /// Every step of every generation, ordered by `(generation, seq)` (PLAN-7).
    pub fn all_steps(&self) -> &[PlanStep] {
        &self.steps
    }

    /// The steps of the current generation (PLAN-7).
    pub fn current_steps(&self) -> impl Iterator<Item = &PlanStep> {
        let generation = self.record.plan_generation;
        self.steps
            .iter()
            .filter(move |s| s.generation == generation)
    }

    /// Every execution.
    pub fn executions(&self) -> &[Execution] {
        &self.executions
    }

    /// Every approval.
    pub fn approvals(&self) -> &[Approval] {
        &self.approvals
    }

    /// The configuration in force.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// The events produced since the last [`Session::take_commit`].
    pub fn pending_events(&self) -> &[PendingEvent] {
        &self.events
    }

    /// The next thing the shell must do, in the order decided; `None` when nothing is
    /// left. Call it until `None` after the commit that carries the decision is stored,
    /// and act on every action once (see the module docs).
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    pub(crate) fn queue(&mut self, action: Action) {
        self.actions.push_back(action);
    }

    /// When [`Session::handle_timeout`] next has something to do: the earliest expiry of
    /// a pending approval or of the assent window.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let approvals = self
            .approvals
            .iter()
            .filter(|a| a.status == crate::status::ApprovalStatus::Pending)
            .map(|a| a.expires_at);
        let assent = self.record.assent.map(|w| w.expires_at);
        approvals.chain(assent).min()
    }

    /// Drains everything decided since the last commit into one [`Commit`].
    ///
    /// Its cost is what was decided since the last commit, not the session's size: each
    /// row collection yields only the rows written since then.
    #[must_use]
    pub fn take_commit(&mut self) -> Commit {
        let expected_version = self.base.as_ref().map(|b| b.version);
        let session = match &self.base {
            Some(b) if *b == self.record => None,
            _ => Some(self.record.clone()),
        };
        let (steps, removed_steps) = self.steps.take_changed();
        let mut commit = Commit {
            expected_version,
            fanouts: self.fanouts.take_changed(),
            session,
            steps,
            removed_steps,
            executions: self.executions.take_changed(),
            approvals: self.approvals.take_changed(),
            messages: std::mem::take(&mut self.messages),
            tool_calls: std::mem::take(&mut self.tool_calls),
            events: std::mem::take(&mut self.events),
        };
        // A new session always carries its row; so do events that change no row (a
        // `turn.done` in a terminal session), since the row is what names the session.
        if commit.session.is_none()
            && (commit.expected_version.is_none() || !commit.events.is_empty())
        {
            commit.session = Some(self.record.clone());
        }
        self.base = Some(self.record.clone());
        commit
    }

    /// Records the version the store assigned to the last commit.
    pub fn committed(&mut self, version: i64) {
        self.record.version = version;
        if let Some(base) = self.base.as_mut() {
            base.version = version;
        }
    }

    /// The current state as a snapshot (what a store would return after a commit).
    pub fn snapshot(&self) -> SessionSnapshot {
        SessionSnapshot {
            record: self.record.clone(),
            steps: self.steps.to_vec(),
            executions: self.executions.to_vec(),
            approvals: self.approvals.to_vec(),
            fanouts: self.fanouts.to_vec(),
        }
    }

    fn emit(&mut self, now: Timestamp, event: DomainEvent) {
        self.events.push(PendingEvent { at: now, event });
    }

    /// SWEEP-1: records activity. Only the operator's messages and decisions and the
    /// model's tool calls count; notes, text-only replies and Nomos's own bookkeeping do
    /// not, so a session that only talks is idle.
    pub(crate) fn touch(&mut self, at: Timestamp) {
        self.record.last_activity_at = self.record.last_activity_at.max(at);
    }

    /// SESSION-6: every status change is an event.
    fn set_status(&mut self, now: Timestamp, to: SessionStatus, reason: Option<String>) {
        let from = self.record.status;
        if from == to {
            return;
        }
        self.record.status = to;
        self.emit(now, DomainEvent::TaskStatus { from, to, reason });
    }
}
