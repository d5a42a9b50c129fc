//! The pure decision for one session: what the backfill repairs or reports, made by the
//! same core functions the runtime uses (SWEEP-4, EXEC-3, PLAN-8) and drained into one
//! [`Commit`] carrying the domain event of every change.

use nomos_core::ports::store::{Commit, SessionSnapshot};
use nomos_core::record::{Execution, Message};
use nomos_core::session::{Session, SessionConfig};
use nomos_core::sweep::{
    ExecutionVerdict, LastMessage, LeaveReason, SessionFacts, SessionVerdict, SweepMode,
    classify_execution_for_backfill, classify_session, idle_for_backfill,
};
use nomos_core::{ApprovalStatus, SessionId, Timestamp};
use serde::Serialize;

use crate::config::BackfillConfig;

/// One kind of finding, as the report counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RepairClass {
    /// SESSION-4: a session that never set a goal and ended in an answer, completed as
    /// `success` with the answer's first ~120 characters as summary.
    TrivialCompleted,
    /// BACKFILL-2: a session with a goal idle past the threshold, completed as `partial`.
    IdleClosed,
    /// EXEC-3: an execution left `running`, marked `failed` ("execution timed out").
    ExecutionTimedOut,
    /// EXEC-3: an old execution left `pending_approval` or `approved`, marked `cancelled`.
    ExecutionCancelled,
    /// PLAN-8: plan steps left open in a terminal session, closed.
    StepsClosed,
    /// SWEEP-3: a session waiting for the operator's answer; reported, not touched.
    AwaitingInput,
    /// SWEEP-3: a session with executions waiting for approval; reported, not touched.
    AwaitingApproval,
    /// A session without a goal whose last message is not an answer; reported only.
    NoAnswer,
}

impl RepairClass {
    /// Every class, in report order.
    pub const ALL: [RepairClass; 8] = [
        RepairClass::TrivialCompleted,
        RepairClass::IdleClosed,
        RepairClass::ExecutionTimedOut,
        RepairClass::ExecutionCancelled,
        RepairClass::StepsClosed,
        RepairClass::AwaitingInput,
        RepairClass::AwaitingApproval,
        RepairClass::NoAnswer,
    ];

    /// The snake_case name used in the text and JSON reports.
    pub fn as_str(&self) -> &'static str {
        match self {
            RepairClass::TrivialCompleted => "trivial_completed",
            RepairClass::IdleClosed => "idle_closed",
            RepairClass::ExecutionTimedOut => "execution_timed_out",
            RepairClass::ExecutionCancelled => "execution_cancelled",
            RepairClass::StepsClosed => "steps_closed",
            RepairClass::AwaitingInput => "awaiting_input",
            RepairClass::AwaitingApproval => "awaiting_approval",
            RepairClass::NoAnswer => "no_answer",
        }
    }

    /// Whether findings of this class change the database (the others are only reported).
    pub fn is_repair(&self) -> bool {
        !matches!(
            self,
            RepairClass::AwaitingInput | RepairClass::AwaitingApproval | RepairClass::NoAnswer
        )
    }
}

/// One thing found in one session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Its class.
    pub class: RepairClass,
    /// Why, in words (the summary written, the execution and its error text...).
    pub reason: String,
}

/// What the backfill does with one session.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionDecision {
    /// The session.
    pub session: SessionId,
    /// What was found, repairs and reports alike, in the order they were decided.
    pub findings: Vec<Finding>,
    /// The repairs as one commit against the version read, or `None` when nothing
    /// changes.
    pub commit: Option<Commit>,
}

impl SessionDecision {
    /// Whether the decision changes the session.
    pub fn changes(&self) -> bool {
        self.commit.is_some()
    }
}

