//! ACTIVITY: the operator's activity log, derived from persisted facts by a pure function.
//!
//! [`derive_activity`] turns a session's rows (events, plan steps, executions, approvals,
//! tool calls) into [`ActivityEntry`]s. The rules it keeps:
//!
//! * ACTIVITY-1: same facts and `now`, same log, whatever order the store returned the rows
//!   in. The log is sorted by `(at, key)` and keys are unique per thing.
//! * ACTIVITY-2: every entry's `at` is a persisted timestamp: the event's `at`, the step's
//!   `started_at` (or `updated_at` before it started), the execution's `created_at`, the
//!   approval's `requested_at`, the tool call's `started_at`. `now` never becomes a time.
//! * ACTIVITY-3: command and approval states come from the execution and approval rows,
//!   never from tool result text. An entry is `running` only while its row is. In a terminal
//!   session every open state (`pending`, `running`, `stalled`, `waiting_approval`) is shown
//!   as `cancelled`: nothing will move it any more.
//! * ACTIVITY-4: a running step is `stalled` when nothing happened on it for more than
//!   [`STALLED_AFTER`]: not its own update, not an execution of it, not a tool call since it
//!   started. A step whose command is running or waits for approval is not stalled.
//! * PLAN-7: steps of older plan generations are shown as `replaced`.
//!
//! Per-row events (`plan.step.*`, `execution.*`, `approval.*`, `tool.called`,
//! `message.appended`) do not make entries of their own: the rows they describe do.
//! Turn boundaries make none either, except a failed turn (`turn.done` with an error).
//! The cost is O(n log n) in the number of rows (one sort).

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::event::{DomainEvent, EventRecord};
use crate::id::{ApprovalId, ExecutionId};
use crate::record::{
    Approval, Execution, PlanStep, SessionRecord, ToolCallOutcome, ToolCallRecord,
};
use crate::status::{ApprovalStatus, ExecutionStatus, StepStatus};
use crate::sweep::excerpt;
use crate::time::{Span, Timestamp};

/// ACTIVITY-4: how long a running step may go without activity before it is `stalled`.
pub const STALLED_AFTER: Span = Span::from_secs(60);

/// How many characters of a command, goal or result an entry shows.
const TEXT_CHARS: usize = 200;

/// The persisted facts of one session that the log is derived from.
#[derive(Clone, Copy, Debug)]
pub struct ActivityFacts<'a> {
    /// The session row.
    pub session: &'a SessionRecord,
    /// Its committed events, in any order.
    pub events: &'a [EventRecord],
    /// Its plan steps of every generation, in any order.
    pub steps: &'a [PlanStep],
    /// Its executions, in any order.
    pub executions: &'a [Execution],
    /// Its approvals, in any order.
    pub approvals: &'a [Approval],
    /// Its tool calls, in any order.
    pub tool_calls: &'a [ToolCallRecord],
}

/// What an entry stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityKind {
    /// The session was created, changed status, or got a board outcome.
    Status,
    /// A goal was set.
    Goal,
    /// A plan (generation) was proposed or revised.
    Plan,
    /// One plan step.
    Step,
    /// One execution (a command the agent asked to run).
    Command,
    /// One approval request, or the operator's assent to a plan.
    Approval,
    /// One tool call that is not shown as a command.
    Tool,
    /// The idle sweep nudged the session.
    Nudge,
}

/// How an entry is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryState {
    /// A fact with no progress of its own.
    Info,
    /// Not started yet.
    Pending,
    /// Going on right now.
    Running,
    /// Running, but nothing happened for more than [`STALLED_AFTER`] (ACTIVITY-4).
    Stalled,
    /// Waiting for the operator's decision.
    WaitingApproval,
    /// Finished well.
    Done,
    /// Finished badly (failed, refused, non-zero exit).
    Failed,
    /// Deliberately not done.
    Skipped,
    /// Superseded by a newer plan generation.
    Replaced,
    /// Will not happen: denied, expired, voided, or left open when the session closed.
    Cancelled,
}

