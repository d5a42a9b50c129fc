//! AUDIT-1 over HTTP: an operator's assent and decision on an approval record who made
//! them (the token's name) and the request id, on the approval, on their events
//! (hash-chained with the rest of the log) and in the activity log.

use serde_json::{Value, json};

use super::{OPERATOR, server, settle};

const SCRIPT: &str = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "remove the mark"}}
    - {name: propose_plan, arguments: {steps: [{title: "remove the mark"}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready. Approve?"
- tool_calls:
    - {name: run, arguments: {host: local, command: "rm MARK"}}
  expect: {last_user_contains: "approved"}
- text: "Removing the mark needs your approval."
- text: "The mark is gone."
"#;

async fn pending_approval(server: &super::Server, id: &str) -> String {
    let path = format!("/api/sessions/{id}/events");
    let mut events = server.events(&path, None).await;
    assert_eq!(server.say(id, "remove the mark please").await.status(), 202);
    events.until("turn.done").await;
    let assent = server
        .post(
            &format!("/api/sessions/{id}/messages"),
            json!({"text": "approved"}),
        )
        .header("x-request-id", "req-assent")
        .send()
        .await
        .unwrap();
    assert_eq!(assent.status(), 202);
    let turn = events.until("turn.done").await;
    assert!(turn.iter().any(|e| e.event == "approval.requested"));
    settle(server, id).await;
    let approvals = server
        .json(&format!("/api/approvals?session_id={id}"))
        .await;
    approvals[0]["id"].as_str().unwrap().to_owned()
}

// rule: AUDIT-1
#[tokio::test]
async fn an_assent_and_a_decision_record_the_token_name_and_the_request_id() {
    let server = server(SCRIPT).await;
    let id = server.create_session().await;
    let approval = pending_approval(&server, &id).await;

    let decided = server
        .http
        .post(server.url(&format!("/api/approvals/{approval}/decision")))
        .bearer_auth(OPERATOR)
        .header("x-request-id", "req-audit-1")
        .json(&json!({"decision": "deny"}))
        .send()
        .await
        .unwrap();
    assert_eq!(decided.status(), 200);
    assert_eq!(decided.headers()["x-request-id"], "req-audit-1");
    settle(&server, &id).await;

    // The approval row records who decided.
    let stored = server
        .state
        .agent
        .store()
        .approval(nomos_core::ApprovalId(approval.parse().unwrap()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.decided_by.as_deref(), Some("alice"));

    // Its event carries the principal and the request id, in the exported chain.
    let export = server
        .get(&format!("/api/sessions/{id}/export"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let resolved: Vec<Value> = export
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["kind"] == "approval.resolved")
        .collect();
    assert_eq!(resolved.len(), 1, "{export}");
    assert_eq!(resolved[0]["payload"]["decided_by"], "alice");
    assert_eq!(resolved[0]["payload"]["request_id"], "req-audit-1");
    assert!(resolved[0]["hash"].is_string());

    let assented: Vec<Value> = export
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["kind"] == "plan.assent")
        .collect();
    assert_eq!(assented.len(), 1, "{export}");
    assert_eq!(assented[0]["payload"]["granted_by"], "alice");
    assert_eq!(assented[0]["payload"]["request_id"], "req-assent");

    // The activity log says who and through which request.
    let activity = server.json(&format!("/api/sessions/{id}/activity")).await;
    let text = activity.to_string();
    assert!(
        text.contains("denied by alice (request req-audit-1)"),
        "{activity}"
    );
    assert!(text.contains("by alice (request req-assent)"), "{activity}");
}
