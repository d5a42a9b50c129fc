//! The audit log: one structured line per gate decision, per operator decision and per
//! command run, with the session, execution, host, class, principal and exit.

use nomos_core::Decision;
use nomos_test_support::audit::capture;

use crate::world;

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

    let lines = buffer.lines();
    let gates = buffer.with_message("gate decided");
    let decisions: Vec<(&str, &str)> = gates
        .iter()
        .map(|g| {
            (
                g["decision"].as_str().unwrap(),
                g["class"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [("run", "read_only"), ("approval_requested", "destructive")]
    );
    assert!(gates.iter().all(|g| g["session"] == session.as_str()));
    assert!(gates.iter().all(|g| g["host"] == "local"));

    let operator = buffer.with_message("operator decided");
    assert_eq!(operator.len(), 1, "{lines:?}");
    let fields = &operator[0];
    assert_eq!(fields["principal"], "alice");
    assert_eq!(fields["decision"], "approve");
    assert_eq!(fields["execution"], delete.as_str());
    assert_eq!(fields["class"], "destructive");

    let runs = buffer.with_message("command ran");
    assert_eq!(runs.len(), 2, "{lines:?}");
    for run in &runs {
        assert_eq!(run["session"], session.as_str());
        assert_eq!(run["host"], "local");
        assert_eq!(run["exit"], "0");
    }
    let approved = runs
        .iter()
        .find(|r| r["execution"] == delete.as_str())
        .unwrap();
    assert_eq!(approved["principal"], "alice");
    assert_eq!(approved["class"], "destructive");
    let unattended = runs
        .iter()
        .find(|r| r["execution"] != delete.as_str())
        .unwrap();
    assert_eq!(unattended["principal"], "-");
}
