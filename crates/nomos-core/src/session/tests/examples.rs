//! Example tests of the task lifecycle and plans, one rule each.

use crate::event::DomainEvent;
use crate::record::KnowledgeLoop;
use crate::status::{
    ApprovalStatus, CommandClass, ExecutionStatus, Outcome, SessionStatus, StepStatus,
};
use crate::time::Span;

use crate::sweep::SweepThresholds;

use super::super::{KnowledgeUse, ToolInput, TurnEnd};
use super::{Harness, assert_ok, assert_refused};

// rule: SESSION-2
#[test]
fn set_goal_moves_active_to_planning() {
    let mut h = Harness::new();
    assert_eq!(h.session.status(), SessionStatus::Active);
    assert_ok(&h.goal());
    assert_eq!(h.session.status(), SessionStatus::Planning);
    assert_eq!(h.session.record().goal.as_deref(), Some("check the disks"));
}

// rule: SESSION-2
#[test]
fn assent_moves_planning_to_executing_and_outcome_names_terminal_status() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["inspect"]);
    let effect = h.say("go ahead");
    assert_eq!(effect.assented_generation, Some(1));
    assert_eq!(h.session.status(), SessionStatus::Executing);
    h.session
        .handle_knowledge_use(h.now, KnowledgeUse::WriteBack);
    assert_ok(&h.complete(Outcome::Failure));
    assert_eq!(h.session.status(), SessionStatus::Failed);
}

// rule: SESSION-2
#[test]
fn ask_operator_waits_until_the_operator_answers() {
    let mut h = Harness::new();
    h.goal();
    assert_ok(&h.tool(ToolInput::AskOperator {
        question: "which host?".to_owned(),
    }));
    assert_eq!(h.session.status(), SessionStatus::AwaitingInput);
    h.say("the nas");
    assert_eq!(h.session.status(), SessionStatus::Planning);
}

// rule: SESSION-3
#[test]
fn complete_task_twice_is_refused_and_changes_nothing() {
    let mut h = Harness::new();
    h.goal();
    assert_ok(&h.complete(Outcome::Success));
    h.commit();
    let before = h.session.snapshot();
    let reply = h.complete(Outcome::Partial);
    assert_refused(
        &reply,
        "already complete (status=done) - do not call complete_task again; use update_plan_step and run to keep working",
    );
    assert_eq!(h.session.snapshot(), before);
    assert!(h.session.take_commit().is_empty());
}

// rule: SESSION-4
#[test]
fn plain_answer_without_goal_completes_as_success_with_short_summary() {
    let mut h = Harness::new();
    h.say("what is the uptime of the nas?");
    let answer = "The NAS has been up for 41 days. ".repeat(10);
    assert!(h.session.handle_turn_end(
        h.now,
        TurnEnd::Answer(&answer),
        &SweepThresholds::spec_defaults()
    ));
    assert_eq!(h.session.status(), SessionStatus::Done);
    let summary = h.session.record().summary.clone().unwrap();
    assert!(
        summary.starts_with("The NAS has been up for 41 days."),
        "{summary}"
    );
    assert!(summary.chars().count() <= 125, "{summary}");
}

// rule: SESSION-4, TURN-3
#[test]
fn a_blank_turn_end_is_no_answer_and_completes_nothing() {
    let mut h = Harness::new();
    h.say("what is the uptime of the nas?");
    for blank in ["", "  \n\t "] {
        assert!(!h.session.handle_turn_end(
            h.now,
            TurnEnd::Answer(blank),
            &SweepThresholds::spec_defaults()
        ));
    }
    assert_eq!(h.session.status(), SessionStatus::Active);
}

// rule: SESSION-4
#[test]
fn plain_answer_after_set_goal_does_not_complete() {
    let mut h = Harness::new();
    h.goal();
    assert!(!h.session.handle_turn_end(
        h.now,
        TurnEnd::Answer("Here is the plan I suggest."),
        &SweepThresholds::spec_defaults()
    ));
    assert_eq!(h.session.status(), SessionStatus::Planning);
}

