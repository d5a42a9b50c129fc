//! The whole flow over HTTP: create a session, chat, plan, assent, run on the local
//! executor, approve a destructive command, and follow it all on the event stream,
//! reconnecting with `Last-Event-ID` in the middle.

use serde_json::json;

use super::{OPERATOR, VIEWER, server, settle};

const SCRIPT: &str = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "clean the scratch directory"}}
    - {name: propose_plan, arguments: {steps: [{title: "look"}, {title: "mark", commands: [{host: local, command: "touch MARK"}]}, {title: "remove the mark"}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready: look, mark, remove the mark, write back. Approve?"
- tool_calls:
    - {name: update_plan_step, arguments: {seq: 1, status: running}}
    - {name: run, arguments: {host: local, command: "echo looking"}}
    - {name: update_plan_step, arguments: {seq: 1, status: done}}
    - {name: update_plan_step, arguments: {seq: 2, status: running}}
    - {name: run, arguments: {host: local, command: "touch MARK"}}
    - {name: update_plan_step, arguments: {seq: 2, status: done}}
    - {name: update_plan_step, arguments: {seq: 3, status: running}}
    - {name: run, arguments: {host: local, command: "rm MARK"}}
  expect: {last_user_contains: "approved"}
- text: "Removing the mark needs your approval."
- tool_calls:
    - {name: update_plan_step, arguments: {seq: 3, status: done}}
    - {name: update_plan_step, arguments: {seq: 4, status: running}}
    - {name: update_entity_attributes, arguments: {slug: "local", kind: "host", attributes: {scratch: "clean"}}}
    - {name: update_plan_step, arguments: {seq: 4, status: done}}
    - {name: complete_task, arguments: {outcome: success, summary: "scratch directory cleaned"}}
- text: "All done."
"#;

fn ids(events: &[super::SseEvent]) -> Vec<i64> {
    events.iter().filter_map(|e| e.id).collect()
}

// rule: TURN-1, TURN-8, GATE-5, GATE-7, EXEC-4, PLAN-7
#[tokio::test]
async fn a_whole_task_runs_over_http_and_a_reconnect_misses_and_repeats_nothing() {
    let server = server(SCRIPT).await;
    let id = server.create_session().await;
    let path = format!("/api/sessions/{id}/events");
    let mut first = server.events(&path, None).await;

    // Turn 1: goal and plan.
    let response = server.say(&id, "please clean the scratch directory").await;
    assert_eq!(response.status(), 202);
    let turn1 = first.until("turn.done").await;
    assert_eq!(turn1[0].event, "session.created");
    assert!(turn1.iter().any(|e| e.event == "plan.proposed"));
    let k1 = *ids(&turn1).last().unwrap();
    assert_eq!(ids(&turn1), (1..=k1).collect::<Vec<_>>());
    drop(first);

    let plan = server.json(&format!("/api/sessions/{id}/plan")).await;
    assert_eq!(plan["generation"], 1);
    assert_eq!(plan["steps"].as_array().unwrap().len(), 4);

    // Turn 2 runs while nobody listens; the reconnect resumes after k1.
    let response = server.say(&id, "approved, go ahead").await;
    assert_eq!(response.status(), 202);
    let mut second = server.events(&path, Some(k1)).await;
    let turn2 = second.until("turn.done").await;
    assert!(turn2.iter().any(|e| e.event == "approval.requested"));

    // rule: GATE-7 — the destructive command waits for its own approval.
    settle(&server, &id).await;
    let approvals = server
        .json(&format!("/api/approvals?session_id={id}"))
        .await;
    let approvals = approvals.as_array().unwrap();
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0]["command"], "rm MARK");
    assert_eq!(approvals[0]["class"], "destructive");
    // The approval carries its execution's reason and plan step (no second lookup needed).
    assert_eq!(approvals[0]["reason"], "`rm` deletes files");
    assert_eq!(approvals[0]["step_seq"], 3);
    assert_eq!(approvals[0]["generation"], 1);
    let approval = approvals[0]["id"].as_str().unwrap().to_owned();
    let decision = format!("/api/approvals/{approval}/decision");

    // A viewer may read but not approve.
    let refused = server
        .http
        .post(server.url(&decision))
        .bearer_auth(VIEWER)
        .json(&json!({"decision": "approve"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);

    let decided = server
        .http
        .post(server.url(&decision))
        .bearer_auth(OPERATOR)
        .json(&json!({"decision": "approve"}))
        .send()
        .await
        .unwrap();
    assert_eq!(decided.status(), 200);
    let decided: serde_json::Value = decided.json().await.unwrap();
    assert_eq!(decided["dispatched"], true);

    // rule: GATE-7 — a second decision on the same approval is refused.
    let again = server
        .http
        .post(server.url(&decision))
        .bearer_auth(OPERATOR)
        .json(&json!({"decision": "deny"}))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
    let body: serde_json::Value = again.json().await.unwrap();
    assert_eq!(body["error"]["code"], "conflict");

    // rule: EXEC-4 — the continuation turn finishes the task.
    let turn3 = second.until("turn.done").await;
    assert!(turn3.iter().any(|e| e.event == "task.status"));
    let mut after = turn2.clone();
    after.extend(turn3);
    let n = *ids(&after).last().unwrap();
    assert_eq!(
        ids(&after),
        (k1 + 1..=n).collect::<Vec<_>>(),
        "gap or duplicate"
    );

    settle(&server, &id).await;
    let stored = server
        .state
        .agent
        .store()
        .events_after(Some(id.parse().unwrap()), 0, 10_000)
        .await
        .unwrap();
    assert_eq!(stored.len() as i64, n, "the stream saw every stored event");

    let session = server.json(&format!("/api/sessions/{id}")).await;
    assert_eq!(session["status"], "done");
    let executions = server.json(&format!("/api/sessions/{id}/executions")).await;
    let statuses: Vec<(&str, &str)> = executions
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["class"].as_str().unwrap(), e["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("read_only", "completed"),
            ("config_mutation", "completed"),
            ("destructive", "completed"),
        ]
    );

    // rule: ACTIVITY-3 — nothing in a finished session's log is running.
    let activity = server.json(&format!("/api/sessions/{id}/activity")).await;
    let activity = activity.as_array().unwrap();
    assert!(!activity.is_empty());
    assert!(
        activity.iter().all(|e| e["state"] != "running"),
        "{activity:?}"
    );

    let transcript = server.json(&format!("/api/sessions/{id}/transcript")).await;
    let run = transcript
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().unwrap().iter())
        .find(|c| c["name"] == "run")
        .unwrap();
    assert_eq!(run["outcome"], "ok");
    assert!(run["result"].as_str().unwrap().contains("looking"), "{run}");

    // rule: PLAN-7 — every generation on request.
    let all = server
        .json(&format!("/api/sessions/{id}/plan?all=true"))
        .await;
    assert_eq!(all["steps"].as_array().unwrap().len(), 4);
    assert_eq!(server.model.remaining(), 0);
}

// rule: TURN-8
#[tokio::test]
async fn a_second_message_while_a_turn_runs_is_a_conflict() {
    let server = server(
        r#"
- tool_calls:
    - {name: run, arguments: {host: local, command: "sleep 1"}}
- text: "slept"
"#,
    )
    .await;
    let id = server.create_session().await;
    assert_eq!(server.say(&id, "sleep a bit").await.status(), 202);
    let second = server.say(&id, "and again").await;
    assert_eq!(second.status(), 409);
    let body: serde_json::Value = second.json().await.unwrap();
    assert_eq!(body["error"]["code"], "conflict");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already running"),
        "{body}"
    );
    settle(&server, &id).await;
}

