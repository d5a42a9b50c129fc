//! AUTHZ-1 over real HTTP: the admin API of named tokens. An operator creates an agent
//! token (shown once, kept as a hash), lists it and revokes it; the token works at once
//! after it is made and is refused at once after it is revoked, with no restart; a viewer
//! and an agent are refused every token route with a 403 naming the role and the action.

use std::sync::Arc;

use nomos_http::tokens::TokenStore;
use nomos_http::{Auth, Role, StaticToken};
use serde_json::{Value, json};

use super::{AGENT, OPERATOR, SECOND_OPERATOR, Server, VIEWER, server_with};

/// A server whose named tokens live in `dir`'s `tokens.toml`, beside the static ones.
async fn token_server(dir: &tempfile::TempDir) -> Server {
    let auth = Auth::Required {
        tokens: vec![
            StaticToken::from_secret("alice", OPERATOR, Role::Operator),
            StaticToken::from_secret("victor", VIEWER, Role::Viewer),
            StaticToken::from_secret("claude-code", AGENT, Role::Agent),
            StaticToken::from_secret("bob", SECOND_OPERATOR, Role::Operator),
        ],
        oidc: None,
        store: Some(Arc::new(TokenStore::in_dir(dir.path()))),
    };
    server_with("[]", auth).await
}

async fn call(
    server: &Server,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = server
        .http
        .request(method, server.url(path))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

// rule: AUTHZ-1
#[tokio::test]
async fn authz_1_an_operator_creates_lists_and_revokes_a_token_that_stops_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = token_server(&dir).await;
    let (status, body) = call(
        &server,
        OPERATOR,
        reqwest::Method::POST,
        "/api/tokens",
        Some(json!({"name": "ci-bot", "role": "agent"})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["name"], "ci-bot");
    assert_eq!(body["role"], "agent");
    let secret = body["token"].as_str().unwrap().to_owned();
    assert_eq!(secret.len(), 64);
    let kept = std::fs::read_to_string(dir.path().join("tokens.toml")).unwrap();
    assert!(!kept.contains(&secret), "only the hash is kept: {kept}");

    // The new token works at once, as an agent.
    let (status, body) = call(
        &server,
        &secret,
        reqwest::Method::GET,
        "/api/sessions",
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = call(&server, &secret, reqwest::Method::GET, "/api/grants", None).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ci-bot has the agent role"),
        "{body}"
    );

    // Listed by name and role, never the token.
    let (status, list) = call(&server, OPERATOR, reqwest::Method::GET, "/api/tokens", None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list, json!([{"name": "ci-bot", "role": "agent"}]));

    // A taken name is a 409.
    let (status, _) = call(
        &server,
        OPERATOR,
        reqwest::Method::POST,
        "/api/tokens",
        Some(json!({"name": "ci-bot", "role": "viewer"})),
    )
    .await;
    assert_eq!(status, 409);

    // Revoked: refused on the next request, no restart.
    let (status, body) = call(
        &server,
        OPERATOR,
        reqwest::Method::DELETE,
        "/api/tokens/ci-bot",
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"name": "ci-bot", "role": "agent"}));
    let (status, body) = call(
        &server,
        &secret,
        reqwest::Method::GET,
        "/api/sessions",
        None,
    )
    .await;
    assert_eq!(status, 401, "{body}");
    let (status, _) = call(
        &server,
        OPERATOR,
        reqwest::Method::DELETE,
        "/api/tokens/ci-bot",
        None,
    )
    .await;
    assert_eq!(status, 404);

    // A token revoked in the file by another process (`nomos-server token revoke`) stops
    // at once too.
    let (_, body) = call(
        &server,
        OPERATOR,
        reqwest::Method::POST,
        "/api/tokens",
        Some(json!({"name": "other", "role": "viewer"})),
    )
    .await;
    let other = body["token"].as_str().unwrap().to_owned();
    let (status, _) = call(&server, &other, reqwest::Method::GET, "/api/sessions", None).await;
    assert_eq!(status, 200);
    TokenStore::in_dir(dir.path()).revoke("other").unwrap();
    let (status, _) = call(&server, &other, reqwest::Method::GET, "/api/sessions", None).await;
    assert_eq!(status, 401);
}

// rule: AUTHZ-1
#[tokio::test]
async fn authz_1_viewers_and_agents_are_refused_the_token_routes_naming_role_and_action() {
    let dir = tempfile::tempdir().unwrap();
    let server = token_server(&dir).await;
    let routes = [
        (reqwest::Method::GET, "/api/tokens", None, "list tokens"),
        (
            reqwest::Method::POST,
            "/api/tokens",
            Some(json!({"name": "sneaky", "role": "operator"})),
            "create a token",
        ),
        (
            reqwest::Method::DELETE,
            "/api/tokens/alice",
            None,
            "revoke a token",
        ),
    ];
    for (token, who) in [
        (VIEWER, "victor is a viewer"),
        (AGENT, "claude-code has the agent role"),
    ] {
        for (method, path, body, action) in &routes {
            let (status, answer) = call(&server, token, method.clone(), path, body.clone()).await;
            assert_eq!(status, 403, "{method} {path}: {answer}");
            let text = answer["error"]["message"].as_str().unwrap();
            assert!(text.contains(who), "{text}");
            assert!(text.contains(action), "{text}");
        }
    }
    assert!(
        TokenStore::in_dir(dir.path()).list().unwrap().is_empty(),
        "nothing was created"
    );
}
