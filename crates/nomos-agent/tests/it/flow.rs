//! The seed scenarios, end to end through the runtime.

use nomos_core::event::DomainEvent;
use nomos_core::record::ToolCallOutcome;
use nomos_core::{CommandClass, Decision, ExecutionStatus, SessionStatus, StepStatus};

use super::world;

// rule: GATE-1, GATE-6, SESSION-2
#[tokio::test]
async fn whatsapp_bridge_read_only_steps_run_at_once_with_one_plan_approval() {
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "fix the whatsapp bridge"}}
    - {name: run, arguments: {host: local, command: "echo bridge logs"}}
    - {name: propose_plan, arguments: {steps: [{title: "read compose logs"}, {title: "restart the bridge", commands: [{host: local, command: "mkdir -p /tmp/nomos-agent-test"}]}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan: read logs, restart, write back. Approve?"
- tool_calls:
    - {name: update_plan_step, arguments: {seq: 1, status: running}}
    - {name: run, arguments: {host: local, command: "echo ps output"}}
    - {name: update_plan_step, arguments: {seq: 1, status: done}}
    - {name: update_plan_step, arguments: {seq: 2, status: running}}
    - {name: run, arguments: {host: local, command: "mkdir -p /tmp/nomos-agent-test"}}
    - {name: update_plan_step, arguments: {seq: 2, status: done}}
    - {name: update_plan_step, arguments: {seq: 3, status: running}}
    - {name: update_entity_attributes, arguments: {slug: "lxc:bridge", attributes: {state: running}}}
    - {name: update_plan_step, arguments: {seq: 3, status: done}}
    - {name: complete_task, arguments: {outcome: success, summary: "bridge restarted"}}
  expect: {last_user_contains: "proceed"}
- text: "Done: the bridge is back."
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    let first = w
        .agent
        .send_message(id, "the whatsapp bridge is down")
        .await
        .unwrap();
    assert_eq!(first.error, None);
    // The read-only command ran before any plan, without an approval card.
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.executions.len(), 1);
    assert_eq!(snapshot.executions[0].status, ExecutionStatus::Completed);
    assert_eq!(snapshot.record.status, SessionStatus::Planning);

    let second = w.agent.send_message(id, "proceed").await.unwrap();
    assert_eq!(second.error, None, "{second:?}");
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.record.status, SessionStatus::Done);
    // rule: GATE-6 — one plan-level approval and no approval card at all.
    assert!(snapshot.approvals.is_empty());
    let classes: Vec<(CommandClass, ExecutionStatus)> = snapshot
        .executions
        .iter()
        .map(|e| (e.class, e.status))
        .collect();
    assert_eq!(
        classes,
        [
            (CommandClass::ReadOnly, ExecutionStatus::Completed),
            (CommandClass::ReadOnly, ExecutionStatus::Completed),
            (CommandClass::ConfigMutation, ExecutionStatus::Completed),
        ]
    );
    assert!(snapshot.steps.iter().all(|s| s.status == StepStatus::Done));
    assert_eq!(w.model.remaining(), 0);
    assert_eq!(w.dones(id).await, [None, None]);
}

// rule: PLAN-3, TURN-1, TURN-2, TURN-3, RESUME-1
#[tokio::test]
async fn proceed_after_an_empty_reply_advances_the_plan_without_re_proposing() {
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "update the nas"}}
    - {name: propose_plan, arguments: {steps: [{title: "check versions"}, {title: "list containers"}]}}
- text: "Here is the plan."
- tool_calls:
    - {name: update_plan_step, arguments: {seq: 1, status: running}}
    - {name: run, arguments: {host: local, command: "uname -r"}}
    - {name: update_plan_step, arguments: {seq: 1, status: done}}
- error: empty
- error: empty
- error: empty
- tool_calls:
    - {name: propose_plan, arguments: {steps: [{title: "check versions"}, {title: "list containers"}]}}
  expect: {last_user_contains: "proceed with the rest"}
