//! The wire form of a committed event: what the event streams send as each durable SSE
//! frame's `data:` ([`EventRecordDto`]), in the OpenAPI document so the web UI's event
//! types are generated from it.
//!
//! It is mapped from the core's [`DomainEvent`] by one exhaustive match, so a new core
//! event does not compile until it has a wire form here; the core's serde form of an event
//! is the stores' business (versioned there), not the API's. The JSON is the same shape
//! the core's serde form had: `type` is the kind, the fields beside it; times are RFC 3339
//! with milliseconds like every other time of the API; states are their `snake_case`
//! spellings.

use nomos_core::event::{AssentCloseReason, DomainEvent, EventRecord, TurnCause};
use nomos_core::record::ToolCallOutcome;
use nomos_core::{
    ApprovalStatus, CommandClass, ExecutionStatus, Outcome, Role, SessionStatus, StepStatus,
    Timestamp,
};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

fn time(at: Timestamp) -> String {
    at.to_rfc3339()
}

/// A closed set of states on the wire, mapped from its core enum by an exhaustive match.
macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident from $core:ident { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
        #[serde(rename_all = "snake_case")]
        #[allow(missing_docs)]
        pub enum $name {
            $($variant),+
        }

        impl From<$core> for $name {
            fn from(value: $core) -> Self {
                match value {
                    $($core::$variant => $name::$variant),+
                }
            }
        }
    };
}

wire_enum!(
    /// SESSION-1: a session's status.
    SessionStatusDto from SessionStatus {
        Active, Planning, Executing, AwaitingInput, Done, Failed, Partial,
    }
);
wire_enum!(
    /// The outcome a session ended with, or the board shows.
    OutcomeDto from Outcome { Success, Failure, Partial }
);
wire_enum!(
    /// PLAN-1: a plan step's status.
    StepStatusDto from StepStatus { Pending, Running, Done, Failed, Skipped, Replaced }
);
wire_enum!(
    /// EXEC-1: an execution's status.
    ExecutionStatusDto from ExecutionStatus {
        PendingApproval, Approved, Running, Completed, Failed, Cancelled, Armed, Reverted,
    }
);
wire_enum!(
    /// GATE-7: an approval's status.
    ApprovalStatusDto from ApprovalStatus { Pending, Approved, Denied, Expired, Cancelled }
);
wire_enum!(
    /// CLASSIFY-1: a command's class.
    CommandClassDto from CommandClass { ReadOnly, ConfigMutation, Destructive }
);
wire_enum!(
    /// Who wrote a transcript message.
    RoleDto from Role { Operator, Assistant, Note }
);
wire_enum!(
    /// TURN-4: how a tool call ended.
    ToolCallOutcomeDto from ToolCallOutcome { Ok, Refused, Error, Interrupted }
);
wire_enum!(
    /// TURN-1: what started a turn.
    TurnCauseDto from TurnCause { Operator, Continuation, Resume, Nudge }
);
wire_enum!(
    /// GATE-4: why an assent window closed (`unrecorded`: before reasons were recorded).
    AssentCloseReasonDto from AssentCloseReason {
        PlanFinished, PlanRevised, PlanReplaced, SessionEnded, Expired, Renewed, Revoked,
        Stopped, DeclaredChanged, Unrecorded,
    }
);

/// A committed event: the `data:` of a durable frame of `GET /api/events` and
/// `GET /api/sessions/{id}/events`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventRecordDto {
    /// Position in the global log (the id of `GET /api/events`).
    pub global_seq: i64,
    /// The session it belongs to.
    pub session_id: Uuid,
    /// Position in the session's log, from 1 (the id of a session's stream).
    pub seq: i64,
    /// When it happened.
    pub at: String,
    /// What happened.
    pub event: EventDto,
}

impl From<&EventRecord> for EventRecordDto {
    fn from(record: &EventRecord) -> Self {
        EventRecordDto {
            global_seq: record.global_seq,
            session_id: record.session_id.as_uuid(),
            seq: record.seq,
            at: time(record.at),
            event: EventDto::from(&record.event),
        }
    }
}

