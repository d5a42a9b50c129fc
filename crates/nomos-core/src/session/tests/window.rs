//! Example tests of what an assent or an approval covers: only the plan the operator was
//! shown, for as long as that plan lives (GATE-4, GATE-7, SESSION-2, SESSION-5, PLAN-8,
//! EXEC-1, EXEC-6, SESSION-4 with SWEEP-2).

use crate::event::{AssentCloseReason, DomainEvent};
use crate::status::{
    ApprovalStatus, CommandClass, Decision, ExecutionStatus, Outcome, SessionStatus, StepStatus,
};
use crate::sweep::SweepThresholds;
use crate::time::Span;

use super::super::{Action, DecisionError, ExecutionError, ToolInput, TurnEnd};
use super::{Harness, assert_ok, assert_refused};

/// A goal and a two-step plan (one step and the appended write-back step), assented.
fn assented() -> Harness {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["restart the service"]);
    assert_eq!(h.say("yes, go ahead").assented_generation, Some(1));
    h
}

/// Every `assent.closed` so far, with its reason.
fn closes(h: &Harness) -> Vec<(u32, AssentCloseReason)> {
    h.events()
        .into_iter()
        .filter_map(|e| match e {
            DomainEvent::AssentClosed { generation, reason } => Some((*generation, *reason)),
            _ => None,
        })
        .collect()
}

fn ask(h: &mut Harness, question: &str) {
    assert_ok(&h.tool(ToolInput::AskOperator {
        question: question.to_owned(),
    }));
}

fn approval_of(reply: &super::ToolReply) -> (crate::id::ApprovalId, crate::id::ExecutionId) {
    match reply.action {
        Some(Action::AwaitApproval {
            approval_id,
            execution_id,
        }) => (approval_id, execution_id),
        other => panic!("expected an approval request, got {other:?}"),
    }
}

// rule: GATE-4
#[test]
fn an_answer_to_a_question_never_opens_the_window_even_with_an_approval_word() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["resize the volume"]);
    ask(&mut h, "Which volume, data or logs?");
    assert_eq!(h.session.status(), SessionStatus::AwaitingInput);
    let effect = h.say("yes, data. go ahead");
    assert_eq!(effect.assented_generation, None);
    assert!(!h.session.assent_open(h.now));
    assert_eq!(h.session.status(), SessionStatus::Planning);
    assert_refused(
        &h.run("lvextend -L+10G /dev/vg/data", CommandClass::ConfigMutation),
        "STOP and wait for approval",
    );
    // The next message, no longer an answer, may assent.
    assert_eq!(h.say("approved").assented_generation, Some(1));
}

// rule: SESSION-2
#[test]
fn propose_plan_does_not_end_a_question_to_the_operator() {
    let mut h = Harness::new();
    h.goal();
    ask(&mut h, "Which host?");
    assert_ok(&h.plan(&["inspect the host"]));
    assert_eq!(h.session.status(), SessionStatus::AwaitingInput);
    // And the answer that follows is an answer, not assent.
    assert_eq!(h.say("go with nas-1, ok").assented_generation, None);
    assert_eq!(h.session.status(), SessionStatus::Planning);
}

// rule: GATE-4
#[test]
fn the_window_closes_once_when_every_step_of_its_plan_is_finished() {
    let mut h = assented();
    h.step(1, StepStatus::Running);
    h.step(1, StepStatus::Done);
    assert!(h.session.assent_open(h.now));
    h.step(2, StepStatus::Skipped);
    assert!(!h.session.assent_open(h.now));
    assert_eq!(closes(&h), [(1, AssentCloseReason::PlanFinished)]);
    assert_refused(
        &h.run("systemctl restart nginx", CommandClass::ConfigMutation),
        "STOP and wait for approval",
    );
    h.complete(Outcome::Success);
    assert_eq!(closes(&h).len(), 1, "closed once: {:?}", closes(&h));
}

// rule: GATE-4
#[test]
fn a_revision_closes_the_window_with_its_reason() {
    let mut h = assented();
    h.step(1, StepStatus::Running);
    h.revise(&["another way"], "the service moved");
    assert_eq!(closes(&h), [(1, AssentCloseReason::PlanRevised)]);
}

// rule: GATE-4
#[test]
fn a_replacement_before_any_step_started_closes_the_window() {
    let mut h = assented();
    h.plan(&["something else entirely"]);
    assert_eq!(h.session.record().plan_generation, 1);
    assert!(!h.session.assent_open(h.now));
    assert_eq!(closes(&h), [(1, AssentCloseReason::PlanReplaced)]);
    assert_refused(
        &h.run("systemctl restart nginx", CommandClass::ConfigMutation),
        "STOP and wait for approval",
    );
}

