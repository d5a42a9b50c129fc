//! The token's role applies to MCP calls (MCP-2): a viewer lists the tools and reads, and
//! every call that would run a command or change a record is refused, and recorded.

use serde_json::json;

use crate::{OPERATOR, VIEWER, call, is_error, nomos, text};

// rule: MCP-2
#[tokio::test]
async fn mcp_2_a_viewer_lists_and_reads_but_cannot_run_or_propose() {
    let nomos = nomos().await;
    let viewer = nomos.connect(VIEWER, "cursor", "0.50").await;
    let tools = viewer.list_all_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name == "run"),
        "the viewer sees the tools"
    );

    let hosts = call(&viewer, "list_hosts", json!({})).await;
    assert!(!is_error(&hosts), "{}", text(&hosts));
    assert!(text(&hosts).contains("local"), "{}", text(&hosts));
    let search = call(&viewer, "search_knowledge", json!({ "query": "backup" })).await;
    assert!(!is_error(&search), "{}", text(&search));

    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("made-by-a-viewer");
    let refused = [
        (
            "run",
            json!({ "host": "local", "command": "echo read-only-but-a-command" }),
        ),
        (
            "run",
            json!({ "host": "local", "command": format!("touch {}", marker.display()) }),
        ),
        ("set_goal", json!({ "goal": "take over" })),
        (
            "propose_plan",
            json!({ "steps": [{ "title": "change things" }] }),
        ),
        ("update_plan_step", json!({ "seq": 1, "status": "running" })),
        (
            "complete_task",
            json!({ "outcome": "success", "summary": "done" }),
        ),
        ("upsert_knowledge", json!({ "title": "t", "content": "c" })),
        (
            "update_entity_attributes",
            json!({ "slug": "local", "attributes": { "os": "x" } }),
        ),
        (
            "create_relationship",
            json!({ "from": "a", "kind": "runs_on", "to": "b" }),
        ),
    ];
    for (name, arguments) in &refused {
        let result = call(&viewer, name, arguments.clone()).await;
        assert!(
            is_error(&result),
            "{name} was not refused: {}",
            text(&result)
        );
        assert!(
            text(&result).contains("needs the operator role"),
            "{name}: {}",
            text(&result)
        );
    }
    assert!(!marker.exists());

    // Refusals are recorded like any call, and changed nothing.
    let id = nomos.session_of("cursor 0.50").await;
    let session = nomos.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(session["status"], "active");
    assert_eq!(session["plan_generation"], 0);
    let executions = nomos.agent.session(id).await.unwrap().executions;
    assert!(executions.is_empty(), "{executions:?}");
    let calls = nomos.agent.store().tool_calls(id).await.unwrap();
    let n_refused = calls
        .iter()
        .filter(|c| c.outcome == nomos_core::record::ToolCallOutcome::Refused)
        .count();
    assert_eq!(n_refused, refused.len());
    assert_eq!(calls.len(), refused.len() + 2);
}

// rule: MCP-2
#[tokio::test]
async fn mcp_2_a_request_without_a_valid_token_is_unauthorized() {
    let nomos = nomos().await;
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "intruder", "version": "1" } }
    });
    for token in [None, Some("wrong-secret")] {
        let mut request = nomos
            .http
            .post(nomos.url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401, "{token:?}");
    }
    let sessions = nomos.get("/api/sessions").await;
    assert_eq!(
        sessions.as_array().unwrap().len(),
        0,
        "no session was created"
    );
    // An operator's client is served on the same route.
    let client = nomos.connect(OPERATOR, "codex", "0.9").await;
    assert!(!client.list_all_tools().await.unwrap().is_empty());
}
