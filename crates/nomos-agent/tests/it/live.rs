//! EXEC-10: a running command's output reaches bus subscribers while it runs, in chunks,
//! and the stored output is the whole capture.

use nomos_agent::LiveEvent;
use nomos_core::ExecutionStatus;
use nomos_core::event::DomainEvent;
use nomos_core::ports::exec::OutputStream;

use super::world;

const SCRIPT: &str = r#"
- tool_calls:
    - {name: run, arguments: {host: local, command: "for i in 1 2 3; do echo line$i; sleep 0.4; done"}}
- text: "Three lines."
"#;

// rule: EXEC-10
#[tokio::test]
async fn a_commands_output_streams_in_chunks_before_it_ends() {
    let w = world(SCRIPT).await;
    let id = w.agent.create_session().await.unwrap();
    let mut events = w.agent.bus().subscribe();
    let turn = w
        .agent
        .spawn_message(id, "print three lines")
        .await
        .unwrap();
    let mut live: Vec<String> = Vec::new();
    let mut live_when_completed = None;
    loop {
        match events.recv().await.unwrap() {
            LiveEvent::ExecutionOutput {
                session_id,
                stream,
                text,
                ..
            } if session_id == id => {
                assert_eq!(stream, OutputStream::Stdout);
                live.push(text);
            }
            LiveEvent::Committed(record) if record.session_id == id => match record.event {
                DomainEvent::ExecutionStatusChanged {
                    status: ExecutionStatus::Completed,
                    ..
                } => live_when_completed = Some(live.clone()),
                DomainEvent::TurnDone { .. } => break,
                _ => {}
            },
            _ => {}
        }
    }
    turn.await.unwrap();
    let seen = live_when_completed.expect("the execution completed");
    assert!(
        seen.len() >= 2,
        "the output came in one piece, not while it ran: {seen:?}"
    );
    assert!(seen[0].starts_with("line1"), "{seen:?}");
    assert_eq!(seen.concat(), "line1\nline2\nline3\n");
    assert_eq!(live, seen, "nothing streams after the end is recorded");
    let stored = w.snapshot(id).await.executions[0].output.clone().unwrap();
    assert_eq!(stored.stdout, "line1\nline2\nline3\n");
}