// rule: SESSION-5
#[test]
fn complete_task_cancels_pending_approvals_and_closes_open_steps() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["wipe the old volume", "verify"]);
    h.say("yes");
    h.step(1, StepStatus::Running);
    let reply = h.run("zfs destroy tank/old", CommandClass::Destructive);
    assert!(reply.text.contains("Approval requested"), "{}", reply.text);
    h.session
        .handle_knowledge_use(h.now, KnowledgeUse::WriteBack);
    assert_ok(&h.complete(Outcome::Partial));
    let approval = &h.session.approvals()[0];
    assert_eq!(approval.status, ApprovalStatus::Cancelled);
    assert_eq!(h.session.executions()[0].status, ExecutionStatus::Cancelled);
    assert!(h.session.current_steps().all(|s| s.status.is_closed()));
}

// rule: SESSION-5
#[test]
fn complete_task_tells_the_model_how_many_steps_it_closed_and_approvals_it_cancelled() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["wipe the old volume", "verify"]);
    h.say("yes");
    h.step(1, StepStatus::Running);
    h.run("zfs destroy tank/old", CommandClass::Destructive);
    h.session
        .handle_knowledge_use(h.now, KnowledgeUse::WriteBack);
    let open_steps = h.session.current_steps().count();
    assert_eq!(open_steps, 3, "two steps and the write-back step");
    let reply = h.complete(Outcome::Partial);
    assert_ok(&reply);
    assert!(
        reply.text.contains("Closed 3 open plan step(s).")
            && reply.text.contains("Cancelled 1 pending approval(s)."),
        "{}",
        reply.text
    );

    // Nothing left open: the result claims nothing was closed or cancelled.
    let mut h = Harness::new();
    h.goal();
    let reply = h.complete(Outcome::Success);
    assert_ok(&reply);
    assert!(
        !reply.text.contains("Closed") && !reply.text.contains("Cancelled"),
        "{}",
        reply.text
    );
}

// rule: SWEEP-1, SWEEP-2
#[test]
fn the_sweep_records_its_nudge_then_closes_an_unanswered_session_as_partial() {
    let mut h = Harness::new();
    h.goal();
    let thresholds = SweepThresholds::spec_defaults();
    h.advance(thresholds.idle_after);
    let outcome = h.session.handle_sweep(h.now, &thresholds, None);
    assert_eq!(outcome.verdict, crate::sweep::SessionVerdict::Nudge);
    assert_eq!(h.session.record().nudged_at, Some(h.now));
    assert!(h.events().iter().any(|e| matches!(e, DomainEvent::Nudged)));
    h.advance(thresholds.nudge_grace);
    let outcome = h.session.handle_sweep(h.now, &thresholds, None);
    assert!(
        matches!(
            outcome.verdict,
            crate::sweep::SessionVerdict::ClosePartial { .. }
        ),
        "{:?}",
        outcome.verdict
    );
    assert_eq!(h.session.status(), SessionStatus::Partial);
}

// rule: PLAN-8
#[test]
fn a_step_that_never_ran_has_no_start_and_one_finished_unstarted_starts_at_its_end() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["look", "change", "verify"]);
    h.say("yes");
    assert_ok(&h.step(1, StepStatus::Skipped));
    assert_ok(&h.step(2, StepStatus::Done));
    let finished_at = h.now;
    let step = |h: &Harness, seq: u32| {
        h.session
            .all_steps()
            .iter()
            .find(|s| s.generation == 1 && s.seq == seq)
            .cloned()
            .unwrap()
    };
    let skipped = step(&h, 1);
    assert_eq!(
        (skipped.started_at, skipped.finished_at.is_some()),
        (None, true)
    );
    let done = step(&h, 2);
    assert_eq!(done.started_at, Some(finished_at));
    assert_eq!(done.finished_at, Some(finished_at));
    // A revision while step 3 waits replaces it: it never started either.
    assert_ok(&h.step(3, StepStatus::Running));
    h.revise(&["verify again"], "step 3 needs a second look");
    let running_then_failed = step(&h, 3);
    assert!(running_then_failed.started_at.is_some());
    let write_back = step(&h, 4);
    assert_eq!(write_back.status, StepStatus::Replaced);
    assert_eq!(write_back.started_at, None);
}

