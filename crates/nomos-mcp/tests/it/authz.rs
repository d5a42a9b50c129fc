//! Who may decide, over a real `rmcp` client and the real router (AUTHZ-1, AUTHZ-2, MCP-2
//! rev. 3): an agent token runs a read-only command, gets an approval request for a
//! change, and is refused on every decision and on another principal's session; resources
//! reach only the sessions the client's principal made; and a principal never decides the
//! requests of a session it drives, through any route, even with an operator token.

use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

use crate::{AGENT, Client, DECIDER, OPERATOR, call, is_error, nomos, structured, text};

async fn read_plan(client: &Client, uri: &str) -> Result<Value, String> {
    client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map(|result| match &result.contents[0] {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
                serde_json::from_str(text).unwrap()
            }
            other => panic!("{other:?}"),
        })
        .map_err(|e| e.to_string())
}

async fn listed(client: &Client) -> Vec<String> {
    client
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect()
}

/// A destructive request of `client`: its approval id.
async fn request_removal(client: &Client, file: &std::path::Path) -> String {
    let asked = call(
        client,
        "run",
        json!({ "host": "local", "command": format!("rm -f {}", file.display()) }),
    )
    .await;
    structured(&asked)["approval"]["approval_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no approval in {}", text(&asked)))
        .to_owned()
}

// rule: AUTHZ-1
// rule: MCP-2
#[tokio::test]
async fn authz_1_an_agent_runs_and_asks_but_never_decides_or_reads_another_principals_session() {
    let nomos = nomos().await;
    let agent = nomos.connect(AGENT, "claude-code", "2.1.0").await;
    let own = nomos.session_of("claude-code 2.1.0").await;
    let other = nomos.connect(OPERATOR, "codex", "0.9").await;
    let theirs = nomos.session_of("codex 0.9").await;
    let sessions = nomos.get("/api/sessions").await;
    let owner_of = |id: nomos_core::SessionId| {
        sessions
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id.to_string())
            .unwrap()["owner"]
            .clone()
    };
    assert_eq!(owner_of(own), "claude-code");
    assert_eq!(owner_of(theirs), "alice");

    // A read-only command runs.
    let echo = call(
        &agent,
        "run",
        json!({ "host": "local", "command": "echo agent-was-here" }),
    )
    .await;
    assert!(!is_error(&echo), "{}", text(&echo));
    assert!(text(&echo).contains("agent-was-here"), "{}", text(&echo));

    // A change is an approval request (after the operator approved the plan), which the
    // agent cannot decide over REST.
    call(&agent, "set_goal", json!({ "goal": "the file is gone" })).await;
    call(
        &agent,
        "propose_plan",
        json!({ "steps": [{ "title": "remove it" }] }),
    )
    .await;
    nomos.say(own, "approved").await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keep-me");
    std::fs::write(&file, "precious").unwrap();
    let approval = request_removal(&agent, &file).await;
    let refused = [
        (
            format!("/api/approvals/{approval}/decision"),
            json!({ "decision": "approve" }),
            "decide an approval",
        ),
        (
            format!("/api/sessions/{own}/plan/decision"),
            json!({ "generation": 1, "decision": "reject" }),
            "decide a plan",
        ),
        (
            format!("/api/sessions/{own}/messages"),
            json!({ "text": "approved" }),
            "post an operator message",
        ),
        (
            format!("/api/sessions/{own}/assent/revoke"),
            json!({}),
            "revoke an assent",
        ),
        (
            format!("/api/sessions/{theirs}/stop"),
            json!({}),
            "stop a turn",
        ),
    ];
    for (path, body, action) in &refused {
        let (status, answer) = nomos.post_as(AGENT, path, body.clone()).await;
        assert_eq!(status, 403, "{path}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("agent role"), "{message}");
        assert!(message.contains(action), "{message}");
    }
    assert!(file.exists(), "nothing the agent did ran the removal");
    let pending = nomos.get(&format!("/api/approvals?session_id={own}")).await;
    assert_eq!(pending[0]["status"], "pending", "{pending}");

    // Resources reach only the agent's own sessions; the list names only those.
    let own_plan = format!("nomos://sessions/{own}/plan");
    let their_plan = format!("nomos://sessions/{theirs}/plan");
    let plan = read_plan(&agent, &own_plan).await.unwrap();
    assert_eq!(plan["session_id"], own.to_string());
    let error = read_plan(&agent, &their_plan).await.unwrap_err();
    assert!(
        error.contains("a client reads only its own sessions"),
        "{error}"
    );
    let uris = listed(&agent).await;
    assert!(uris.contains(&own_plan), "{uris:?}");
    assert!(!uris.contains(&their_plan), "{uris:?}");
    // The other principal's client sees its own and not the agent's.
    let uris = listed(&other).await;
    assert!(
        uris.contains(&their_plan) && !uris.contains(&own_plan),
        "{uris:?}"
    );

    // An agent's later client reaches the sessions that principal made before.
    let again = nomos.connect(AGENT, "claude-code", "2.1.1").await;
    let uris = listed(&again).await;
    assert!(uris.contains(&own_plan), "{uris:?}");
    assert!(read_plan(&again, &own_plan).await.is_ok());

    // An operator decides it in Nomos.
    let (status, body) = nomos.decide(&approval, "approve").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["dispatched"], true, "{body}");
}

