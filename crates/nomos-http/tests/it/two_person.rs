//! AUTHZ-3 over real HTTP: with a two-person rule for destructive commands, one operator's
//! approval runs nothing and resumes nothing, the same operator approving again is refused,
//! a second operator's approval runs the command; a denial after one approval ends it.

use std::collections::BTreeMap;
use std::sync::Arc;

use nomos_core::CommandClass;
use nomos_core::authz::{ApproverPolicy, ApproverRule};
use serde_json::{Value, json};

use super::{OPERATOR, SECOND_OPERATOR, Server, server_configured, settle};

const SCRIPT: &str = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "remove the mark"}}
    - {name: propose_plan, arguments: {steps: [{title: "remove the mark"}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready. Approve?"
- tool_calls:
    - {name: run, arguments: {host: local, command: "rm MARK-two-person"}}
  expect: {last_user_contains: "approved"}
- text: "Removing the mark needs your approval."
- text: "Done."
"#;

async fn two_person_server() -> Server {
    server_configured(SCRIPT, |config| {
        config.approvers = Arc::new(
            ApproverPolicy::new(
                vec![ApproverRule {
                    class: Some(CommandClass::Destructive),
                    tag: None,
                    rule: None,
                    approvers: 2,
                }],
                BTreeMap::new(),
            )
            .unwrap(),
        );
    })
    .await
}

/// A session whose destructive request waits; its approval id.
async fn waiting(server: &Server) -> (String, String) {
    let id = server.create_session().await;
    assert_eq!(
        server.say(&id, "remove the mark please").await.status(),
        202
    );
    settle(server, &id).await;
    assert_eq!(server.say(&id, "approved").await.status(), 202);
    settle(server, &id).await;
    let approvals = server
        .json(&format!("/api/approvals?session_id={id}"))
        .await;
    let approval = approvals[0]["id"].as_str().unwrap().to_owned();
    (id, approval)
}

async fn decide(server: &Server, token: &str, approval: &str, decision: &str) -> (u16, Value) {
    let response = server
        .http
        .post(server.url(&format!("/api/approvals/{approval}/decision")))
        .bearer_auth(token)
        .json(&json!({ "decision": decision }))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

async fn approval_of(server: &Server, id: &str) -> Value {
    server.json(&format!("/api/sessions/{id}/approvals")).await[0].clone()
}

// rule: AUTHZ-3
#[tokio::test]
async fn authz_3_a_second_distinct_operator_runs_a_two_person_request() {
    let server = two_person_server().await;
    let (id, approval) = waiting(&server).await;
    let card = approval_of(&server, &id).await;
    assert_eq!(card["approvers_required"], 2, "{card}");
    assert_eq!(card["approved_by"], json!([]), "{card}");

    let (status, body) = decide(&server, OPERATOR, &approval, "approve").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["dispatched"], false, "{body}");
    assert_eq!(body["awaiting"], json!({"approvals": 1, "required": 2}));
    settle(&server, &id).await;
    let card = approval_of(&server, &id).await;
    assert_eq!(card["status"], "pending", "{card}");
    assert_eq!(card["approved_by"], json!(["alice"]), "{card}");
    let executions = server.json(&format!("/api/sessions/{id}/executions")).await;
    assert_eq!(executions[0]["status"], "pending_approval", "{executions}");

    let (status, body) = decide(&server, OPERATOR, &approval, "approve").await;
    assert_eq!(status, 403, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("alice already approved this request"),
        "{message}"
    );

    let (status, body) = decide(&server, SECOND_OPERATOR, &approval, "approve").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["dispatched"], true, "{body}");
    settle(&server, &id).await;
    let card = approval_of(&server, &id).await;
    assert_eq!(card["status"], "approved", "{card}");
    assert_eq!(card["approved_by"], json!(["alice", "bob"]), "{card}");
    let executions = server.json(&format!("/api/sessions/{id}/executions")).await;
    assert_ne!(executions[0]["status"], "pending_approval", "{executions}");
}

// rule: AUTHZ-3
#[tokio::test]
async fn authz_3_a_denial_after_one_approval_ends_the_request() {
    let server = two_person_server().await;
    let (id, approval) = waiting(&server).await;
    let (status, _) = decide(&server, OPERATOR, &approval, "approve").await;
    assert_eq!(status, 200);
    let (status, body) = decide(&server, SECOND_OPERATOR, &approval, "deny").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["dispatched"], false, "{body}");
    assert_eq!(body["awaiting"], Value::Null, "{body}");
    settle(&server, &id).await;
    let card = approval_of(&server, &id).await;
    assert_eq!(card["status"], "denied", "{card}");
    let (status, _) = decide(&server, SECOND_OPERATOR, &approval, "approve").await;
    assert_eq!(status, 409, "a denied request cannot be approved after");
}
