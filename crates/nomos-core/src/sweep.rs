//! SWEEP-4: one pure classification of idle sessions and stale executions.
//!
//! The runtime calls [`classify_session`] at the end of every turn ([`SweepMode::TurnEnd`],
//! SESSION-4) and from its periodic sweep ([`SweepMode::Periodic`], SWEEP-1..3); the backfill
//! tool calls it with [`SweepMode::Backfill`] (BACKFILL-2). Executions go through
//! [`classify_execution`] (EXEC-3, EXEC-6) and approvals through [`approval_expired`].
//! The caller applies the verdicts; nothing here reads a clock or a store, and no verdict
//! carries a timestamp, so a repair never fabricates one.

use serde::{Deserialize, Serialize};

use crate::record::{Approval, Execution, Message, SessionRecord};
use crate::status::{ApprovalStatus, ExecutionStatus, Role, SessionStatus};
use crate::time::{Span, Timestamp};

/// EXEC-3: the error text of an execution failed by the periodic sweep.
pub const TIMED_OUT_REASON: &str = "execution timed out";

/// EXEC-6, EXEC-8: the error text of an execution found `running` at start-up. It was
/// dispatched, so it may have run partly or to its end; it is never run again.
pub const INTERRUPTED_REASON: &str = "interrupted: outcome unknown (Nomos restarted while it was running; it may have run partly or to its end, and it was not run again)";

/// TURN-11: the error of the `turn.done` that closes a turn left open by a crash or a
/// restart.
pub const TURN_INTERRUPTED_BY_RESTART: &str = "interrupted by a restart";

/// TURN-11: the error of the `turn.done` that closes a turn a graceful shutdown stopped.
pub const TURN_INTERRUPTED_BY_SHUTDOWN: &str = "interrupted by a shutdown of the server";

/// EXEC-3: the error text of a non-terminal execution cancelled at start-up.
pub const STALE_REASON: &str = "cleaned up at start-up: stale from a prior run";

/// EXEC-3, FLEET-2: the error text of an execution found `approved` at start-up (or left
/// by a process whose heartbeat lapsed): a host queued in a fan-out whose driver stopped.
/// It was never dispatched (EXEC-6 marks an execution `running` before its dispatch), so
/// it provably did not run; it is cancelled at once and needs a new approval to run.
pub const QUEUED_AT_RESTART_REASON: &str = "cancelled at start-up: queued in a fan-out that was interrupted before this host started; it did not run";

/// SWEEP-2: how the summary of a session closed after an unanswered nudge begins.
pub const UNANSWERED_NUDGE_SUMMARY: &str = "closed after an unanswered nudge";

/// BACKFILL-2: how the summary of a session closed by the backfill tool begins.
pub const BACKFILL_SUMMARY: &str = "closed by backfill after";

/// SESSION-4: the length, in characters, a summary made from an answer is cut to.
pub const SUMMARY_CHARS: usize = 120;

/// How long things may sit before a sweep acts. Built with [`SweepThresholds::spec_defaults`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepThresholds {
    /// SWEEP-1: idle time after which a session with a goal is nudged (15 minutes).
    pub idle_after: Span,
    /// SWEEP-2: how long a nudge stays unanswered before the session is closed; the
    /// agent always gets at least this long to react (1 minute, below the sweep interval,
    /// so the close happens at the next sweep).
    pub nudge_grace: Span,
    /// EXEC-3: how long an execution may stay `running` (10 minutes).
    pub running_timeout: Span,
    /// EXEC-3: age after which a non-terminal execution is cleaned up at start-up (1 hour).
    pub startup_stale_after: Span,
    /// BACKFILL-2: idle time after which the backfill tool closes a session (1 day).
    pub backfill_idle_after: Span,
}

impl SweepThresholds {
    /// The thresholds SPEC.md names.
    pub fn spec_defaults() -> SweepThresholds {
        SweepThresholds {
            idle_after: Span::from_mins(15),
            nudge_grace: Span::from_mins(1),
            running_timeout: Span::from_mins(10),
            startup_stale_after: Span::from_mins(60),
            backfill_idle_after: Span::from_mins(24 * 60),
        }
    }
}

/// What the classification needs to know about one session.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SessionFacts<'a> {
    /// The session row.
    pub record: &'a SessionRecord,
    /// How many of its approvals are `pending` (SWEEP-3).
    pub n_pending_approvals: usize,
    /// The newest transcript message other than a note, if any ([`last_message`]).
    pub last_message: Option<LastMessage<'a>>,
}