#[test]
fn every_message_gets_its_own_id_in_order() {
    let mut h = Harness::new();
    let first = h.say("check the disks").message_id;
    let note = h.session.append_note(h.now, "a note");
    let reply = h
        .session
        .append_assistant_message(h.now, "on it", Vec::new())
        .unwrap();
    assert_eq!(h.session.record().n_messages, 3);
    let id = h.session.id();
    assert_eq!([first, note, reply], [1, 2, 3].map(|n| id.message_id(n)));
}

// rule: SESSION-6
#[test]
fn every_status_change_is_an_event() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["inspect"]);
    h.say("ok");
    h.session
        .handle_knowledge_use(h.now, KnowledgeUse::WriteBack);
    h.complete(Outcome::Success);
    let changes: Vec<(SessionStatus, SessionStatus)> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            DomainEvent::TaskStatus { from, to, .. } => Some((*from, *to)),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes,
        [
            (SessionStatus::Active, SessionStatus::Planning),
            (SessionStatus::Planning, SessionStatus::Executing),
            (SessionStatus::Executing, SessionStatus::Done),
        ]
    );
}

// rule: SESSION-7
#[test]
fn message_to_terminal_session_keeps_it_terminal_until_set_goal_reopens_it() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["inspect"]);
    h.session
        .handle_knowledge_use(h.now, KnowledgeUse::WriteBack);
    h.complete(Outcome::Success);
    h.say("thanks, now check the other host too, go");
    assert_eq!(h.session.status(), SessionStatus::Done);
    assert_refused(&h.plan(&["other"]), "call set_goal first");
    assert_ok(&h.tool(ToolInput::SetGoal {
        goal: "check the other host".to_owned(),
    }));
    assert_eq!(h.session.status(), SessionStatus::Planning);
    assert_ok(&h.plan(&["inspect other"]));
    assert_eq!(h.session.record().plan_generation, 2);
    assert_eq!(h.step_status(2, 1), StepStatus::Pending);
}

// rule: SESSION-7, GATE-2
#[test]
fn a_reopened_session_that_never_had_a_plan_still_has_none() {
    let mut h = Harness::new();
    h.goal();
    assert_ok(&h.complete(Outcome::Success));
    assert_ok(&h.tool(ToolInput::SetGoal {
        goal: "check the other host".to_owned(),
    }));
    assert_eq!(h.session.record().plan_generation, 0);
    assert_refused(
        &h.run("systemctl restart nginx", CommandClass::ConfigMutation),
        "Propose a plan first",
    );
    assert_ok(&h.plan(&["inspect other"]));
    assert_eq!(h.session.record().plan_generation, 1);
}

// rule: PLAN-1
#[test]
fn steps_are_numbered_one_to_n_within_their_generation() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a", "b", "write back facts"]);
    let seqs: Vec<(u32, u32)> = h
        .session
        .all_steps()
        .iter()
        .map(|s| (s.generation, s.seq))
        .collect();
    assert_eq!(seqs, [(1, 1), (1, 2), (1, 3)]);
}

// rule: PLAN-2
#[test]
fn propose_plan_before_any_step_started_replaces_the_generation() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a", "b"]);
    h.commit();
    let reply = h.plan(&["c", "d", "upsert_knowledge"]);
    assert_ok(&reply);
    assert!(
        reply.text.contains("1=c; 2=d; 3=upsert_knowledge"),
        "{}",
        reply.text
    );
    assert!(reply.text.contains(
        "Read-only commands may run at once; anything else waits for the operator's approval"
    ));
    let titles: Vec<&str> = h
        .session
        .all_steps()
        .iter()
        .map(|s| s.title.as_str())
        .collect();
    assert_eq!(titles, ["c", "d", "upsert_knowledge"]);
    assert_eq!(h.session.record().plan_generation, 1);
    let commit = h.commit();
    // Same (generation, seq) means the same derived id: rows are updated, none removed.
    assert!(commit.removed_steps.is_empty());
    assert_eq!(commit.steps.len(), 3);
}

// rule: PLAN-2
#[test]
fn shorter_revision_before_start_removes_the_extra_steps() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a", "b", "c", "write back"]);
    h.commit();
    h.plan(&["x", "write back"]);
    let commit = h.commit();
    assert_eq!(commit.removed_steps.len(), 2);
}

