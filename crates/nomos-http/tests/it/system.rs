//! The server itself: info, readiness, metrics, request ids, the UI, and Postgres.

use std::sync::Arc;

use nomos_postgres::PgStore;
use serde_json::{Value, json};

use super::{serve, server, settle};

#[tokio::test]
async fn info_names_the_model_and_the_auth_mode() {
    let server = server("[]").await;
    let info = server.json("/api/info").await;
    assert_eq!(info["model"], "stub");
    assert_eq!(info["demo"], false);
    assert_eq!(info["auth"], "token");
    assert!(info["notice"].is_null());
}

#[tokio::test]
async fn metrics_count_turns_tool_calls_and_executions() {
    let server = server(
        r#"
- tool_calls:
    - {name: run, arguments: {host: local, command: "echo hi"}}
- text: "done"
"#,
    )
    .await;
    let id = server.create_session().await;
    assert_eq!(server.say(&id, "say hi").await.status(), 202);
    settle(&server, &id).await;
    // The observer runs on its own task; give it a moment to count the last event.
    let mut text = String::new();
    for _ in 0..100 {
        text = server
            .get("/metrics")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if text.contains("nomos_turns_total{result=\"ok\"} 1") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for line in [
        "nomos_turns_total{result=\"ok\"} 1",
        "nomos_tool_calls_total{name=\"run\",outcome=\"ok\"} 1",
        "nomos_executions_total{class=\"read_only\",outcome=\"completed\"} 1",
        "nomos_approvals_pending 0",
        "nomos_model_requests_total{result=\"ok\"} 2",
        "nomos_model_latency_seconds_count 2",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
}

#[tokio::test]
async fn a_request_id_is_set_or_propagated() {
    let server = server("[]").await;
    let response = server
        .http
        .get(server.url("/healthz"))
        .send()
        .await
        .unwrap();
    let generated = response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(generated.len(), 36, "{generated}");
    let response = server
        .http
        .get(server.url("/healthz"))
        .header("x-request-id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"], "abc-123");
}

#[tokio::test]
async fn unknown_ui_paths_serve_the_app_page() {
    let server = server("[]").await;
    let root = server.http.get(server.url("/")).send().await.unwrap();
    assert!(
        root.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let root = root.text().await.unwrap();
    let deep = server
        .http
        .get(server.url("/sessions/123"))
        .send()
        .await
        .unwrap();
    assert_eq!(deep.text().await.unwrap(), root);
    assert!(root.contains("Nomos"));
}

#[tokio::test]
async fn readiness_fails_with_a_503_when_the_database_is_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        nomos_sqlite::SqliteStore::open_in_data_dir(dir.path())
            .await
            .unwrap(),
    );
    let server = serve(store.clone(), "[]", super::static_auth(), dir).await;
    let ready = server.http.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    store.read_pool().close().await;
    store.write_pool().close().await;
    let ready = server.http.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    let body: serde_json::Value = ready.json().await.unwrap();
    assert_eq!(body["status"], "not_ready");
    // A request that needs the database gets a 503 without internals, never a 500.
    let sessions = server.get("/api/sessions").send().await.unwrap();
    assert_eq!(sessions.status(), 503);
    let body: serde_json::Value = sessions.json().await.unwrap();
    assert!(
        !body["error"]["message"].as_str().unwrap().contains("pool"),
        "{body}"
    );
}

#[tokio::test]
async fn a_server_on_postgres_is_ready_and_chats() {
    let url = nomos_test_support::postgres::fresh_database().await;
    let store = Arc::new(PgStore::connect(&url).await.unwrap());
    let dir = tempfile::tempdir().unwrap();
    let server = serve(
        store,
        "- text: \"hello from postgres\"\n",
        super::static_auth(),
        dir,
    )
    .await;
    let ready = server.http.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let id = server.create_session().await;
    assert_eq!(server.say(&id, "hi").await.status(), 202);
    settle(&server, &id).await;
    let transcript = server.json(&format!("/api/sessions/{id}/transcript")).await;
    let last = transcript.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"], "hello from postgres");
}

#[tokio::test]
async fn a_huge_query_string_gets_a_json_error_with_its_status() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = server("[]").await;
    // HTTP clients refuse to send such a request line, so it goes out by hand.
    let address = server.base.trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
    let huge = "x".repeat(100 * 1024);
    let request = format!("GET /api/sessions?q={huge} HTTP/1.1\r\nhost: {address}\r\n\r\n");
    // hyper may answer (and close) before it has read everything.
    let _ = socket.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = socket.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 414 "), "{head}");
    assert!(head.contains("content-type: application/json"), "{head}");
    let body: Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["error"]["code"], "uri_too_long");
    // The server goes on serving.
    let health = server
        .http
        .get(server.url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

// rule: EXEC-9
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_fail_with_json_5xx_and_readiness_follows_a_full_disk_and_its_recovery() {
    let disk = nomos_test_support::small_disk::SmallDisk::mount(6);
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        nomos_sqlite::SqliteStore::open_in_data_dir(disk.path().join("data"))
            .await
            .unwrap(),
    );
    let server = serve(store, "[]", super::static_auth(), dir).await;
    assert_eq!(server.json("/readyz").await["status"], "ready");
    let id = server.create_session().await;

    disk.fill();
    let mut failed = None;
    for _ in 0..50 {
        let response = server
            .post("/api/sessions", json!({}))
            .send()
            .await
            .unwrap();
        if response.status().is_server_error() {
            failed = Some(response);
            break;
        }
    }
    let failed = failed.expect("creating sessions on a full disk never failed");
    assert_eq!(failed.status(), 503);
    let body: Value = failed.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unavailable");
    let posted = server.say(&id, "hello").await;
    assert_eq!(posted.status(), 503, "a message cannot be stored either");
    let ready = server.http.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    let ready: Value = ready.json().await.unwrap();
    assert!(
        ready["reason"].as_str().unwrap().contains("writes"),
        "{ready}"
    );

    disk.free();
    let ready = server.http.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200, "the probe write succeeds again");
    let created = server
        .post("/api/sessions", json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
}
