//! How long `GET /api/events` without `Last-Event-ID` takes to answer with headers when
//! the event log is long (it used to read the whole log to find its end).
//!
//! ```text
//! cargo run -p nomos-http --example events_connect -- 300000
//! ```
//!
//! Seeds that many events into a SQLite file (sessions of 1,000 events each), serves
//! `nomos_http::app` on loopback, then opens the stream ten times over TCP and prints the
//! median and the worst time from sending the request to the end of the headers. It also
//! times reading the whole log a page at a time, as the handler did before it asked the
//! store for `newest_global_seq`.

// An example that cannot set up has nothing to measure: failing loudly is right.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_agent::Agent;
use nomos_core::SessionStatus;
use nomos_core::event::DomainEvent;
use nomos_core::ports::store::{Commit, Store};
use nomos_http::{AppState, Auth, Metrics};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::LocalExecutor;
use nomos_test_support::store_contract::fixtures::{create_commit, event, session, session_id};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const PER_SESSION: usize = 1000;

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(300_000, |arg| arg.parse().expect("a number of events"));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let seeded = Instant::now();
    let mut written = 0;
    let mut idx = 0;
    while written < n {
        idx += 1;
        let mut record = session(session_id(idx), SessionStatus::Active);
        store.commit(create_commit(record.clone())).await.unwrap();
        record.version = 1;
        let count = PER_SESSION.min(n - written).saturating_sub(1).max(1);
        let events = (0..count)
            .map(|i| event(i as i64, DomainEvent::Nudged))
            .collect();
        store
            .commit(Commit {
                expected_version: Some(1),
                session: Some(record),
                events,
                ..Commit::default()
            })
            .await
            .unwrap();
        written += count + 1;
    }
    let newest = store.newest_global_seq().await.unwrap();
    println!(
        "seeded {newest} events in {:.1} s",
        seeded.elapsed().as_secs_f64()
    );

    let paging = Instant::now();
    let mut last = 0;
    loop {
        let page = store.events_after(None, last, 5000).await.unwrap();
        match page.last() {
            Some(record) => last = record.global_seq,
            None => break,
        }
    }
    assert_eq!(last, newest);
    println!(
        "reading the log a page at a time to find its end: {:.1} ms",
        paging.elapsed().as_secs_f64() * 1e3
    );

    let model = Arc::new(ScriptedModel::from_yaml_str("[]").unwrap());
    let agent = Agent::builder(store, Arc::new(LocalExecutor::new()), model).build();
    let (_stop, stopping) = tokio::sync::watch::channel(false);
    let state = AppState::new(
        agent,
        Auth::Disabled,
        Arc::new(Metrics::default()),
        false,
        stopping,
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, nomos_http::app(state)).await });

    let mut times = Vec::new();
    for _ in 0..10 {
        times.push(time_to_headers(addr).await);
    }
    times.sort();
    println!(
        "GET /api/events to headers: median {:.2} ms, worst {:.2} ms ({} tries)",
        times[times.len() / 2].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3,
        times.len()
    );
}

/// From writing the request to reading the blank line that ends the headers.
async fn time_to_headers(addr: std::net::SocketAddr) -> Duration {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request =
        format!("GET /api/events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n");
    let started = Instant::now();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "the server closed the connection");
        head.extend_from_slice(&buf[..n]);
    }
    let elapsed = started.elapsed();
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    elapsed
}
