//! Tests for the sweep classification: sessions (SESSION-4, SWEEP-1..4, BACKFILL-2),
//! executions (EXEC-3, EXEC-6) and approval expiry (GATE-7).

use proptest::prelude::*;
use uuid::Uuid;

use super::*;
use crate::id::SessionId;
use crate::record::{ApprovalBinding, ExecutionKind, KnowledgeLoop};
use crate::status::CommandClass;

const MIN: i64 = 60_000;

fn at(mins: i64) -> Timestamp {
    Timestamp::from_millis(1_800_000_000_000 + mins * MIN)
}

fn session(status: SessionStatus, goal: Option<&str>, last_activity_min: i64) -> SessionRecord {
    SessionRecord {
        id: SessionId(Uuid::from_u128(1)),
        status,
        goal: goal.map(str::to_owned),
        summary: None,
        board_outcome: None,
        plan_generation: u32::from(goal.is_some()),
        assent: None,
        knowledge: KnowledgeLoop::Untouched,
        nudged_at: None,
        client: None,
        owner: None,
        archived_at: None,
        plan_approvals: None,
        n_messages: 2,
        created_at: at(0),
        last_activity_at: at(last_activity_min),
        version: 1,
    }
}

fn facts<'a>(record: &'a SessionRecord, last: Option<(Role, &'a str)>) -> SessionFacts<'a> {
    SessionFacts {
        record,
        n_pending_approvals: 0,
        last_message: last.map(|(role, text)| LastMessage {
            role,
            text,
            n_tool_calls: 0,
        }),
    }
}

fn classify(facts: &SessionFacts<'_>, now_min: i64, mode: SweepMode) -> SessionVerdict {
    classify_session(facts, at(now_min), &SweepThresholds::spec_defaults(), mode)
}

fn leave(reason: LeaveReason) -> SessionVerdict {
    SessionVerdict::Leave { reason }
}

const ANSWER: Option<(Role, &str)> = Some((Role::Assistant, "The disk is 42% full."));
const BACKFILL: SweepMode = SweepMode::Backfill {
    awaiting: AwaitingPolicy::Report,
};
const BACKFILL_ALL: SweepMode = SweepMode::Backfill {
    awaiting: AwaitingPolicy::Include,
};

// rule: SWEEP-2
#[test]
fn a_reply_that_called_tools_is_never_an_answer_so_a_failed_turn_never_completes() {
    // "Checking." with a tool call, then the model failed: nothing followed the reply.
    let record = session(SessionStatus::Active, None, 0);
    let facts = SessionFacts {
        last_message: Some(LastMessage {
            role: Role::Assistant,
            text: "Checking.",
            n_tool_calls: 1,
        }),
        ..facts(&record, None)
    };
    for (mode, now) in [
        (SweepMode::Periodic, 600),
        (SweepMode::TurnEnd, 600),
        (BACKFILL, 3 * 24 * 60),
        (BACKFILL_ALL, 3 * 24 * 60),
    ] {
        assert_eq!(
            classify(&facts, now, mode),
            leave(LeaveReason::NoAnswer),
            "{mode:?}"
        );
    }
}

// rule: SESSION-4
#[test]
fn turn_end_without_goal_completes_with_the_answer_as_summary() {
    let record = session(SessionStatus::Active, None, 0);
    let verdict = classify(&facts(&record, ANSWER), 0, SweepMode::TurnEnd);
    assert_eq!(
        verdict,
        SessionVerdict::CompleteTrivial {
            summary: "The disk is 42% full.".into()
        }
    );
}

// rule: SESSION-4
#[test]
fn turn_end_with_goal_leaves_the_task_running() {
    let record = session(SessionStatus::Planning, Some("upgrade nginx"), 0);
    let verdict = classify(&facts(&record, ANSWER), 0, SweepMode::TurnEnd);
    assert_eq!(verdict, leave(LeaveReason::TaskInProgress));
}

// rule: SESSION-4
#[test]
fn turn_end_without_an_assistant_answer_completes_nothing() {
    let record = session(SessionStatus::Active, None, 0);
    let operator = Some((Role::Operator, "hello?"));
    assert_eq!(
        classify(&facts(&record, operator), 0, SweepMode::TurnEnd),
        leave(LeaveReason::NoAnswer)
    );
    assert_eq!(
        classify(&facts(&record, None), 0, SweepMode::TurnEnd),
        leave(LeaveReason::NoAnswer)
    );
    let blank = Some((Role::Assistant, "  \n"));
    assert_eq!(
        classify(&facts(&record, blank), 0, SweepMode::TurnEnd),
        leave(LeaveReason::NoAnswer)
    );
}

// rule: SESSION-4
#[test]
fn turn_end_waiting_for_the_operator_completes_nothing() {
    let record = session(SessionStatus::AwaitingInput, None, 0);
    let verdict = classify(&facts(&record, ANSWER), 0, SweepMode::TurnEnd);
    assert_eq!(verdict, leave(LeaveReason::AwaitingInput));
}

// rule: SESSION-4
#[test]
fn turn_end_in_a_terminal_session_changes_nothing() {
    let record = session(SessionStatus::Done, None, 0);
    assert_eq!(
        classify(&facts(&record, ANSWER), 0, SweepMode::TurnEnd),
        leave(LeaveReason::Terminal)
    );
}

// rule: SWEEP-1
#[test]
fn idle_session_with_goal_is_nudged_after_fifteen_minutes() {
    for status in [
        SessionStatus::Active,
        SessionStatus::Planning,
        SessionStatus::Executing,
    ] {
        let record = session(status, Some("audit host:a"), 0);
        assert_eq!(
            classify(&facts(&record, ANSWER), 15, SweepMode::Periodic),
            SessionVerdict::Nudge
        );
        assert_eq!(
            classify(&facts(&record, ANSWER), 14, SweepMode::Periodic),
            leave(LeaveReason::NotIdle)
        );
    }
}

// rule: SWEEP-1
#[test]
fn a_nudge_older_than_the_last_activity_does_not_count() {
    let mut record = session(SessionStatus::Executing, Some("audit host:a"), 30);
    record.nudged_at = Some(at(10));
    assert_eq!(
        classify(&facts(&record, ANSWER), 45, SweepMode::Periodic),
        SessionVerdict::Nudge
    );
}

// rule: SWEEP-2
#[test]
fn session_still_idle_at_the_next_sweep_after_its_nudge_closes_as_partial() {
    let mut record = session(SessionStatus::Executing, Some("audit host:a"), 0);
    record.nudged_at = Some(at(15));
    match classify(&facts(&record, ANSWER), 20, SweepMode::Periodic) {
        SessionVerdict::ClosePartial { summary } => {
            assert!(
                summary.starts_with("closed after an unanswered nudge"),
                "{summary}"
            );
            assert!(summary.contains(&at(15).to_string()), "{summary}");
        }
        other => panic!("expected a close, got {other:?}"),
    }
}

// rule: SWEEP-2
#[test]
fn nudge_counted_as_activity_still_closes_at_the_next_sweep() {
    // The runtime may bump last_activity_at when it appends the nudge note.
    let mut record = session(SessionStatus::Planning, Some("audit host:a"), 15);
    record.nudged_at = Some(at(15));
    let verdict = classify(&facts(&record, ANSWER), 20, SweepMode::Periodic);
    assert!(
        matches!(verdict, SessionVerdict::ClosePartial { .. }),
        "{verdict:?}"
    );
}

// rule: SWEEP-2
#[test]
fn a_fresh_nudge_gets_a_grace_period() {
    let mut record = session(SessionStatus::Planning, Some("audit host:a"), 0);
    record.nudged_at = Some(at(15));
    let verdict = classify_session(
        &facts(&record, ANSWER),
        at(15) + Span::from_secs(10),
        &SweepThresholds::spec_defaults(),
        SweepMode::Periodic,
    );
    assert_eq!(verdict, leave(LeaveReason::AlreadyNudgedRecently));
}

// rule: SWEEP-2
#[test]
fn activity_after_the_nudge_resets_the_cycle() {
    let mut record = session(SessionStatus::Executing, Some("audit host:a"), 17);
    record.nudged_at = Some(at(15));
    assert_eq!(
        classify(&facts(&record, ANSWER), 20, SweepMode::Periodic),
        leave(LeaveReason::NotIdle)
    );
}

// rule: SWEEP-3
#[test]
fn sessions_awaiting_input_are_left_alone() {
    let mut record = session(SessionStatus::AwaitingInput, Some("audit host:a"), 0);
    record.nudged_at = Some(at(15));
    assert_eq!(
        classify(&facts(&record, ANSWER), 600, SweepMode::Periodic),
        leave(LeaveReason::AwaitingInput)
    );
}

// rule: SWEEP-3
#[test]
fn sessions_with_pending_approvals_are_left_alone() {
    let record = session(SessionStatus::Executing, Some("audit host:a"), 0);
    let facts = SessionFacts {
        n_pending_approvals: 1,
        ..facts(&record, ANSWER)
    };
    assert_eq!(
        classify(&facts, 600, SweepMode::Periodic),
        leave(LeaveReason::AwaitingApproval)
    );
}

// rule: SWEEP-1
#[test]
fn terminal_sessions_are_never_swept() {
    for status in [
        SessionStatus::Done,
        SessionStatus::Failed,
        SessionStatus::Partial,
    ] {
        let record = session(status, Some("audit host:a"), 0);
        assert_eq!(
            classify(&facts(&record, ANSWER), 600, SweepMode::Periodic),
            leave(LeaveReason::Terminal)
        );
    }
}

// rule: SWEEP-4
#[test]
fn periodic_sweep_catches_up_on_a_missed_trivial_completion() {
    let record = session(SessionStatus::Active, None, 0);
    assert_eq!(
        classify(&facts(&record, ANSWER), 15, SweepMode::Periodic),
        classify(&facts(&record, ANSWER), 15, SweepMode::TurnEnd)
    );
    assert_eq!(
        classify(&facts(&record, ANSWER), 5, SweepMode::Periodic),
        leave(LeaveReason::NotIdle)
    );
    let operator = Some((Role::Operator, "are you there"));
    assert_eq!(
        classify(&facts(&record, operator), 60, SweepMode::Periodic),
        leave(LeaveReason::NoAnswer)
    );
}

// rule: BACKFILL-2
#[test]
fn backfill_closes_goal_sessions_idle_past_a_day_without_nudging() {
    let record = session(SessionStatus::Executing, Some("audit host:a"), 0);
    assert_eq!(
        classify(&facts(&record, ANSWER), 3 * 24 * 60 + 7, BACKFILL),
        SessionVerdict::ClosePartial {
            summary: "closed by backfill after 3 idle days".into()
        }
    );
    assert_eq!(
        classify(&facts(&record, ANSWER), 24 * 60, BACKFILL),
        SessionVerdict::ClosePartial {
            summary: "closed by backfill after 1 idle day".into()
        }
    );
    assert_eq!(
        classify(&facts(&record, ANSWER), 23 * 60, BACKFILL),
        leave(LeaveReason::NotIdle)
    );
}

// rule: BACKFILL-2
#[test]
fn backfill_completes_trivial_sessions_like_the_turn_end() {
    let record = session(SessionStatus::Active, None, 0);
    assert_eq!(
        classify(&facts(&record, ANSWER), 2 * 24 * 60, BACKFILL),
        classify(&facts(&record, ANSWER), 0, SweepMode::TurnEnd)
    );
}

// rule: BACKFILL-2
#[test]
fn backfill_reports_awaiting_sessions_unless_told_to_include_them() {
    let record = session(SessionStatus::AwaitingInput, Some("audit host:a"), 0);
    let now = 2 * 24 * 60;
    assert_eq!(
        classify(&facts(&record, ANSWER), now, BACKFILL),
        leave(LeaveReason::AwaitingInput)
    );
    let verdict = classify(&facts(&record, ANSWER), now, BACKFILL_ALL);
    assert!(
        matches!(verdict, SessionVerdict::ClosePartial { .. }),
        "{verdict:?}"
    );

    let record = session(SessionStatus::Executing, Some("audit host:a"), 0);
    let waiting = SessionFacts {
        n_pending_approvals: 2,
        ..facts(&record, ANSWER)
    };
    assert_eq!(
        classify(&waiting, now, BACKFILL),
        leave(LeaveReason::AwaitingApproval)
    );
    assert!(matches!(
        classify(&waiting, now, BACKFILL_ALL),
        SessionVerdict::ClosePartial { .. }
    ));
}

#[test]
fn idle_text_rounds_down_to_the_largest_unit() {
    assert_eq!(idle_text(Span::from_mins(20)), "20 idle minutes");
    assert_eq!(idle_text(Span::from_mins(61)), "1 idle hour");
    assert_eq!(idle_text(Span::from_mins(5 * 60)), "5 idle hours");
    assert_eq!(idle_text(Span::from_mins(49 * 60)), "2 idle days");
}

#[track_caller]
fn check_summary(text: &str, expected: &str) {
    assert_eq!(summary_from_answer(text), expected);
}

// rule: SESSION-4
#[test]
fn summary_keeps_a_short_answer_with_whitespace_collapsed() {
    check_summary("  Disk  usage:\n\n42%  ", "Disk usage: 42%");
    check_summary("", "");
}

// rule: SESSION-4
#[test]
fn summary_cuts_a_long_answer_at_a_word_boundary() {
    let text = "word ".repeat(40);
    let summary = summary_from_answer(&text);
    assert!(summary.ends_with("word…"), "{summary}");
    assert!(summary.chars().count() <= SUMMARY_CHARS + 1, "{summary}");
    assert!(
        summary.chars().count() >= SUMMARY_CHARS * 3 / 4,
        "{summary}"
    );
}

// rule: SESSION-4
#[test]
fn summary_cuts_an_unbroken_answer_at_the_limit() {
    let summary = summary_from_answer(&"x".repeat(500));
    assert_eq!(summary, format!("{}…", "x".repeat(SUMMARY_CHARS)));
}

// rule: SESSION-4
#[test]
fn summary_cuts_multibyte_text_at_a_char_boundary() {
    let summary = summary_from_answer(&"日本語のテキスト".repeat(40));
    assert_eq!(summary.chars().count(), SUMMARY_CHARS + 1);
    assert!(summary.ends_with('…'));
    let emoji = summary_from_answer(&"🚀a ".repeat(100));
    assert!(emoji.ends_with("🚀a…"), "{emoji}");
}

fn execution(status: ExecutionStatus, created_min: i64, started_min: Option<i64>) -> Execution {
    let session_id = SessionId(Uuid::from_u128(1));
    Execution {
        id: session_id.execution_id(1),
        session_id,
        tool_call_id: Some("call-1".into()),
        kind: ExecutionKind::Command,
        host: "host:a".into(),
        command: "apt-get upgrade -y".into(),
        class: CommandClass::ConfigMutation,
        reason: "apt-get upgrade changes packages".into(),
        generation: 1,
        step_seq: Some(1),
        status,
        created_at: at(created_min),
        started_at: started_min.map(at),
        finished_at: None,
        output: None,
        error: None,
    }
}

fn classify_exec(execution: &Execution, now_min: i64, phase: SweepPhase) -> ExecutionVerdict {
    classify_execution(
        execution,
        at(now_min),
        &SweepThresholds::spec_defaults(),
        phase,
    )
}

fn fail(reason: &str) -> ExecutionVerdict {
    ExecutionVerdict::Fail {
        reason: reason.into(),
    }
}

// rule: EXEC-3
#[test]
fn periodic_sweep_fails_executions_running_over_ten_minutes() {
    let running = execution(ExecutionStatus::Running, 0, Some(2));
    assert_eq!(
        classify_exec(&running, 13, SweepPhase::Periodic),
        fail("execution timed out")
    );
    assert_eq!(
        classify_exec(&running, 12, SweepPhase::Periodic),
        ExecutionVerdict::Keep
    );
    let unstamped = execution(ExecutionStatus::Running, 0, None);
    assert_eq!(
        classify_exec(&unstamped, 11, SweepPhase::Periodic),
        fail(TIMED_OUT_REASON)
    );
}

// rule: EXEC-3
#[test]
fn periodic_sweep_keeps_executions_that_wait_for_approval() {
    let waiting = execution(ExecutionStatus::PendingApproval, 0, None);
    assert_eq!(
        classify_exec(&waiting, 600, SweepPhase::Periodic),
        ExecutionVerdict::Keep
    );
}

// rule: EXEC-6
#[test]
fn startup_fails_every_running_execution_as_interrupted() {
    let running = execution(ExecutionStatus::Running, 0, Some(0));
    assert_eq!(
        classify_exec(&running, 1, SweepPhase::Startup),
        fail(INTERRUPTED_REASON)
    );
    assert!(INTERRUPTED_REASON.starts_with("interrupted"));
}

// rule: EXEC-8
#[test]
fn an_interrupted_execution_says_its_outcome_is_unknown_never_that_it_did_not_run() {
    assert!(INTERRUPTED_REASON.starts_with("interrupted: outcome unknown"));
    assert!(INTERRUPTED_REASON.contains("may have run partly or to its end"));
    assert!(!INTERRUPTED_REASON.contains("did not run"));
}

// rule: EXEC-3
#[test]
fn startup_cancels_pending_executions_older_than_an_hour() {
    let stale = execution(ExecutionStatus::PendingApproval, 0, None);
    assert_eq!(
        classify_exec(&stale, 61, SweepPhase::Startup),
        ExecutionVerdict::Cancel {
            reason: "cleaned up at start-up: stale from a prior run".into()
        }
    );
    assert_eq!(
        classify_exec(&stale, 60, SweepPhase::Startup),
        ExecutionVerdict::Keep
    );
}

// rule: EXEC-3
// rule: FLEET-2
#[test]
fn startup_cancels_a_queued_fanout_host_at_once_saying_it_did_not_run() {
    let queued = execution(ExecutionStatus::Approved, 0, None);
    for age in [0, 1, 61] {
        assert_eq!(
            classify_exec(&queued, age, SweepPhase::Startup),
            ExecutionVerdict::Cancel {
                reason: QUEUED_AT_RESTART_REASON.into()
            },
            "{age} minutes old"
        );
    }
    // The periodic sweep leaves it to the live driver of its fan-out.
    assert_eq!(
        classify_exec(&queued, 61, SweepPhase::Periodic),
        ExecutionVerdict::Keep
    );
    assert!(QUEUED_AT_RESTART_REASON.starts_with("cancelled"));
    assert!(QUEUED_AT_RESTART_REASON.contains("did not run"));
    assert!(!QUEUED_AT_RESTART_REASON.starts_with(crate::fanout::SKIPPED_PREFIX));
}

// rule: EXEC-3
#[test]
fn backfill_cancels_only_stale_non_terminal_executions() {
    for status in [ExecutionStatus::PendingApproval, ExecutionStatus::Approved] {
        let waiting = execution(status, 0, None);
        assert_eq!(
            classify_execution_for_backfill(&waiting, at(60), &SweepThresholds::spec_defaults()),
            ExecutionVerdict::Keep
        );
        assert_eq!(
            classify_execution_for_backfill(&waiting, at(61), &SweepThresholds::spec_defaults()),
            ExecutionVerdict::Cancel {
                reason: STALE_REASON.into()
            }
        );
    }
}

// rule: EXEC-3
#[test]
fn terminal_executions_are_always_kept() {
    for status in [
        ExecutionStatus::Completed,
        ExecutionStatus::Failed,
        ExecutionStatus::Cancelled,
    ] {
        let done = execution(status, 0, Some(0));
        for phase in [SweepPhase::Periodic, SweepPhase::Startup] {
            assert_eq!(classify_exec(&done, 6000, phase), ExecutionVerdict::Keep);
        }
    }
}

fn approval(status: ApprovalStatus) -> Approval {
    let session_id = SessionId(Uuid::from_u128(1));
    let execution_id = session_id.execution_id(1);
    Approval {
        id: session_id.approval_id(execution_id),
        session_id,
        execution_id,
        binding: ApprovalBinding {
            command: "rm -rf /tmp/x".into(),
            host: "host:a".into(),
            class: CommandClass::Destructive,
            generation: 1,
            origin: Default::default(),
            preview: None,
            edited_from: None,
        },
        binding_hash: "00".into(),
        status,
        requested_at: at(0),
        expires_at: at(30),
        decided_at: None,
        decided_by: None,
        approvers_required: 1,
        approved_by: Vec::new(),
    }
}

// rule: GATE-7
#[test]
fn a_pending_approval_expires_at_its_deadline() {
    let pending = approval(ApprovalStatus::Pending);
    assert!(!approval_expired(&pending, at(29)));
    assert!(approval_expired(&pending, at(30)));
    assert!(!approval_expired(
        &approval(ApprovalStatus::Approved),
        at(90)
    ));
    assert!(!approval_expired(&approval(ApprovalStatus::Denied), at(90)));
}

fn any_status() -> impl Strategy<Value = SessionStatus> {
    prop::sample::select(SessionStatus::ALL.to_vec())
}

fn any_mode() -> impl Strategy<Value = SweepMode> {
    prop_oneof![
        Just(SweepMode::TurnEnd),
        Just(SweepMode::Periodic),
        Just(BACKFILL),
        Just(BACKFILL_ALL),
    ]
}

fn any_role() -> impl Strategy<Value = Role> {
    prop::sample::select(Role::ALL.to_vec())
}

prop_compose! {
    fn any_record()(
        status in any_status(),
        has_goal in any::<bool>(),
        last_activity in 0i64..5000,
        nudged in prop::option::of(0i64..5000),
    ) -> SessionRecord {
        let mut record = session(status, has_goal.then_some("g"), last_activity);
        record.nudged_at = nudged.map(at);
        record
    }
}

proptest! {
    // rule: SWEEP-4
    #[test]
    fn terminal_sessions_always_stay(
        record in any_record(),
        role in any_role(),
        now in 0i64..10_000,
        mode in any_mode(),
        n_pending in 0usize..3,
    ) {
        let facts = SessionFacts { n_pending_approvals: n_pending, ..facts(&record, Some((role, "answer"))) };
        let verdict = classify(&facts, now, mode);
        if record.status.is_terminal() {
            prop_assert_eq!(verdict, leave(LeaveReason::Terminal));
        }
    }

    // rule: SWEEP-3
    #[test]
    fn pending_approvals_are_never_nudged_or_closed_by_the_periodic_sweep(
        record in any_record(),
        role in any_role(),
        now in 0i64..10_000,
        n_pending in 1usize..4,
    ) {
        let facts = SessionFacts { n_pending_approvals: n_pending, ..facts(&record, Some((role, "answer"))) };
        let verdict = classify(&facts, now, SweepMode::Periodic);
        prop_assert!(matches!(verdict, SessionVerdict::Leave { .. }), "{:?}", verdict);
    }

    // rule: SWEEP-4
    #[test]
    fn session_classification_is_deterministic(
        record in any_record(),
        role in any_role(),
        text in ".{0,200}",
        now in 0i64..10_000,
        mode in any_mode(),
    ) {
        let facts = facts(&record, Some((role, text.as_str())));
        prop_assert_eq!(classify(&facts, now, mode), classify(&facts, now, mode));
    }

    // rule: SESSION-4
    #[test]
    fn summary_never_panics_and_stays_short(text in ".{0,400}") {
        let summary = summary_from_answer(&text);
        prop_assert!(summary.chars().count() <= SUMMARY_CHARS + 1);
        prop_assert!(!summary.contains("  "));
    }
}
