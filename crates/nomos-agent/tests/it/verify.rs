//! SAFE-4 end to end: a plan step's check runs on the real local shell when the model marks
//! the step done; a passing check lets the plan go on, a failing one fails the step with
//! its output and the model reads the verdict.

use nomos_core::check::CheckVerdict;
use nomos_core::event::DomainEvent;
use nomos_core::record::{ExecutionKind, ToolCallOutcome};
use nomos_core::{ExecutionStatus, SessionStatus, StepStatus};

use super::world;

/// A script whose step 1 writes `content` to `path` and checks it holds `expect`; the model
/// then completes with `outcome`.
fn script(path: &str, content: &str, expect: &str, outcome: &str) -> String {
    format!(
        r#"
- tool_calls:
    - {{name: set_goal, arguments: {{goal: "write the marker"}}}}
    - {{name: propose_plan, arguments: {{steps: [{{title: "write the marker", commands: [{{host: local, command: "echo {content} > {path}"}}], check: {{host: local, command: "cat {path}", expect_output: "{expect}"}}}}, {{title: "write back: update_entity_attributes"}}]}}}}
- text: "Plan ready. Approve?"
- tool_calls:
    - {{name: update_plan_step, arguments: {{seq: 1, status: running}}}}
    - {{name: run, arguments: {{host: local, command: "echo {content} > {path}"}}}}
    - {{name: update_plan_step, arguments: {{seq: 1, status: done}}}}
    - {{name: update_plan_step, arguments: {{seq: 1, status: done}}}}
    - {{name: update_entity_attributes, arguments: {{slug: "host:local", attributes: {{marker: written}}}}}}
    - {{name: complete_task, arguments: {{outcome: {outcome}, summary: "marker"}}}}
  expect: {{last_user_contains: "approved"}}
- text: "Finished."
"#
    )
}

// rule: SAFE-4
#[tokio::test]
async fn a_passing_check_closes_its_step_done_and_the_plan_completes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("marker").display().to_string();
    let w = world(&script(&path, "ready", "ready", "success")).await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "write the marker").await.unwrap();
    let turn = w.agent.send_message(id, "approved").await.unwrap();
    assert_eq!(turn.error, None, "{turn:?}");
    let snapshot = w.snapshot(id).await;
    let check = snapshot
        .executions
        .iter()
        .find(|e| e.kind == ExecutionKind::Check)
        .expect("the check ran");
    assert_eq!(check.command, format!("cat {path}"));
    assert_eq!(check.status, ExecutionStatus::Completed);
    assert_eq!(
        snapshot
            .executions
            .iter()
            .filter(|e| e.kind == ExecutionKind::Check)
            .count(),
        1,
        "marking the step done twice ran the check once"
    );
    let step = snapshot.steps.iter().find(|s| s.seq == 1).unwrap();
    assert_eq!(step.status, StepStatus::Done);
    assert!(step.check.as_ref().unwrap().passed(), "{step:?}");
    let calls = w.calls_named(id, "update_plan_step").await;
    assert!(
        calls
            .iter()
            .any(|c| c.result.starts_with("Check passed: step 1 is done")),
        "{calls:?}"
    );
    assert_eq!(snapshot.record.status, SessionStatus::Done);
}

// rule: SAFE-4
#[tokio::test]
async fn a_failing_check_fails_its_step_and_the_model_cannot_complete_as_success() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("marker").display().to_string();
    let w = world(&script(&path, "broken", "ready", "success")).await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "write the marker").await.unwrap();
    w.agent.send_message(id, "approved").await.unwrap();
    let snapshot = w.snapshot(id).await;
    let step = snapshot.steps.iter().find(|s| s.seq == 1).unwrap();
    assert_eq!(step.status, StepStatus::Failed);
    let note = step.note.as_deref().unwrap();
    assert!(note.contains("does not contain \"ready\""), "{note}");
    assert!(note.contains("stdout: broken"), "{note}");
    let calls = w.calls_named(id, "update_plan_step").await;
    let verdict = calls
        .iter()
        .find(|c| c.result.starts_with("Check failed"))
        .expect("the model was told");
    assert!(
        verdict.result.contains("stdout:\nbroken"),
        "{}",
        verdict.result
    );
    // The second `done` on a failed step is refused (PLAN-4).
    assert!(
        calls
            .iter()
            .any(|c| c.outcome == ToolCallOutcome::Refused && c.arguments.contains("done")),
        "{calls:?}"
    );
    // complete_task(success) closes no step as done past a failed check.
    let events = w.events(id).await;
    assert!(events.iter().any(|e| matches!(
        e,
        DomainEvent::StepChecked {
            seq: 1,
            verdict: CheckVerdict::Failed { .. },
            ..
        }
    )));
    assert_ne!(snapshot.record.status, SessionStatus::Done);
    let completes = w.calls_named(id, "complete_task").await;
    assert_eq!(
        completes[0].outcome,
        ToolCallOutcome::Refused,
        "{completes:?}"
    );
    assert!(
        completes[0]
            .result
            .contains("step 1 has a check that has not passed"),
        "{}",
        completes[0].result
    );
}
