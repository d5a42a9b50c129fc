//! The turn loop's rules: malformed arguments, step limit, dangling calls, one turn at a
//! time, real errors, and resumes that retry and then end visibly.

use nomos_agent::AgentError;
use nomos_core::event::DomainEvent;
use nomos_core::record::ToolCallOutcome;
use nomos_core::resume::ResumeKind;
use nomos_core::{Role, SessionStatus};

use super::{world, world_with};

// rule: TURN-5, TURN-4
#[tokio::test]
async fn malformed_arguments_get_an_error_result_and_the_turn_goes_on() {
    let w = world(
        r#"
- tool_calls:
    - {name: run, arguments: '{"host": "local", "command": '}
    - {name: no_such_tool, arguments: {}}
- text: "Sorry, let me answer directly: all good."
  expect: {last_tool_result_contains: "unknown tool `no_such_tool`"}
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    let report = w.agent.send_message(id, "is all good?").await.unwrap();
    assert_eq!(report.error, None);
    let calls = w.calls(id).await;
    assert_eq!(calls.len(), 2, "each call persisted exactly once");
    assert_eq!(calls[0].outcome, ToolCallOutcome::Error);
    assert!(
        calls[0].result.starts_with("invalid arguments for run"),
        "{}",
        calls[0].result
    );
    assert_eq!(calls[0].arguments, r#"{"host": "local", "command": "#);
    assert!(
        calls[1].result.contains("available tools: set_goal"),
        "{}",
        calls[1].result
    );
}

// rule: TURN-6, SESSION-4
#[tokio::test]
async fn step_limit_ends_the_turn_with_a_summary_and_completes_a_trivial_session() {
    let w = world_with(
        r#"
- tool_calls:
    - {name: run, arguments: {host: local, command: "echo 1"}}
    - {name: run, arguments: {host: local, command: "echo 2"}}
- tool_calls:
    - {name: run, arguments: {host: local, command: "echo 3"}}
    - {name: run, arguments: {host: local, command: "echo 4"}}
"#,
        |config| config.step_limit = 3,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    let report = w.agent.send_message(id, "check everything").await.unwrap();
    assert_eq!(report.n_tool_calls, 3);
    let calls = w.calls(id).await;
    assert_eq!(
        calls.len(),
        4,
        "the call past the limit is answered too (TURN-7)"
    );
    assert_eq!(calls[3].outcome, ToolCallOutcome::Refused);
    let snapshot = w.snapshot(id).await;
    assert_eq!(snapshot.record.status, SessionStatus::Done);
    let summary = snapshot.record.summary.unwrap();
    assert!(
        summary.contains("stopped after 3 tool calls") || summary.contains("Stopped after 3"),
        "{summary}"
    );
    assert_eq!(w.model.remaining(), 0);
}

// rule: TURN-8
#[tokio::test]
async fn a_session_is_deleted_only_when_no_turn_holds_it_and_is_then_gone_from_the_cache() {
    let w = world(
        r#"
- tool_calls:
    - {name: run, arguments: {host: local, command: "sleep 1; echo slept"}}
- text: "done sleeping"
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    let running = w.agent.spawn_message(id, "sleep a bit").await.unwrap();
    let refused = w.agent.delete_session(id).await;
    assert!(
        matches!(refused, Err(AgentError::TurnInProgress(s)) if s == id),
        "{refused:?}"
    );
    running.await.unwrap();
    w.agent.delete_session(id).await.unwrap();
    assert!(
        nomos_core::ports::store::Store::load_session(w.store.as_ref(), id)
            .await
            .unwrap()
            .is_none()
    );
    // Nothing decides on what was cached of it: the next message finds no session.
    let again = w.agent.send_message(id, "are you there?").await;
    assert!(
        matches!(again, Err(AgentError::SessionNotFound(s)) if s == id),
        "{again:?}"
    );
    let twice = w.agent.delete_session(id).await;
    assert!(
        matches!(twice, Err(AgentError::SessionNotFound(_))),
        "{twice:?}"
    );
}

// rule: TURN-8
#[tokio::test]
async fn a_second_message_while_a_turn_runs_is_refused() {
    let w = world(
        r#"
- tool_calls:
    - {name: run, arguments: {host: local, command: "sleep 1; echo slept"}}
- text: "done sleeping"
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    let running = w.agent.spawn_message(id, "sleep a bit").await.unwrap();
    let second = w.agent.send_message(id, "are you there?").await;
    assert!(
        matches!(second, Err(AgentError::TurnInProgress(s)) if s == id),
        "{second:?}"
    );
    let report = running.await.unwrap();
    assert_eq!(report.final_text.as_deref(), Some("done sleeping"));
    let operator_messages = w
        .messages(id)
        .await
        .into_iter()
        .filter(|m| m.role == Role::Operator)
        .count();
    assert_eq!(
        operator_messages, 1,
        "the refused message was not interleaved"
    );
}

// rule: TURN-2, TURN-1
#[tokio::test]
async fn model_failure_reports_the_http_status_and_ends_with_one_done() {
    let w = world(
        r#"
- error: {status: 401, message: "invalid api key"}
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    let report = w.agent.send_message(id, "hello").await.unwrap();
    let error = report.error.unwrap();
    assert!(
        error.contains("HTTP 401") && error.contains("invalid api key"),
        "{error}"
    );
    assert!(!error.contains("connection"), "{error}");
    let dones = w.dones(id).await;
    assert_eq!(dones.len(), 1);
}

// rule: TURN-7
#[tokio::test]
async fn dangling_tool_call_is_closed_as_interrupted_before_the_next_request() {
    let w = world(
        r#"
- text: "checking"
  tool_calls:
    - {name: run, arguments: {host: local, command: "echo hi"}}
- text: "ok"
  expect: {last_tool_result_contains: "hi"}
- text: "back"
  expect: {last_user_contains: "again"}
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "first").await.unwrap();
    // Simulate a crash that lost a call's result: an assistant message whose call never got
    // a record, written straight through the core and the store.
    let snapshot = w.snapshot(id).await;
    let mut session = nomos_core::session::Session::from_snapshot(
        snapshot,
        nomos_core::session::SessionConfig::spec_defaults(),
    );
    session.append_assistant_message(
        w.agent.now(),
        "",
        vec![nomos_core::record::ToolCallRequest {
            call_id: "lost_1".into(),
            name: "run".into(),
            arguments: "{}".into(),
        }],
    );
    nomos_core::ports::store::Store::commit(w.store.as_ref(), session.take_commit())
        .await
        .unwrap();
    w.agent.send_message(id, "again").await.unwrap();
    let lost = w
        .calls(id)
        .await
        .into_iter()
        .find(|c| c.call_id == "lost_1")
        .unwrap();
    assert_eq!(lost.outcome, ToolCallOutcome::Interrupted);
}

// rule: RESUME-2, RESUME-3
#[tokio::test]
async fn resume_retries_three_times_with_escalating_notes_then_leaves_a_terminal_note() {
    let w = world_with(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "check"}}
    - {name: propose_plan, arguments: {steps: [{title: "a"}]}}
- text: "plan ready"
- error: {status: 503, message: "overloaded"}
- error: {status: 503, message: "overloaded"}
- error: {status: 503, message: "still overloaded"}
"#,
        |config| config.empty_reply_retries = 0,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "check the thing").await.unwrap();
    let report = w.agent.resume(id, ResumeKind::Manual).await.unwrap();
    let error = report.error.unwrap();
    assert!(error.contains("still overloaded"), "{error}");
    let notes: Vec<String> = w
        .messages(id)
        .await
        .into_iter()
        .filter(|m| m.role == Role::Note)
        .map(|m| m.content)
        .collect();
    assert_eq!(notes.len(), 4, "{notes:#?}");
    assert!(
        notes[1].contains("previous reply was empty"),
        "{}",
        notes[1]
    );
    assert!(notes[2].contains("do not reply empty"), "{}", notes[2]);
    assert!(
        notes[3].contains("still overloaded") && notes[3].contains("still open"),
        "{}",
        notes[3]
    );
    // RESUME-1: every note quotes the operator's last message and the plan in flight.
    assert!(
        notes[..3].iter().all(|n| n.contains("check the thing")),
        "{notes:#?}"
    );
    assert!(notes[0].contains("propose_plan"), "{}", notes[0]);
    // The session is left resumable, with one done for the whole resume.
    assert!(!w.snapshot(id).await.record.status.is_terminal());
    let events = w.events(id).await;
    let dones = events
        .iter()
        .filter(|e| matches!(e, DomainEvent::TurnDone { .. }))
        .count();
    assert_eq!(dones, 2);
}

// rule: TURN-8, TURN-1
// Two worker threads: the listener runs while the turn's task is still finishing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_is_free_the_moment_turn_done_is_heard() {
    let w = world(
        r#"
- text: "first answer"
- text: "second answer"
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    let mut events = w.agent.bus().subscribe();
    let first = w.agent.spawn_message(id, "first").await.unwrap();
    loop {
        if let nomos_agent::LiveEvent::Committed(record) = events.recv().await.unwrap()
            && matches!(record.event, DomainEvent::TurnDone { .. })
        {
            break;
        }
    }
    let second = w.agent.send_message(id, "second").await;
    assert!(second.is_ok(), "{second:?}");
    first.await.unwrap();
}
