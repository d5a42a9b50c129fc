//! Static bearer tokens: missing, wrong, viewer, operator; public routes need none.

use serde_json::json;

use super::{OPERATOR, VIEWER, server};

#[tokio::test]
async fn a_request_without_a_token_is_unauthorized_with_a_json_error() {
    let server = server("[]").await;
    let response = server
        .http
        .get(server.url("/api/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unauthorized");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing bearer token")
    );
}

#[tokio::test]
async fn a_wrong_token_is_unauthorized() {
    let server = server("[]").await;
    let response = server
        .http
        .get(server.url("/api/sessions"))
        .bearer_auth("operator-secreT")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"]["message"], "invalid bearer token");
}

#[tokio::test]
async fn a_viewer_reads_but_cannot_write() {
    let server = server("[]").await;
    let read = server
        .http
        .get(server.url("/api/sessions"))
        .bearer_auth(VIEWER)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    let write = server
        .http
        .post(server.url("/api/sessions"))
        .bearer_auth(VIEWER)
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), 403);
    let body: serde_json::Value = write.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("viewer"),
        "{body}"
    );
}

#[tokio::test]
async fn health_readiness_and_the_ui_need_no_token_but_metrics_do() {
    let server = server("[]").await;
    for path in ["/healthz", "/readyz", "/", "/sessions/some/deep/link"] {
        let response = server.http.get(server.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
    }
    let metrics = server
        .http
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(metrics.status(), 401);
}

#[tokio::test]
async fn info_is_public_and_reveals_no_token_while_api_routes_still_need_one() {
    let server = server("[]").await;
    let response = server
        .http
        .get(server.url("/api/info"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let info: serde_json::Value = response.json().await.unwrap();
    let mut keys: Vec<&str> = info
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["auth", "demo", "model", "notice", "version"]);
    assert_eq!(info["auth"], "token");
    let text = info.to_string();
    for secret in [OPERATOR, VIEWER, "alice", "victor"] {
        assert!(!text.contains(secret), "{secret} leaked in {text}");
    }
    for path in [
        "/api/sessions",
        "/api/executions",
        "/api/approvals",
        "/api/openapi.json",
        "/api/events",
        "/metrics",
    ] {
        let response = server.http.get(server.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 401, "{path}");
    }
}

#[tokio::test]
async fn event_streams_take_the_token_as_a_query_parameter() {
    let server = server("[]").await;
    let id = server.create_session().await;
    let url = server.url(&format!(
        "/api/sessions/{id}/events?access_token={OPERATOR}"
    ));
    let response = server.http.get(&url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let mut events = super::Sse::new(response);
    assert_eq!(events.next().await.unwrap().event, "session.created");
    // Other routes do not: the token would end up in logs and histories.
    let url = server.url(&format!("/api/sessions?access_token={OPERATOR}"));
    let response = server.http.get(&url).send().await.unwrap();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn only_the_two_event_streams_take_the_token_as_a_query_parameter() {
    let server = server("[]").await;
    let global = server.url(&format!("/api/events?access_token={OPERATOR}"));
    let response = server.http.get(&global).send().await.unwrap();
    assert_eq!(response.status(), 200);
    drop(response);
    // A path that merely ends in `/events` is an entity named "events", not a stream.
    for path in ["/api/entities/events", "/events"] {
        let url = server.url(&format!("{path}?access_token={OPERATOR}"));
        let response = server.http.get(&url).send().await.unwrap();
        if path.starts_with("/api/") {
            assert_eq!(response.status(), 401, "{path}");
        } else {
            // Outside the API the UI answers, without any token.
            assert_eq!(response.status(), 200, "{path}");
        }
    }
}

#[tokio::test]
async fn an_operator_token_may_write() {
    let server = server("[]").await;
    let response = server
        .http
        .post(server.url("/api/sessions"))
        .bearer_auth(OPERATOR)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
}
