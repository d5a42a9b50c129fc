//! The whole flow over streamable HTTP (MCP-1): the client lists tools, runs a read-only
//! command, proposes a plan, gets an approval request for a destructive command, the
//! operator approves it in Nomos, and the client receives the result by waiting.

use serde_json::json;

use crate::{OPERATOR, call, is_error, nomos, structured, text};

// rule: MCP-1
#[tokio::test]
async fn mcp_1_a_client_runs_through_the_gates_and_waits_for_the_operators_approval() {
    let nomos = nomos().await;
    let client = nomos.connect(OPERATOR, "claude-code", "2.1.0").await;

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in [
        "set_goal",
        "propose_plan",
        "update_plan_step",
        "complete_task",
        "run",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for name in [
        "list_hosts",
        "search_knowledge",
        "upsert_knowledge",
        "wait_for_approval",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }

    // The MCP session is a Nomos session on the board, named after the client.
    let id = nomos.session_of("claude-code 2.1.0").await;
    let session = nomos.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(session["status"], "active");

    // GATE-1: a read-only command runs at once.
    let read = call(
        &client,
        "run",
        json!({ "host": "local", "command": "echo hello-from-mcp" }),
    )
    .await;
    assert!(!is_error(&read), "{}", text(&read));
    assert!(text(&read).contains("hello-from-mcp"), "{}", text(&read));
    assert!(text(&read).starts_with("exit 0"), "{}", text(&read));

    let hosts = call(&client, "list_hosts", json!({})).await;
    assert!(
        text(&hosts).contains("\"slug\":\"local\""),
        "{}",
        text(&hosts)
    );

    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("stale.lock");
    std::fs::write(&marker, "stale").unwrap();
    let remove = format!("rm -f {}", marker.display());

    call(
        &client,
        "set_goal",
        json!({ "goal": "the stale lock is gone" }),
    )
    .await;
    let plan = call(
        &client,
        "propose_plan",
        json!({ "steps": [{ "title": "remove the stale lock" }] }),
    )
    .await;
    assert!(!is_error(&plan), "{}", text(&plan));
    let session = nomos.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(session["status"], "planning");

    // GATE-3: nothing that changes state before the operator assented, in Nomos.
    let early = call(
        &client,
        "run",
        json!({ "host": "local", "command": remove }),
    )
    .await;
    assert!(is_error(&early), "{}", text(&early));
    assert!(marker.exists());

    nomos.say(id, "yes, go ahead").await;
    call(
        &client,
        "update_plan_step",
        json!({ "seq": 1, "status": "running" }),
    )
    .await;

    // GATE-5: a destructive command returns the approval request.
    let asked = call(
        &client,
        "run",
        json!({ "host": "local", "command": remove }),
    )
    .await;
    assert!(!is_error(&asked), "{}", text(&asked));
    let approval = structured(&asked)["approval"].clone();
    assert_eq!(approval["command"], remove.as_str());
    assert_eq!(approval["host"], "local");
    assert_eq!(approval["class"], "destructive");
    assert!(
        approval["expires_at"].as_str().unwrap().contains('T'),
        "{approval}"
    );
    assert_eq!(
        approval["operations_url"],
        format!("{}/operations", nomos.base)
    );
    let approval_id = approval["approval_id"].as_str().unwrap().to_owned();
    assert!(text(&asked).contains(&approval_id), "{}", text(&asked));
    assert!(marker.exists(), "nothing runs before the decision");

    // The client waits; the operator approves in Nomos meanwhile.
    let peer = client.peer().clone();
    let waiting_id = approval_id.clone();
    let waiting = tokio::spawn(async move {
        call(
            &peer,
            "wait_for_approval",
            json!({ "approval_id": waiting_id, "timeout_secs": 30 }),
        )
        .await
    });
    let (status, body) = nomos.decide(&approval_id, "approve").await;
    assert_eq!(status, 200, "{body}");
    let waited = waiting.await.unwrap();
    let decision = structured(&waited);
    assert_eq!(decision["decision"], "approved", "{}", text(&waited));
    assert_eq!(decision["decided_by"], "bob");
    assert_eq!(decision["execution_status"], "completed");
    assert!(
        decision["result"].as_str().unwrap().starts_with("exit 0"),
        "{decision}"
    );
    assert!(!marker.exists(), "the approved command ran");

    call(
        &client,
        "update_plan_step",
        json!({ "seq": 1, "status": "done" }),
    )
    .await;

    // Every call is in the session view, marked with the client's name (MCP-2).
    let transcript = nomos.get(&format!("/api/sessions/{id}/transcript")).await;
    let messages = transcript.as_array().unwrap();
    let marked: Vec<_> = messages
        .iter()
        .filter(|m| m["content"] == "via MCP: claude-code 2.1.0")
        .collect();
    assert!(marked.len() >= 8, "{transcript}");
    assert!(
        marked
            .iter()
            .all(|m| m["tool_calls"].as_array().unwrap().len() == 1)
    );
    let calls = nomos.agent.store().tool_calls(id).await.unwrap();
    let waits: Vec<_> = calls
        .iter()
        .filter(|c| c.name == "wait_for_approval")
        .collect();
    assert_eq!(waits.len(), 1, "{calls:?}");
    assert!(
        waits[0].result.starts_with("Approved by bob"),
        "{}",
        waits[0].result
    );
    let executions = nomos.get(&format!("/api/sessions/{id}/executions")).await;
    let executions = executions.as_array().unwrap();
    assert_eq!(executions.len(), 2, "{executions:?}");
    // Nomos's own model never spoke: the operator's message and the continuation after
    // the decision were turns without a model call (its script is empty: a call would fail).
    let events = nomos
        .agent
        .store()
        .events_after(Some(id), 0, 10_000)
        .await
        .unwrap();
    let turns: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.event {
            nomos_core::event::DomainEvent::TurnDone {
                error,
                n_tool_calls,
            } => Some((error.clone(), *n_tool_calls)),
            _ => None,
        })
        .collect();
    assert_eq!(turns, vec![(None, 0), (None, 0)]);
}

