//! The operator's console over HTTP: a denial's reason reaches the model (CONTROL-4), an
//! operator closes a waiting task (CONTROL-5) and archives a session off the list (CONTROL-6).

use serde_json::{Value, json};

use super::{OPERATOR, server, settle};

const DENY_SCRIPT: &str = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "remove the mark"}}
    - {name: propose_plan, arguments: {steps: [{title: "remove the mark"}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready. Approve?"
- tool_calls:
    - {name: run, arguments: {host: local, command: "rm MARK"}}
  expect: {last_user_contains: "approved"}
- text: "Removing the mark needs your approval."
- text: "Understood, I will take a backup first."
  expect: {last_user_contains: "denied by the operator, who said: take a backup first"}
"#;

/// Drives the session to a pending approval; its id and the last event id seen.
async fn pending_approval(server: &super::Server, id: &str) -> (String, i64) {
    let path = format!("/api/sessions/{id}/events");
    let mut events = server.events(&path, None).await;
    assert_eq!(server.say(id, "remove the mark please").await.status(), 202);
    events.until("turn.done").await;
    assert_eq!(server.say(id, "approved").await.status(), 202);
    let turn = events.until("turn.done").await;
    assert!(turn.iter().any(|e| e.event == "approval.requested"));
    settle(server, id).await;
    let approvals = server
        .json(&format!("/api/approvals?session_id={id}"))
        .await;
    let last = turn.last().and_then(|e| e.id).unwrap();
    (approvals[0]["id"].as_str().unwrap().to_owned(), last)
}

async fn decide(server: &super::Server, approval: &str, body: Value) -> reqwest::Response {
    server
        .http
        .post(server.url(&format!("/api/approvals/{approval}/decision")))
        .bearer_auth(OPERATOR)
        .json(&body)
        .send()
        .await
        .unwrap()
}

// rule: CONTROL-4
#[tokio::test]
async fn a_denial_with_a_reason_tells_the_model_why() {
    let server = server(DENY_SCRIPT).await;
    let id = server.create_session().await;
    let (approval, last) = pending_approval(&server, &id).await;

    let refused = decide(
        &server,
        &approval,
        json!({"decision": "approve", "reason": "looks fine"}),
    )
    .await;
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a reason goes with a denial only"),
        "{body}"
    );

    let mut events = server
        .events(&format!("/api/sessions/{id}/events"), Some(last))
        .await;
    let denied = decide(
        &server,
        &approval,
        json!({"decision": "deny", "reason": "take a backup first"}),
    )
    .await;
    assert_eq!(denied.status(), 200);
    let turn = events.until("turn.done").await;
    let done = turn.last().unwrap().json();
    assert_eq!(done["event"]["type"], "turn.done", "{done}");
    assert_eq!(done["event"]["error"], Value::Null, "{done}");
    let resolved = turn
        .iter()
        .find(|e| e.event == "approval.resolved")
        .unwrap_or_else(|| panic!("{turn:?}"))
        .json();
    assert_eq!(
        resolved["event"]["reason"],
        "denied by the operator, who said: take a backup first"
    );
    assert_eq!(server.model.remaining(), 0, "the model heard the reason");
}

const WAIT_SCRIPT: &str = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "remove the mark"}}
    - {name: propose_plan, arguments: {steps: [{title: "remove the mark"}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready. Approve?"
- tool_calls:
    - {name: run, arguments: {host: local, command: "rm MARK"}}
  expect: {last_user_contains: "approved"}
- text: "Removing the mark needs your approval."
"#;

// rule: CONTROL-5
#[tokio::test]
async fn the_operator_closes_a_waiting_task_once_and_its_approval_is_cancelled() {
    let server = server(WAIT_SCRIPT).await;
    let id = server.create_session().await;
    let (approval, _) = pending_approval(&server, &id).await;
    let path = format!("/api/sessions/{id}/close");

    let success = server
        .post(&path, json!({"outcome": "success", "note": "fine"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        success.status(),
        400,
        "success is not the operator's to claim"
    );

    let closed = server
        .post(
            &path,
            json!({"outcome": "failure", "note": "the mark must stay"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), 200);
    let closed: Value = closed.json().await.unwrap();
    assert_eq!(closed["status"], "failed");
    assert_eq!(closed["cancelled_approvals"], 1);

    let session = server.json(&format!("/api/sessions/{id}")).await;
    assert_eq!(session["status"], "failed");
    assert_eq!(
        session["summary"],
        "closed by the operator: the mark must stay"
    );
    let approvals = server.json(&format!("/api/sessions/{id}/approvals")).await;
    assert_eq!(approvals[0]["id"], approval.as_str());
    assert_eq!(approvals[0]["status"], "cancelled");
    let activity = server
        .json(&format!("/api/sessions/{id}/activity"))
        .await
        .to_string();
    assert!(
        activity.contains("Operator closed the task as failure"),
        "{activity}"
    );

    let again = server
        .post(&path, json!({"outcome": "partial"}))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
    let body: Value = again.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already failed"),
        "{body}"
    );
}

// rule: CONTROL-6
#[tokio::test]
async fn an_archived_session_leaves_the_list_until_it_is_brought_back() {
    let server = server("[]").await;
    let kept = server.create_session().await;
    let archived = server.create_session().await;
    let response = server
        .post(&format!("/api/sessions/{archived}/archive"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert!(body["archived_at"].is_string(), "{body}");

    let ids = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let board = server.json("/api/sessions").await;
    assert_eq!(ids(&board), vec![kept]);
    let only = server.json("/api/sessions?archived=only").await;
    assert_eq!(ids(&only), vec![archived.clone()]);
    let both = server.json("/api/sessions?archived=include").await;
    assert_eq!(ids(&both).len(), 2);

    let back = server
        .post(&format!("/api/sessions/{archived}/unarchive"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(back.status(), 200);
    let board = server.json("/api/sessions").await;
    assert_eq!(ids(&board).len(), 2);
}
