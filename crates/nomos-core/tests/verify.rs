//! SAFE-4: a plan step's check. Marking a step with a check done dispatches the check; its
//! end decides the step (`done` when it passes, `failed` with its output when not); a check
//! that could change state is refused at proposal; and the model cannot skip the check by
//! completing the task or by marking the step done twice. The commands go through the
//! real classifier.

#![allow(clippy::unwrap_used)]

use nomos_core::check::{CheckVerdict, StepCheck};
use nomos_core::classify::classify;
use nomos_core::declared::DeclaredCommand;
use nomos_core::event::DomainEvent;
use nomos_core::record::{ExecOutput, ExecutionKind, ToolCallOutcome};
use nomos_core::session::{
    Action, KnowledgeUse, Revision, Session, SessionConfig, StepDraft, ToolInput,
};
use nomos_core::{ExecutionId, Outcome, SessionId, SessionStatus, Span, StepStatus, Timestamp};

struct Plan {
    session: Session,
    now: Timestamp,
    calls: u32,
}

fn check(command: &str, expect_output: Option<&str>) -> StepCheck {
    StepCheck::new(
        "web",
        command,
        classify(command),
        None,
        expect_output.map(str::to_owned),
    )
}

fn step(title: &str, command: &str, check: Option<StepCheck>) -> StepDraft {
    StepDraft {
        title: title.to_owned(),
        detail: None,
        commands: vec![DeclaredCommand::new(
            "web",
            Vec::new(),
            command,
            classify(command),
        )],
        check,
    }
}

fn exited(code: i32, stdout: &str) -> Result<ExecOutput, String> {
    Ok(ExecOutput {
        exit_code: Some(code),
        stdout: stdout.to_owned(),
        ..ExecOutput::default()
    })
}

impl Plan {
    /// A plan whose step 1 restarts nginx and checks it is active, approved, step 1 running.
    fn approved() -> Plan {
        let now = Timestamp::from_millis(1_800_000_000_000);
        let mut plan = Plan {
            session: Session::create(
                SessionId::from(uuid::Uuid::from_u128(4)),
                now,
                SessionConfig::spec_defaults(),
            ),
            now,
            calls: 0,
        };
        plan.tool(ToolInput::SetGoal {
            goal: "restart nginx on web".to_owned(),
        });
        let reply = plan.tool(ToolInput::ProposePlan {
            steps: vec![
                step(
                    "restart nginx",
                    "systemctl restart nginx",
                    Some(check("systemctl is-active nginx", None)),
                ),
                step("write back", "true", None),
            ],
            revision: Revision::No,
        });
        assert_eq!(reply.outcome, ToolCallOutcome::Ok, "{}", reply.text);
        plan.now = plan.now + Span::from_millis(10);
        plan.session
            .handle_operator_message(plan.now, "yes, go ahead");
        plan.update(1, StepStatus::Running);
        let ran = plan.tool(ToolInput::Run {
            host: "web".to_owned(),
            command: "systemctl restart nginx".to_owned(),
            classification: classify("systemctl restart nginx"),
            preview: None,
        });
        let Some(Action::Dispatch { execution_id }) = ran.action else {
            panic!("the declared restart did not run: {ran:?}");
        };
        plan.session
            .handle_execution_finished(plan.now, execution_id, exited(0, ""))
            .unwrap();
        plan
    }

    fn tool(&mut self, input: ToolInput) -> nomos_core::session::ToolReply {
        self.calls += 1;
        self.now = self.now + Span::from_millis(10);
        let call_id = format!("call_{}", self.calls);
        self.session.handle_tool(self.now, &call_id, input)
    }

    fn update(&mut self, seq: u32, status: StepStatus) -> nomos_core::session::ToolReply {
        self.tool(ToolInput::UpdatePlanStep {
            seq,
            status,
            note: None,
        })
    }

    fn step_status(&self, seq: u32) -> StepStatus {
        self.session
            .current_steps()
            .find(|s| s.seq == seq)
            .map(|s| s.status)
            .unwrap()
    }

    /// Marks step 1 done and returns the check's execution the core dispatched.
    fn mark_done(&mut self) -> ExecutionId {
        let reply = self.update(1, StepStatus::Done);
        let Some(Action::Dispatch { execution_id }) = reply.action else {
            panic!("marking step 1 done did not dispatch its check: {reply:?}");
        };
        assert!(reply.text.contains("has a check"), "{}", reply.text);
        execution_id
    }

    fn finish(&mut self, id: ExecutionId, result: Result<ExecOutput, String>) -> String {
        self.now = self.now + Span::from_millis(10);
        self.session
            .handle_execution_finished(self.now, id, result)
            .unwrap();
        self.session.check_reply(id).unwrap()
    }
}

// rule: SAFE-4
#[test]
fn marking_a_step_with_a_check_done_runs_the_check_and_keeps_the_step_running() {
    let mut plan = Plan::approved();
    let id = plan.mark_done();
    let execution = plan.session.execution(id).unwrap();
    assert_eq!(execution.kind, ExecutionKind::Check);
    assert_eq!(execution.command, "systemctl is-active nginx");
    assert_eq!(execution.step_seq, Some(1));
    assert_eq!(plan.step_status(1), StepStatus::Running);
}