/// What the classification reads of one transcript message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastMessage<'a> {
    /// Who wrote it.
    pub role: Role,
    /// Its text.
    pub text: &'a str,
    /// How many tool calls it made. A reply that called tools is not an answer: its turn
    /// went on, and if nothing follows it, that turn failed (SWEEP-2).
    pub n_tool_calls: usize,
}

impl<'a> LastMessage<'a> {
    /// The facts of one message.
    pub fn of(message: &'a Message) -> LastMessage<'a> {
        LastMessage {
            role: message.role,
            text: &message.content,
            n_tool_calls: message.tool_calls.len(),
        }
    }

    /// SESSION-4: an answer is an assistant reply in plain text that called no tool.
    pub fn is_answer(&self) -> bool {
        self.role == Role::Assistant && self.n_tool_calls == 0 && !self.text.trim().is_empty()
    }
}

/// The newest message of a transcript (in order) that is not a note: what SESSION-4 and
/// the sweeps read as the session's last word.
pub fn last_message(messages: &[Message]) -> Option<LastMessage<'_>> {
    last_word(messages).map(LastMessage::of)
}

/// The newest message of a transcript (in order) that is not a note, whole. The one
/// definition of "the session's last word"; [`last_message`] reads it.
pub fn last_word(messages: &[Message]) -> Option<&Message> {
    messages.iter().rev().find(|m| m.role != Role::Note)
}

/// Whether the backfill tool touches sessions that wait for the operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AwaitingPolicy {
    /// Leave them and report them (the default of the tool).
    Report,
    /// Close them like any other idle session.
    Include,
}

/// Who is asking, which decides the rules that apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum SweepMode {
    /// SESSION-4: a turn just ended.
    TurnEnd,
    /// SWEEP-1..3: the runtime's sweep every 5 minutes.
    Periodic,
    /// BACKFILL-2: the one-off repair tool.
    Backfill {
        /// What to do with sessions waiting for the operator.
        awaiting: AwaitingPolicy,
    },
}

/// Why a session is left as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaveReason {
    /// It is `done`, `failed` or `partial`.
    Terminal,
    /// It waits for the operator's answer (SWEEP-3).
    AwaitingInput,
    /// It has executions waiting for approval (SWEEP-3).
    AwaitingApproval,
    /// Something happened too recently.
    NotIdle,
    /// It never set a goal and its last message is not an answer (an assistant reply in
    /// plain text); a failed turn is never one (SWEEP-2).
    NoAnswer,
    /// It has a goal; the turn's end does not complete it (SESSION-4 does not apply).
    TaskInProgress,
    /// It was nudged and the agent still has time to react (SWEEP-2).
    AlreadyNudgedRecently,
}

/// What to do with one session.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum SessionVerdict {
    /// Nothing.
    Leave {
        /// Why.
        reason: LeaveReason,
    },
    /// SESSION-4: complete it as `success` (`done`) with this summary.
    CompleteTrivial {
        /// The first ~120 characters of the answer.
        summary: String,
    },
    /// SWEEP-1: record `nudged_at`, leave a nudge note and resume the model with it (a
    /// turn whose cause is `nudge`).
    Nudge,
    /// SWEEP-2 / BACKFILL-2: complete it as `partial` with this summary.
    ClosePartial {
        /// Why it was closed.
        summary: String,
    },
}

impl SessionVerdict {
    fn leave(reason: LeaveReason) -> SessionVerdict {
        SessionVerdict::Leave { reason }
    }
}

/// Decides what to do with one session (SWEEP-4); see [`SweepMode`] for who calls it.
pub fn classify_session(
    facts: &SessionFacts<'_>,
    now: Timestamp,
    thresholds: &SweepThresholds,
    mode: SweepMode,
) -> SessionVerdict {
    let record = facts.record;
    if record.status.is_terminal() {
        return SessionVerdict::leave(LeaveReason::Terminal);
    }
    let include_awaiting = mode
        == SweepMode::Backfill {
            awaiting: AwaitingPolicy::Include,
        };
    if !include_awaiting {
        if record.status == SessionStatus::AwaitingInput {
            return SessionVerdict::leave(LeaveReason::AwaitingInput);
        }
        if facts.n_pending_approvals > 0 {
            return SessionVerdict::leave(LeaveReason::AwaitingApproval);
        }
    }
    let idle = now.since(record.last_activity_at);
    match mode {
        SweepMode::TurnEnd => classify_at_turn_end(facts),
        SweepMode::Periodic => classify_periodic(facts, now, idle, thresholds),
        SweepMode::Backfill { .. } => {
            if !idle_for_backfill(record, now, thresholds) {
                return SessionVerdict::leave(LeaveReason::NotIdle);
            }
            match record.goal {
                None => complete_trivial(facts),
                Some(_) => SessionVerdict::ClosePartial {
                    summary: format!("{BACKFILL_SUMMARY} {}", idle_text(idle)),
                },
            }
        }
    }
}