/// What happened; `type` is the event's kind, also the SSE `event:` field.
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type")]
pub enum EventDto {
    /// The session was created.
    #[serde(rename = "session.created")]
    SessionCreated,
    /// SESSION-6: the status changed.
    #[serde(rename = "task.status")]
    TaskStatus {
        /// Previous status.
        from: SessionStatusDto,
        /// New status.
        to: SessionStatusDto,
        /// Why (completion summary, sweep reason...).
        #[schema(required = true)]
        reason: Option<String>,
    },
    /// The goal was set (or reset).
    #[serde(rename = "task.goal")]
    GoalSet {
        /// The goal text.
        goal: String,
    },
    /// WRITEBACK-2: the board shows this outcome while the session stays open.
    #[serde(rename = "task.board_outcome")]
    BoardOutcome {
        /// Outcome shown.
        outcome: OutcomeDto,
    },
    /// PLAN-2/3: a plan (generation) was proposed or revised.
    #[serde(rename = "plan.proposed")]
    PlanProposed {
        /// The generation the steps belong to.
        generation: u32,
        /// Step titles in seq order (seq = index + 1).
        steps: Vec<String>,
        /// Why the plan was revised, for a new generation after execution started.
        #[schema(required = true)]
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
        status: StepStatusDto,
    },
    /// SAFE-4: a step's check ran and decided the step.
    #[serde(rename = "plan.step.checked")]
    StepChecked {
        /// Generation.
        generation: u32,
        /// Seq within the generation.
        seq: u32,
        /// The execution (kind `check`) that ran it.
        execution_id: String,
        /// Whether it passed, and why not.
        verdict: CheckVerdictDto,
    },
    /// SAFE-1..3: one action of a safety net around a change.
    #[serde(rename = "safety.net")]
    SafetyNet {
        /// The change the net guards (for a restore: the restore's own execution).
        execution_id: String,
        /// The net's execution, kind `safety` (for a restore: the backup it restores).
        safety_execution_id: String,
        /// What it did.
        action: SafetyActionDto,
    },
    /// GATE-4: the operator assented to a plan generation.
    #[serde(rename = "plan.assent")]
    AssentOpened {
        /// Generation assented to.
        generation: u32,
        /// When the window closes.
        expires_at: String,
        /// AUDIT-1: who assented.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        granted_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        username: Option<String>,
        /// AUDIT-1: the id of the request that carried the assent.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        request_id: Option<String>,
    },
    /// GATE-4: the assent window closed, once per window, with the reason.
    #[serde(rename = "assent.closed")]
    AssentClosed {
        /// Generation whose window closed.
        generation: u32,
        /// Why it closed.
        reason: AssentCloseReasonDto,
    },
    /// An execution was created.
    #[serde(rename = "execution.created")]
    ExecutionCreated {
        /// Its id.
        execution_id: Uuid,
        /// Host slug.
        host: String,
        /// Exact command.
        command: String,
        /// Its class.
        class: CommandClassDto,
        /// Initial status.
        status: ExecutionStatusDto,
    },
    /// An execution moved to a new status.
    #[serde(rename = "execution.status")]
    ExecutionStatusChanged {
        /// Its id.
        execution_id: Uuid,
        /// New status.
        status: ExecutionStatusDto,
        /// Exit code when completed.
        #[schema(required = true)]
        exit_code: Option<i32>,
        /// Error text when failed or cancelled.
        #[schema(required = true)]
        error: Option<String>,
    },
    /// GATE-7: an approval request was made.
    #[serde(rename = "approval.requested")]
    ApprovalRequested {
        /// Its id.
        approval_id: Uuid,
        /// The execution it guards.
        execution_id: Uuid,
        /// When it expires.
        expires_at: String,
    },
    /// GATE-7: an approval was decided, expired or voided.
    #[serde(rename = "approval.resolved")]
    ApprovalResolved {
        /// Its id.
        approval_id: Uuid,
        /// Its final status.
        status: ApprovalStatusDto,
        /// Why, when Nomos (not the operator) ended it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        reason: Option<String>,
        /// AUDIT-1: who decided it, for an operator's decision.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        decided_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        username: Option<String>,
        /// AUDIT-1: the id of the request that carried the decision.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        request_id: Option<String>,
    },
    /// A transcript message was appended.
    #[serde(rename = "message.appended")]
    MessageAppended {
        /// Its id.
        message_id: Uuid,
        /// Who wrote it.
        role: RoleDto,
    },
    /// TURN-4: a tool call was recorded with its result.
    #[serde(rename = "tool.called")]
    ToolCalled {
        /// The model's call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// How it ended.
        outcome: ToolCallOutcomeDto,
    },
    /// SECRET-2: secrets in a tool result were redacted before the model read it.
    #[serde(rename = "output.redacted")]
    OutputRedacted {
        /// The tool call whose result was redacted.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// Each kind redacted, with its count.
        kinds: Vec<RedactedKindDto>,
    },
    /// SWEEP-1: the idle sweep nudged the session.
    #[serde(rename = "task.nudged")]
    Nudged,
    /// TURN-1: a turn started.
    #[serde(rename = "turn.started")]
    TurnStarted {
        /// What started it.
        cause: TurnCauseDto,
    },
    /// TURN-1: a turn ended; exactly once per turn, after any error.
    #[serde(rename = "turn.done")]
    TurnDone {
        /// The real cause when the turn failed (TURN-2); null when it ended well.
        #[schema(required = true)]
        error: Option<String>,
        /// How many tool calls the turn made.
        n_tool_calls: u32,
    },
    /// CONTROL-1: the operator stopped the running turn.
    #[serde(rename = "turn.stopped")]
    TurnStopped {
        /// Who stopped it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        stopped_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        username: Option<String>,
        /// The id of the request that carried the stop.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        request_id: Option<String>,
    },
    /// CONTROL-2: the operator revoked the assent window; its `assent.closed` follows.
    #[serde(rename = "assent.revoked")]
    AssentRevoked {
        /// Generation whose window was revoked.
        generation: u32,
        /// Who revoked it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        revoked_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        username: Option<String>,
        /// The id of the request that carried the revoke.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        request_id: Option<String>,
    },
    /// GATE-4: the operator rejected the waiting plan through the decision endpoint.
    #[serde(rename = "plan.rejected")]
    PlanRejected {
        /// The generation rejected.
        generation: u32,
        /// Who rejected it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        rejected_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        username: Option<String>,
        /// The id of the request that carried the decision.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        request_id: Option<String>,
        /// Why, in the operator's words.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        reason: Option<String>,
    },
    /// CONTROL-5: the operator closed an open task as failed or partial, with a note.
    #[serde(rename = "task.closed")]
    TaskClosed {
        /// `failure` or `partial`.
        outcome: OutcomeDto,
        /// The operator's note.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        note: Option<String>,
        /// Who closed it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        closed_by: Option<String>,
        /// AUDIT-1: the OIDC `preferred_username` of who it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        username: Option<String>,
        /// The id of the request that carried the close.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        request_id: Option<String>,
    },
    /// CONTROL-6: the operator archived a session off the board, or brought it back.
    #[serde(rename = "session.archived")]
    SessionArchived {
        /// Whether it is archived now.
        archived: bool,
        /// Who did it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        by: Option<String>,
    },
    /// AUTHZ-3: one operator approved a request that needs several; it still waits.
    #[serde(rename = "approval.progress")]
    ApprovalProgress {
        /// The approval.
        approval_id: Uuid,
        /// Who approved it now.
        approved_by: String,
        /// AUDIT-1: the OIDC `preferred_username` of who it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        username: Option<String>,
        /// AUDIT-1: the id of the request that carried the approval.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        request_id: Option<String>,
        /// How many distinct operators approved it so far.
        approvals: u32,
        /// How many it needs.
        required: u32,
    },
    /// AUTHZ-3: one operator approved a plan that needs several; it still waits and nothing
    /// of it runs.
    #[serde(rename = "plan.progress")]
    PlanProgress {
        /// The plan generation approved.
        generation: u32,
        /// Who approved it now.
        approved_by: String,
        /// AUDIT-1: the OIDC `preferred_username` of who it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        username: Option<String>,
        /// AUDIT-1: the id of the request that carried the decision.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        request_id: Option<String>,
        /// How many distinct operators approved it so far.
        approvals: u32,
        /// How many it needs.
        required: u32,
    },
    /// AUTHZ-2, AUTHZ-3: a decision refused because of who made it; nothing else changed.
    #[serde(rename = "decision.refused")]
    DecisionRefused {
        /// What it tried to decide: `assent`, `plan_decision` or `approval`.
        decision: String,
        /// Who tried, when the decision named someone.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        principal: Option<String>,
        /// The id of the request that carried it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        request_id: Option<String>,
        /// The approval it named, for an approval decision.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(nullable = false)]
        approval_id: Option<Uuid>,
        /// Why it was refused.
        reason: String,
    },
}