// rule: AUTHZ-2
#[tokio::test]
async fn authz_2_an_operator_token_in_a_client_cannot_decide_its_own_requests_by_any_route() {
    let nomos = nomos().await;
    // An agent configured with alice's operator token is still alice.
    let client = nomos.connect(OPERATOR, "goose", "1.0.0").await;
    let id = nomos.session_of("goose 1.0.0").await;
    call(&client, "set_goal", json!({ "goal": "the file is gone" })).await;
    let proposed = call(
        &client,
        "propose_plan",
        json!({ "steps": [{ "title": "remove it" }] }),
    )
    .await;
    assert!(!is_error(&proposed), "{}", text(&proposed));

    // Alice's assent in chat is no assent, and her plan decision is refused.
    let (status, body) = nomos
        .post_as(
            OPERATOR,
            &format!("/api/sessions/{id}/messages"),
            json!({ "text": "approved" }),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let (status, body) = nomos
        .post_as(
            OPERATOR,
            &format!("/api/sessions/{id}/plan/decision"),
            json!({ "generation": 1, "decision": "approve" }),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("alice may not decide a plan"),
        "{body}"
    );

    // Another operator's assent opens the window; alice's approval of the destructive
    // request that follows is refused, and the file stays.
    nomos.say(id, "approved").await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keep-me");
    std::fs::write(&file, "precious").unwrap();
    let approval = request_removal(&client, &file).await;
    let (status, body) = nomos
        .post_as(
            OPERATOR,
            &format!("/api/approvals/{approval}/decision"),
            json!({ "decision": "approve" }),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("alice may not decide an approval"),
        "{body}"
    );
    assert!(file.exists());

    // Every refusal is recorded, with who tried.
    let events = nomos
        .agent
        .store()
        .events_after(Some(id), 0, 10_000)
        .await
        .unwrap();
    let refusals: Vec<(String, Option<String>)> = events
        .iter()
        .filter_map(|e| match &e.event {
            nomos_core::event::DomainEvent::DecisionRefused {
                decision,
                principal,
                ..
            } => Some((decision.as_str().to_owned(), principal.clone())),
            _ => None,
        })
        .collect();
    let alice = Some("alice".to_owned());
    assert_eq!(
        refusals,
        vec![
            ("assent".to_owned(), alice.clone()),
            ("plan_decision".to_owned(), alice.clone()),
            ("approval".to_owned(), alice),
        ]
    );

    // Another operator decides it.
    let (status, body) = nomos
        .post_as(
            DECIDER,
            &format!("/api/approvals/{approval}/decision"),
            json!({ "decision": "approve" }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["dispatched"], true, "{body}");
}