/// Decides one session (BACKFILL-2). `last_message` is its newest message other than a
/// note, needed only for sessions without a goal (SESSION-4).
///
/// A session idle for less than `thresholds.backfill_idle_after` is not touched at all,
/// terminal or not: it may be live. Sessions waiting for the operator are only reported
/// unless the policy includes them. Otherwise stale executions are failed or cancelled
/// (EXEC-3), the session verdict is applied, and plan steps a terminal session left open
/// are closed (PLAN-8). Every change carries its event and happens at `now`.
pub fn decide_session(
    snapshot: SessionSnapshot,
    last_message: Option<&Message>,
    now: Timestamp,
    config: &BackfillConfig,
) -> SessionDecision {
    let id = snapshot.record.id;
    let mut findings = Vec::new();
    if !idle_for_backfill(&snapshot.record, now, &config.thresholds) {
        return SessionDecision {
            session: id,
            findings,
            commit: None,
        };
    }
    let facts = SessionFacts {
        record: &snapshot.record,
        n_pending_approvals: snapshot
            .approvals
            .iter()
            .filter(|a| a.status == ApprovalStatus::Pending)
            .count(),
        // SWEEP-4: the same reading of the last message as the runtime's (a reply that
        // called tools is not an answer, so a failed turn never completes as success).
        last_message: last_message.map(LastMessage::of),
    };
    let verdict = classify_session(
        &facts,
        now,
        &config.thresholds,
        SweepMode::Backfill {
            awaiting: config.awaiting,
        },
    );
    match &verdict {
        SessionVerdict::Leave {
            reason: LeaveReason::AwaitingInput,
        } => {
            findings.push(Finding {
                class: RepairClass::AwaitingInput,
                reason: "waits for the operator's answer; left alone".to_owned(),
            });
            return SessionDecision {
                session: id,
                findings,
                commit: None,
            };
        }
        SessionVerdict::Leave {
            reason: LeaveReason::AwaitingApproval,
        } => {
            findings.push(Finding {
                class: RepairClass::AwaitingApproval,
                reason: format!(
                    "{} approval(s) pending; left alone",
                    facts.n_pending_approvals
                ),
            });
            return SessionDecision {
                session: id,
                findings,
                commit: None,
            };
        }
        _ => {}
    }
    let stale: Vec<(Execution, ExecutionVerdict)> = snapshot
        .executions
        .iter()
        .map(|e| {
            (
                e.clone(),
                classify_execution_for_backfill(e, now, &config.thresholds),
            )
        })
        .filter(|(_, verdict)| *verdict != ExecutionVerdict::Keep)
        .collect();
    let mut session = Session::from_snapshot(snapshot, SessionConfig::spec_defaults());
    for (execution, verdict) in stale {
        // The verdict was made for this very execution; a refused transition means there
        // is nothing to repair.
        if session
            .apply_execution_verdict(now, execution.id, &verdict)
            .is_err()
        {
            continue;
        }
        let (class, reason) = match verdict {
            ExecutionVerdict::Fail { reason } => (RepairClass::ExecutionTimedOut, reason),
            ExecutionVerdict::Cancel { reason } => (RepairClass::ExecutionCancelled, reason),
            ExecutionVerdict::Keep => continue,
        };
        findings.push(Finding {
            class,
            reason: format!(
                "execution {} `{}` on {} was {}: {reason}",
                execution.id, execution.command, execution.host, execution.status
            ),
        });
    }
    match &verdict {
        SessionVerdict::CompleteTrivial { summary } => findings.push(Finding {
            class: RepairClass::TrivialCompleted,
            reason: format!("never set a goal; completed as success: {summary}"),
        }),
        SessionVerdict::ClosePartial { summary } => findings.push(Finding {
            class: RepairClass::IdleClosed,
            reason: summary.clone(),
        }),
        SessionVerdict::Leave {
            reason: LeaveReason::NoAnswer,
        } => findings.push(Finding {
            class: RepairClass::NoAnswer,
            reason: "never set a goal and has no answer to complete with; left open".to_owned(),
        }),
        _ => {}
    }
    session.apply_session_verdict(now, &verdict, None);
    let n_closed = session.close_leftover_steps(now);
    if n_closed > 0 {
        findings.push(Finding {
            class: RepairClass::StepsClosed,
            reason: format!(
                "{n_closed} plan step(s) left open in a {} session, closed",
                session.status()
            ),
        });
    }
    let commit = session.take_commit();
    let commit = if commit.is_empty() {
        None
    } else {
        Some(commit)
    };
    SessionDecision {
        session: id,
        findings,
        commit,
    }
}

#[cfg(test)]
mod tests {
    use nomos_core::Span;
    use nomos_core::record::{Message, ToolCallRequest};
    use nomos_core::session::{Session, SessionConfig};
    use nomos_core::{Role, SessionId, SessionStatus, Timestamp};

    use super::*;
    use crate::config::{BackfillConfig, Mode};

    /// A session without a goal whose turn said `reply` (calling `n_calls` tools) and then
    /// stopped, seen by the backfill three days later.
    fn decide_after(reply: &str, n_calls: usize) -> SessionDecision {
        let t0 = Timestamp::from_millis(1_800_000_000_000);
        let mut session = Session::create(
            SessionId(uuid::Uuid::from_u128(7)),
            t0,
            SessionConfig::spec_defaults(),
        );
        session.handle_operator_message(t0, "how full is the disk?");
        let calls: Vec<ToolCallRequest> = (0..n_calls)
            .map(|i| ToolCallRequest {
                call_id: format!("c{i}"),
                name: "run".into(),
                arguments: "{}".into(),
            })
            .collect();
        session.append_assistant_message(t0, reply, calls.clone());
        let _ = session.take_commit();
        let last = Message {
            id: session.id().message_id(2),
            session_id: session.id(),
            role: Role::Assistant,
            content: reply.to_owned(),
            tool_calls: calls,
            created_at: t0,
        };
        let config = BackfillConfig::standard(Mode::Apply);
        decide_session(
            session.snapshot(),
            Some(&last),
            t0 + Span::from_mins(3 * 24 * 60),
            &config,
        )
    }

    // rule: BACKFILL-2
    // rule: SWEEP-4
    #[test]
    fn a_failed_turn_is_never_completed_as_success_by_the_backfill() {
        // "Checking." with a tool call, then the model failed: nothing answered.
        let decision = decide_after("Checking.", 1);
        let classes: Vec<RepairClass> = decision.findings.iter().map(|f| f.class).collect();
        assert_eq!(classes, [RepairClass::NoAnswer]);
        assert!(!decision.changes());
    }

    // rule: BACKFILL-2
    #[test]
    fn a_plain_answer_is_completed_as_success_by_the_backfill() {
        let decision = decide_after("The disk is 42% full.", 0);
        let classes: Vec<RepairClass> = decision.findings.iter().map(|f| f.class).collect();
        assert_eq!(classes, [RepairClass::TrivialCompleted]);
        let commit = decision.commit.unwrap();
        assert_eq!(commit.session.unwrap().status, SessionStatus::Done);
    }
}