// rule: MCP-1
#[tokio::test]
async fn mcp_1_the_inventory_and_the_plan_are_resources() {
    let nomos = nomos().await;
    let client = nomos.connect(OPERATOR, "goose", "1.0.0").await;
    call(&client, "set_goal", json!({ "goal": "know the host" })).await;
    let plan = call(
        &client,
        "propose_plan",
        json!({ "steps": [{ "title": "look around" }] }),
    )
    .await;
    assert!(!is_error(&plan), "{}", text(&plan));
    let id = nomos.session_of("goose 1.0.0").await;

    let resources = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    let plan_uri = format!("nomos://sessions/{id}/plan");
    assert_eq!(uris, vec!["nomos://hosts", plan_uri.as_str()]);

    let hosts = read(&client, "nomos://hosts").await;
    assert_eq!(hosts["hosts"][0]["slug"], "local");
    let plan = read(&client, &plan_uri).await;
    assert_eq!(plan["generation"], 1);
    assert_eq!(plan["steps"][0]["title"], "look around");
    assert_eq!(plan["steps"][0]["status"], "pending");

    let missing = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "nomos://nowhere",
        ))
        .await
        .unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("no resource at nomos://nowhere"),
        "{missing}"
    );
}

async fn read(client: &crate::Client, uri: &str) -> serde_json::Value {
    let result = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    match &result.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
            serde_json::from_str(text).unwrap()
        }
        other => panic!("expected text, got {other:?}"),
    }
}

/// A client that counts the progress notifications it hears.
struct Counting {
    info: rmcp::model::ClientConfig,
    seen: std::sync::Arc<std::sync::atomic::AtomicU32>,
}

impl rmcp::ClientHandler for Counting {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        _params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

// rule: MCP-1
#[tokio::test]
async fn mcp_1_a_long_command_reports_progress_while_it_runs() {
    use rmcp::ServiceExt;
    use rmcp::model::{ClientRequest, Request, ServerResult};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let nomos = nomos().await;
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let handler = Counting {
        info: rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("patient", "1"),
        ),
        seen: seen.clone(),
    };
    let config = StreamableHttpClientTransportConfig::with_uri(nomos.url("/mcp"))
        .auth_header(OPERATOR.to_owned());
    let client = handler
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap();
    let arguments = json!({ "host": "local", "command": "sleep 6; echo slept" });
    let params = rmcp::model::CallToolRequestParams::new("run")
        .with_arguments(arguments.as_object().unwrap().clone());
    let handle = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(params)),
            rmcp::service::PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let response = handle.await_response().await.unwrap();
    let ServerResult::CallToolResult(result) = response else {
        panic!("expected a tool result, got {response:?}");
    };
    assert!(text(&result).contains("slept"), "{}", text(&result));
    assert!(
        seen.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "no progress was reported"
    );
}
