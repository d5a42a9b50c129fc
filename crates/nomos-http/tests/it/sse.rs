//! Event streams: the global stream, text deltas, and catching up from the database when a
//! subscriber lags or sees a gap.

use std::sync::Arc;

use nomos_agent::LiveEvent;
use nomos_core::event::{DomainEvent, EventRecord};
use nomos_core::{SessionId, Timestamp};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;

use super::{Server, Sse, server, static_auth};

#[tokio::test]
async fn text_streams_as_deltas_without_ids_while_the_model_speaks() {
    let server = server("- text: \"hello there operator\"\n").await;
    let id = server.create_session().await;
    let mut events = server
        .events(&format!("/api/sessions/{id}/events"), None)
        .await;
    // The stream has read the backlog: a reply it sees from now on streams as deltas. (One
    // written while the stream still reads the backlog may reach it whole, as its message.)
    assert_eq!(events.next().await.unwrap().event, "session.created");
    assert_eq!(server.say(&id, "hi").await.status(), 202);
    let mut deltas = String::new();
    let mut kinds = Vec::new();
    loop {
        let event = events.next().await.unwrap();
        kinds.push(event.event.clone());
        if event.event == "text.delta" {
            assert_eq!(event.id, None);
            deltas.push_str(event.json()["text"].as_str().unwrap());
        }
        if event.event == "turn.done" {
            break;
        }
    }
    assert!(deltas.contains("hello"), "{deltas:?} in {kinds:?}");
}

#[tokio::test]
async fn the_global_stream_numbers_events_by_global_seq_and_resumes_after_one() {
    let server = server("- text: \"one\"\n- text: \"two\"\n").await;
    let mut live = server.events("/api/events", None).await;
    let first = server.create_session().await;
    let second = server.create_session().await;
    let a = live.next().await.unwrap();
    let b = live.next().await.unwrap();
    assert_eq!(
        (a.event.as_str(), b.event.as_str()),
        ("session.created", "session.created")
    );
    assert_eq!(a.json()["session_id"], first.as_str());
    assert_eq!(b.json()["session_id"], second.as_str());
    assert_eq!(b.id.unwrap(), a.id.unwrap() + 1);
    // A reconnect after `a` gets `b` again from the database, then live events.
    let mut resumed = server.events("/api/events", a.id).await;
    assert_eq!(resumed.next().await.unwrap(), b);
}

/// A server whose bus holds one event per subscriber.
async fn tiny_bus_server() -> (Server, Arc<SqliteStore>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let model = Arc::new(ScriptedModel::new(Vec::new()));
    let state = super::state_with(store.clone(), model.clone(), static_auth(), 1);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = nomos_http::app(state.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let background = nomos_http::workers::start(&state.agent, state.metrics.clone());
    let server = Server {
        base,
        http: nomos_llm::tls::http_client(),
        state,
        model,
        dir,
        _background: background,
    };
    (server, store)
}

// The receiver lags: the stream re-reads what it missed from the database.
#[tokio::test]
async fn a_lagging_stream_catches_up_from_the_database() {
    let (server, _store) = tiny_bus_server().await;
    let id = server.create_session().await;
    let session: SessionId = id.parse().unwrap();
    let mut events: Sse = server
        .events(&format!("/api/sessions/{id}/events"), None)
        .await;
    assert_eq!(events.next().await.unwrap().id, Some(1));
    // Flood the one-slot bus synchronously (this test runs on one thread, so the stream's
    // task cannot read in between), then commit real events.
    for n in 0..50 {
        server.state.agent.bus().publish(LiveEvent::TextDelta {
            session_id: session,
            message_id: None,
            text: format!("noise {n}"),
        });
    }
    let other = server.state.agent.create_session().await.unwrap();
    server
        .state
        .agent
        .store()
        .delete_session(other)
        .await
        .unwrap();
    let response = server.say(&id, "hello").await;
    // The scripted model has no replies: the turn fails, which is still events.
    assert_eq!(response.status(), 202);
    let seen = events.until("turn.done").await;
    let ids: Vec<i64> = seen.iter().filter_map(|e| e.id).collect();
    let expected: Vec<i64> = (2..=ids.len() as i64 + 1).collect();
    assert_eq!(ids, expected);
}

// A live event with a gap before it is not trusted: the stream reads the log instead.
#[tokio::test]
async fn a_live_event_after_a_gap_is_taken_from_the_database_not_the_bus() {
    let server = server("- text: \"ok\"\n").await;
    let id = server.create_session().await;
    let session: SessionId = id.parse().unwrap();
    let mut events = server
        .events(&format!("/api/sessions/{id}/events"), None)
        .await;
    assert_eq!(events.next().await.unwrap().id, Some(1));
    server
        .state
        .agent
        .bus()
        .publish(LiveEvent::Committed(EventRecord {
            global_seq: 999,
            session_id: session,
            seq: 7,
            at: Timestamp::EPOCH,
            event: DomainEvent::Nudged,
        }));
    assert_eq!(server.say(&id, "hi").await.status(), 202);
    let seen = events.until("turn.done").await;
    assert!(seen.iter().all(|e| e.event != "task.nudged"), "{seen:?}");
    let ids: Vec<i64> = seen.iter().filter_map(|e| e.id).collect();
    assert_eq!(ids, (2..=ids.len() as i64 + 1).collect::<Vec<_>>());
}
