//! Background work with virtual time: idle nudges, start-up reconcile, approval expiry.

use std::sync::Arc;

use nomos_core::event::{DomainEvent, TurnCause};
use nomos_core::ports::store::Store;
use nomos_core::session::{Action, Session, SessionConfig, ToolInput};
use nomos_core::{
    Classification, CommandClass, ExecutionStatus, Role, SessionId, SessionStatus, Span,
};
use nomos_llm::ScriptedModel;

use super::{agent_over, world};

// rule: SWEEP-1, SWEEP-2
#[tokio::test]
async fn idle_goal_session_is_nudged_then_closed_partial() {
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "upgrade the nas"}}
- text: "Starting on it."
- text: "Still on it."
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "upgrade the nas").await.unwrap();
    w.clock.advance(Span::from_mins(10));
    assert_eq!(w.agent.sweep_once().await.unwrap().sessions_nudged, 0);
    w.clock.advance(Span::from_mins(6));
    assert_eq!(w.agent.sweep_once().await.unwrap().sessions_nudged, 1);
    let nudges: Vec<String> = w
        .messages(id)
        .await
        .into_iter()
        .filter(|m| m.role == Role::Note)
        .map(|m| m.content)
        .collect();
    assert_eq!(nudges.len(), 1);
    assert!(nudges[0].contains("complete_task"), "{}", nudges[0]);
    // rule: RESUME-1 — the nudge quotes the operator's last message.
    assert!(nudges[0].contains("upgrade the nas"), "{}", nudges[0]);
    // The nudge resumed the model: a turn whose cause is `nudge`, which only talked.
    let events = w.events(id).await;
    assert!(
        events.contains(&DomainEvent::TurnStarted {
            cause: TurnCause::Nudge
        }),
        "{events:?}"
    );
    assert_eq!(w.model.remaining(), 0);
    w.clock.advance(Span::from_mins(5));
    let report = w.agent.sweep_once().await.unwrap();
    assert_eq!(report.sessions_closed, 1);
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.record.status, SessionStatus::Partial);
    let summary = snapshot.record.summary.unwrap();
    assert!(
        summary.contains("closed after an unanswered nudge"),
        "{summary}"
    );
}

// rule: SWEEP-2
#[tokio::test]
async fn a_nudge_turn_that_works_keeps_the_session_open() {
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "check the nas"}}
- text: "Starting on it."
- tool_calls:
    - {name: run, arguments: {host: local, command: "uptime"}}
- text: "Looked again; still checking."
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "check the nas").await.unwrap();
    w.clock.advance(Span::from_mins(16));
    assert_eq!(w.agent.sweep_once().await.unwrap().sessions_nudged, 1);
    w.clock.advance(Span::from_mins(5));
    let report = w.agent.sweep_once().await.unwrap();
    // The nudge turn ran a tool: that is activity, so the nudge was answered.
    assert_eq!((report.sessions_closed, report.sessions_nudged), (0, 0));
    assert_eq!(w.snapshot(id).await.record.status, SessionStatus::Planning);
}

// rule: SWEEP-2
// rule: SWEEP-4
#[tokio::test]
async fn a_failed_turn_without_a_goal_is_never_completed_as_success() {
    let w = world(
        r#"
- text: "Checking."
  tool_calls:
    - {name: run, arguments: {host: local, command: "uptime"}}
- error: {status: 500, message: "upstream exploded"}
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    let report = w.agent.send_message(id, "how is the box?").await.unwrap();
    assert!(report.error.is_some(), "{report:?}");
    assert_eq!(w.snapshot(id).await.record.status, SessionStatus::Active);
    for _ in 0..4 {
        w.clock.advance(Span::from_mins(20));
        let report = w.agent.sweep_once().await.unwrap();
        assert_eq!(report.sessions_completed, 0);
    }
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.record.status, SessionStatus::Active);
    assert_eq!(snapshot.record.summary, None);
}

// rule: SWEEP-3
#[tokio::test]
async fn sessions_awaiting_input_are_left_alone() {
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "fix dns"}}
    - {name: ask_operator, arguments: {question: "which resolver?"}}
- text: "Which resolver should I use?"
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "fix dns").await.unwrap();
    for _ in 0..4 {
        w.clock.advance(Span::from_mins(20));
        let report = w.agent.sweep_once().await.unwrap();
        assert_eq!((report.sessions_nudged, report.sessions_closed), (0, 0));
    }
    assert_eq!(
        w.snapshot(id).await.record.status,
        SessionStatus::AwaitingInput
    );
}

