//! `GET /api/executions`: oldest first by default, newest first with `order=desc`, and pages
//! that follow a `before` cursor (an execution id or a time) without gaps or repeats.

use serde_json::Value;

use super::{Server, server, settle};

const FIVE_RUNS: &str = r#"
- tool_calls:
    - {name: run, arguments: {host: local, command: "echo 1"}}
    - {name: run, arguments: {host: local, command: "echo 2"}}
    - {name: run, arguments: {host: local, command: "echo 3"}}
    - {name: run, arguments: {host: local, command: "echo 4"}}
    - {name: run, arguments: {host: local, command: "echo 5"}}
- text: "ran five"
"#;

async fn five_executions() -> Server {
    let server = server(FIVE_RUNS).await;
    let id = server.create_session().await;
    assert_eq!(server.say(&id, "run five").await.status(), 202);
    settle(&server, &id).await;
    server
}

fn ids(page: &Value) -> Vec<String> {
    page.as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn bad_query(server: &Server, path: &str) -> String {
    let response = server.get(path).send().await.unwrap();
    assert_eq!(response.status(), 400, "{path}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "bad_query", "{path}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn newest_first_is_the_oldest_first_list_reversed() {
    let server = five_executions().await;
    let oldest_first = ids(&server.json("/api/executions").await);
    assert_eq!(oldest_first.len(), 5);
    let mut newest_first = ids(&server.json("/api/executions?order=desc").await);
    newest_first.reverse();
    assert_eq!(newest_first, oldest_first);
    let explicit = ids(&server.json("/api/executions?order=asc").await);
    assert_eq!(explicit, oldest_first);
}

#[tokio::test]
async fn the_limit_keeps_the_newest_when_newest_first() {
    let server = five_executions().await;
    let oldest_first = ids(&server.json("/api/executions").await);
    let newest_two = ids(&server.json("/api/executions?order=desc&limit=2").await);
    assert_eq!(
        newest_two,
        [oldest_first[4].clone(), oldest_first[3].clone()]
    );
    let oldest_two = ids(&server.json("/api/executions?limit=2").await);
    assert_eq!(oldest_two, oldest_first[..2]);
}

#[tokio::test]
async fn an_id_cursor_pages_newest_first_without_gaps_or_repeats() {
    let server = five_executions().await;
    let oldest_first = ids(&server.json("/api/executions").await);
    let mut seen = ids(&server.json("/api/executions?order=desc&limit=2").await);
    loop {
        let last = seen.last().unwrap().clone();
        let page = ids(&server
            .json(&format!("/api/executions?order=desc&limit=2&before={last}"))
            .await);
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 2);
        seen.extend(page);
    }
    seen.reverse();
    assert_eq!(seen, oldest_first);
    // Oldest first, an id cursor keeps what came before it.
    let before_third = ids(&server
        .json(&format!("/api/executions?before={}", oldest_first[2]))
        .await);
    assert_eq!(before_third, oldest_first[..2]);
}

#[tokio::test]
async fn a_time_cursor_keeps_what_was_requested_before_it() {
    let server = five_executions().await;
    let all = server.json("/api/executions?order=desc").await;
    let later = ids(&server
        .json("/api/executions?order=desc&before=2999-01-01T00:00:00Z")
        .await);
    assert_eq!(later, ids(&all));
    let earlier = server
        .json("/api/executions?order=desc&before=2000-01-01T00:00:00.000Z")
        .await;
    assert_eq!(earlier.as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn a_bad_cursor_order_or_limit_is_a_bad_query_naming_the_parameter() {
    let server = server("[]").await;
    let message = bad_query(&server, "/api/executions?before=yesterday").await;
    assert!(
        message.starts_with("invalid query: before: expected an execution id"),
        "{message}"
    );
    let unknown = uuid::Uuid::new_v4();
    let message = bad_query(&server, &format!("/api/executions?before={unknown}")).await;
    assert_eq!(
        message,
        format!("invalid query: before: no execution has the id {unknown}")
    );
    let message = bad_query(&server, "/api/executions?order=newest").await;
    assert!(message.contains("order"), "{message}");
    let message = bad_query(&server, "/api/executions?limit=1001").await;
    assert_eq!(
        message,
        "invalid query: limit: must be between 1 and 1000, got 1001"
    );
}