- tool_calls:
    - {name: update_plan_step, arguments: {seq: 2, status: running}}
  expect: {last_tool_result_contains: "plan already in flight"}
- text: "Continuing with step 2."
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent
        .send_message(id, "update the nas please")
        .await
        .unwrap();
    let failed = w.agent.send_message(id, "proceed").await.unwrap();
    // TURN-2: the real cause, not a lost connection.
    let error = failed.error.clone().unwrap();
    assert!(error.contains("empty reply"), "{error}");
    let events = w.events(id).await;
    let last = events.last().unwrap();
    assert!(
        matches!(last, DomainEvent::TurnDone { error: Some(_), .. }),
        "{last:?}"
    );
    // TURN-3: no empty bubble was persisted.
    assert!(
        w.messages(id)
            .await
            .iter()
            .all(|m| !m.content.trim().is_empty() || !m.tool_calls.is_empty())
    );

    let third = w
        .agent
        .send_message(id, "proceed with the rest")
        .await
        .unwrap();
    assert_eq!(third.error, None);
    let proposals = w.calls_named(id, "propose_plan").await;
    assert_eq!(proposals.len(), 2);
    assert_eq!(proposals[1].outcome, ToolCallOutcome::Refused);
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.record.plan_generation, 1);
    let step2 = snapshot.steps.iter().find(|s| s.seq == 2).unwrap();
    assert_eq!(step2.status, StepStatus::Running);
    // TURN-1: one done per turn, the failed one flagged.
    let dones = w.dones(id).await;
    assert_eq!(dones.len(), 3);
    assert!(dones[1].is_some() && dones[0].is_none() && dones[2].is_none());
}

// rule: PLAN-3, PLAN-4
#[tokio::test]
async fn replan_then_update_step_one_hits_generation_two() {
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "move the volume"}}
    - {name: propose_plan, arguments: {steps: [{title: "a"}, {title: "b"}]}}
- text: "plan ready"
- tool_calls:
    - {name: update_plan_step, arguments: {seq: 1, status: running}}
    - {name: propose_plan, arguments: {steps: [{title: "x"}, {title: "y"}], revise: true, reason: "the operator wants another disk"}}
    - {name: update_plan_step, arguments: {seq: 1, status: running}}
- text: "revised"
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "move it").await.unwrap();
    w.agent
        .send_message(id, "go, but use the other disk")
        .await
        .unwrap();
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.record.plan_generation, 2);
    let status = |generation: u32, seq: u32| {
        snapshot
            .steps
            .iter()
            .find(|s| s.generation == generation && s.seq == seq)
            .unwrap()
            .status
    };
    assert_eq!(status(2, 1), StepStatus::Running);
    // rule: SESSION-5 — the revision closed the step it left running.
    assert_eq!(status(1, 1), StepStatus::Failed);
    assert_eq!(status(1, 2), StepStatus::Replaced);
}

// rule: SESSION-3
#[tokio::test]
async fn complete_task_twice_is_refused_the_second_time() {
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "say hi"}}
    - {name: complete_task, arguments: {outcome: success, summary: "said hi"}}
    - {name: complete_task, arguments: {outcome: success, summary: "said hi again"}}
- text: "hi"
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "hi").await.unwrap();
    let calls = w.calls_named(id, "complete_task").await;
    assert_eq!(calls[0].outcome, ToolCallOutcome::Ok);
    assert_eq!(calls[1].outcome, ToolCallOutcome::Refused);
    assert!(
        calls[1].result.contains("already complete (status=done)"),
        "{}",
        calls[1].result
    );
    assert_eq!(
        w.snapshot(id).await.record.summary.as_deref(),
        Some("said hi")
    );
}

