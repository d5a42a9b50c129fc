//! The operator's explicit plan decision over real HTTP (GATE-4 rev. 2, GATE-9, AUDIT-1):
//! approve opens the window and the declared command runs without a card; reject closes the
//! plan; a stale or non-waiting generation is a 409 saying why; a viewer gets a 403. The
//! plan and the approval cards show what the plan declared.

use serde_json::{Value, json};

use super::{Server, VIEWER, server, settle};

/// A plan declaring one `touch` on `local`, then (after a decision) a turn that runs it.
fn script(marker: &str) -> String {
    format!(
        r#"
- tool_calls:
    - {{name: set_goal, arguments: {{goal: "touch the marker"}}}}
    - {{name: propose_plan, arguments: {{steps: [{{title: "touch the marker", commands: [{{host: local, command: "touch {marker}"}}]}}, {{title: "write back: update_entity_attributes"}}]}}}}
- text: "Plan ready. Approve?"
- tool_calls:
    - {{name: update_plan_step, arguments: {{seq: 1, status: running}}}}
    - {{name: run, arguments: {{host: local, command: "touch {marker}"}}}}
- text: "Touched."
"#
    )
}

fn marker(tag: &str) -> String {
    let dir = std::env::temp_dir();
    format!("{}/nomos-plan-{tag}-{}", dir.display(), std::process::id())
}

