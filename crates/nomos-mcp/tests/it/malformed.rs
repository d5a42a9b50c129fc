//! Malformed MCP input gets a protocol error or an error result that says what was wrong,
//! never a crash: the server goes on serving (MCP-1).

use serde_json::json;

use crate::{OPERATOR, call, is_error, nomos, text};

// rule: MCP-1
#[tokio::test]
async fn mcp_1_malformed_requests_get_protocol_errors_and_the_server_goes_on() {
    let nomos = nomos().await;
    let post = |body: String| {
        nomos
            .http
            .post(nomos.url("/mcp"))
            .bearer_auth(OPERATOR)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .send()
    };
    for body in [
        "{not json".to_owned(),
        "[]".to_owned(),
        json!({ "jsonrpc": "2.0", "id": 1 }).to_string(),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "run" } })
            .to_string(),
        "x".repeat(300 * 1024),
    ] {
        let response = post(body.clone()).await.unwrap();
        let status = response.status().as_u16();
        assert!(
            (400..500).contains(&status),
            "{status} for {}",
            &body[..body.len().min(80)]
        );
    }

    let client = nomos.connect(OPERATOR, "codex", "0.9").await;
    // Arguments that do not fit the schema are an error result naming the problem.
    let bad = call(&client, "run", json!({ "host": "local" })).await;
    assert!(is_error(&bad));
    assert!(
        text(&bad).contains("invalid arguments for run"),
        "{}",
        text(&bad)
    );
    let unknown_host = call(
        &client,
        "run",
        json!({ "host": "nowhere", "command": "uptime" }),
    )
    .await;
    assert!(is_error(&unknown_host));
    assert!(
        text(&unknown_host).contains("nowhere"),
        "{}",
        text(&unknown_host)
    );
    let bad_wait = call(
        &client,
        "wait_for_approval",
        json!({ "approval_id": "soon", "timeout_secs": 9999 }),
    )
    .await;
    assert!(is_error(&bad_wait));
    assert!(
        text(&bad_wait).contains("not an approval id"),
        "{}",
        text(&bad_wait)
    );
    let unknown = call(
        &client,
        "wait_for_approval",
        json!({ "approval_id": uuid::Uuid::new_v4().to_string(), "timeout_secs": 1 }),
    )
    .await;
    assert!(
        text(&unknown).contains("not found in this session"),
        "{}",
        text(&unknown)
    );

    // And the server still serves.
    let hosts = call(&client, "list_hosts", json!({})).await;
    assert!(!is_error(&hosts), "{}", text(&hosts));
    let health = nomos.http.get(nomos.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
}
