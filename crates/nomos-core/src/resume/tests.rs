//! Tests for the resume, nudge and terminal notes (RESUME-1..3, SWEEP-1, EXEC-4).

use uuid::Uuid;

use super::*;
use crate::id::SessionId;
use crate::record::{ApprovalBinding, ExecOutput, ExecutionKind};
use crate::status::CommandClass;
use crate::time::Timestamp;

fn plan() -> PlanInFlight {
    PlanInFlight {
        generation: 2,
        n_steps: 4,
        n_closed: 1,
        next: Some((2, "Upgrade nginx".into())),
    }
}

const ALL_KINDS: [fn() -> ResumeKind; 4] = [
    || ResumeKind::Reconnect,
    || ResumeKind::Manual,
    || ResumeKind::Continuation {
        outcome: "denied by the operator".into(),
    },
    || ResumeKind::IdleNudge,
];

#[track_caller]
fn check_contains(note: &str, phrases: &[&str]) {
    for phrase in phrases {
        assert!(note.contains(phrase), "missing {phrase:?} in:\n{note}");
    }
}

#[track_caller]
fn check_lacks(note: &str, phrases: &[&str]) {
    for phrase in phrases {
        assert!(!note.contains(phrase), "unexpected {phrase:?} in:\n{note}");
    }
}

// rule: RESUME-1
#[test]
fn every_resume_note_quotes_the_operators_last_message() {
    for kind in ALL_KINDS {
        let note = resume_note(Some("please  upgrade\nnginx on host:a"), None, &kind(), 1);
        check_contains(
            &note,
            &["The operator's last message: “please upgrade nginx on host:a”"],
        );
    }
}

// rule: RESUME-1
#[test]
fn a_long_operator_message_is_quoted_truncated() {
    let long = "check the logs ".repeat(100);
    let note = resume_note(Some(&long), None, &ResumeKind::Manual, 1);
    check_contains(&note, &["“check the logs", "…”"]);
    assert!(note.chars().count() < 600, "{note}");
}

// rule: RESUME-1
#[test]
fn a_session_without_operator_message_says_so() {
    let note = resume_note(None, None, &ResumeKind::Reconnect, 1);
    check_contains(&note, &["The operator has not written a message yet."]);
    let blank = resume_note(Some("   "), None, &ResumeKind::Reconnect, 1);
    check_contains(&blank, &["The operator has not written a message yet."]);
}

// rule: RESUME-1
#[test]
fn plan_in_flight_is_advanced_not_proposed_again() {
    for kind in ALL_KINDS {
        let note = resume_note(Some("go ahead"), Some(&plan()), &kind(), 1);
        check_contains(
            &note,
            &[
                "Plan generation 2 has 1 of 4 steps closed.",
                "advance it with update_plan_step and run",
                "do not call propose_plan again",
                "Next step: 2 “Upgrade nginx”.",
            ],
        );
    }
}

// rule: RESUME-1
#[test]
fn without_a_plan_the_note_says_nothing_about_plans() {
    let note = resume_note(Some("hi"), None, &ResumeKind::Manual, 1);
    check_lacks(&note, &["propose_plan", "update_plan_step"]);
}

// rule: RESUME-1
#[test]
fn a_fully_closed_plan_is_not_proposed_again_either() {
    let closed = PlanInFlight {
        generation: 1,
        n_steps: 3,
        n_closed: 3,
        next: None,
    };
    let note = resume_note(Some("hi"), Some(&closed), &ResumeKind::Manual, 1);
    check_contains(
        &note,
        &["3 of 3 steps closed", "do not call propose_plan again"],
    );
    check_lacks(&note, &["Next step"]);
}

// rule: EXEC-4
#[test]
fn continuation_note_carries_the_outcome() {
    let kind = ResumeKind::Continuation {
        outcome: "denied by the operator".into(),
    };
    let note = resume_note(Some("no, not that"), Some(&plan()), &kind, 1);
    check_contains(
        &note,
        &["The operator decided on the command you asked to run: denied by the operator."],
    );
}

// rule: RESUME-2
#[test]
fn each_attempt_is_more_directive_than_the_last() {
    let first = resume_note(Some("status?"), Some(&plan()), &ResumeKind::Reconnect, 1);
    let second = resume_note(Some("status?"), Some(&plan()), &ResumeKind::Reconnect, 2);
    let third = resume_note(Some("status?"), Some(&plan()), &ResumeKind::Reconnect, 3);
    check_contains(&first, &["Continue from here."]);
    check_lacks(&first, &["empty"]);
    check_contains(
        &second,
        &[
            "Your previous reply was empty.",
            "reply with a tool call or a short status",
        ],
    );
    check_lacks(&second, &["Reply now"]);
    check_contains(
        &third,
        &["Reply now with a tool call or a short status; do not reply empty."],
    );
    assert!(first.len() < second.len() && second.len() < third.len());
}

// rule: RESUME-2
#[test]
fn retries_wait_four_then_eight_seconds_and_stop_after_three() {
    let retry = ResumeRetry::spec_defaults();
    assert_eq!(retry.max_attempts, 3);
    assert_eq!(retry.delay_before(1), Some(Span::ZERO));
    assert_eq!(retry.delay_before(2), Some(Span::from_secs(4)));
    assert_eq!(retry.delay_before(3), Some(Span::from_secs(8)));
    assert_eq!(retry.delay_before(4), None);
    assert_eq!(retry.delay_before(0), None);
}

