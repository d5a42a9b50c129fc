//! AUTHZ-1 for an application that nests the router under a prefix of its own: the route
//! table is looked up by the router's own patterns, so the prefix changes no one's rights.

use std::sync::Arc;

use axum::Router;
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use serde_json::Value;

use super::{AGENT, OPERATOR, VIEWER, state, static_auth};

/// The router under `/ops`, and a session the agent `claude-code` created (as its MCP
/// client would).
async fn nested() -> (String, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let model = Arc::new(ScriptedModel::new(Vec::new()));
    let state = state(store, model, static_auth());
    let agents = state
        .agent
        .create_client_session_by("claude-code 1.0", Some("claude-code"))
        .await
        .unwrap()
        .to_string();
    let app = Router::new().nest("/ops", nomos_http::app(state));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/ops", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, agents, dir)
}

async fn create(http: &reqwest::Client, base: &str, token: &str) -> reqwest::Response {
    http.post(format!("{base}/api/sessions"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

// rule: AUTHZ-1
#[tokio::test]
async fn under_a_prefix_each_role_keeps_exactly_its_rights() {
    let (base, agents, _dir) = nested().await;
    let http = nomos_llm::tls::http_client();

    let created = create(&http, &base, OPERATOR).await;
    assert!(created.status().is_success(), "{}", created.status());
    let operators: Value = created.json().await.unwrap();
    let operators = operators["id"].as_str().unwrap().to_owned();

    assert_eq!(create(&http, &base, VIEWER).await.status(), 403);
    assert_eq!(create(&http, &base, AGENT).await.status(), 403);

    let read = |id: String| {
        let http = http.clone();
        let url = format!("{base}/api/sessions/{id}");
        async move { http.get(url).bearer_auth(AGENT).send().await.unwrap() }
    };
    assert_eq!(read(agents).await.status(), 200);
    let refused = read(operators).await;
    assert_eq!(refused.status(), 403);
    let body: Value = refused.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("another principal's session"), "{message}");
}
