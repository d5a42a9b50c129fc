//! Domain events: every change to a session is one (DESIGN "State, events and the store").
//!
//! The core emits them; the store commits them with a per-session sequence number in
//! the same transaction as the rows they describe; the activity log is derived from
//! them ([`crate::activity`]).
//!
//! The serde form of [`DomainEvent`] is what the stores keep, inside their versioned
//! envelope (`nomos-store-sql`'s `event_codec`): a change that rows already stored would
//! not read back the same needs a new stored version there. The HTTP API does not send
//! it; `nomos-http` maps every event to its own wire form.

use serde::{Deserialize, Serialize};

use crate::id::{ApprovalId, ExecutionId, MessageId, SessionId};
use crate::status::{
    ApprovalStatus, CommandClass, ExecutionStatus, Outcome, Role, SessionStatus, StepStatus,
};
use crate::time::Timestamp;

/// What happened. The serde tag is the event's kind (`task.status`, `plan.proposed`...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum DomainEvent {
    /// The session was created.
    #[serde(rename = "session.created")]
    SessionCreated,
    /// SESSION-6: the status changed.
    #[serde(rename = "task.status")]
    TaskStatus {
        /// Previous status.
        from: SessionStatus,
        /// New status.
        to: SessionStatus,
        /// Why (completion summary, sweep reason...).
        reason: Option<String>,
    },
    /// `set_goal` set (or reset) the goal.
    #[serde(rename = "task.goal")]
    GoalSet {
        /// The goal text.
        goal: String,
    },
    /// WRITEBACK-2: the board shows this outcome while the session stays open.
    #[serde(rename = "task.board_outcome")]
    BoardOutcome {
        /// Outcome shown.
        outcome: Outcome,
    },
    /// PLAN-2/3: a plan (generation) was proposed or revised.
    #[serde(rename = "plan.proposed")]
    PlanProposed {
        /// The generation the steps belong to.
        generation: u32,
        /// Step titles in seq order (seq = index + 1).
        steps: Vec<String>,
        /// Why the plan was revised, for a new generation after execution started.
        revision_reason: Option<String>,
    },
    /// PLAN-9: a step started.
    #[serde(rename = "plan.step.started")]
    StepStarted {
        /// Generation.
        generation: u32,
        /// Seq within the generation.
        seq: u32,
    },
    /// PLAN-9: a step reached a closed status (`done`, `failed`, `skipped`, `replaced`).
    #[serde(rename = "plan.step.finished")]
    StepFinished {
        /// Generation.
        generation: u32,
        /// Seq within the generation.
        seq: u32,
        /// The status it closed with.
        status: StepStatus,
    },
    /// SAFE-4: a step's check ran and decided the step (`done` on a pass, `failed` else).
    #[serde(rename = "plan.step.checked")]
    StepChecked {
        /// Generation.
        generation: u32,
        /// Seq within the generation.
        seq: u32,
        /// The execution (kind `check`) that ran it.
        execution_id: ExecutionId,
        /// Whether it passed, and why not.
        verdict: crate::check::CheckVerdict,
    },
    /// SAFE-1..3: one action of a safety net around a change (a backup started, a file
    /// copied, an old backup pruned, a change stopped, a restore requested).
    #[serde(rename = "safety.net")]
    SafetyNet {
        /// The change the net guards (for a restore: the restore's own execution).
        execution_id: ExecutionId,
        /// The net's execution (kind `safety`; for a restore: the backup it restores).
        safety_execution_id: ExecutionId,
        /// What it did.
        action: SafetyAction,
    },
    /// GATE-4: the operator assented to a plan generation.
    #[serde(rename = "plan.assent")]
    AssentOpened {
        /// Generation assented to.
        generation: u32,
        /// When the window closes.
        expires_at: Timestamp,
        /// AUDIT-1: who assented (the principal that posted the message).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        granted_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was, alongside the subject.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        username: Option<String>,
        /// AUDIT-1: the id of the request that carried the assent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    /// GATE-4: the assent window closed, once per window, with the reason. Events stored
    /// before reasons were recorded carry the old kind `plan.assent_closed` and read back
    /// with [`AssentCloseReason::Unrecorded`].
    #[serde(rename = "assent.closed", alias = "plan.assent_closed")]
    AssentClosed {
        /// Generation whose window closed.
        generation: u32,
        /// Why it closed.
        #[serde(default = "AssentCloseReason::unrecorded")]
        reason: AssentCloseReason,
    },
    /// An execution was created.
    #[serde(rename = "execution.created")]
    ExecutionCreated {
        /// Its id.
        execution_id: ExecutionId,
        /// Host slug.
        host: String,
        /// Exact command.
        command: String,
        /// Its class.
        class: CommandClass,
        /// Initial status.
        status: ExecutionStatus,
    },
    /// An execution moved to a new status.
    #[serde(rename = "execution.status")]
    ExecutionStatusChanged {
        /// Its id.
        execution_id: ExecutionId,
        /// New status.
        status: ExecutionStatus,
        /// Exit code when completed.
        exit_code: Option<i32>,
        /// Error text when failed or cancelled.
        error: Option<String>,
    },
    /// GATE-7: an approval request was persisted.
    #[serde(rename = "approval.requested")]
    ApprovalRequested {
        /// Its id.
        approval_id: ApprovalId,
        /// The execution it guards.
        execution_id: ExecutionId,
        /// When it expires.
        expires_at: Timestamp,
    },
    /// GATE-7: an approval was decided, expired or voided.
    #[serde(rename = "approval.resolved")]
    ApprovalResolved {
        /// Its id.
        approval_id: ApprovalId,
        /// Its final status.
        status: ApprovalStatus,
        /// Why, when Nomos (not the operator's approval) ended it: expiry, a replaced or
        /// revised plan, the end of the task. Absent in events stored before reasons were.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// AUDIT-1: who decided it, for an operator's decision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decided_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was, alongside the subject.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        username: Option<String>,
        /// AUDIT-1: the id of the request that carried the decision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    /// A transcript message was appended.
    #[serde(rename = "message.appended")]
    MessageAppended {
        /// Its id.
        message_id: MessageId,
        /// Who wrote it.
        role: Role,
    },
    /// TURN-4: a tool call was persisted with its result.
    #[serde(rename = "tool.called")]
    ToolCalled {
        /// The model's call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// `ok`, `refused`, `error` or `interrupted`.
        outcome: crate::record::ToolCallOutcome,
    },
    /// SWEEP-1: the idle sweep nudged the session.
    #[serde(rename = "task.nudged")]
    Nudged,
    /// TURN-1: a turn started.
    #[serde(rename = "turn.started")]
    TurnStarted {
        /// What started it.
        cause: TurnCause,
    },
    /// CONTROL-1: the operator stopped the running turn (AUDIT-1: who, and the request).
    #[serde(rename = "turn.stopped")]
    TurnStopped {
        /// Who stopped it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stopped_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was, alongside the subject.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        username: Option<String>,
        /// The id of the request that carried the stop.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    /// CONTROL-5: the operator closed the task (a denied or stuck one) with an outcome
    /// and a note (AUDIT-1: who, and the request); its `task.status` follows.
    #[serde(rename = "task.closed")]
    TaskClosed {
        /// `failure` or `partial`.
        outcome: Outcome,
        /// The operator's note, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// Who closed it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        closed_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was, alongside the subject.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        username: Option<String>,
        /// The id of the request that carried the close.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    /// CONTROL-6: the operator archived the session (it leaves the board) or brought it
    /// back (`archived: false`).
    #[serde(rename = "session.archived")]
    SessionArchived {
        /// Whether it is archived now.
        archived: bool,
        /// Who did it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// SECRET-2: secrets in a tool result were replaced with `[redacted: KIND]` before it
    /// was stored for the model; the execution's own output keeps them for the operator.
    #[serde(rename = "output.redacted")]
    OutputRedacted {
        /// The tool call whose result was redacted.
        call_id: String,
        /// The tool's name (`run`, `get_execution_output`, ...).
        tool: String,
        /// Each kind redacted, with its count.
        kinds: Vec<RedactedKind>,
    },
    /// AUTHZ-3: one operator approved a request that needs several; it still waits for
    /// the others (AUDIT-1: who, and the request).
    #[serde(rename = "approval.progress")]
    ApprovalProgress {
        /// The approval.
        approval_id: ApprovalId,
        /// Who approved it now.
        approved_by: String,
        /// AUDIT-1: the OIDC `preferred_username` of who it was, alongside the subject.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        username: Option<String>,
        /// The id of the request that carried the approval.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// How many distinct operators approved it so far.
        approvals: u32,
        /// How many it needs.
        required: u32,
    },
    /// AUTHZ-2, AUTHZ-3: a decision refused because of who made it (the request's own
    /// principal, or an operator approving twice); nothing else changed.
    #[serde(rename = "decision.refused")]
    DecisionRefused {
        /// What it tried to decide.
        decision: crate::authz::DecisionKind,
        /// Who tried, when the decision named someone.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        principal: Option<String>,
        /// The id of the request that carried it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// The approval it named, for an approval decision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approval_id: Option<ApprovalId>,
        /// Why it was refused.
        reason: String,
    },
    /// AUTHZ-3: one operator approved a plan whose declared commands need several; the
    /// plan still waits for the others and nothing of it runs (AUDIT-1: who, and the
    /// request).
    #[serde(rename = "plan.progress")]
    PlanProgress {
        /// The plan generation approved.
        generation: u32,
        /// Who approved it now.
        approved_by: String,
        /// AUDIT-1: the OIDC `preferred_username` of who it was, alongside the subject.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        username: Option<String>,
        /// The id of the request that carried the decision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// How many distinct operators approved it so far.
        approvals: u32,
        /// How many it needs.
        required: u32,
    },
    /// CONTROL-2: the operator revoked the assent window before it expired (AUDIT-1: who,
    /// and the request); the window's `assent.closed` (reason `revoked`) follows.
    #[serde(rename = "assent.revoked")]
    AssentRevoked {
        /// Generation whose window was revoked.
        generation: u32,
        /// Who revoked it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        revoked_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was, alongside the subject.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        username: Option<String>,
        /// The id of the request that carried the revoke.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    /// GATE-4 (rev. 2): the operator rejected a waiting plan generation with an explicit
    /// decision (AUDIT-1: who, and the request); nothing of that generation runs.
    #[serde(rename = "plan.rejected")]
    PlanRejected {
        /// The generation rejected.
        generation: u32,
        /// Who rejected it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rejected_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was, alongside the subject.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        username: Option<String>,
        /// The id of the request that carried the decision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// Why, in the operator's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// TURN-1: a turn ended; emitted exactly once per turn, after any error.
    #[serde(rename = "turn.done")]
    TurnDone {
        /// The real cause when the turn failed (TURN-2); `None` when it ended well.
        error: Option<String>,
        /// How many tool calls the turn made.
        n_tool_calls: u32,
    },
}

/// What started a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnCause {
    /// An operator message.
    Operator,
    /// An approval decision (EXEC-4).
    Continuation,
    /// A reconnect or `/resume` (RESUME-1).
    Resume,
    /// SWEEP-1: the idle sweep resumed the model with a nudge.
    Nudge,
}

/// GATE-4: why an assent window closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AssentCloseReason {
    /// Every step of the assented generation is finished.
    PlanFinished,
    /// The plan was revised into a new generation (PLAN-3).
    PlanRevised,
    /// The generation's steps were replaced before any started (PLAN-2).
    PlanReplaced,
    /// The session ended (`complete_task`, a sweep or the backfill).
    SessionEnded,
    /// Its time ran out.
    Expired,
    /// The operator assented again; a fresh window replaces this one.
    Renewed,
    /// CONTROL-2: the operator revoked it.
    Revoked,
    /// CONTROL-1: the operator stopped the running turn.
    Stopped,
    /// GATE-9: the plan's declared commands are no longer those the operator assented to.
    DeclaredChanged,
    /// Stored before close reasons were recorded.
    Unrecorded,
}

impl AssentCloseReason {
    fn unrecorded() -> AssentCloseReason {
        AssentCloseReason::Unrecorded
    }

    /// The snake_case spelling, as stored.
    pub fn as_str(&self) -> &'static str {
        match self {
            AssentCloseReason::PlanFinished => "plan_finished",
            AssentCloseReason::PlanRevised => "plan_revised",
            AssentCloseReason::PlanReplaced => "plan_replaced",
            AssentCloseReason::SessionEnded => "session_ended",
            AssentCloseReason::Expired => "expired",
            AssentCloseReason::Renewed => "renewed",
            AssentCloseReason::Revoked => "revoked",
            AssentCloseReason::Stopped => "stopped",
            AssentCloseReason::DeclaredChanged => "declared_changed",
            AssentCloseReason::Unrecorded => "unrecorded",
        }
    }
}

/// SAFE-1..3: what one safety-net event records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum SafetyAction {
    /// SAFE-2: a backup of these paths started before the change.
    BackupStarted {
        /// The paths the classifier named (those that exist are copied).
        paths: Vec<String>,
    },
    /// SAFE-2: one file was copied, with its owner, mode and checksum.
    BackedUp {
        /// The file and its copy.
        file: crate::safety::BackedUpFile,
    },
    /// SAFE-2: an old backup was removed to keep the host under its caps.
    Pruned {
        /// The backup's directory name (its execution id).
        backup: String,
    },
    /// SAFE-1, SAFE-2: the net failed, so the change was stopped before it ran.
    Stopped {
        /// Why.
        reason: String,
    },
    /// SAFE-2: the operator asked to restore a backup; the request waits for approval.
    RestoreRequested {
        /// The approval the restore waits for.
        approval_id: ApprovalId,
    },
    /// SAFE-1: a snapshot of the change's guest was taken on its node.
    SnapshotTaken {
        /// The guest's host slug.
        guest: String,
        /// The node it was taken on.
        node: String,
        /// The guest's id.
        vmid: u32,
        /// The snapshot's name (`nomos-...`).
        name: String,
    },
    /// SAFE-1: an older Nomos snapshot of the guest was deleted (the count kept per guest).
    SnapshotPruned {
        /// The snapshot's name.
        name: String,
    },
    /// SAFE-1: the operator asked to roll the guest back; the request waits for approval.
    RollbackRequested {
        /// The approval the rollback waits for.
        approval_id: ApprovalId,
    },
    /// SAFE-3: the revert of a change that can cut the operator off was armed on its host.
    Armed {
        /// How it was scheduled and the handle to disarm it.
        armed: crate::revert::Armed,
        /// When it fires unless the operator confirms.
        until: Timestamp,
    },
    /// SAFE-3: the check over a new SSH connection after the change.
    Checked {
        /// Whether the host answered and the check passed.
        ok: bool,
        /// What it said (or why it could not run).
        detail: String,
    },
    /// SAFE-3: the operator confirmed the change and its revert was disarmed.
    Disarmed {
        /// Who confirmed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// SAFE-3: the revert fired on the host; its log says what it did.
    Reverted {
        /// What it restored and reloaded.
        log: crate::revert::RevertLog,
    },
}

/// SECRET-2: one kind of secret redacted from a tool result, and how many.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedactedKind {
    /// The kind, as the marker names it (`private key`, `aws key`, ...).
    pub kind: String,
    /// How many were replaced.
    pub count: u32,
}

impl DomainEvent {
    /// Every kind [`DomainEvent::kind`] returns (a new variant adds its kind here too).
    pub const KINDS: &'static [&'static str] = &[
        "session.created",
        "task.status",
        "task.goal",
        "task.board_outcome",
        "plan.proposed",
        "plan.step.started",
        "plan.step.finished",
        "plan.step.checked",
        "safety.net",
        "plan.assent",
        "assent.closed",
        "execution.created",
        "execution.status",
        "approval.requested",
        "approval.resolved",
        "message.appended",
        "tool.called",
        "task.nudged",
        "turn.started",
        "turn.done",
        "turn.stopped",
        "assent.revoked",
        "plan.rejected",
        "task.closed",
        "session.archived",
        "output.redacted",
        "approval.progress",
        "decision.refused",
        "plan.progress",
    ];

    /// The event's kind, as the SSE `event:` field and the store's `kind` column spell it.
    pub fn kind(&self) -> &'static str {
        match self {
            DomainEvent::SessionCreated => "session.created",
            DomainEvent::TaskStatus { .. } => "task.status",
            DomainEvent::GoalSet { .. } => "task.goal",
            DomainEvent::BoardOutcome { .. } => "task.board_outcome",
            DomainEvent::PlanProposed { .. } => "plan.proposed",
            DomainEvent::StepStarted { .. } => "plan.step.started",
            DomainEvent::StepFinished { .. } => "plan.step.finished",
            DomainEvent::StepChecked { .. } => "plan.step.checked",
            DomainEvent::SafetyNet { .. } => "safety.net",
            DomainEvent::AssentOpened { .. } => "plan.assent",
            DomainEvent::AssentClosed { .. } => "assent.closed",
            DomainEvent::ExecutionCreated { .. } => "execution.created",
            DomainEvent::ExecutionStatusChanged { .. } => "execution.status",
            DomainEvent::ApprovalRequested { .. } => "approval.requested",
            DomainEvent::ApprovalResolved { .. } => "approval.resolved",
            DomainEvent::MessageAppended { .. } => "message.appended",
            DomainEvent::ToolCalled { .. } => "tool.called",
            DomainEvent::Nudged => "task.nudged",
            DomainEvent::TurnStarted { .. } => "turn.started",
            DomainEvent::TurnDone { .. } => "turn.done",
            DomainEvent::TurnStopped { .. } => "turn.stopped",
            DomainEvent::AssentRevoked { .. } => "assent.revoked",
            DomainEvent::PlanRejected { .. } => "plan.rejected",
            DomainEvent::TaskClosed { .. } => "task.closed",
            DomainEvent::SessionArchived { .. } => "session.archived",
            DomainEvent::OutputRedacted { .. } => "output.redacted",
            DomainEvent::ApprovalProgress { .. } => "approval.progress",
            DomainEvent::DecisionRefused { .. } => "decision.refused",
            DomainEvent::PlanProgress { .. } => "plan.progress",
        }
    }
}