// rule: SAFE-4
#[test]
fn a_passing_check_closes_the_step_done_and_the_plan_goes_on() {
    let mut plan = Plan::approved();
    let id = plan.mark_done();
    let reply = plan.finish(id, exited(0, "active\n"));
    assert!(reply.starts_with("Check passed: step 1 is done"), "{reply}");
    assert_eq!(plan.step_status(1), StepStatus::Done);
    let step = plan.session.current_steps().next().unwrap();
    assert!(step.check.as_ref().unwrap().passed());
    assert!(plan.session.pending_events().iter().any(|e| matches!(
        &e.event,
        DomainEvent::StepChecked { seq: 1, verdict: CheckVerdict::Passed, execution_id, .. }
            if *execution_id == id
    )));
    let next = plan.update(2, StepStatus::Running);
    assert_eq!(next.outcome, ToolCallOutcome::Ok, "{}", next.text);
}

// rule: SAFE-4
#[test]
fn a_failing_check_fails_its_step_with_the_output_and_tells_the_model() {
    let mut plan = Plan::approved();
    let id = plan.mark_done();
    let reply = plan.finish(id, exited(3, "inactive\n"));
    assert!(
        reply.starts_with("Check failed: step 1 is failed"),
        "{reply}"
    );
    assert!(reply.contains("stdout: inactive"), "{reply}");
    assert_eq!(plan.step_status(1), StepStatus::Failed);
    let step = plan.session.current_steps().next().unwrap();
    let note = step.note.as_deref().unwrap();
    assert!(note.contains("exited 3, expected exit 0"), "{note}");
    // PLAN-4: a failed step never becomes done.
    let again = plan.update(1, StepStatus::Done);
    assert_eq!(again.outcome, ToolCallOutcome::Refused, "{}", again.text);
    assert_eq!(again.action, None);
    // Nor is the task a success past it; partial is accepted.
    plan.session
        .handle_knowledge_use(plan.now, KnowledgeUse::WriteBack);
    let success = plan.tool(ToolInput::CompleteTask {
        outcome: Outcome::Success,
        summary: "restarted".to_owned(),
    });
    assert_eq!(
        success.outcome,
        ToolCallOutcome::Refused,
        "{}",
        success.text
    );
    let partial = plan.tool(ToolInput::CompleteTask {
        outcome: Outcome::Partial,
        summary: "nginx did not come back".to_owned(),
    });
    assert_eq!(partial.outcome, ToolCallOutcome::Ok, "{}", partial.text);
}

// rule: SAFE-4
#[test]
fn marking_the_step_done_twice_runs_its_check_once() {
    let mut plan = Plan::approved();
    let id = plan.mark_done();
    let again = plan.update(1, StepStatus::Done);
    assert_eq!(again.action, None, "{}", again.text);
    assert!(again.text.contains("already running"), "{}", again.text);
    let checks = plan
        .session
        .executions()
        .iter()
        .filter(|e| e.kind == ExecutionKind::Check)
        .count();
    assert_eq!(checks, 1);
    plan.finish(id, exited(0, "active"));
    assert_eq!(plan.step_status(1), StepStatus::Done);
}

// rule: SAFE-4
#[test]
fn completing_the_task_as_success_cannot_skip_a_check() {
    let mut plan = Plan::approved();
    plan.session
        .handle_knowledge_use(plan.now, KnowledgeUse::WriteBack);
    let reply = plan.tool(ToolInput::CompleteTask {
        outcome: Outcome::Success,
        summary: "restarted".to_owned(),
    });
    assert_eq!(reply.outcome, ToolCallOutcome::Refused, "{}", reply.text);
    assert!(reply.text.contains("step 1 has a check"), "{}", reply.text);
    assert!(!plan.session.status().is_terminal());
    // Once the check passed, success is accepted.
    let id = plan.mark_done();
    plan.finish(id, exited(0, "active"));
    let done = plan.tool(ToolInput::CompleteTask {
        outcome: Outcome::Success,
        summary: "restarted".to_owned(),
    });
    assert_eq!(done.outcome, ToolCallOutcome::Ok, "{}", done.text);
    assert_eq!(plan.session.status(), SessionStatus::Done);
}

// rule: SAFE-4
#[test]
fn a_plan_whose_check_changes_state_is_refused_at_proposal() {
    let now = Timestamp::from_millis(1_800_000_000_000);
    let mut session = Session::create(
        SessionId::from(uuid::Uuid::from_u128(5)),
        now,
        SessionConfig::spec_defaults(),
    );
    session.handle_tool(
        now,
        "c1",
        ToolInput::SetGoal {
            goal: "g".to_owned(),
        },
    );
    let reply = session.handle_tool(
        now,
        "c2",
        ToolInput::ProposePlan {
            steps: vec![step(
                "restart",
                "systemctl restart nginx",
                Some(check(
                    "systemctl restart nginx && systemctl is-active nginx",
                    None,
                )),
            )],
            revision: Revision::No,
        },
    );
    assert_eq!(reply.outcome, ToolCallOutcome::Refused, "{}", reply.text);
    assert!(reply.text.contains("step 1's check"), "{}", reply.text);
    assert_eq!(session.current_steps().count(), 0);
}

// rule: SAFE-4
#[test]
fn a_check_that_could_not_run_fails_its_step() {
    let mut plan = Plan::approved();
    let id = plan.mark_done();
    let reply = plan.finish(id, Err("ssh: connection refused".to_owned()));
    assert!(reply.contains("did not run to its end"), "{reply}");
    assert_eq!(plan.step_status(1), StepStatus::Failed);
}
