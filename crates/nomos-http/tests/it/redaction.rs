//! SECRET-2 over real HTTP: a command prints secrets; the model's next request holds the
//! markers and not the secrets, the store has the `output.redacted` event, and the
//! operator's API still returns the original output.

use super::{server, settle};

const SCRIPT: &str = r#"
- tool_calls:
    - {name: run, arguments: {host: local, command: "printf 'port=8443\\nDB_PASSWORD=hunter2-Xq7\\n'"}}
- text: "The config sets the port."
  expect:
    last_tool_result_contains: "DB_PASSWORD=[redacted: secret value]"
    request_not_contains: ["hunter2-Xq7"]
"#;

// rule: SECRET-2
#[tokio::test]
async fn the_model_reads_the_marker_and_the_operator_reads_the_original() {
    let server = server(SCRIPT).await;
    let id = server.create_session().await;
    assert_eq!(server.say(&id, "read the config").await.status(), 202);
    settle(&server, &id).await;

    // The second reply plays only when its request passes the expectation: the tool
    // result holds the marker, and no message of the request holds the password.
    assert_eq!(
        server.model.remaining(),
        0,
        "the model's expectation failed"
    );
    assert_eq!(server.model.played(), 2);

    let executions = server.json(&format!("/api/sessions/{id}/executions")).await;
    let stdout = executions[0]["output"]["stdout"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        stdout, "port=8443\nDB_PASSWORD=hunter2-Xq7\n",
        "{executions}"
    );

    let session: nomos_core::SessionId = id.parse().unwrap();
    let events = server
        .state
        .agent
        .store()
        .events_after(Some(session), 0, 100_000)
        .await
        .unwrap();
    let redacted: Vec<_> = events
        .iter()
        .filter(|e| e.event.kind() == "output.redacted")
        .collect();
    assert_eq!(redacted.len(), 1, "{events:?}");
    let kinds = serde_json::to_value(&redacted[0].event)
        .unwrap()
        .to_string();
    assert!(kinds.contains("secret value"), "{kinds}");
    assert!(!kinds.contains("hunter2"), "{kinds}");
}