impl EntryState {
    /// Whether the state can still change.
    pub fn is_open(&self) -> bool {
        matches!(
            self,
            EntryState::Pending
                | EntryState::Running
                | EntryState::Stalled
                | EntryState::WaitingApproval
        )
    }
}

/// One line of the activity log. Entries order by `(at, key)`, then by the other fields.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ActivityEntry {
    /// When it happened: always a persisted timestamp (ACTIVITY-2).
    pub at: Timestamp,
    /// Stable identity: `status/<event seq>`, `goal/<event seq>`, `plan/<event seq>`,
    /// `assent/<event seq>`, `nudge/<event seq>`, `turn/<event seq>`, `step/<generation>/<seq>`,
    /// `exec/<execution id>`, `approval/<approval id>`, `tool/<call id>`.
    pub key: String,
    /// What it stands for.
    pub kind: ActivityKind,
    /// One line for the operator.
    pub title: String,
    /// More text, when there is any.
    pub detail: Option<String>,
    /// How it is shown.
    pub state: EntryState,
    /// The plan generation it belongs to.
    pub generation: Option<u32>,
    /// The plan step seq it belongs to.
    pub seq: Option<u32>,
    /// The execution it stands for or guards.
    pub execution_id: Option<ExecutionId>,
    /// The approval it stands for or is guarded by.
    pub approval_id: Option<ApprovalId>,
    /// How long it took, when it finished.
    pub duration_ms: Option<u64>,
}

/// Derives the activity log of one session (ACTIVITY-1..4); see the module docs.
///
/// Rows of other sessions are ignored. `now` only decides whether a running step is
/// stalled; it never becomes an entry's time.
pub fn derive_activity(facts: &ActivityFacts<'_>, now: Timestamp) -> Vec<ActivityEntry> {
    let session_id = facts.session.id;
    let n_rows = facts.events.len()
        + facts.steps.len()
        + facts.executions.len()
        + facts.approvals.len()
        + facts.tool_calls.len();
    let mut entries = Vec::with_capacity(n_rows);

    let executions: Vec<&Execution> = facts
        .executions
        .iter()
        .filter(|execution| execution.session_id == session_id)
        .collect();
    let approvals: Vec<&Approval> = facts
        .approvals
        .iter()
        .filter(|approval| approval.session_id == session_id)
        .collect();
    let tool_calls: Vec<&ToolCallRecord> = facts
        .tool_calls
        .iter()
        .filter(|call| call.session_id == session_id)
        .collect();
    let steps: Vec<&PlanStep> = facts
        .steps
        .iter()
        .filter(|step| step.session_id == session_id)
        .collect();

    let approval_by_execution = newest_approval_by_execution(&approvals);
    let step_by_execution: HashMap<ExecutionId, Option<u32>> = executions
        .iter()
        .map(|execution| (execution.id, execution.step_seq))
        .collect();
    let ctx = StepContext::new(facts.session, &steps, &executions, &tool_calls, now);

    for event in facts
        .events
        .iter()
        .filter(|event| event.session_id == session_id)
    {
        if let Some(entry) = event_entry(event) {
            entries.push(entry);
        }
    }
    for step in &steps {
        entries.push(step_entry(step, &ctx));
    }
    for execution in &executions {
        let approval = approval_by_execution.get(&execution.id).copied();
        entries.push(execution_entry(execution, approval));
    }
    // AUDIT-1: the request that carried each operator decision, and the decider's OIDC
    // username, from its event.
    let request_by_approval: HashMap<ApprovalId, (Option<&str>, Option<&str>)> = facts
        .events
        .iter()
        .filter(|event| event.session_id == session_id)
        .filter_map(|event| match &event.event {
            DomainEvent::ApprovalResolved {
                approval_id,
                request_id,
                username,
                ..
            } if request_id.is_some() || username.is_some() => {
                Some((*approval_id, (request_id.as_deref(), username.as_deref())))
            }
            _ => None,
        })
        .collect();
    for approval in &approvals {
        let seq = step_by_execution
            .get(&approval.execution_id)
            .copied()
            .flatten();
        let (request, username) = request_by_approval
            .get(&approval.id)
            .copied()
            .unwrap_or_default();
        entries.push(approval_entry(approval, seq, request, username));
    }
    // A tool call that became an execution is shown once, as the command.
    let shown_as_command: HashSet<&str> = executions
        .iter()
        .filter_map(|execution| execution.tool_call_id.as_deref())
        .collect();
    for call in &tool_calls {
        if !shown_as_command.contains(call.call_id.as_str()) {
            entries.push(tool_entry(call));
        }
    }

    if facts.session.status.is_terminal() {
        for entry in &mut entries {
            if entry.state.is_open() {
                entry.state = EntryState::Cancelled;
            }
        }
    }
    entries.sort();
    entries
}