/// A decision on the plan as it is shown now: `body` with the current plan's digest,
/// unless it names one itself (`"digest": null` sends none).
async fn decide(server: &Server, id: &str, mut body: Value, token: &str) -> reqwest::Response {
    if body.get("digest").is_none() {
        let plan = server.json(&format!("/api/sessions/{id}/plan")).await;
        body["digest"] = plan["digest"].clone();
    }
    server
        .http
        .post(server.url(&format!("/api/sessions/{id}/plan/decision")))
        .bearer_auth(token)
        .header("x-request-id", "req-plan")
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// A session whose plan (generation 1) waits for the operator.
async fn waiting(server: &Server) -> String {
    let id = server.create_session().await;
    assert_eq!(server.say(&id, "touch the marker").await.status(), 202);
    settle(server, &id).await;
    let session = server.json(&format!("/api/sessions/{id}")).await;
    assert_eq!(session["status"], "planning", "{session}");
    id
}

async fn error_message(response: reqwest::Response) -> String {
    let body: Value = response.json().await.unwrap();
    body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn stored_kinds(server: &Server, id: &str) -> Vec<Value> {
    server
        .state
        .agent
        .store()
        .events_after(Some(id.parse().unwrap()), 0, 100_000)
        .await
        .unwrap()
        .into_iter()
        .map(|e| serde_json::to_value(&e.event).unwrap())
        .collect()
}

// rule: GATE-9
#[tokio::test]
async fn the_plan_shows_every_declared_command_with_its_class_and_host() {
    let marker = marker("show");
    let server = server(&script(&marker)).await;
    let id = waiting(&server).await;
    let plan = server.json(&format!("/api/sessions/{id}/plan")).await;
    let commands = &plan["steps"][0]["commands"];
    assert_eq!(commands.as_array().map(Vec::len), Some(1), "{plan}");
    assert_eq!(commands[0]["host"], "local");
    assert_eq!(commands[0]["command"], format!("touch {marker}"));
    assert_eq!(commands[0]["class"], "config_mutation");
    assert!(!commands[0]["reason"].as_str().unwrap().is_empty());
    assert_eq!(plan["steps"][1]["commands"], json!([]));
}

// rule: GATE-4
// rule: GATE-9
// rule: AUDIT-1
#[tokio::test]
async fn approve_opens_the_window_and_the_declared_command_runs_without_a_card() {
    let marker = marker("approve");
    let _ = std::fs::remove_file(&marker);
    let server = server(&script(&marker)).await;
    let id = waiting(&server).await;

    let response = decide(
        &server,
        &id,
        json!({"generation": 1, "decision": "approve"}),
        super::OPERATOR,
    )
    .await;
    assert_eq!(response.status(), 202);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["generation"], 1);
    assert_eq!(body["decision"], "approve");
    settle(&server, &id).await;

    assert!(
        std::path::Path::new(&marker).exists(),
        "the declared command ran"
    );
    let _ = std::fs::remove_file(&marker);
    let approvals = server.json(&format!("/api/sessions/{id}/approvals")).await;
    assert_eq!(approvals, json!([]), "no card for a declared command");
    let events = stored_kinds(&server, &id).await;
    let assent = events
        .iter()
        .find(|e| e["type"] == "plan.assent")
        .expect("the window opened");
    assert_eq!(assent["granted_by"], "alice");
    assert_eq!(assent["request_id"], "req-plan");
    // RESUME-4: the model's next request carried the decision.
    let transcript = server.json(&format!("/api/sessions/{id}/transcript")).await;
    assert!(
        transcript
            .to_string()
            .contains("approved plan generation 1"),
        "{transcript}"
    );

    // The plan no longer waits: a second decision is refused, saying why.
    let again = decide(
        &server,
        &id,
        json!({"generation": 1, "decision": "reject"}),
        super::OPERATOR,
    )
    .await;
    assert_eq!(again.status(), 409);
    let message = error_message(again).await;
    assert!(message.contains("already approved"), "{message}");
}

// rule: GATE-4
#[tokio::test]
async fn reject_closes_the_plan_so_nothing_of_it_runs_and_the_model_hears_why() {
    let marker = marker("reject");
    let _ = std::fs::remove_file(&marker);
    let script = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "touch the marker"}}
    - {name: propose_plan, arguments: {steps: [{title: "touch the marker"}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready. Approve?"
- text: "Understood; what should I do instead?"
"#;
    let server = server(script).await;
    let id = waiting(&server).await;
    let response = decide(
        &server,
        &id,
        json!({"generation": 1, "decision": "reject", "reason": "not during business hours"}),
        super::OPERATOR,
    )
    .await;
    assert_eq!(response.status(), 202);
    settle(&server, &id).await;

    let session = server.json(&format!("/api/sessions/{id}")).await;
    assert_eq!(session["status"], "active", "{session}");
    assert_eq!(session["assent_generation"], Value::Null);
    let plan = server.json(&format!("/api/sessions/{id}/plan")).await;
    for step in plan["steps"].as_array().unwrap() {
        assert_eq!(step["status"], "replaced", "{plan}");
        assert_eq!(step["note"], "rejected by the operator");
    }
    let events = stored_kinds(&server, &id).await;
    let rejected = events
        .iter()
        .find(|e| e["type"] == "plan.rejected")
        .expect("a plan.rejected event");
    assert_eq!(rejected["rejected_by"], "alice");
    assert_eq!(rejected["request_id"], "req-plan");
    assert_eq!(rejected["reason"], "not during business hours");
    let transcript = server
        .json(&format!("/api/sessions/{id}/transcript"))
        .await
        .to_string();
    assert!(
        transcript.contains("rejected plan generation 1"),
        "{transcript}"
    );
    assert!(transcript.contains("what should I do instead"));

    let again = decide(
        &server,
        &id,
        json!({"generation": 1, "decision": "approve"}),
        super::OPERATOR,
    )
    .await;
    assert_eq!(again.status(), 409);
    assert!(error_message(again).await.contains("it was rejected"));
}

// rule: GATE-4
#[tokio::test]
async fn a_stale_or_not_waiting_generation_is_a_conflict_saying_why_and_changes_nothing() {
    let marker = marker("stale");
    let server = server(&script(&marker)).await;

    // No plan yet.
    let id = server.create_session().await;
    let response = decide(
        &server,
        &id,
        json!({"generation": 1, "decision": "approve"}),
        super::OPERATOR,
    )
    .await;
    assert_eq!(response.status(), 409);
    assert!(error_message(response).await.contains("no plan"));

    let id = waiting(&server).await;
    let before = stored_kinds(&server, &id).await.len();
    let response = decide(
        &server,
        &id,
        json!({"generation": 2, "decision": "approve"}),
        super::OPERATOR,
    )
    .await;
    assert_eq!(response.status(), 409);
    let message = error_message(response).await;
    assert!(
        message.contains("stale") && message.contains("generation 1"),
        "{message}"
    );
    assert_eq!(stored_kinds(&server, &id).await.len(), before);

    // A malformed decision is a 400 naming the field.
    let response = decide(
        &server,
        &id,
        json!({"generation": 1, "decision": "maybe"}),
        super::OPERATOR,
    )
    .await;
    assert_eq!(response.status(), 400);
    assert!(error_message(response).await.contains("decision"));
}

// rule: GATE-4
#[tokio::test]
async fn a_viewer_may_not_decide_a_plan() {
    let marker = marker("viewer");
    let server = server(&script(&marker)).await;
    let id = waiting(&server).await;
    let response = decide(
        &server,
        &id,
        json!({"generation": 1, "decision": "approve"}),
        VIEWER,
    )
    .await;
    assert_eq!(response.status(), 403);
    let session = server.json(&format!("/api/sessions/{id}")).await;
    assert_eq!(session["status"], "planning");
    assert_eq!(session["assent_generation"], Value::Null);
}

// rule: GATE-9
#[tokio::test]
async fn an_undeclared_change_in_the_window_is_a_card_that_says_it_is_not_in_the_plan() {
    let marker = marker("undeclared");
    let other = format!("{marker}-other");
    // The model runs a command the plan did not declare, under step 1.
    let mut script = script(&marker);
    let at = script.rfind(&format!("touch {marker}")).unwrap();
    script.replace_range(
        at..at + format!("touch {marker}").len(),
        &format!("touch {other}"),
    );
    let server = server(&script).await;
    let id = waiting(&server).await;
    let response = decide(
        &server,
        &id,
        json!({"generation": 1, "decision": "approve"}),
        super::OPERATOR,
    )
    .await;
    assert_eq!(response.status(), 202);
    settle(&server, &id).await;
    let approvals = server.json(&format!("/api/sessions/{id}/approvals")).await;
    assert_eq!(approvals.as_array().map(Vec::len), Some(1), "{approvals}");
    assert_eq!(approvals[0]["command"], format!("touch {other}"));
    assert_eq!(
        approvals[0]["plan_note"],
        "not in the approved plan (run under step 1)"
    );
    assert!(!std::path::Path::new(&other).exists());
}

/// A plan proposed twice with the same text before the operator decides: the operator
/// looked at the first proposal.
const PROPOSED_TWICE: &str = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "restart it"}}
    - {name: propose_plan, arguments: {steps: [{title: "restart", commands: [{host: local, command: "touch /nonexistent/nomos-twice"}]}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready. Approve?"
- tool_calls:
    - {name: propose_plan, arguments: {steps: [{title: "restart", commands: [{host: local, command: "touch /nonexistent/nomos-twice"}]}, {title: "write back: update_entity_attributes"}]}}
- text: "Same plan, proposed again."
- text: "Approved, thanks."
"#;

// rule: GATE-4
#[tokio::test]
async fn a_decision_on_the_plan_shown_before_a_re_proposal_is_a_conflict_with_the_current_plan() {
    let server = server(PROPOSED_TWICE).await;
    let id = waiting(&server).await;
    let shown = server.json(&format!("/api/sessions/{id}/plan")).await;
    let old_digest = shown["digest"].as_str().unwrap().to_owned();
    assert_eq!(old_digest.len(), 64, "{shown}");
    // Between the operator's look and the click, the model proposes the same plan again.
    assert_eq!(server.say(&id, "hm").await.status(), 202);
    settle(&server, &id).await;
    let now_shown = server.json(&format!("/api/sessions/{id}/plan")).await;
    assert_eq!(now_shown["generation"], 1);
    assert_eq!(now_shown["steps"], shown["steps"], "the same text");
    assert_ne!(now_shown["digest"], shown["digest"]);

    let before = stored_kinds(&server, &id).await.len();
    for body in [
        json!({"generation": 1, "decision": "approve", "digest": old_digest}),
        json!({"generation": 1, "decision": "approve", "digest": null}),
        json!({"generation": 1, "decision": "approve", "digest": "not hex"}),
    ] {
        let response = decide(&server, &id, body.clone(), super::OPERATOR).await;
        assert_eq!(response.status(), 409, "{body}");
        let conflict: Value = response.json().await.unwrap();
        assert_eq!(conflict["error"]["code"], "conflict");
        assert!(
            conflict["error"]["message"]
                .as_str()
                .unwrap()
                .contains("changed since it was shown"),
            "{conflict}"
        );
        assert_eq!(
            conflict["plan"]["digest"], now_shown["digest"],
            "{conflict}"
        );
        assert_eq!(conflict["plan"]["steps"], now_shown["steps"]);
    }
    assert_eq!(
        stored_kinds(&server, &id).await.len(),
        before,
        "nothing decided"
    );
    let session = server.json(&format!("/api/sessions/{id}")).await;
    assert_eq!(session["assent_generation"], Value::Null, "{session}");

    // The plan as shown now is decided.
    let response = decide(
        &server,
        &id,
        json!({"generation": 1, "decision": "approve", "digest": now_shown["digest"]}),
        super::OPERATOR,
    )
    .await;
    assert_eq!(response.status(), 202);
}