// rule: EXEC-6, EXEC-3
#[tokio::test]
async fn restart_with_a_running_execution_reconciles_it_without_re_running() {
    let w = world("[]").await;
    let marker = w.dir.path().join("ran-twice");
    // A previous process dispatched this command and died: the row says `running`.
    let id = SessionId(uuid::Uuid::new_v4());
    let now = w.agent.now();
    let mut session = Session::create(id, now, SessionConfig::spec_defaults());
    let reply = session.handle_tool(
        now,
        "c1",
        ToolInput::Run {
            host: "local".into(),
            command: format!("touch {}", marker.display()),
            classification: Classification::new(CommandClass::ReadOnly, "test"),
            preview: None,
        },
    );
    let Some(Action::Dispatch { execution_id }) = reply.action else {
        panic!("{reply:?}")
    };
    // The core marked it running with the dispatch (EXEC-6).
    assert_eq!(
        session.execution(execution_id).unwrap().status,
        ExecutionStatus::Running
    );
    w.store.commit(session.take_commit()).await.unwrap();

    // A new process over the same database.
    let model = Arc::new(ScriptedModel::from_yaml_str("[]").unwrap());
    let store = w.store.clone();
    let restarted = agent_over(store, model, tempfile::tempdir().unwrap(), |_| {});
    let report = restarted.agent.reconcile_startup().await.unwrap();
    assert_eq!(report.executions_failed, 1);
    let execution = restarted
        .store
        .execution(execution_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(execution.status, ExecutionStatus::Failed);
    assert!(execution.error.unwrap().contains("interrupted"));
    assert!(!marker.exists(), "the command must not run again");
    let notes = restarted
        .messages(id)
        .await
        .into_iter()
        .filter(|m| m.role == Role::Note)
        .count();
    assert_eq!(notes, 1, "the session is told");
    // Reconciling again changes nothing.
    assert_eq!(
        restarted
            .agent
            .reconcile_startup()
            .await
            .unwrap()
            .executions_failed,
        0
    );
}

// rule: GATE-7
#[tokio::test]
async fn an_approval_that_expires_is_a_denial() {
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "prune"}}
    - {name: propose_plan, arguments: {steps: [{title: "prune images"}, {title: "write back"}]}}
- text: "plan ready"
- tool_calls:
    - {name: run, arguments: {host: local, command: "docker system prune -af"}}
- text: "Waiting for approval."
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "prune docker").await.unwrap();
    let turn = w.agent.send_message(id, "go").await.unwrap();
    assert_eq!(turn.approvals_requested.len(), 1);
    w.clock.advance(Span::from_mins(31));
    let report = w.agent.sweep_once().await.unwrap();
    assert_eq!(report.approvals_expired, 1);
    let snapshot = w.snapshot(id).await;
    assert_eq!(
        snapshot.approvals[0].status,
        nomos_core::ApprovalStatus::Expired
    );
    assert_eq!(snapshot.executions[0].status, ExecutionStatus::Cancelled);
    let late = w
        .agent
        .decide(
            turn.approvals_requested[0],
            nomos_core::Decision::Approve,
            None,
        )
        .await;
    assert!(late.is_err(), "{late:?}");
}

// rule: GATE-7
#[tokio::test]
async fn an_approval_expires_at_its_deadline_through_the_session_timer_not_the_sweep() {
    let w = super::world_with(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "prune"}}
    - {name: propose_plan, arguments: {steps: [{title: "prune images"}, {title: "write back"}]}}
- text: "plan ready"
- tool_calls:
    - {name: run, arguments: {host: local, command: "docker system prune -af"}}
- text: "Waiting for approval."
"#,
        |config| {
            config.session.approval_ttl = Span::from_millis(200);
            // No sweep runs during the test: only the timer can expire the request.
            config.sweep_interval = Span::from_mins(24 * 60);
        },
    )
    .await;
    let workers = w.agent.start_workers();
    let mut bus = w.agent.bus().subscribe();
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "prune docker").await.unwrap();
    let turn = w.agent.send_message(id, "go").await.unwrap();
    assert_eq!(turn.approvals_requested.len(), 1);
    // The deadline passes on the agent's clock; the timer armed by the request's commit
    // fires and the core expires it.
    w.clock.advance(Span::from_millis(300));
    let expired = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            if let Ok(nomos_agent::LiveEvent::Committed(record)) = bus.recv().await
                && let DomainEvent::ApprovalResolved { status, .. } = record.event
            {
                return status;
            }
        }
    })
    .await
    .expect("the timer expired the request");
    assert_eq!(expired, nomos_core::ApprovalStatus::Expired);
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.executions[0].status, ExecutionStatus::Cancelled);
    workers.shutdown().await;
}

// rule: EXEC-3
#[tokio::test]
async fn execution_running_past_the_timeout_is_failed_by_the_sweep() {
    let w = world("[]").await;
    let id = SessionId(uuid::Uuid::new_v4());
    let now = w.agent.now();
    let mut session = Session::create(id, now, SessionConfig::spec_defaults());
    let reply = session.handle_tool(
        now,
        "c1",
        ToolInput::Run {
            host: "local".into(),
            command: "sleep 1000".into(),
            classification: Classification::new(CommandClass::ReadOnly, "test"),
            preview: None,
        },
    );
    let Some(Action::Dispatch { execution_id }) = reply.action else {
        panic!("{reply:?}")
    };
    // The core marked it running with the dispatch (EXEC-6).
    assert_eq!(
        session.execution(execution_id).unwrap().status,
        ExecutionStatus::Running
    );
    w.store.commit(session.take_commit()).await.unwrap();
    w.clock.advance(Span::from_mins(9));
    assert_eq!(w.agent.sweep_once().await.unwrap().executions_failed, 0);
    w.clock.advance(Span::from_mins(2));
    assert_eq!(w.agent.sweep_once().await.unwrap().executions_failed, 1);
    let execution = w.store.execution(execution_id).await.unwrap().unwrap();
    assert_eq!(execution.error.as_deref(), Some("execution timed out"));
}
