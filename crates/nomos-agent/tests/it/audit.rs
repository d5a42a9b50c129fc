//! The audit log: one structured line per gate decision, per operator decision and per
//! command run, with the session, execution, host, class, principal and exit.

use std::sync::{Arc, Mutex};

use nomos_core::Decision;
use serde_json::Value;

use crate::world;

/// A subscriber for this thread that keeps `nomos::audit` lines as JSON objects.
fn capture() -> (tracing::subscriber::DefaultGuard, Arc<Mutex<Vec<u8>>>) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let sink = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_env_filter(tracing_subscriber::EnvFilter::new("nomos::audit=info"))
        .with_writer(move || Sink(sink.clone()))
        .finish();
    (tracing::subscriber::set_default(subscriber), buffer)
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn lines(buffer: &Arc<Mutex<Vec<u8>>>) -> Vec<Value> {
    let bytes = buffer.lock().unwrap().clone();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn with_message<'a>(lines: &'a [Value], message: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|line| line["fields"]["message"] == message)
        .collect()
}

// The test runs on one thread (tokio's current-thread runtime), so the execution task the
// agent spawns logs to the subscriber set here.
#[tokio::test]
async fn every_gate_decision_operator_decision_and_command_run_is_one_log_line() {
    let (_guard, buffer) = capture();
    let w = world(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "clean the scratch dir"}}
    - {name: propose_plan, arguments: {steps: [{title: "look"}, {title: "delete scratch"}]}}
- text: "plan ready"
- tool_calls:
    - {name: run, arguments: {host: local, command: "true"}}
    - {name: run, arguments: {host: local, command: "rm -rf ./scratch-dir-that-does-not-exist"}}
- text: "Waiting for your approval of the delete."
- text: "Deleted."
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    w.agent.send_message(id, "clean it").await.unwrap();
    let turn = w.agent.send_message(id, "yes").await.unwrap();
    assert_eq!(turn.approvals_requested.len(), 1);
    w.agent
        .decide(
            turn.approvals_requested[0],
            Decision::Approve,
            Some("alice"),
        )
        .await
        .unwrap();
    let snapshot = w.snapshot(id).await;
    let session = id.to_string();
    let delete = snapshot
        .executions
        .iter()
        .find(|e| e.command.starts_with("rm "))
        .unwrap()
        .id
        .to_string();

    let lines = lines(&buffer);
    let gates = with_message(&lines, "gate decided");
    let decisions: Vec<(&str, &str)> = gates
        .iter()
        .map(|g| {
            (
                g["fields"]["decision"].as_str().unwrap(),
                g["fields"]["class"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [("run", "read_only"), ("approval_requested", "destructive")]
    );
    assert!(
        gates
            .iter()
            .all(|g| g["fields"]["session"] == session.as_str())
    );
    assert!(gates.iter().all(|g| g["fields"]["host"] == "local"));

    let operator = with_message(&lines, "operator decided");
    assert_eq!(operator.len(), 1, "{lines:?}");
    let fields = &operator[0]["fields"];
    assert_eq!(fields["principal"], "alice");
    assert_eq!(fields["decision"], "approve");
    assert_eq!(fields["execution"], delete.as_str());
    assert_eq!(fields["class"], "destructive");

    let runs = with_message(&lines, "command ran");
    assert_eq!(runs.len(), 2, "{lines:?}");
    for run in &runs {
        assert_eq!(run["fields"]["session"], session.as_str());
        assert_eq!(run["fields"]["host"], "local");
        assert_eq!(run["fields"]["exit"], "0");
    }
    let approved = runs
        .iter()
        .find(|r| r["fields"]["execution"] == delete.as_str())
        .unwrap();
    assert_eq!(approved["fields"]["principal"], "alice");
    assert_eq!(approved["fields"]["class"], "destructive");
    let unattended = runs
        .iter()
        .find(|r| r["fields"]["execution"] != delete.as_str())
        .unwrap();
    assert_eq!(unattended["fields"]["principal"], "-");
}
