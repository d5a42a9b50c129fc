//! `GET /api/sessions/{id}/export` (AUDIT-2): the session's events as JSON Lines with
//! their chain hashes, which verify with nothing but the lines themselves, on SQLite
//! and on PostgreSQL.

use std::sync::Arc;

use nomos_core::Timestamp;
use nomos_core::chain::{ChainVerifier, ChainedEvent};
use nomos_core::ports::store::Store;
use nomos_postgres::PgStore;
use nomos_sqlite::SqliteStore;
use serde_json::Value;

use super::{Server, serve, static_auth};

const SCRIPT: &str = r#"
- text: "Hello: nothing to do."
"#;

async fn exported_lines(server: &Server) -> (String, Vec<Value>) {
    let id = server.create_session().await;
    let mut events = server
        .events(&format!("/api/sessions/{id}/events"), None)
        .await;
    assert_eq!(server.say(&id, "hi there").await.status(), 202);
    let streamed = events.until("turn.done").await;

    let response = server
        .get(&format!("/api/sessions/{id}/export"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/x-ndjson"
    );
    let text = response.text().await.unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(lines.len() >= streamed.len(), "{text}");
    (id, lines)
}

fn verify_lines(id: &str, lines: &[Value]) {
    let mut verifier = ChainVerifier::new();
    for (n, line) in lines.iter().enumerate() {
        assert_eq!(line["session_id"], id);
        assert_eq!(line["seq"], n as i64 + 1);
        let event = ChainedEvent {
            session_id: id.parse().unwrap(),
            seq: line["seq"].as_i64().unwrap(),
            at: Timestamp::from_millis(line["at_ms"].as_i64().unwrap()),
            kind: line["kind"].as_str().unwrap().to_owned(),
            payload: line["payload"].clone(),
            hash: line["hash"].as_str().map(str::to_owned),
        };
        verifier.check(&event).unwrap();
    }
}

// rule: AUDIT-2
async fn the_export_carries_hashes_that_verify(store: Arc<dyn Store>) {
    let server = serve(store, SCRIPT, static_auth(), tempfile::tempdir().unwrap()).await;
    let (id, lines) = exported_lines(&server).await;
    assert_eq!(lines[0]["kind"], "session.created");
    assert!(lines.iter().any(|l| l["kind"] == "turn.done"));
    verify_lines(&id, &lines);

    // A line changed after the export no longer verifies.
    let mut edited = lines.clone();
    edited[1]["payload"]["edited"] = Value::Bool(true);
    let mut verifier = ChainVerifier::new();
    let broken = edited.iter().find_map(|line| {
        let event = ChainedEvent {
            session_id: id.parse().unwrap(),
            seq: line["seq"].as_i64().unwrap(),
            at: Timestamp::from_millis(line["at_ms"].as_i64().unwrap()),
            kind: line["kind"].as_str().unwrap().to_owned(),
            payload: line["payload"].clone(),
            hash: line["hash"].as_str().map(str::to_owned),
        };
        verifier.check(&event).err()
    });
    assert_eq!(broken.map(|b| b.seq), Some(2));

    let missing = server
        .get("/api/sessions/00000000-0000-4000-8000-000000000099/export")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

// rule: AUDIT-2
#[tokio::test]
async fn the_export_carries_hashes_that_verify_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    the_export_carries_hashes_that_verify(store).await;
}

// rule: AUDIT-2
#[tokio::test]
async fn the_export_carries_hashes_that_verify_on_postgres() {
    let url = nomos_test_support::postgres::fresh_database().await;
    let store = Arc::new(PgStore::connect(&url).await.unwrap());
    the_export_carries_hashes_that_verify(store).await;
}