/// BACKFILL-2: whether a session has been idle long enough for the backfill tool to touch
/// it at all, terminal or not (a session idle for less may be live).
pub fn idle_for_backfill(
    record: &SessionRecord,
    now: Timestamp,
    thresholds: &SweepThresholds,
) -> bool {
    now.since(record.last_activity_at) >= thresholds.backfill_idle_after
}

fn classify_at_turn_end(facts: &SessionFacts<'_>) -> SessionVerdict {
    match facts.record.goal {
        None => complete_trivial(facts),
        Some(_) => SessionVerdict::leave(LeaveReason::TaskInProgress),
    }
}

fn classify_periodic(
    facts: &SessionFacts<'_>,
    now: Timestamp,
    idle: Span,
    thresholds: &SweepThresholds,
) -> SessionVerdict {
    let record = facts.record;
    if record.goal.is_none() {
        // SESSION-4 catches up on a turn whose end was missed (a crash between the answer
        // and the completion), once the session is idle.
        if idle < thresholds.idle_after {
            return SessionVerdict::leave(LeaveReason::NotIdle);
        }
        return complete_trivial(facts);
    }
    // A nudge older than the last activity was answered; it no longer counts.
    let nudged_at = match record.nudged_at {
        Some(nudged_at) if nudged_at >= record.last_activity_at => Some(nudged_at),
        _ => None,
    };
    match nudged_at {
        // SWEEP-2: no operator message and no tool call since the nudge, and the nudge
        // turn is over (the runtime holds the session while it runs, and the grace is
        // shorter than the sweep interval), so this is the first sweep after it ended.
        Some(nudged_at) if now.since(nudged_at) >= thresholds.nudge_grace => {
            SessionVerdict::ClosePartial {
                summary: format!(
                    "{UNANSWERED_NUDGE_SUMMARY} (nudged at {nudged_at}, idle since {})",
                    record.last_activity_at
                ),
            }
        }
        Some(_) => SessionVerdict::leave(LeaveReason::AlreadyNudgedRecently),
        None if idle >= thresholds.idle_after => SessionVerdict::Nudge,
        None => SessionVerdict::leave(LeaveReason::NotIdle),
    }
}

/// SESSION-4, SWEEP-2: only an answer completes a session as `success`. A failed turn
/// leaves the operator's message or a reply that called tools last, never an answer.
fn complete_trivial(facts: &SessionFacts<'_>) -> SessionVerdict {
    match facts.last_message {
        Some(last) if last.is_answer() => SessionVerdict::CompleteTrivial {
            summary: summary_from_answer(last.text),
        },
        _ => SessionVerdict::leave(LeaveReason::NoAnswer),
    }
}

/// "3 idle days", "1 idle day", "5 idle hours", "20 idle minutes" (rounded down).
fn idle_text(idle: Span) -> String {
    let mins = idle.as_millis() / 60_000;
    let (n, unit) = if mins >= 24 * 60 {
        (mins / (24 * 60), "day")
    } else if mins >= 60 {
        (mins / 60, "hour")
    } else {
        (mins, "minute")
    };
    let plural = if n == 1 { "" } else { "s" };
    format!("{n} idle {unit}{plural}")
}

/// SESSION-4: the first ~[`SUMMARY_CHARS`] characters of an answer, whitespace collapsed,
/// cut at a word boundary where one is near and ending in `…` when cut.
pub fn summary_from_answer(text: &str) -> String {
    excerpt(text, SUMMARY_CHARS)
}

/// The first `max_chars` characters of `text`, whitespace collapsed, cut at a char boundary
/// (at the last space in the final quarter when there is one) and ending in `…` when cut.
pub(crate) fn excerpt(text: &str, max_chars: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= max_chars {
        return collapsed;
    }
    let cut = collapsed
        .char_indices()
        .nth(max_chars)
        .map_or(collapsed.len(), |(idx, _)| idx);
    let head = &collapsed[..cut];
    let floor = head
        .char_indices()
        .nth(max_chars * 3 / 4)
        .map_or(0, |(idx, _)| idx);
    let ends_at_word = collapsed[cut..].starts_with(' ');
    let head = match head.rfind(' ') {
        Some(space) if space >= floor && !ends_at_word => &head[..space],
        _ => head,
    };
    format!(
        "{}…",
        head.trim_end_matches(|c: char| c.is_whitespace() || c == ',' || c == ';')
    )
}