// rule: WRITEBACK-2, WRITEBACK-1
#[tokio::test]
async fn discovery_without_writeback_is_refused_then_accepted() {
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "audit the host"}}
    - {name: run, arguments: {host: local, command: "uname -a"}}
    - {name: complete_task, arguments: {outcome: success, summary: "audited"}}
- tool_calls:
    - {name: update_entity_attributes, arguments: {slug: "local", attributes: {kernel: "6.1"}}}
    - {name: complete_task, arguments: {outcome: success, summary: "audited"}}
  expect: {last_tool_result_contains: "did not call update_entity_attributes"}
- text: "audited and written back"
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "audit the host").await.unwrap();
    let calls = w.calls_named(id, "complete_task").await;
    assert_eq!(calls[0].outcome, ToolCallOutcome::Refused);
    assert_eq!(calls[1].outcome, ToolCallOutcome::Ok);
    assert_eq!(w.snapshot(id).await.record.status, SessionStatus::Done);
    let entity = nomos_core::ports::store::Store::entity(w.store.as_ref(), "local")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(entity.attributes["kernel"], "6.1");
}

// rule: SESSION-4
#[tokio::test]
async fn trivial_question_completes_without_a_goal() {
    let w = world(
        r#"
- tool_calls:
    - {name: run, arguments: {host: local, command: "echo up 3 days"}}
- text: "The host has been up for 3 days."
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent
        .send_message(id, "how long has the host been up?")
        .await
        .unwrap();
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.record.status, SessionStatus::Done);
    assert_eq!(
        snapshot.record.summary.as_deref(),
        Some("The host has been up for 3 days.")
    );
    assert_eq!(
        w.model.remaining(),
        0,
        "no model call is spent on the completion"
    );
}

// rule: GATE-5, GATE-7, EXEC-4, RESUME-1
#[tokio::test]
async fn destructive_command_in_the_window_waits_for_its_own_approval_then_continues() {
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "clean the scratch dir"}}
    - {name: propose_plan, arguments: {steps: [{title: "delete scratch"}, {title: "write back"}]}}
- text: "plan ready"
- tool_calls:
    - {name: update_plan_step, arguments: {seq: 1, status: running}}
    - {name: run, arguments: {host: local, command: "rm -rf ./scratch-dir-that-does-not-exist"}}
- text: "Waiting for your approval of the delete."
  expect: {last_tool_result_contains: "Approval requested"}
- tool_calls:
    - {name: update_plan_step, arguments: {seq: 1, status: done}}
  expect: {last_user_contains: "approved"}
- text: "Deleted."
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "clean it").await.unwrap();
    let turn = w.agent.send_message(id, "yes").await.unwrap();
    assert_eq!(turn.approvals_requested.len(), 1);
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.executions.len(), 1);
    assert_eq!(
        snapshot.executions[0].status,
        ExecutionStatus::PendingApproval
    );
    assert_eq!(snapshot.executions[0].class, CommandClass::Destructive);

    let (decision, continuation) = w
        .agent
        .decide(
            turn.approvals_requested[0],
            Decision::Approve,
            Some("alice"),
        )
        .await
        .unwrap();
    assert!(decision.dispatched);
    assert_eq!(continuation.error, None, "{continuation:?}");
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.executions[0].status, ExecutionStatus::Completed);
    assert_eq!(snapshot.approvals[0].decided_by.as_deref(), Some("alice"));
    // A second decision on the same approval is refused.
    let again = w
        .agent
        .decide(turn.approvals_requested[0], Decision::Deny, None)
        .await;
    assert!(again.is_err());
    // EXEC-4: the continuation note told the model what ran.
    let notes: Vec<String> = w
        .messages(id)
        .await
        .into_iter()
        .filter(|m| m.role == nomos_core::Role::Note)
        .map(|m| m.content)
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("rm -rf ./scratch-dir-that-does-not-exist")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("clean it") || n.contains("yes")),
        "RESUME-1 quotes the operator: {notes:?}"
    );
}