/// What deciding a step's state needs, computed once for all steps.
struct StepContext {
    current_generation: u32,
    session_terminal: bool,
    now: Timestamp,
    /// Per `(generation, seq)`: the newest execution time, and whether one is still live.
    executions: HashMap<(u32, u32), (Timestamp, bool)>,
    /// The end of the newest tool call.
    newest_tool_end: Option<Timestamp>,
}

impl StepContext {
    fn new(
        session: &SessionRecord,
        steps: &[&PlanStep],
        executions: &[&Execution],
        tool_calls: &[&ToolCallRecord],
        now: Timestamp,
    ) -> StepContext {
        let newest_step_generation = steps.iter().map(|step| step.generation).max().unwrap_or(0);
        let mut by_step: HashMap<(u32, u32), (Timestamp, bool)> = HashMap::new();
        for execution in executions {
            let Some(seq) = execution.step_seq else {
                continue;
            };
            let newest = [
                Some(execution.created_at),
                execution.started_at,
                execution.finished_at,
            ]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(execution.created_at);
            let live = matches!(
                execution.status,
                ExecutionStatus::Running | ExecutionStatus::PendingApproval
            );
            let slot = by_step
                .entry((execution.generation, seq))
                .or_insert((newest, live));
            slot.0 = slot.0.max(newest);
            slot.1 |= live;
        }
        let newest_tool_end = tool_calls
            .iter()
            .map(|call| {
                let duration = i64::try_from(call.duration_ms).unwrap_or(i64::MAX);
                call.started_at + Span::from_millis(duration)
            })
            .max();
        StepContext {
            current_generation: session.plan_generation.max(newest_step_generation),
            session_terminal: session.status.is_terminal(),
            now,
            executions: by_step,
            newest_tool_end,
        }
    }

    /// ACTIVITY-4: whether a running step has gone quiet.
    fn is_stalled(&self, step: &PlanStep) -> bool {
        if self.session_terminal {
            return false;
        }
        let mut newest = step
            .updated_at
            .max(step.started_at.unwrap_or(step.updated_at));
        if let Some((at, live)) = self.executions.get(&(step.generation, step.seq)) {
            if *live {
                return false;
            }
            newest = newest.max(*at);
        }
        // Tool calls carry no step; one made after the step started counts as its activity.
        if let (Some(tool_end), Some(started_at)) = (self.newest_tool_end, step.started_at)
            && tool_end >= started_at
        {
            newest = newest.max(tool_end);
        }
        self.now.since(newest) > STALLED_AFTER
    }
}

fn newest_approval_by_execution<'a>(
    approvals: &[&'a Approval],
) -> HashMap<ExecutionId, &'a Approval> {
    let mut newest: HashMap<ExecutionId, &Approval> = HashMap::new();
    for approval in approvals {
        newest
            .entry(approval.execution_id)
            .and_modify(|kept| {
                if (approval.requested_at, approval.id) > (kept.requested_at, kept.id) {
                    *kept = approval;
                }
            })
            .or_insert(approval);
    }
    newest
}

fn entry(at: Timestamp, key: String, kind: ActivityKind, title: String) -> ActivityEntry {
    ActivityEntry {
        at,
        key,
        kind,
        title,
        detail: None,
        state: EntryState::Info,
        generation: None,
        seq: None,
        execution_id: None,
        approval_id: None,
        duration_ms: None,
    }
}

