//! AUTHZ-1 over real HTTP: the access table of `nomos_http::authz` is walked route by route
//! (and checked against the OpenAPI document the handlers generate, so a new route cannot
//! be left out): an agent token is refused, with a 403 naming its role and the action,
//! every route that decides, changes or reads across principals, and every session route
//! of a session it did not create; it reads its own sessions and the shared context.

use std::collections::BTreeSet;

use nomos_http::authz::{Need, ROUTES};
use reqwest::Method;
use serde_json::{Value, json};

use super::{AGENT, OPERATOR, Server, VIEWER, server};

/// Routes outside the table: public ones, which need no token.
const PUBLIC: &[(&str, &str)] = &[
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/api/info"),
];

fn concrete(path: &str, session: &str) -> String {
    path.replace("{id}", session).replace("{slug}", "local")
}

/// The path of a rule with `{id}` filled: a session id for session routes, a fresh
/// approval id for approval routes.
fn path_for(path: &str, session: &str) -> String {
    if path.starts_with("/api/approvals/") {
        concrete(path, &uuid::Uuid::new_v4().to_string())
    } else {
        concrete(path, session)
    }
}

async fn send(server: &Server, token: &str, method: &Method, path: &str) -> (u16, Value) {
    let mut request = server
        .http
        .request(method.clone(), server.url(path))
        .bearer_auth(token);
    if *method != Method::GET {
        request = request.json(&json!({}));
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    // Event streams answer 200 and go on: only their status is read.
    if response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap_or_default() == "text/event-stream")
    {
        return (status, Value::Null);
    }
    (status, response.json().await.unwrap_or(Value::Null))
}

fn message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or_default()
}

/// A session the agent `claude-code` created (as its MCP client would).
async fn agents_session(server: &Server) -> String {
    server
        .state
        .agent
        .create_client_session_by("claude-code 1.0", Some("claude-code"))
        .await
        .unwrap()
        .to_string()
}

// rule: AUTHZ-1
#[test]
fn authz_1_the_access_table_names_exactly_the_documented_routes() {
    let doc: Value = serde_json::from_str(&nomos_http::openapi::document_json()).unwrap();
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let method = method.to_uppercase();
            if !PUBLIC.contains(&(method.as_str(), path.as_str())) {
                documented.insert((method, path.clone()));
            }
        }
    }
    let listed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|rule| (rule.method.to_string(), rule.path.to_owned()))
        .collect();
    assert_eq!(
        listed, documented,
        "the access table and the routes of the OpenAPI document differ"
    );
}

// rule: AUTHZ-1
#[tokio::test]
async fn authz_1_an_agent_is_refused_every_route_it_may_not_take_naming_role_and_action() {
    let server = server("[]").await;
    let theirs = server.create_session().await;
    let own = agents_session(&server).await;
    let mut refused = Vec::new();
    for rule in ROUTES {
        let method = Method::from_bytes(rule.method.as_str().as_bytes()).unwrap();
        match rule.need {
            Need::Operate | Need::Administer | Need::ReadAll => {
                // Refused whatever session it names, its own included.
                for session in [&theirs, &own] {
                    let path = path_for(rule.path, session);
                    let (status, body) = send(&server, AGENT, &method, &path).await;
                    assert_eq!(status, 403, "{method} {path}: {body}");
                    assert_eq!(body["error"]["code"], "forbidden", "{body}");
                    let text = message(&body);
                    assert!(text.contains("claude-code has the agent role"), "{text}");
                    assert!(text.contains(rule.action), "{method} {path}: {text}");
                }
                refused.push(format!("{method} {}", rule.path));
            }
            Need::ReadOwn => {
                let path = path_for(rule.path, &theirs);
                let (status, body) = send(&server, AGENT, &method, &path).await;
                assert_eq!(status, 403, "{method} {path}: {body}");
                let text = message(&body);
                assert!(text.contains("agent role"), "{text}");
                assert!(text.contains("another principal's session"), "{text}");
                let path = path_for(rule.path, &own);
                let (status, body) = send(&server, AGENT, &method, &path).await;
                assert_eq!(status, 200, "its own session: {method} {path}: {body}");
                refused.push(format!("{method} {} (another's session)", rule.path));
            }
            Need::ListOwn | Need::Shared => {
                // Allowed: whatever the handler answers (an unknown entity is a 404), it
                // is not a refusal.
                let path = path_for(rule.path, &own);
                let (status, body) = send(&server, AGENT, &method, &path).await;
                assert!(
                    matches!(status, 200 | 400 | 404),
                    "{method} {path}: {status} {body}"
                );
                assert_ne!(body["error"]["code"], "forbidden", "{body}");
            }
        }
    }
    // The table holds every decision and control; the count is the table's.
    for must in [
        "POST /api/approvals/{id}/decision",
        "POST /api/sessions/{id}/plan/decision",
        "POST /api/sessions/{id}/messages",
        "POST /api/sessions/{id}/assent/revoke",
        "POST /api/sessions/{id}/stop",
        "GET /api/grants",
    ] {
        assert!(refused.iter().any(|r| r == must), "{must} in {refused:?}");
    }
    eprintln!(
        "agent-refused routes: {} of {} in the access table",
        refused.len(),
        ROUTES.len()
    );
}

// rule: AUTHZ-1
#[tokio::test]
async fn authz_1_a_viewer_is_refused_every_route_that_operates() {
    let server = server("[]").await;
    let session = server.create_session().await;
    let mut refused = 0;
    let operators_only = ROUTES
        .iter()
        .filter(|r| matches!(r.need, Need::Operate | Need::Administer));
    for rule in operators_only {
        let method = Method::from_bytes(rule.method.as_str().as_bytes()).unwrap();
        let path = path_for(rule.path, &session);
        let (status, body) = send(&server, VIEWER, &method, &path).await;
        assert_eq!(status, 403, "{method} {path}: {body}");
        let text = message(&body);
        assert!(text.contains("victor is a viewer"), "{text}");
        assert!(text.contains(rule.action), "{text}");
        refused += 1;
    }
    // The admin API of tokens is among them.
    assert!(
        ROUTES
            .iter()
            .filter(|r| r.path.starts_with("/api/tokens"))
            .all(|r| r.need == Need::Administer)
    );
    eprintln!(
        "viewer-refused routes: {refused} of {} in the access table",
        ROUTES.len()
    );
}

// rule: AUTHZ-1
#[tokio::test]
async fn authz_1_an_agent_lists_only_the_sessions_it_created() {
    let server = server("[]").await;
    let theirs = server.create_session().await;
    let own = agents_session(&server).await;
    let (status, body) = send(&server, AGENT, &Method::GET, "/api/sessions").await;
    assert_eq!(status, 200, "{body}");
    let ids: Vec<&str> = body
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![own.as_str()]);
    let (_, all) = send(&server, OPERATOR, &Method::GET, "/api/sessions").await;
    let all: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(all.contains(&theirs.as_str()) && all.contains(&own.as_str()));
    // The session says who created it.
    let (_, read) = send(
        &server,
        OPERATOR,
        &Method::GET,
        &format!("/api/sessions/{theirs}"),
    )
    .await;
    assert_eq!(read["owner"], "alice", "{read}");
}