// rule: GATE-4
#[test]
fn the_end_of_the_session_closes_the_window() {
    let mut h = assented();
    h.step(1, StepStatus::Running);
    h.complete(Outcome::Failure);
    assert_eq!(closes(&h), [(1, AssentCloseReason::SessionEnded)]);
}

// rule: GATE-4
#[test]
fn an_expired_window_is_recorded_closed_by_the_first_gate_decision_that_notices() {
    let mut h = assented();
    h.advance(Span::from_mins(31));
    assert_refused(
        &h.run("systemctl restart nginx", CommandClass::ConfigMutation),
        "STOP and wait for approval",
    );
    assert_eq!(closes(&h), [(1, AssentCloseReason::Expired)]);
    assert_eq!(h.session.record().assent, None);
    h.session.handle_timeout(h.now);
    h.run("systemctl restart nginx", CommandClass::ConfigMutation);
    assert_eq!(closes(&h).len(), 1, "closed once: {:?}", closes(&h));
}

// rule: GATE-4
#[test]
fn a_lone_timeout_records_the_close_of_an_expired_window() {
    let mut h = assented();
    assert_eq!(h.session.poll_timeout(), Some(h.now + Span::from_mins(30)));
    h.advance(Span::from_mins(30));
    h.session.handle_timeout(h.now);
    assert_eq!(closes(&h), [(1, AssentCloseReason::Expired)]);
    assert_eq!(h.session.poll_timeout(), None);
    h.session.handle_timeout(h.now + Span::from_mins(1));
    assert_eq!(closes(&h).len(), 1);
    assert!(!h.session.handle_gate_check(h.now));
}

// rule: GATE-7
#[test]
fn a_same_generation_replacement_cancels_pending_approvals_and_refuses_their_decision() {
    let mut h = assented();
    // No step started: the next propose_plan replaces generation 1 in place.
    let (approval_id, execution_id) =
        approval_of(&h.run("rm -rf /srv/old", CommandClass::Destructive));
    assert_ok(&h.plan(&["a different plan"]));
    assert_eq!(h.session.record().plan_generation, 1);
    let approval = &h.session.approvals()[0];
    assert_eq!(approval.status, ApprovalStatus::Cancelled);
    let execution = h.session.execution(execution_id).unwrap();
    assert_eq!(execution.status, ExecutionStatus::Cancelled);
    assert!(
        execution
            .error
            .as_deref()
            .is_some_and(|e| e.contains("replaced")),
        "{execution:?}"
    );
    let resolved = h.events().into_iter().any(|e| {
        matches!(e, DomainEvent::ApprovalResolved { approval_id: id, status: ApprovalStatus::Cancelled, reason: Some(reason), .. }
            if *id == approval_id && reason.contains("replaced"))
    });
    assert!(resolved, "{:?}", h.events());
    let late = h
        .session
        .handle_decision(h.now, approval_id, Decision::Approve, None);
    assert_eq!(
        late,
        Err(DecisionError::NotPending {
            id: approval_id,
            status: ApprovalStatus::Cancelled
        })
    );
    assert_ne!(
        h.session.execution(execution_id).unwrap().status,
        ExecutionStatus::Running
    );
}

// rule: GATE-7
#[test]
fn a_revision_cancels_pending_approvals_with_a_reason() {
    let mut h = assented();
    h.step(1, StepStatus::Running);
    let (approval_id, _) = approval_of(&h.run("rm -rf /srv/old", CommandClass::Destructive));
    h.revise(&["keep the old data"], "the operator wants a backup first");
    let resolved = h.events().into_iter().any(|e| {
        matches!(e, DomainEvent::ApprovalResolved { approval_id: id, status: ApprovalStatus::Cancelled, reason: Some(reason), .. }
            if *id == approval_id && reason.contains("revised"))
    });
    assert!(resolved, "{:?}", h.events());
    assert!(
        h.session
            .handle_decision(h.now, approval_id, Decision::Approve, None)
            .is_err()
    );
}