// rule: PLAN-3
#[test]
fn propose_plan_in_flight_is_refused_with_directive() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a", "b"]);
    h.step(1, StepStatus::Running);
    let reply = h.plan(&["a", "b"]);
    assert_refused(
        &reply,
        "plan already in flight - advance it with update_plan_step and run; do not call propose_plan again",
    );
    assert_eq!(h.session.all_steps().len(), 3);
}

// rule: PLAN-3
#[test]
fn revision_in_flight_creates_next_generation_and_replaces_pending_steps() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a", "b", "c"]);
    h.say("proceed");
    h.step(1, StepStatus::Running);
    h.step(1, StepStatus::Done);
    assert_refused(
        &h.tool(ToolInput::ProposePlan {
            steps: super::drafts(&["x"]),
            revision: super::super::Revision::Yes { reason: None },
        }),
        "needs a reason",
    );
    assert_ok(&h.revise(&["x", "y"], "the disk is not where we thought"));
    assert_eq!(h.session.record().plan_generation, 2);
    assert_eq!(h.step_status(1, 1), StepStatus::Done);
    assert_eq!(h.step_status(1, 2), StepStatus::Replaced);
    assert_eq!(h.step_status(1, 4), StepStatus::Replaced);
    let gen2: Vec<u32> = h.session.current_steps().map(|s| s.seq).collect();
    assert_eq!(gen2, [1, 2, 3]);
    // GATE-4: a revision closes the assent window.
    assert!(!h.session.assent_open(h.now));
    assert_eq!(h.session.status(), SessionStatus::Planning);
}

// rule: PLAN-4
#[test]
fn update_plan_step_addresses_the_current_generation_only() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a", "b", "c"]);
    h.step(1, StepStatus::Running);
    h.revise(&["x"], "new facts");
    // seq 1 now means generation 2's first step.
    assert_ok(&h.step(1, StepStatus::Running));
    assert_eq!(h.step_status(2, 1), StepStatus::Running);
    // SESSION-5: the revision closed the step it left running.
    assert_eq!(h.step_status(1, 1), StepStatus::Failed);
    assert_refused(
        &h.step(3, StepStatus::Running),
        "step 3 not found in the current plan (generation 2 has steps 1..2)",
    );
}

// rule: PLAN-4
#[test]
fn replaced_step_can_never_change() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a", "b"]);
    h.step(1, StepStatus::Running);
    h.revise(&["x", "y", "z"], "new facts");
    // Generation 2 has 4 steps; make seq 2 of the old generation unreachable by design.
    assert_eq!(h.step_status(1, 2), StepStatus::Replaced);
    let idx = h
        .session
        .all_steps()
        .iter()
        .position(|s| s.generation == 1 && s.seq == 2)
        .unwrap();
    h.session.record.plan_generation = 1; // Look at the old generation as if it were current.
    assert_refused(&h.step(2, StepStatus::Running), "was replaced");
    assert_eq!(h.session.all_steps()[idx].status, StepStatus::Replaced);
}

// rule: PLAN-5
#[test]
fn steps_advance_in_order_unless_earlier_ones_are_skipped() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a", "b", "c"]);
    assert_refused(&h.step(2, StepStatus::Running), "step 1 is still pending");
    assert_ok(&h.step(1, StepStatus::Skipped));
    assert_ok(&h.step(2, StepStatus::Running));
    assert_ok(&h.step(2, StepStatus::Done));
    assert_refused(&h.step(2, StepStatus::Failed), "already done");
}

// rule: PLAN-6
#[test]
fn plan_without_writeback_step_gets_one_appended_never_two() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a"]);
    let titles: Vec<String> = h.session.current_steps().map(|s| s.title.clone()).collect();
    assert_eq!(titles.len(), 2);
    assert!(super::super::is_writeback_step(&titles[1], None));
    h.plan(&["a", "Persist via UPDATE_ENTITY_ATTRIBUTES"]);
    assert_eq!(h.session.current_steps().count(), 2);
}