// rule: RESUME-2
#[test]
fn a_longer_retry_policy_repeats_its_last_back_off() {
    let retry = ResumeRetry {
        max_attempts: 5,
        backoff: vec![Span::from_secs(1)],
    };
    assert_eq!(retry.delay_before(4), Some(Span::from_secs(1)));
    let no_backoff = ResumeRetry {
        max_attempts: 2,
        backoff: Vec::new(),
    };
    assert_eq!(no_backoff.delay_before(2), Some(Span::ZERO));
}

// rule: RESUME-3
#[test]
fn terminal_note_names_the_last_error_and_says_the_session_can_resume() {
    let note = terminal_note("model returned HTTP 503: upstream overloaded", 3);
    check_contains(
        &note,
        &[
            "3 attempts got no usable reply",
            "Last error: model returned HTTP 503: upstream overloaded.",
            "The session is still open; send a message or use /resume to try again.",
        ],
    );
    check_contains(
        &terminal_note("", 1),
        &["1 attempt got", "no error was reported"],
    );
}

// rule: SWEEP-1
#[test]
fn nudge_asks_to_finish_or_report() {
    let note = nudge_note(Some("audit host:a"), Some(&plan()));
    check_contains(
        &note,
        &[
            "idle for a while",
            "Goal: “audit host:a”",
            "complete_task",
            "report what blocks it",
            "do not call propose_plan again",
        ],
    );
    let bare = nudge_note(None, None);
    check_contains(&bare, &["complete_task"]);
    check_lacks(&bare, &["Goal:", "propose_plan"]);
}

// rule: SWEEP-1
#[test]
fn idle_nudge_resume_asks_to_finish_and_quotes_the_operator() {
    let note = resume_note(Some("audit host:a please"), None, &ResumeKind::IdleNudge, 1);
    check_contains(
        &note,
        &[
            "“audit host:a please”",
            "complete_task",
            "report what blocks it",
        ],
    );
}

fn execution(
    status: ExecutionStatus,
    output: Option<ExecOutput>,
    error: Option<&str>,
) -> Execution {
    let session_id = SessionId(Uuid::from_u128(3));
    Execution {
        id: session_id.execution_id(1),
        session_id,
        tool_call_id: None,
        kind: ExecutionKind::Command,
        host: "host:a".into(),
        command: "systemctl restart x".into(),
        class: CommandClass::ConfigMutation,
        reason: "systemctl restart".into(),
        generation: 1,
        step_seq: Some(1),
        status,
        created_at: Timestamp::EPOCH,
        started_at: None,
        finished_at: None,
        output,
        error: error.map(str::to_owned),
    }
}

fn approval(execution: &Execution, status: ApprovalStatus) -> Approval {
    Approval {
        id: execution.session_id.approval_id(execution.id),
        session_id: execution.session_id,
        execution_id: execution.id,
        binding: ApprovalBinding {
            command: execution.command.clone(),
            host: execution.host.clone(),
            class: execution.class,
            generation: 1,
            origin: Default::default(),
            preview: None,
            edited_from: None,
        },
        binding_hash: "00".into(),
        status,
        requested_at: Timestamp::EPOCH,
        expires_at: Timestamp::EPOCH,
        decided_at: None,
        decided_by: None,
        approvers_required: 1,
        approved_by: Vec::new(),
    }
}

// rule: EXEC-4
#[test]
fn continuation_outcome_says_what_ran_and_what_it_returned() {
    let output = ExecOutput {
        exit_code: Some(0),
        stdout: "restarted\n".into(),
        ..ExecOutput::default()
    };
    let ran = execution(ExecutionStatus::Completed, Some(output), None);
    let approved = approval(&ran, ApprovalStatus::Approved);
    assert_eq!(
        continuation_outcome(&ran, Some(&approved)),
        "approved; `systemctl restart x` on host:a exited 0: restarted"
    );
}

// rule: EXEC-4
#[test]
fn continuation_outcome_falls_back_to_stderr_and_caps_output() {
    let output = ExecOutput {
        exit_code: Some(1),
        stderr: "e ".repeat(2000),
        ..ExecOutput::default()
    };
    let ran = execution(ExecutionStatus::Completed, Some(output), None);
    let outcome = continuation_outcome(&ran, None);
    assert!(
        outcome.starts_with("`systemctl restart x` on host:a exited 1: e e"),
        "{outcome}"
    );
    assert!(
        outcome.ends_with('…') && outcome.chars().count() < OUTPUT_CHARS + 60,
        "{outcome}"
    );
}

// rule: EXEC-4
#[test]
fn continuation_outcome_of_a_denial_says_it_did_not_run() {
    let denied_exec = execution(ExecutionStatus::Cancelled, None, Some("denied"));
    let denied = approval(&denied_exec, ApprovalStatus::Denied);
    assert_eq!(
        continuation_outcome(&denied_exec, Some(&denied)),
        "denied by the operator; `systemctl restart x` on host:a did not run"
    );
    let expired = approval(&denied_exec, ApprovalStatus::Expired);
    assert!(continuation_outcome(&denied_exec, Some(&expired)).contains("expired"));
}

// rule: EXEC-4
#[test]
fn continuation_outcome_of_a_failure_carries_the_error() {
    let failed = execution(
        ExecutionStatus::Failed,
        None,
        Some("ssh: connection refused"),
    );
    let approved = approval(&failed, ApprovalStatus::Approved);
    assert_eq!(
        continuation_outcome(&failed, Some(&approved)),
        "approved; `systemctl restart x` on host:a failed: ssh: connection refused"
    );
}
