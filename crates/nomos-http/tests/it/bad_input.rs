//! Bad input gets a 4xx with a JSON error body that says what was wrong; never a 500.
//! These go through `tower::ServiceExt::oneshot`, without a socket.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use serde_json::Value;
use tower::ServiceExt;

use super::{OPERATOR, state, static_auth};

struct Harness {
    app: axum::Router,
    session: String,
    _dir: tempfile::TempDir,
}

async fn harness() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let state = state(
        store,
        Arc::new(ScriptedModel::new(Vec::new())),
        static_auth(),
    );
    let session = state.agent.create_session().await.unwrap().to_string();
    Harness {
        app: nomos_http::app(state),
        session,
        _dir: dir,
    }
}

/// Sends a request and checks the status and that the body is the JSON error shape whose
/// message contains `needle`.
async fn check(
    app: &axum::Router,
    request: Request<Body>,
    status: StatusCode,
    code: &str,
    needle: &str,
) {
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), status);
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&bytes)));
    assert_eq!(body["error"]["code"], code, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(needle), "{message:?} lacks {needle:?}");
}

fn post(uri: &str, body: &str) -> Request<Body> {
    Request::post(uri)
        .header("authorization", format!("Bearer {OPERATOR}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

fn get(uri: &str) -> Request<Body> {
    Request::get(uri)
        .header("authorization", format!("Bearer {OPERATOR}"))
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn malformed_json_is_a_bad_request() {
    let h = harness().await;
    let uri = format!("/api/sessions/{}/messages", h.session);
    check(
        &h.app,
        post(&uri, "{\"text\": "),
        StatusCode::BAD_REQUEST,
        "bad_json",
        "EOF",
    )
    .await;
}

#[tokio::test]
async fn an_unknown_field_is_named() {
    let h = harness().await;
    let uri = format!("/api/sessions/{}/messages", h.session);
    let body = r#"{"text": "hi", "priority": "high"}"#;
    check(
        &h.app,
        post(&uri, body),
        StatusCode::BAD_REQUEST,
        "bad_json",
        "priority",
    )
    .await;
}

#[tokio::test]
async fn a_wrong_type_is_named() {
    let h = harness().await;
    let uri = format!("/api/sessions/{}/messages", h.session);
    check(
        &h.app,
        post(&uri, r#"{"text": 3}"#),
        StatusCode::BAD_REQUEST,
        "bad_json",
        "text",
    )
    .await;
}

#[tokio::test]
async fn a_body_that_is_not_json_is_unsupported() {
    let h = harness().await;
    let uri = format!("/api/sessions/{}/messages", h.session);
    let request = Request::post(uri)
        .header("authorization", format!("Bearer {OPERATOR}"))
        .header("content-type", "text/plain")
        .body(Body::from("hi"))
        .unwrap();
    check(
        &h.app,
        request,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "not_json",
        "JSON",
    )
    .await;
}

#[tokio::test]
async fn an_oversize_body_is_refused() {
    let h = harness().await;
    let uri = format!("/api/sessions/{}/messages", h.session);
    let big = format!("{{\"text\": \"{}\"}}", "x".repeat(300 * 1024));
    check(
        &h.app,
        post(&uri, &big),
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        "262144",
    )
    .await;
}

#[tokio::test]
async fn an_id_that_is_not_a_uuid_is_a_bad_path() {
    let h = harness().await;
    check(
        &h.app,
        get("/api/sessions/not-a-uuid"),
        StatusCode::BAD_REQUEST,
        "bad_path",
        "UUID",
    )
    .await;
    let uri = "/api/approvals/42/decision";
    check(
        &h.app,
        post(uri, r#"{"decision": "approve"}"#),
        StatusCode::BAD_REQUEST,
        "bad_path",
        "UUID",
    )
    .await;
}

#[tokio::test]
async fn an_unknown_session_is_not_found() {
    let h = harness().await;
    let uri = format!("/api/sessions/{}", uuid::Uuid::new_v4());
    check(
        &h.app,
        get(&uri),
        StatusCode::NOT_FOUND,
        "not_found",
        "not found",
    )
    .await;
    let uri = format!("/api/sessions/{}/messages", uuid::Uuid::new_v4());
    check(
        &h.app,
        post(&uri, r#"{"text": "hi"}"#),
        StatusCode::NOT_FOUND,
        "not_found",
        "not found",
    )
    .await;
}

#[tokio::test]
async fn an_empty_message_is_refused() {
    let h = harness().await;
    let uri = format!("/api/sessions/{}/messages", h.session);
    check(
        &h.app,
        post(&uri, r#"{"text": "  "}"#),
        StatusCode::BAD_REQUEST,
        "invalid",
        "empty",
    )
    .await;
}

// rule: GATE-7
#[tokio::test]
async fn a_decision_on_an_unknown_approval_or_with_a_bad_value_is_refused() {
    let h = harness().await;
    let uri = format!("/api/approvals/{}/decision", uuid::Uuid::new_v4());
    check(
        &h.app,
        post(&uri, r#"{"decision": "approve"}"#),
        StatusCode::NOT_FOUND,
        "not_found",
        "approval",
    )
    .await;
    check(
        &h.app,
        post(&uri, r#"{"decision": "maybe"}"#),
        StatusCode::BAD_REQUEST,
        "bad_json",
        "maybe",
    )
    .await;
}

#[tokio::test]
async fn bad_query_values_are_named() {
    let h = harness().await;
    check(
        &h.app,
        get("/api/sessions?status=sleeping"),
        StatusCode::BAD_REQUEST,
        "bad_query",
        "sleeping",
    )
    .await;
    check(
        &h.app,
        get("/api/sessions?limit=0"),
        StatusCode::BAD_REQUEST,
        "bad_query",
        "limit",
    )
    .await;
    check(
        &h.app,
        get("/api/sessions?colour=red"),
        StatusCode::BAD_REQUEST,
        "bad_query",
        "colour",
    )
    .await;
    check(
        &h.app,
        get("/api/sessions?before=7f1c3a52-1111-4222-8333-944455556666"),
        StatusCode::BAD_REQUEST,
        "bad_query",
        "order=desc",
    )
    .await;
    check(
        &h.app,
        get("/api/sessions?order=desc&before=7f1c3a52-1111-4222-8333-944455556666"),
        StatusCode::BAD_REQUEST,
        "bad_query",
        "no session has the id",
    )
    .await;
    check(
        &h.app,
        get("/api/executions?status=exploded"),
        StatusCode::BAD_REQUEST,
        "bad_query",
        "exploded",
    )
    .await;
    check(
        &h.app,
        get("/api/knowledge?q=%20"),
        StatusCode::BAD_REQUEST,
        "bad_query",
        "empty",
    )
    .await;
}

#[tokio::test]
async fn a_bad_last_event_id_is_refused() {
    let h = harness().await;
    let request = Request::get(format!("/api/sessions/{}/events", h.session))
        .header("authorization", format!("Bearer {OPERATOR}"))
        .header("last-event-id", "yesterday")
        .body(Body::empty())
        .unwrap();
    check(
        &h.app,
        request,
        StatusCode::BAD_REQUEST,
        "invalid",
        "Last-Event-ID",
    )
    .await;
}

#[tokio::test]
async fn a_negative_last_event_id_in_the_query_is_refused_like_the_header() {
    let h = harness().await;
    for uri in [
        format!("/api/sessions/{}/events?last_event_id=-1", h.session),
        "/api/events?last_event_id=-1".to_owned(),
    ] {
        check(
            &h.app,
            get(&uri),
            StatusCode::BAD_REQUEST,
            "bad_query",
            "last_event_id: expected a non-negative event id, got -1",
        )
        .await;
    }
}

#[tokio::test]
async fn writes_to_unknown_paths_outside_the_api_are_refused_in_json_not_served_the_page() {
    let h = harness().await;
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let request = Request::builder()
            .method(method)
            .uri("/webhooks/deploy")
            .header("authorization", format!("Bearer {OPERATOR}"))
            .body(Body::empty())
            .unwrap();
        check(
            &h.app,
            request,
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "method not allowed",
        )
        .await;
    }
    let page = h.app.clone().oneshot(get("/sessions/123")).await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
}

#[tokio::test]
async fn unknown_api_routes_and_methods_get_json_errors() {
    let h = harness().await;
    check(
        &h.app,
        get("/api/nothing-here"),
        StatusCode::NOT_FOUND,
        "not_found",
        "/api/nothing-here",
    )
    .await;
    let request = Request::put("/api/sessions")
        .header("authorization", format!("Bearer {OPERATOR}"))
        .body(Body::empty())
        .unwrap();
    check(
        &h.app,
        request,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "method",
    )
    .await;
}

#[tokio::test]
async fn an_unknown_entity_is_not_found() {
    let h = harness().await;
    check(
        &h.app,
        get("/api/entities/host:nowhere"),
        StatusCode::NOT_FOUND,
        "not_found",
        "host:nowhere",
    )
    .await;
}