// rule: PLAN-6
#[test]
fn writeback_detector_matches_every_marker_case_insensitively() {
    use super::super::is_writeback_step;
    for text in [
        "Write Back facts",
        "WRITEBACK",
        "call upsert_knowledge",
        "update_entity_attributes",
        "create_relationship x",
    ] {
        assert!(is_writeback_step(text, None), "{text}");
        assert!(is_writeback_step("final", Some(text)), "{text}");
    }
    assert!(!is_writeback_step("write the backup", None));
}

// rule: PLAN-7
#[test]
fn current_steps_are_the_current_generation_and_all_steps_keep_history() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a"]);
    h.step(1, StepStatus::Running);
    h.revise(&["b"], "changed");
    assert!(h.session.current_steps().all(|s| s.generation == 2));
    let gens: Vec<u32> = h.session.all_steps().iter().map(|s| s.generation).collect();
    assert_eq!(gens, [1, 1, 2, 2]);
}

// rule: PLAN-8
#[test]
fn closing_a_plan_stamps_missing_start_at_close_and_emits_one_event_per_step() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a", "b", "write back"]);
    h.step(1, StepStatus::Running);
    let started = h.now;
    h.advance(Span::from_mins(5));
    h.commit();
    h.session
        .handle_knowledge_use(h.now, KnowledgeUse::WriteBack);
    h.complete(Outcome::Success);
    let close = h.now;
    let steps = h.session.all_steps();
    assert_eq!(steps[0].started_at, Some(started));
    assert_eq!(steps[1].started_at, Some(close));
    assert!(
        steps
            .iter()
            .all(|s| s.finished_at == Some(close) && s.status == StepStatus::Done)
    );
    let finished = h
        .session
        .pending_events()
        .iter()
        .filter(|e| matches!(e.event, DomainEvent::StepFinished { .. }))
        .count();
    assert_eq!(finished, 3);
}

// rule: PLAN-9
#[test]
fn every_step_status_change_has_its_event() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["a", "write back"]);
    h.step(1, StepStatus::Running);
    h.step(1, StepStatus::Done);
    h.step(2, StepStatus::Skipped);
    let kinds: Vec<&str> = h
        .events()
        .into_iter()
        .map(|e| e.kind())
        .filter(|k| k.starts_with("plan."))
        .collect();
    assert_eq!(
        kinds,
        [
            "plan.proposed",
            "plan.step.started",
            "plan.step.finished",
            "plan.step.finished"
        ]
    );
}

// rule: WRITEBACK-2
#[test]
fn discovery_without_writeback_is_refused_then_accepted_after_writeback() {
    let mut h = Harness::new();
    h.goal();
    let reply = h.run("df -h", CommandClass::ReadOnly);
    h.finish_dispatch(&reply);
    assert_eq!(h.session.record().knowledge, KnowledgeLoop::Discovered);
    let refused = h.complete(Outcome::Success);
    assert_refused(
        &refused,
        "did not call update_entity_attributes or create_relationship",
    );
    assert_eq!(h.session.status(), SessionStatus::Planning);
    assert_eq!(h.session.record().board_outcome, Some(Outcome::Partial));
    h.session
        .handle_knowledge_use(h.now, KnowledgeUse::WriteBack);
    assert_ok(&h.complete(Outcome::Success));
    assert_eq!(h.session.status(), SessionStatus::Done);
    assert_eq!(h.session.record().board_outcome, Some(Outcome::Success));
}

// rule: WRITEBACK-1
#[test]
fn knowledge_discovery_tools_count_as_discovery() {
    let mut h = Harness::new();
    h.goal();
    h.session
        .handle_knowledge_use(h.now, KnowledgeUse::Discovery);
    assert_eq!(h.session.record().knowledge, KnowledgeLoop::Discovered);
    assert_refused(&h.complete(Outcome::Success), "Refused");
    // A failure outcome needs no write-back.
    assert_ok(&h.complete(Outcome::Failure));
}

// rule: TURN-3
#[test]
fn empty_assistant_reply_is_not_persisted() {
    let mut h = Harness::new();
    assert_eq!(
        h.session
            .append_assistant_message(h.now, "  \n", Vec::new()),
        None
    );
    assert!(
        h.session
            .append_assistant_message(h.now, "hello", Vec::new())
            .is_some()
    );
    let commit = h.commit();
    assert_eq!(commit.messages.len(), 1);
}