/// An event as committed: with its session, per-session sequence number and time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Position in the global log (strictly increasing across sessions).
    pub global_seq: i64,
    /// The session it belongs to.
    pub session_id: SessionId,
    /// Position in the session's log: 1, 2, 3... with no gaps.
    pub seq: i64,
    /// When it happened.
    pub at: Timestamp,
    /// What happened.
    pub event: DomainEvent,
}

/// An event the core produced and the store has not committed yet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingEvent {
    /// When it happened.
    pub at: Timestamp,
    /// What happened.
    pub event: DomainEvent,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_tag_matches_kind() {
        let event = DomainEvent::StepStarted {
            generation: 2,
            seq: 1,
        };
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["type"], event.kind());
        let back: DomainEvent = serde_json::from_value(json).unwrap();
        assert_eq!(back, event);
    }

    // rule: GATE-4
    #[test]
    fn assent_closed_carries_its_reason_and_reads_the_stored_old_kind() {
        let event = DomainEvent::AssentClosed {
            generation: 2,
            reason: AssentCloseReason::PlanFinished,
        };
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["type"], "assent.closed");
        assert_eq!(json["reason"], "plan_finished");
        let stored = serde_json::json!({"type": "plan.assent_closed", "generation": 1});
        let back: DomainEvent = serde_json::from_value(stored).unwrap();
        assert_eq!(
            back,
            DomainEvent::AssentClosed {
                generation: 1,
                reason: AssentCloseReason::Unrecorded
            }
        );
    }

    // rule: GATE-7
    #[test]
    fn approval_resolved_without_a_reason_reads_as_before() {
        let stored = serde_json::json!({
            "type": "approval.resolved",
            "approval_id": "00000000-0000-0000-0000-000000000001",
            "status": "denied"
        });
        let back: DomainEvent = serde_json::from_value(stored.clone()).unwrap();
        let DomainEvent::ApprovalResolved { reason, .. } = &back else {
            panic!("{back:?}");
        };
        assert_eq!(*reason, None);
        assert_eq!(serde_json::to_value(&back).unwrap(), stored);
    }
}