// rule: EXEC-4, GATE-7
#[tokio::test]
async fn denied_execution_never_runs_and_the_model_is_told() {
    let marker = std::env::temp_dir().join(format!("nomos-deny-{}", uuid::Uuid::new_v4()));
    std::fs::write(&marker, "keep").unwrap();
    let script = format!(
        r#"
- tool_calls:
    - {{name: set_goal, arguments: {{goal: "remove a file"}}}}
    - {{name: propose_plan, arguments: {{steps: [{{title: "remove"}}, {{title: "write back"}}]}}}}
- text: "plan ready"
- tool_calls:
    - {{name: run, arguments: {{host: local, command: "rm -f {path}"}}}}
- text: "Waiting."
- text: "Understood, I will not delete it."
  expect: {{last_user_contains: "denied"}}
"#,
        path = marker.display()
    );
    let w = world(&script).await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "remove it").await.unwrap();
    let turn = w.agent.send_message(id, "ok").await.unwrap();
    let (decision, continuation) = w
        .agent
        .decide(turn.approvals_requested[0], Decision::Deny, None)
        .await
        .unwrap();
    assert!(!decision.dispatched);
    assert_eq!(continuation.error, None);
    assert!(marker.exists(), "a denied command must not run");
    assert_eq!(
        w.snapshot(id).await.executions[0].status,
        ExecutionStatus::Cancelled
    );
    std::fs::remove_file(&marker).unwrap();
}

// rule: GATE-7
#[tokio::test]
async fn without_an_operator_a_destructive_request_is_denied_at_once_and_the_turn_goes_on() {
    let marker = std::env::temp_dir().join(format!("nomos-unattended-{}", uuid::Uuid::new_v4()));
    std::fs::write(&marker, "keep").unwrap();
    let script = format!(
        r#"
- tool_calls:
    - {{name: set_goal, arguments: {{goal: "remove a file"}}}}
    - {{name: propose_plan, arguments: {{steps: [{{title: "remove"}}, {{title: "write back"}}]}}}}
- text: "plan ready"
- tool_calls:
    - {{name: run, arguments: {{host: local, command: "rm -f {path}"}}}}
- text: "Nobody can approve the delete; I left the file alone."
  expect: {{last_tool_result_contains: "nobody can approve it here"}}
"#,
        path = marker.display()
    );
    let w = super::world_with(&script, |config| {
        config.approvals = nomos_agent::ApprovalPolicy::RefuseWithoutOperator;
    })
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "remove it").await.unwrap();
    let turn = w.agent.send_message(id, "ok").await.unwrap();
    assert_eq!(turn.error, None, "{turn:?}");
    assert!(
        turn.approvals_requested.is_empty(),
        "nothing waits: {turn:?}"
    );
    assert!(marker.exists(), "a refused command must not run");
    let snapshot = w.snapshot(id).await;
    assert_eq!(
        snapshot.approvals.len(),
        1,
        "the request is still persisted"
    );
    assert_eq!(
        snapshot.approvals[0].status,
        nomos_core::ApprovalStatus::Denied
    );
    assert_eq!(
        snapshot.approvals[0].decided_by.as_deref(),
        Some(nomos_agent::NO_OPERATOR)
    );
    assert_eq!(snapshot.executions[0].status, ExecutionStatus::Cancelled);
    let run = w.calls_named(id, "run").await;
    assert_eq!(run[0].outcome, ToolCallOutcome::Refused);
    let events = w.events(id).await;
    let requested = events
        .iter()
        .position(|e| matches!(e, DomainEvent::ApprovalRequested { .. }));
    let resolved = events
        .iter()
        .position(|e| matches!(e, DomainEvent::ApprovalResolved { .. }));
    assert!(requested < resolved, "requested, then denied: {events:?}");
    assert_eq!(w.model.remaining(), 0);
    std::fs::remove_file(&marker).unwrap();
}