#[tokio::test]
async fn resume_starts_a_turn_and_is_refused_for_an_unknown_session() {
    let server = server("- text: \"resumed\"\n").await;
    let id = server.create_session().await;
    let response = server
        .post(&format!("/api/sessions/{id}/resume"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    settle(&server, &id).await;
    assert_eq!(server.model.remaining(), 0);
    let unknown = uuid::Uuid::new_v4();
    let response = server
        .post(&format!("/api/sessions/{unknown}/resume"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn sessions_page_newest_first_with_a_cursor() {
    let server = server("- text: \"hello\"\n").await;
    let mut made = Vec::new();
    for _ in 0..3 {
        made.push(server.create_session().await);
        // Distinct creation times: the order is `(created_at, id)`.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    let first = server.json("/api/sessions?order=desc&limit=2").await;
    let first: Vec<&str> = first
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(first, [made[2].as_str(), made[1].as_str()]);
    let rest = server
        .json(&format!(
            "/api/sessions?order=desc&limit=2&before={}",
            first[1]
        ))
        .await;
    assert_eq!(rest.as_array().unwrap().len(), 1);
    assert_eq!(rest[0]["id"], made[0].as_str());
    let none = server.json("/api/sessions?q=no%20such%20goal").await;
    assert!(none.as_array().unwrap().is_empty());
}

#[tokio::test]
async fn sessions_are_listed_by_status_and_deleted() {
    let server = server("- text: \"hello\"\n").await;
    let id = server.create_session().await;
    let other = server.create_session().await;
    let active = server.json("/api/sessions?status=active").await;
    assert_eq!(active.as_array().unwrap().len(), 2);
    let done = server.json("/api/sessions?status=done,failed").await;
    assert!(done.as_array().unwrap().is_empty());

    let deleted = server
        .http
        .delete(server.url(&format!("/api/sessions/{id}")))
        .bearer_auth(super::OPERATOR)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let gone = server
        .get(&format!("/api/sessions/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    let left = server.json("/api/sessions").await;
    assert_eq!(left[0]["id"], other.as_str());
}