/// When a sweep looks at executions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepPhase {
    /// The sweep every 5 minutes (EXEC-3).
    Periodic,
    /// Once, when Nomos starts (EXEC-3, EXEC-6).
    Startup,
}

/// What to do with one execution.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum ExecutionVerdict {
    /// Nothing.
    Keep,
    /// Mark it `failed` with this error text.
    Fail {
        /// The error text (one of the `*_REASON` constants).
        reason: String,
    },
    /// Mark it `cancelled` with this error text.
    Cancel {
        /// The error text (one of the `*_REASON` constants).
        reason: String,
    },
}

/// Decides what to do with one execution (EXEC-3, EXEC-6).
///
/// * Periodic: `running` for more than `running_timeout` (since `started_at`, or
///   `created_at` if it was never stamped) fails with [`TIMED_OUT_REASON`].
/// * Start-up: `running` of any age fails with [`INTERRUPTED_REASON`]: it was dispatched
///   once and is never re-run. `approved` of any age (a fan-out host still queued when
///   the process driving it stopped: nothing will start it) is cancelled with
///   [`QUEUED_AT_RESTART_REASON`]. `pending_approval` older than `startup_stale_after` is
///   cancelled with [`STALE_REASON`]; a younger one stays decidable.
/// * Terminal executions are always kept.
pub fn classify_execution(
    execution: &Execution,
    now: Timestamp,
    thresholds: &SweepThresholds,
    phase: SweepPhase,
) -> ExecutionVerdict {
    match (execution.status, phase) {
        (ExecutionStatus::Running, SweepPhase::Startup) => ExecutionVerdict::Fail {
            reason: INTERRUPTED_REASON.to_owned(),
        },
        (ExecutionStatus::Running, SweepPhase::Periodic) => {
            let started_at = execution.started_at.unwrap_or(execution.created_at);
            if now.since(started_at) > thresholds.running_timeout {
                ExecutionVerdict::Fail {
                    reason: TIMED_OUT_REASON.to_owned(),
                }
            } else {
                ExecutionVerdict::Keep
            }
        }
        (ExecutionStatus::Approved, SweepPhase::Startup) => ExecutionVerdict::Cancel {
            reason: QUEUED_AT_RESTART_REASON.to_owned(),
        },
        (ExecutionStatus::PendingApproval, SweepPhase::Startup) => {
            stale_at_startup(execution, now, thresholds)
        }
        _ => ExecutionVerdict::Keep,
    }
}

/// EXEC-3: a non-terminal execution older than `startup_stale_after` is cancelled as stale.
fn stale_at_startup(
    execution: &Execution,
    now: Timestamp,
    thresholds: &SweepThresholds,
) -> ExecutionVerdict {
    if now.since(execution.created_at) > thresholds.startup_stale_after {
        ExecutionVerdict::Cancel {
            reason: STALE_REASON.to_owned(),
        }
    } else {
        ExecutionVerdict::Keep
    }
}

/// EXEC-3 as the backfill tool applies it (BACKFILL-2): an execution `running` for
/// longer than the running timeout fails ("execution timed out", as the periodic sweep
/// decides); one `pending_approval` or `approved` for longer than the start-up age is
/// cancelled as stale (EXEC-3's start-up age). Nothing is `running` for real while it runs.
pub fn classify_execution_for_backfill(
    execution: &Execution,
    now: Timestamp,
    thresholds: &SweepThresholds,
) -> ExecutionVerdict {
    match execution.status {
        ExecutionStatus::Running => {
            classify_execution(execution, now, thresholds, SweepPhase::Periodic)
        }
        ExecutionStatus::PendingApproval | ExecutionStatus::Approved => {
            stale_at_startup(execution, now, thresholds)
        }
        _ => ExecutionVerdict::Keep,
    }
}

/// GATE-7: a pending approval whose time is up; expiry means deny.
pub fn approval_expired(approval: &Approval, now: Timestamp) -> bool {
    approval.status == ApprovalStatus::Pending && now >= approval.expires_at
}

#[cfg(test)]
mod tests;