// rule: SESSION-5
#[test]
fn a_revision_closes_the_step_it_left_running_with_a_note() {
    let mut h = assented();
    h.step(1, StepStatus::Running);
    h.revise(&["another way"], "new facts");
    assert_eq!(h.step_status(1, 1), StepStatus::Failed);
    let step = &h.session.all_steps()[0];
    assert!(step.note.as_deref().is_some_and(|n| n.contains("revised")));
    assert!(step.finished_at.is_some());
    assert!(
        h.session
            .all_steps()
            .iter()
            .all(|s| s.status != StepStatus::Running)
    );
}

// rule: PLAN-8
// rule: SESSION-5
#[test]
fn complete_task_closes_a_running_step_an_older_generation_left_open() {
    let mut h = assented();
    h.step(1, StepStatus::Running);
    h.revise(&["another way"], "new facts");
    h.commit();
    // As older code stored it: the revision left generation 1's step running.
    let mut snapshot = h.session.snapshot();
    let step = snapshot
        .steps
        .iter_mut()
        .find(|s| s.generation == 1 && s.seq == 1)
        .unwrap();
    step.status = StepStatus::Running;
    step.finished_at = None;
    h.session = super::super::Session::from_snapshot(snapshot, *h.session.config());
    h.session
        .handle_knowledge_use(h.now, super::super::KnowledgeUse::WriteBack);
    h.complete(Outcome::Success);
    assert_eq!(h.session.status(), SessionStatus::Done);
    assert_eq!(h.step_status(1, 1), StepStatus::Failed);
    let finished = h
        .events()
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                DomainEvent::StepFinished {
                    generation: 1,
                    seq: 1,
                    ..
                }
            )
        })
        .count();
    // One from the revision (before the snapshot was doctored) and one from the close.
    assert_eq!(finished, 2);
    assert!(
        h.session
            .all_steps()
            .iter()
            .all(|s| s.status.is_closed() && s.finished_at.is_some())
    );
}

// rule: EXEC-1
// rule: EXEC-6
#[test]
fn an_execution_waiting_for_approval_never_starts_and_a_started_one_never_starts_again() {
    let mut h = assented();
    let (approval_id, execution_id) =
        approval_of(&h.run("rm -rf /srv/old", CommandClass::Destructive));
    assert_eq!(
        h.session.start_execution(h.now, execution_id),
        Err(ExecutionError::Transition {
            id: execution_id,
            from: ExecutionStatus::PendingApproval,
            to: ExecutionStatus::Running
        })
    );
    let action = h
        .session
        .handle_decision(h.now, approval_id, Decision::Approve, None)
        .unwrap();
    assert_eq!(action, Some(Action::Dispatch { execution_id }));
    assert_eq!(
        h.session.execution(execution_id).unwrap().status,
        ExecutionStatus::Running
    );
    assert!(h.session.start_execution(h.now, execution_id).is_err());
    assert!(
        h.session
            .handle_decision(h.now, approval_id, Decision::Approve, None)
            .is_err()
    );
}

// rule: SWEEP-2
// rule: SESSION-4
#[test]
fn a_failed_turn_never_completes_a_session_without_a_goal() {
    let mut h = Harness::new();
    h.say("how full is the disk?");
    h.session.append_assistant_message(
        h.now,
        "Checking.",
        vec![crate::record::ToolCallRequest {
            call_id: "c1".into(),
            name: "run".into(),
            arguments: "{}".into(),
        }],
    );
    let completed = h.session.handle_turn_end(
        h.now,
        TurnEnd::Failed("model error: 500"),
        &SweepThresholds::spec_defaults(),
    );
    assert!(!completed);
    assert_eq!(h.session.status(), SessionStatus::Active);
}

// rule: SWEEP-1
#[test]
fn notes_and_text_replies_are_not_activity_but_operator_messages_and_tool_calls_are() {
    let mut h = Harness::new();
    let created = h.session.record().last_activity_at;
    h.advance(Span::from_mins(5));
    h.session.append_note(h.now, "a note");
    h.session
        .append_assistant_message(h.now, "just talking", Vec::new());
    assert_eq!(h.session.record().last_activity_at, created);
    h.say("hello");
    assert_eq!(h.session.record().last_activity_at, h.now);
    h.advance(Span::from_mins(5));
    h.session.record_tool_call(crate::record::ToolCallRecord {
        session_id: h.session.id(),
        call_id: "c1".into(),
        name: "run".into(),
        arguments: "{}".into(),
        result: "ok".into(),
        outcome: crate::record::ToolCallOutcome::Ok,
        started_at: h.now,
        duration_ms: 2_000,
    });
    assert_eq!(
        h.session.record().last_activity_at,
        h.now + Span::from_millis(2_000)
    );
}
