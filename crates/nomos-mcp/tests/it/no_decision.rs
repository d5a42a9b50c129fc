//! No MCP client can decide an approval (MCP-2): every way a client could try, through
//! tools, arguments, resources and raw protocol methods, leaves the approval pending and
//! the command unrun; only the operator's decision in Nomos runs it.

use rmcp::model::ReadResourceRequestParams;
use serde_json::json;

use crate::{OPERATOR, call, is_error, nomos, structured, text};

// rule: MCP-2
#[tokio::test]
async fn mcp_2_no_tool_argument_resource_or_method_of_mcp_decides_an_approval() {
    let nomos = nomos().await;
    let client = nomos.connect(OPERATOR, "claude-code", "2.1.0").await;
    let id = nomos.session_of("claude-code 2.1.0").await;
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("keep-me");
    std::fs::write(&marker, "precious").unwrap();
    let remove = format!("rm -f {}", marker.display());
    call(&client, "set_goal", json!({ "goal": "the file is gone" })).await;
    call(
        &client,
        "propose_plan",
        json!({ "steps": [{ "title": "remove it" }] }),
    )
    .await;
    nomos.say(id, "approved").await;
    let asked = call(
        &client,
        "run",
        json!({ "host": "local", "command": remove }),
    )
    .await;
    let approval_id = structured(&asked)["approval"]["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // No served tool is about deciding.
    let tools = client.list_all_tools().await.unwrap();
    for tool in &tools {
        let name = tool.name.to_lowercase();
        assert!(
            !name.contains("decide") && !name.contains("approve") && !name.contains("deny"),
            "{name}"
        );
    }
    // Tools that do not exist are protocol errors.
    for name in [
        "decide",
        "approve",
        "deny",
        "decide_approval",
        "approve_approval",
        "ask_operator",
    ] {
        let params = rmcp::model::CallToolRequestParams::new(name.to_owned()).with_arguments(
            json!({ "approval_id": approval_id, "decision": "approve" })
                .as_object()
                .unwrap()
                .clone(),
        );
        let error = client.call_tool(params).await.unwrap_err();
        assert!(
            error.to_string().contains("unknown tool"),
            "{name}: {error}"
        );
    }
    // Extra arguments to the tools that exist decide nothing.
    let waited = call(
        &client,
        "wait_for_approval",
        json!({ "approval_id": approval_id, "timeout_secs": 1, "decision": "approve", "approve": true }),
    )
    .await;
    assert_eq!(
        structured(&waited)["decision"],
        "pending",
        "{}",
        text(&waited)
    );
    for (name, arguments) in [
        (
            "run",
            json!({ "host": "local", "command": remove, "approval_id": approval_id, "approved": true }),
        ),
        (
            "run",
            json!({ "host": "local", "command": format!("curl -X POST {}/api/approvals/{approval_id}/decision", nomos.base) }),
        ),
        (
            "upsert_knowledge",
            json!({ "title": "approval", "content": format!("{approval_id} approved") }),
        ),
    ] {
        let result = call(&client, name, arguments).await;
        assert_ne!(
            structured(&result)["approval"]["approval_id"],
            approval_id,
            "{name}: {}",
            text(&result)
        );
        let _ = is_error(&result);
    }
    // Resources are read-only and have no decision.
    for uri in [
        format!("nomos://approvals/{approval_id}/decision"),
        format!("nomos://approvals/{approval_id}?decision=approve"),
    ] {
        let error = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("no resource"), "{uri}: {error}");
    }
    // Raw protocol methods that are not MCP's are refused by the server.
    for method in ["approvals/decide", "nomos/decide", "tools/approve"] {
        let request = rmcp::model::CustomRequest::new(
            method,
            Some(json!({ "approval_id": approval_id, "decision": "approve" })),
        );
        let error = client
            .send_request(rmcp::model::ClientRequest::CustomRequest(request))
            .await
            .unwrap_err();
        assert!(
            error.to_string().to_lowercase().contains(method)
                || error.to_string().contains("-32601")
                || error.to_string().to_lowercase().contains("not found"),
            "{method}: {error}"
        );
    }
    // The approval is still pending and the command never ran.
    let approval = nomos
        .agent
        .store()
        .approval(nomos_core::ApprovalId(approval_id.parse().unwrap()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(approval.status, nomos_core::ApprovalStatus::Pending);
    assert!(marker.exists(), "the command did not run");
    let pending = nomos.get("/api/approvals").await;
    assert!(pending.to_string().contains(&approval_id), "{pending}");
}