fn event_entry(record: &EventRecord) -> Option<ActivityEntry> {
    let seq = record.seq;
    let at = record.at;
    let made = match &record.event {
        DomainEvent::SessionCreated => entry(
            at,
            format!("status/{seq}"),
            ActivityKind::Status,
            "Session started".into(),
        ),
        DomainEvent::TaskStatus { from, to, reason } => ActivityEntry {
            detail: reason.clone(),
            ..entry(
                at,
                format!("status/{seq}"),
                ActivityKind::Status,
                format!("Status: {from} → {to}"),
            )
        },
        DomainEvent::BoardOutcome { outcome } => entry(
            at,
            format!("status/{seq}"),
            ActivityKind::Status,
            format!("Outcome so far: {outcome}"),
        ),
        DomainEvent::GoalSet { goal } => ActivityEntry {
            detail: Some(excerpt(goal, TEXT_CHARS)),
            ..entry(
                at,
                format!("goal/{seq}"),
                ActivityKind::Goal,
                "Goal set".into(),
            )
        },
        DomainEvent::PlanProposed {
            generation,
            steps,
            revision_reason,
        } => {
            let verb = if revision_reason.is_some() {
                "revised"
            } else {
                "proposed"
            };
            let n = steps.len();
            let plural = if n == 1 { "" } else { "s" };
            let listed = steps
                .iter()
                .enumerate()
                .map(|(idx, title)| format!("{}={}", idx + 1, excerpt(title, TEXT_CHARS)))
                .collect::<Vec<_>>()
                .join("; ");
            let detail = match revision_reason {
                Some(reason) => format!("{}; {listed}", excerpt(reason, TEXT_CHARS)),
                None => listed,
            };
            ActivityEntry {
                detail: Some(detail),
                generation: Some(*generation),
                ..entry(
                    at,
                    format!("plan/{seq}"),
                    ActivityKind::Plan,
                    format!("Plan {verb}: {n} step{plural} (generation {generation})"),
                )
            }
        }
        DomainEvent::AssentOpened {
            generation,
            granted_by,
            username,
            request_id,
            ..
        } => ActivityEntry {
            state: EntryState::Done,
            generation: Some(*generation),
            // AUDIT-1: who assented, and through which request.
            detail: who_detail(
                granted_by.as_deref(),
                username.as_deref(),
                request_id.as_deref(),
            ),
            ..entry(
                at,
                format!("assent/{seq}"),
                ActivityKind::Approval,
                format!("Operator approved plan generation {generation}"),
            )
        },
        // CONTROL-1/2, AUDIT-1: the operator's stop and revoke, with who and the request.
        DomainEvent::TurnStopped {
            stopped_by,
            username,
            request_id,
        } => ActivityEntry {
            state: EntryState::Cancelled,
            detail: who_detail(
                stopped_by.as_deref(),
                username.as_deref(),
                request_id.as_deref(),
            ),
            ..entry(
                at,
                format!("stop/{seq}"),
                ActivityKind::Status,
                "Operator stopped the turn".into(),
            )
        },
        DomainEvent::AssentRevoked {
            generation,
            revoked_by,
            username,
            request_id,
        } => ActivityEntry {
            state: EntryState::Cancelled,
            generation: Some(*generation),
            detail: who_detail(
                revoked_by.as_deref(),
                username.as_deref(),
                request_id.as_deref(),
            ),
            ..entry(
                at,
                format!("revoke/{seq}"),
                ActivityKind::Approval,
                format!("Operator revoked the approval of plan generation {generation}"),
            )
        },
        // AUTHZ-3: one operator of several approved; the request still waits.
        DomainEvent::ApprovalProgress {
            approval_id,
            approved_by,
            username,
            request_id,
            approvals,
            required,
        } => ActivityEntry {
            approval_id: Some(*approval_id),
            detail: who_detail(
                Some(approved_by.as_str()),
                username.as_deref(),
                request_id.as_deref(),
            ),
            ..entry(
                at,
                format!("approval-progress/{seq}"),
                ActivityKind::Approval,
                format!("Approved by {approved_by}: {approvals} of {required} approvals"),
            )
        },
        // AUTHZ-3: one operator of several approved the plan; it still waits.
        DomainEvent::PlanProgress {
            generation,
            approved_by,
            username,
            request_id,
            approvals,
            required,
        } => ActivityEntry {
            generation: Some(*generation),
            detail: who_detail(
                Some(approved_by.as_str()),
                username.as_deref(),
                request_id.as_deref(),
            ),
            ..entry(
                at,
                format!("plan-progress/{seq}"),
                ActivityKind::Approval,
                format!(
                    "Plan generation {generation} approved by {approved_by}: {approvals} of {required} approvals"
                ),
            )
        },
        // AUTHZ-2, AUTHZ-3: a decision refused because of who made it.
        DomainEvent::DecisionRefused {
            decision,
            principal,
            request_id,
            approval_id,
            reason,
        } => ActivityEntry {
            state: EntryState::Cancelled,
            approval_id: *approval_id,
            detail: Some(match request_id {
                Some(request) => format!("{reason} (request {request})"),
                None => reason.clone(),
            }),
            ..entry(
                at,
                format!("refused/{seq}"),
                ActivityKind::Approval,
                format!(
                    "Refused a {} by {}",
                    decision.as_str().replace('_', " "),
                    principal.as_deref().unwrap_or("an unnamed decider")
                ),
            )
        },
        // GATE-4, AUDIT-1: the operator's explicit rejection of a plan, with who and why.
        DomainEvent::StepChecked {
            generation,
            seq: step,
            verdict,
            ..
        } => {
            let (state, title, detail) = match verdict {
                crate::check::CheckVerdict::Passed => (
                    EntryState::Done,
                    format!("Check of step {step} passed"),
                    None,
                ),
                crate::check::CheckVerdict::Failed { reason } => (
                    EntryState::Failed,
                    format!("Check of step {step} failed"),
                    Some(excerpt(reason, TEXT_CHARS)),
                ),
            };
            ActivityEntry {
                detail,
                state,
                generation: Some(*generation),
                seq: Some(*step),
                ..entry(at, format!("check/{seq}"), ActivityKind::Step, title)
            }
        }
        DomainEvent::PlanRejected {
            generation,
            rejected_by,
            username,
            request_id,
            reason,
        } => {
            let who = who_detail(
                rejected_by.as_deref(),
                username.as_deref(),
                request_id.as_deref(),
            );
            let detail = match (reason, who) {
                (Some(reason), Some(who)) => {
                    Some(format!("{}; {who}", excerpt(reason, TEXT_CHARS)))
                }
                (Some(reason), None) => Some(excerpt(reason, TEXT_CHARS)),
                (None, who) => who,
            };
            ActivityEntry {
                state: EntryState::Cancelled,
                generation: Some(*generation),
                detail,
                ..entry(
                    at,
                    format!("reject/{seq}"),
                    ActivityKind::Approval,
                    format!("Operator rejected plan generation {generation}"),
                )
            }
        }
        // CONTROL-5/6: the operator's close and archive, with who.
        DomainEvent::TaskClosed {
            outcome,
            note,
            closed_by,
            username,
            request_id,
        } => ActivityEntry {
            state: EntryState::Done,
            detail: match (
                note,
                who_detail(
                    closed_by.as_deref(),
                    username.as_deref(),
                    request_id.as_deref(),
                ),
            ) {
                (Some(note), Some(who)) => Some(format!("{note} ({who})")),
                (Some(note), None) => Some(note.clone()),
                (None, who) => who,
            },
            ..entry(
                at,
                format!("close/{seq}"),
                ActivityKind::Status,
                format!("Operator closed the task as {}", outcome.as_str()),
            )
        },
        DomainEvent::SessionArchived { archived, by } => ActivityEntry {
            detail: who_detail(by.as_deref(), None, None),
            ..entry(
                at,
                format!("archive/{seq}"),
                ActivityKind::Status,
                if *archived {
                    "Operator archived the session".into()
                } else {
                    "Operator brought the session back from the archive".into()
                },
            )
        },
        DomainEvent::OutputRedacted { tool, kinds, .. } => ActivityEntry {
            state: EntryState::Done,
            detail: Some(
                kinds
                    .iter()
                    .map(|k| format!("{} {}", k.count, k.kind))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            ..entry(
                at,
                format!("redacted/{seq}"),
                ActivityKind::Status,
                format!("Secrets redacted from the `{tool}` result the model reads"),
            )
        },
        // SAFE-1..3: every action of a safety net is on the activity log.
        DomainEvent::SafetyNet {
            execution_id,
            action,
            ..
        } => {
            use crate::event::SafetyAction;
            let (state, title, detail) = match action {
                SafetyAction::BackupStarted { paths } => (
                    EntryState::Info,
                    "Backing up the files the change writes".to_owned(),
                    Some(paths.join(", ")),
                ),
                SafetyAction::BackedUp { file } => (
                    EntryState::Done,
                    format!("Backed up {}", file.path),
                    Some(format!(
                        "{} bytes, mode {}, owner {}:{}, sha256 {}",
                        file.size, file.mode, file.uid, file.gid, file.sha256
                    )),
                ),
                SafetyAction::Pruned { backup } => (
                    EntryState::Info,
                    format!("Removed the old backup {backup}"),
                    None,
                ),
                SafetyAction::Stopped { reason } => (
                    EntryState::Failed,
                    "Change stopped by its safety net".to_owned(),
                    Some(excerpt(reason, TEXT_CHARS)),
                ),
                SafetyAction::RestoreRequested { .. } => {
                    (EntryState::Pending, "Restore requested".to_owned(), None)
                }
                SafetyAction::SnapshotTaken {
                    guest,
                    node,
                    vmid,
                    name,
                } => (
                    EntryState::Done,
                    format!("Snapshot {name} of {guest} taken"),
                    Some(format!("vmid {vmid} on {node}")),
                ),
                SafetyAction::SnapshotPruned { name } => (
                    EntryState::Info,
                    format!("Removed the old snapshot {name}"),
                    None,
                ),
                SafetyAction::RollbackRequested { .. } => {
                    (EntryState::Pending, "Rollback requested".to_owned(), None)
                }
                SafetyAction::Armed { armed, until } => (
                    EntryState::Pending,
                    format!(
                        "Revert armed until {} (waits for Confirm)",
                        until.as_datetime().format("%H:%M:%S")
                    ),
                    Some(format!("{} {}", armed.mechanism.as_str(), armed.handle)),
                ),
                SafetyAction::Checked { ok, detail } => (
                    if *ok {
                        EntryState::Done
                    } else {
                        EntryState::Failed
                    },
                    if *ok {
                        "The host answers a new SSH connection".to_owned()
                    } else {
                        "The host's check over a new SSH connection failed".to_owned()
                    },
                    Some(excerpt(detail, TEXT_CHARS)),
                ),
                SafetyAction::Disarmed { by } => (
                    EntryState::Done,
                    "Change confirmed; its revert disarmed".to_owned(),
                    by.clone(),
                ),
                SafetyAction::Reverted { log } => (
                    EntryState::Failed,
                    "Change reverted by its dead man's switch".to_owned(),
                    Some(excerpt(&log.summary(), TEXT_CHARS)),
                ),
            };
            ActivityEntry {
                detail,
                state,
                execution_id: Some(*execution_id),
                ..entry(at, format!("safety/{seq}"), ActivityKind::Command, title)
            }
        }
        DomainEvent::Nudged => entry(
            at,
            format!("nudge/{seq}"),
            ActivityKind::Nudge,
            "Nudged after being idle".into(),
        ),
        DomainEvent::TurnDone {
            error: Some(error), ..
        } => ActivityEntry {
            detail: Some(excerpt(error, TEXT_CHARS)),
            state: EntryState::Failed,
            ..entry(
                at,
                format!("turn/{seq}"),
                ActivityKind::Status,
                "Turn failed".into(),
            )
        },
        DomainEvent::TurnDone { error: None, .. }
        | DomainEvent::TurnStarted { .. }
        | DomainEvent::AssentClosed { .. }
        | DomainEvent::StepStarted { .. }
        | DomainEvent::StepFinished { .. }
        | DomainEvent::ExecutionCreated { .. }
        | DomainEvent::ExecutionStatusChanged { .. }
        | DomainEvent::ApprovalRequested { .. }
        | DomainEvent::ApprovalResolved { .. }
        | DomainEvent::MessageAppended { .. }
        | DomainEvent::ToolCalled { .. } => return None,
    };
    Some(made)
}

fn step_entry(step: &PlanStep, ctx: &StepContext) -> ActivityEntry {
    let state = if step.generation < ctx.current_generation {
        EntryState::Replaced
    } else {
        match step.status {
            StepStatus::Pending => EntryState::Pending,
            StepStatus::Running if ctx.is_stalled(step) => EntryState::Stalled,
            StepStatus::Running => EntryState::Running,
            StepStatus::Done => EntryState::Done,
            StepStatus::Failed => EntryState::Failed,
            StepStatus::Skipped => EntryState::Skipped,
            StepStatus::Replaced => EntryState::Replaced,
        }
    };
    let detail = match (state, step.status) {
        (EntryState::Replaced, status) if status != StepStatus::Replaced => {
            Some(format!("was {status} when the plan was revised"))
        }
        (EntryState::Stalled, _) => Some("no activity for over a minute".to_owned()),
        _ => step.note.clone().or_else(|| step.detail.clone()),
    };
    let duration_ms = match (step.started_at, step.finished_at) {
        (Some(started_at), Some(finished_at)) => duration_between(started_at, finished_at),
        _ => None,
    };
    ActivityEntry {
        detail,
        state,
        generation: Some(step.generation),
        seq: Some(step.seq),
        duration_ms,
        ..entry(
            step.started_at.unwrap_or(step.updated_at),
            format!("step/{}/{}", step.generation, step.seq),
            ActivityKind::Step,
            step.title.clone(),
        )
    }
}

fn execution_entry(execution: &Execution, approval: Option<&Approval>) -> ActivityEntry {
    let exit_code = execution
        .output
        .as_ref()
        .and_then(|output| output.exit_code);
    let state = match execution.status {
        ExecutionStatus::PendingApproval => EntryState::WaitingApproval,
        ExecutionStatus::Approved => EntryState::Pending,
        ExecutionStatus::Running => EntryState::Running,
        // SAFE-3: ran, waiting for the operator's Confirm.
        ExecutionStatus::Armed => EntryState::WaitingApproval,
        ExecutionStatus::Reverted => EntryState::Failed,
        ExecutionStatus::Completed if exit_code == Some(0) => EntryState::Done,
        ExecutionStatus::Completed | ExecutionStatus::Failed => EntryState::Failed,
        ExecutionStatus::Cancelled => EntryState::Cancelled,
    };
    let mut detail = vec![format!(
        "{}: {}",
        execution.class,
        excerpt(&execution.reason, TEXT_CHARS)
    )];
    match (&execution.output, &execution.error) {
        (Some(output), _) => match (output.exit_code, &output.signal) {
            (Some(code), _) => detail.push(format!("exit {code}")),
            (None, Some(signal)) => detail.push(format!("killed by {signal}")),
            (None, None) => {}
        },
        (None, Some(error)) => detail.push(excerpt(error, TEXT_CHARS)),
        (None, None) => {}
    }
    let duration_ms = match (
        &execution.output,
        execution.started_at,
        execution.finished_at,
    ) {
        (Some(output), _, _) => Some(output.duration_ms),
        (None, Some(started_at), Some(finished_at)) => duration_between(started_at, finished_at),
        _ => None,
    };
    ActivityEntry {
        detail: Some(detail.join("; ")),
        state,
        generation: plan_generation(execution.generation),
        seq: execution.step_seq,
        execution_id: Some(execution.id),
        approval_id: approval.map(|approval| approval.id),
        duration_ms,
        ..entry(
            execution.created_at,
            format!("exec/{}", execution.id),
            ActivityKind::Command,
            format!(
                "{} on {}",
                excerpt(&execution.command, TEXT_CHARS),
                execution.host
            ),
        )
    }
}

/// AUDIT-1: "by WHO (request ID)", as far as they are known; an OIDC subject comes with
/// its `preferred_username` ("by alice (sub 248289761001)").
fn who_detail(who: Option<&str>, username: Option<&str>, request: Option<&str>) -> Option<String> {
    let who = match (who, username) {
        (Some(sub), Some(username)) if username != sub => format!("{username} (sub {sub})"),
        (Some(who), _) => who.to_owned(),
        (None, _) => return None,
    };
    Some(match request {
        Some(request) => format!("by {who} (request {request})"),
        None => format!("by {who}"),
    })
}

fn approval_entry(
    approval: &Approval,
    seq: Option<u32>,
    request: Option<&str>,
    username: Option<&str>,
) -> ActivityEntry {
    let by = who_detail(approval.decided_by.as_deref(), username, request)
        .map(|who| format!(" {who}"))
        .unwrap_or_default();
    let (state, detail) = match approval.status {
        ApprovalStatus::Pending => (
            EntryState::WaitingApproval,
            format!("expires at {}", approval.expires_at),
        ),
        ApprovalStatus::Approved => (EntryState::Done, format!("approved{by}")),
        ApprovalStatus::Denied => (EntryState::Cancelled, format!("denied{by}")),
        ApprovalStatus::Expired => (
            EntryState::Cancelled,
            "expired without an answer".to_owned(),
        ),
        // CONTROL-2: an operator's cancel names who; Nomos's own voids do not.
        ApprovalStatus::Cancelled if approval.decided_by.is_some() => {
            (EntryState::Cancelled, format!("revoked{by}"))
        }
        ApprovalStatus::Cancelled => (EntryState::Cancelled, "voided".to_owned()),
    };
    let binding = &approval.binding;
    let duration_ms = approval
        .decided_at
        .and_then(|decided_at| duration_between(approval.requested_at, decided_at));
    ActivityEntry {
        detail: Some(detail),
        state,
        generation: plan_generation(binding.generation),
        seq,
        execution_id: Some(approval.execution_id),
        approval_id: Some(approval.id),
        duration_ms,
        ..entry(
            approval.requested_at,
            format!("approval/{}", approval.id),
            ActivityKind::Approval,
            format!(
                "Approval for {} on {} ({})",
                excerpt(&binding.command, TEXT_CHARS),
                binding.host,
                binding.class
            ),
        )
    }
}

fn tool_entry(call: &ToolCallRecord) -> ActivityEntry {
    // The outcome column decides the state; the result text is only shown (ACTIVITY-3).
    let state = match call.outcome {
        ToolCallOutcome::Ok => EntryState::Done,
        ToolCallOutcome::Refused | ToolCallOutcome::Error => EntryState::Failed,
        ToolCallOutcome::Interrupted => EntryState::Cancelled,
    };
    let detail = match call.outcome {
        ToolCallOutcome::Ok => None,
        outcome => Some(format!(
            "{}: {}",
            outcome.as_str(),
            excerpt(&call.result, TEXT_CHARS)
        )),
    };
    ActivityEntry {
        detail,
        state,
        duration_ms: Some(call.duration_ms),
        ..entry(
            call.started_at,
            format!("tool/{}", call.call_id),
            ActivityKind::Tool,
            call.name.clone(),
        )
    }
}

/// Generation 0 means "no plan".
fn plan_generation(generation: u32) -> Option<u32> {
    if generation == 0 {
        None
    } else {
        Some(generation)
    }
}

fn duration_between(start: Timestamp, end: Timestamp) -> Option<u64> {
    u64::try_from(end.since(start).as_millis()).ok()
}

#[cfg(test)]
mod tests;