/// SAFE-4: whether a check passed.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum CheckVerdictDto {
    /// The check gave what the step expects.
    Passed,
    /// It did not.
    Failed {
        /// What it gave against what was expected, with the head of its output.
        reason: String,
    },
}

/// SAFE-1..3: what a safety-net event records.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum SafetyActionDto {
    /// A backup of the named paths started before the change.
    BackupStarted {
        /// The paths the classifier named (those that exist are copied).
        paths: Vec<String>,
    },
    /// One file was copied.
    BackedUp {
        /// The file, its copy, owner, mode and checksum.
        file: BackedUpFileDto,
    },
    /// An old backup was removed (size and age caps).
    Pruned {
        /// The backup's directory name.
        backup: String,
    },
    /// The net failed and the change was stopped before it ran.
    Stopped {
        /// Why.
        reason: String,
    },
    /// The operator asked for a Restore; it waits for approval.
    RestoreRequested {
        /// The approval it waits for.
        approval_id: Uuid,
    },
    /// SAFE-1: a snapshot of the change's Proxmox guest was taken on its node.
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
    /// SAFE-1: an older Nomos snapshot of the guest was deleted.
    SnapshotPruned {
        /// The snapshot's name.
        name: String,
    },
    /// SAFE-1: the operator asked for a Rollback; it waits for approval.
    RollbackRequested {
        /// The approval it waits for.
        approval_id: Uuid,
    },
    /// SAFE-3: the revert of a change that can cut the operator off was armed on its host.
    Armed {
        /// How it was scheduled: `systemd`, `at` or `nohup`.
        mechanism: String,
        /// The timer unit, the `at` job number or the pid.
        handle: String,
        /// Seconds from arming to the revert.
        window_secs: i64,
        /// When it fires unless the operator confirms.
        until: String,
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
        /// Who confirmed (absent when the check disarmed it).
        #[serde(skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// SAFE-3: the revert fired on the host.
    Reverted {
        /// The files it put back.
        restored: Vec<String>,
        /// What it reloaded (`sshd`, `firewall`, `routes`, `interfaces`, `dns`).
        reloaded: Vec<String>,
        /// Steps that failed.
        failed: Vec<String>,
        /// Whether it ran to its end.
        done: bool,
    },
}

