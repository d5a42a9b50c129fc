//! AUTHZ-3 on plans over real HTTP: a plan declaring a command a two-person rule covers
//! (here every `config_mutation`) waits for two distinct operators' approve decisions; one
//! approval opens nothing and starts no turn, the same operator again is a 403, the second
//! operator's approval opens the window and the declared command runs without a card; a
//! reject after one approval ends the plan.

use std::collections::BTreeMap;
use std::sync::Arc;

use nomos_core::CommandClass;
use nomos_core::authz::{ApproverPolicy, ApproverRule};
use serde_json::{Value, json};

use super::{OPERATOR, SECOND_OPERATOR, Server, server_configured, settle};

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

async fn two_person_server(marker: &str) -> Server {
    server_configured(&script(marker), |config| {
        config.approvers = Arc::new(
            ApproverPolicy::new(
                vec![ApproverRule {
                    class: Some(CommandClass::ConfigMutation),
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

fn marker(tag: &str) -> String {
    let path = std::env::temp_dir().join(format!("nomos-2p-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path.display().to_string()
}

/// A session whose plan waits; its id.
async fn waiting(server: &Server) -> String {
    let id = server.create_session().await;
    assert_eq!(server.say(&id, "touch the marker").await.status(), 202);
    settle(server, &id).await;
    id
}

async fn decide(server: &Server, id: &str, token: &str, decision: &str) -> (u16, Value) {
    let plan = server.json(&format!("/api/sessions/{id}/plan")).await;
    let response = server
        .http
        .post(server.url(&format!("/api/sessions/{id}/plan/decision")))
        .bearer_auth(token)
        .json(&json!({
            "generation": plan["generation"],
            "digest": plan["digest"],
            "decision": decision,
        }))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

// rule: AUTHZ-3
#[tokio::test]
async fn authz_3_a_two_person_plan_runs_after_the_second_distinct_operator() {
    let marker = marker("runs");
    let server = two_person_server(&marker).await;
    let id = waiting(&server).await;
    let plan = server.json(&format!("/api/sessions/{id}/plan")).await;
    assert_eq!(plan["approvers_required"], 2, "{plan}");
    assert_eq!(plan["approved_by"], json!([]), "{plan}");

    let (status, body) = decide(&server, &id, OPERATOR, "approve").await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["awaiting"], json!({"approvals": 1, "required": 2}));
    settle(&server, &id).await;
    let plan = server.json(&format!("/api/sessions/{id}/plan")).await;
    assert_eq!(plan["approved_by"], json!(["alice"]), "{plan}");
    let session = server.json(&format!("/api/sessions/{id}")).await;
    assert_eq!(session["status"], "planning", "{session}");
    assert!(!std::path::Path::new(&marker).exists());

    let (status, body) = decide(&server, &id, OPERATOR, "approve").await;
    assert_eq!(status, 403, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("alice already approved this request"),
        "{message}"
    );

    let (status, body) = decide(&server, &id, SECOND_OPERATOR, "approve").await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["awaiting"], Value::Null, "{body}");
    settle(&server, &id).await;
    let plan = server.json(&format!("/api/sessions/{id}/plan")).await;
    assert_eq!(plan["approved_by"], json!(["alice", "bob"]), "{plan}");
    assert!(
        std::path::Path::new(&marker).exists(),
        "the declared command ran after the second approval"
    );
    let approvals = server.json(&format!("/api/sessions/{id}/approvals")).await;
    assert_eq!(approvals, json!([]), "the window covered it: no card");
    std::fs::remove_file(&marker).unwrap();
    // The first approval and the refusal are both in the event log.
    let kinds: Vec<String> = server
        .state
        .agent
        .store()
        .events_after(Some(id.parse().unwrap()), 0, 100_000)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event.kind().to_owned())
        .collect();
    assert!(kinds.iter().any(|k| k == "plan.progress"), "{kinds:?}");
    assert!(kinds.iter().any(|k| k == "decision.refused"), "{kinds:?}");
}

// rule: AUTHZ-3
#[tokio::test]
async fn authz_3_a_reject_after_one_approval_ends_a_two_person_plan() {
    let marker = marker("rejected");
    let server = two_person_server(&marker).await;
    let id = waiting(&server).await;
    let (status, _) = decide(&server, &id, OPERATOR, "approve").await;
    assert_eq!(status, 202);
    let (status, body) = decide(&server, &id, SECOND_OPERATOR, "reject").await;
    assert_eq!(status, 202, "{body}");
    settle(&server, &id).await;
    let (status, _) = decide(&server, &id, SECOND_OPERATOR, "approve").await;
    assert_eq!(status, 409, "a rejected plan cannot be approved after");
    assert!(!std::path::Path::new(&marker).exists());
}
