//! AUTHZ-1: every refusal by role is a `nomos::audit` line naming who, with which role, was
//! refused what, beside the 403 the caller reads.

use nomos_test_support::audit::capture;
use serde_json::Value;

use super::{AGENT, VIEWER, server};

// rule: AUTHZ-1
#[tokio::test]
async fn each_refusal_by_role_is_an_audit_line_naming_the_principal_role_and_action() {
    let (_guard, buffer) = capture();
    let server = server("[]").await;
    let approval = "00000000-0000-0000-0000-00000000000a";
    let path = format!("/api/approvals/{approval}/decision");
    let decided = server
        .http
        .post(server.url(&path))
        .bearer_auth(AGENT)
        .json(&serde_json::json!({"decision": "approve"}))
        .send()
        .await
        .unwrap();
    assert_eq!(decided.status(), 403);
    let listed = server
        .http
        .get(server.url("/api/tokens"))
        .bearer_auth(VIEWER)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 403);

    let lines = buffer.with_message("refused");
    let field = |line: &Value, name: &str| line[name].as_str().unwrap_or_default().to_owned();
    let seen: Vec<[String; 4]> = lines
        .iter()
        .map(|line| ["principal", "role", "method", "path"].map(|name| field(line, name)))
        .collect();
    let expected = [
        [
            "claude-code",
            "agent",
            "POST",
            "/api/approvals/{id}/decision",
        ],
        ["victor", "viewer", "GET", "/api/tokens"],
    ]
    .map(|row| row.map(str::to_owned));
    assert_eq!(seen, expected, "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|line| line["action"].as_str().is_some_and(|a| !a.is_empty())),
        "{lines:?}"
    );
}