/// SAFE-2: one file a backup copied.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct BackedUpFileDto {
    /// The file's path on the host.
    pub path: String,
    /// Where its copy is.
    pub copy: String,
    /// Owner uid.
    pub uid: u32,
    /// Owner gid.
    pub gid: u32,
    /// Mode in octal (`644`).
    pub mode: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the content, hex.
    pub sha256: String,
}

/// SECRET-2: one kind of secret redacted, and how many.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct RedactedKindDto {
    /// The kind the marker names (`private key`, `aws key`, ...).
    pub kind: String,
    /// How many were replaced.
    pub count: u32,
}

impl From<&DomainEvent> for EventDto {
    fn from(event: &DomainEvent) -> Self {
        match event.clone() {
            DomainEvent::SessionCreated => EventDto::SessionCreated,
            DomainEvent::TaskStatus { from, to, reason } => EventDto::TaskStatus {
                from: from.into(),
                to: to.into(),
                reason,
            },
            DomainEvent::GoalSet { goal } => EventDto::GoalSet { goal },
            DomainEvent::BoardOutcome { outcome } => EventDto::BoardOutcome {
                outcome: outcome.into(),
            },
            DomainEvent::PlanProposed {
                generation,
                steps,
                revision_reason,
            } => EventDto::PlanProposed {
                generation,
                steps,
                revision_reason,
            },
            DomainEvent::StepStarted { generation, seq } => {
                EventDto::StepStarted { generation, seq }
            }
            DomainEvent::StepFinished {
                generation,
                seq,
                status,
            } => EventDto::StepFinished {
                generation,
                seq,
                status: status.into(),
            },
            DomainEvent::StepChecked {
                generation,
                seq,
                execution_id,
                verdict,
            } => EventDto::StepChecked {
                generation,
                seq,
                execution_id: execution_id.to_string(),
                verdict: match verdict {
                    nomos_core::check::CheckVerdict::Passed => CheckVerdictDto::Passed,
                    nomos_core::check::CheckVerdict::Failed { reason } => {
                        CheckVerdictDto::Failed { reason }
                    }
                },
            },
            DomainEvent::SafetyNet {
                execution_id,
                safety_execution_id,
                action,
            } => {
                use nomos_core::event::SafetyAction;
                EventDto::SafetyNet {
                    execution_id: execution_id.to_string(),
                    safety_execution_id: safety_execution_id.to_string(),
                    action: match action {
                        SafetyAction::BackupStarted { paths } => {
                            SafetyActionDto::BackupStarted { paths }
                        }
                        SafetyAction::BackedUp { file } => SafetyActionDto::BackedUp {
                            file: BackedUpFileDto {
                                path: file.path,
                                copy: file.copy,
                                uid: file.uid,
                                gid: file.gid,
                                mode: file.mode,
                                size: file.size,
                                sha256: file.sha256,
                            },
                        },
                        SafetyAction::Pruned { backup } => SafetyActionDto::Pruned { backup },
                        SafetyAction::Stopped { reason } => SafetyActionDto::Stopped { reason },
                        SafetyAction::RestoreRequested { approval_id } => {
                            SafetyActionDto::RestoreRequested {
                                approval_id: approval_id.0,
                            }
                        }
                        SafetyAction::SnapshotTaken {
                            guest,
                            node,
                            vmid,
                            name,
                        } => SafetyActionDto::SnapshotTaken {
                            guest,
                            node,
                            vmid,
                            name,
                        },
                        SafetyAction::SnapshotPruned { name } => {
                            SafetyActionDto::SnapshotPruned { name }
                        }
                        SafetyAction::RollbackRequested { approval_id } => {
                            SafetyActionDto::RollbackRequested {
                                approval_id: approval_id.0,
                            }
                        }
                        SafetyAction::Armed { armed, until } => SafetyActionDto::Armed {
                            mechanism: armed.mechanism.as_str().to_owned(),
                            handle: armed.handle,
                            window_secs: armed.window_secs,
                            until: time(until),
                        },
                        SafetyAction::Checked { ok, detail } => {
                            SafetyActionDto::Checked { ok, detail }
                        }
                        SafetyAction::Disarmed { by } => SafetyActionDto::Disarmed { by },
                        SafetyAction::Reverted { log } => SafetyActionDto::Reverted {
                            restored: log.restored,
                            reloaded: log.reloaded,
                            failed: log.failed,
                            done: log.done,
                        },
                    },
                }
            }
            DomainEvent::AssentOpened {
                generation,
                expires_at,
                granted_by,
                username,
                request_id,
            } => EventDto::AssentOpened {
                generation,
                expires_at: time(expires_at),
                granted_by,
                username,
                request_id,
            },
            DomainEvent::AssentClosed { generation, reason } => EventDto::AssentClosed {
                generation,
                reason: reason.into(),
            },
            DomainEvent::ExecutionCreated {
                execution_id,
                host,
                command,
                class,
                status,
            } => EventDto::ExecutionCreated {
                execution_id: execution_id.0,
                host,
                command,
                class: class.into(),
                status: status.into(),
            },
            DomainEvent::ExecutionStatusChanged {
                execution_id,
                status,
                exit_code,
                error,
            } => EventDto::ExecutionStatusChanged {
                execution_id: execution_id.0,
                status: status.into(),
                exit_code,
                error,
            },
            DomainEvent::ApprovalRequested {
                approval_id,
                execution_id,
                expires_at,
            } => EventDto::ApprovalRequested {
                approval_id: approval_id.0,
                execution_id: execution_id.0,
                expires_at: time(expires_at),
            },
            DomainEvent::ApprovalResolved {
                approval_id,
                status,
                reason,
                decided_by,
                username,
                request_id,
            } => EventDto::ApprovalResolved {
                approval_id: approval_id.0,
                status: status.into(),
                reason,
                decided_by,
                username,
                request_id,
            },
            DomainEvent::MessageAppended { message_id, role } => EventDto::MessageAppended {
                message_id: message_id.0,
                role: role.into(),
            },
            DomainEvent::ToolCalled {
                call_id,
                name,
                outcome,
            } => EventDto::ToolCalled {
                call_id,
                name,
                outcome: outcome.into(),
            },
            DomainEvent::OutputRedacted {
                call_id,
                tool,
                kinds,
            } => EventDto::OutputRedacted {
                call_id,
                tool,
                kinds: kinds
                    .into_iter()
                    .map(|k| RedactedKindDto {
                        kind: k.kind,
                        count: k.count,
                    })
                    .collect(),
            },
            DomainEvent::Nudged => EventDto::Nudged,
            DomainEvent::TurnStarted { cause } => EventDto::TurnStarted {
                cause: cause.into(),
            },
            DomainEvent::TurnDone {
                error,
                n_tool_calls,
            } => EventDto::TurnDone {
                error,
                n_tool_calls,
            },
            DomainEvent::TurnStopped {
                stopped_by,
                username,
                request_id,
            } => EventDto::TurnStopped {
                stopped_by,
                username,
                request_id,
            },
            DomainEvent::AssentRevoked {
                generation,
                revoked_by,
                username,
                request_id,
            } => EventDto::AssentRevoked {
                generation,
                revoked_by,
                username,
                request_id,
            },
            DomainEvent::PlanRejected {
                generation,
                rejected_by,
                username,
                request_id,
                reason,
            } => EventDto::PlanRejected {
                generation,
                rejected_by,
                username,
                request_id,
                reason,
            },
            DomainEvent::TaskClosed {
                outcome,
                note,
                closed_by,
                username,
                request_id,
            } => EventDto::TaskClosed {
                outcome: outcome.into(),
                note,
                closed_by,
                username,
                request_id,
            },
            DomainEvent::SessionArchived { archived, by } => {
                EventDto::SessionArchived { archived, by }
            }
            DomainEvent::ApprovalProgress {
                approval_id,
                approved_by,
                username,
                request_id,
                approvals,
                required,
            } => EventDto::ApprovalProgress {
                approval_id: approval_id.0,
                approved_by,
                username,
                request_id,
                approvals,
                required,
            },
            DomainEvent::PlanProgress {
                generation,
                approved_by,
                username,
                request_id,
                approvals,
                required,
            } => EventDto::PlanProgress {
                generation,
                approved_by,
                username,
                request_id,
                approvals,
                required,
            },
            DomainEvent::DecisionRefused {
                decision,
                principal,
                request_id,
                approval_id,
                reason,
            } => EventDto::DecisionRefused {
                decision: decision.as_str().to_owned(),
                principal,
                request_id,
                approval_id: approval_id.map(|id| id.0),
                reason,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use nomos_core::SessionId;
    use nomos_test_support::store_contract::fixtures::{at, every_event};
    use serde_json::Value;

    use super::*;

    #[test]
    fn the_wire_form_of_every_event_has_the_shape_of_the_core_serde_form() {
        // The web UI read the core's serde form before the wire form existed: every kind,
        // with every optional field set, still reads the same.
        for (n, event) in every_event().into_iter().enumerate() {
            let record = EventRecord {
                global_seq: 40 + n as i64,
                session_id: SessionId(Uuid::from_u128(7)),
                seq: 1 + n as i64,
                at: at(n as i64),
                event,
            };
            let wire = serde_json::to_value(EventRecordDto::from(&record)).unwrap();
            assert_eq!(wire, serde_json::to_value(&record).unwrap());
            assert_eq!(wire["event"]["type"], record.event.kind());
        }
    }

    #[test]
    fn absent_audit_fields_stay_absent_on_the_wire() {
        let event = DomainEvent::TurnStopped {
            stopped_by: None,
            username: None,
            request_id: None,
        };
        let wire = serde_json::to_value(EventDto::from(&event)).unwrap();
        assert_eq!(wire, serde_json::json!({"type": "turn.stopped"}));
        let done = DomainEvent::TurnDone {
            error: None,
            n_tool_calls: 0,
        };
        let wire = serde_json::to_value(EventDto::from(&done)).unwrap();
        assert_eq!(wire["error"], Value::Null);
        assert!(wire.as_object().unwrap().contains_key("error"), "{wire}");
    }

    fn same_spelling<C: Serialize + Copy, W: Serialize + From<C>>(all: &[C]) {
        for state in all {
            assert_eq!(
                serde_json::to_value(W::from(*state)).unwrap(),
                serde_json::to_value(state).unwrap()
            );
        }
    }

    #[test]
    fn every_state_is_spelled_on_the_wire_as_the_core_spells_it() {
        same_spelling::<SessionStatus, SessionStatusDto>(SessionStatus::ALL);
        same_spelling::<Outcome, OutcomeDto>(Outcome::ALL);
        same_spelling::<StepStatus, StepStatusDto>(StepStatus::ALL);
        same_spelling::<ExecutionStatus, ExecutionStatusDto>(ExecutionStatus::ALL);
        same_spelling::<ApprovalStatus, ApprovalStatusDto>(ApprovalStatus::ALL);
        same_spelling::<CommandClass, CommandClassDto>(CommandClass::ALL);
        same_spelling::<Role, RoleDto>(Role::ALL);
        same_spelling::<ToolCallOutcome, ToolCallOutcomeDto>(&[
            ToolCallOutcome::Ok,
            ToolCallOutcome::Refused,
            ToolCallOutcome::Error,
            ToolCallOutcome::Interrupted,
        ]);
        same_spelling::<TurnCause, TurnCauseDto>(&[
            TurnCause::Operator,
            TurnCause::Continuation,
            TurnCause::Resume,
            TurnCause::Nudge,
        ]);
        same_spelling::<AssentCloseReason, AssentCloseReasonDto>(&[
            AssentCloseReason::PlanFinished,
            AssentCloseReason::PlanRevised,
            AssentCloseReason::PlanReplaced,
            AssentCloseReason::SessionEnded,
            AssentCloseReason::Expired,
            AssentCloseReason::Renewed,
            AssentCloseReason::Revoked,
            AssentCloseReason::Stopped,
            AssentCloseReason::DeclaredChanged,
            AssentCloseReason::Unrecorded,
        ]);
    }
}
