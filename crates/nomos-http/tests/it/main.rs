//! Integration tests of the HTTP API over real parts: a real SQLite file (and Postgres),
//! the scripted model, the local executor, and real HTTP on loopback.

// The harness is shared by the test modules only; it is not an API.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod audit;
mod auth;
mod authz;
mod bad_input;
mod channels;
mod console;
mod control;
mod executions;
mod export;
mod flow;
mod guests;
mod nested;
#[cfg(feature = "oidc")]
mod oidc;
mod openapi;
mod plan_decision;
mod redaction;
mod sse;
mod system;
mod tokens;
mod two_person;
mod two_person_plan;
mod who;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use nomos_agent::{Agent, AgentConfig};
use nomos_core::ports::store::Store;
use nomos_core::{Classification, CommandClass, Span};
use nomos_http::{AppState, Auth, Metrics, Role, StaticToken};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::LocalExecutor;
use serde_json::Value;
use tempfile::TempDir;
use tokio::sync::watch;

pub const OPERATOR: &str = "operator-secret";
pub const VIEWER: &str = "viewer-secret";
/// AUTHZ-1: an agent token, named like the MCP client that would hold it.
pub const AGENT: &str = "agent-secret";
/// A second operator, for the two-person rule (AUTHZ-3).
pub const SECOND_OPERATOR: &str = "bob-secret";

/// A test classifier with a fixed vocabulary, so the tests do not depend on the real
/// classifier's choices: `rm` is destructive, `touch` changes state, the rest only reads.
pub fn classifier(command: &str) -> Classification {
    if command.starts_with("rm ") {
        Classification::new(CommandClass::Destructive, "`rm` deletes files")
    } else if command.starts_with("touch ") {
        Classification::new(CommandClass::ConfigMutation, "`touch` writes files")
    } else {
        Classification::new(CommandClass::ReadOnly, "reads only")
    }
}

pub fn static_auth() -> Auth {
    Auth::Required {
        tokens: vec![
            StaticToken::from_secret("alice", OPERATOR, Role::Operator),
            StaticToken::from_secret("victor", VIEWER, Role::Viewer),
            StaticToken::from_secret("claude-code", AGENT, Role::Agent),
            StaticToken::from_secret("bob", SECOND_OPERATOR, Role::Operator),
        ],
        oidc: None,
        store: None,
    }
}

/// The state over a fresh agent.
pub fn state(store: Arc<dyn Store>, model: Arc<ScriptedModel>, auth: Auth) -> AppState {
    state_with(store, model, auth, 4096)
}

/// The state over a fresh agent whose bus holds `bus_capacity` events per subscriber.
pub fn state_with(
    store: Arc<dyn Store>,
    model: Arc<ScriptedModel>,
    auth: Auth,
    bus_capacity: usize,
) -> AppState {
    state_configured(store, model, auth, bus_capacity, |_| {})
}

/// The state over a fresh agent whose configuration `configure` adjusts.
pub fn state_configured(
    store: Arc<dyn Store>,
    model: Arc<ScriptedModel>,
    auth: Auth,
    bus_capacity: usize,
    configure: impl FnOnce(&mut AgentConfig),
) -> AppState {
    let mut config = AgentConfig::spec_defaults();
    // SAFE-2: backups of the local executor's changes stay in the temporary directory.
    config.backup.root = std::env::temp_dir()
        .join("nomos-http-tests-backup")
        .display()
        .to_string();
    config.classifier = Arc::new(|command: &str, _shell| classifier(command));
    config.resume.backoff = vec![Span::from_millis(5), Span::from_millis(10)];
    configure(&mut config);
    let metrics = Arc::new(Metrics::default());
    let metered = Arc::new(nomos_http::MeteredModel::new(model, metrics.clone()));
    let agent = Agent::builder(store, Arc::new(LocalExecutor::new()), metered)
        .config(config)
        .bus_capacity(bus_capacity)
        .build();
    let (stop, stopping) = watch::channel(false);
    // Tests never shut the state down; leak the sender so streams stay open.
    std::mem::forget(stop);
    AppState::new(agent, auth, metrics, false, stopping)
}

/// A server on loopback over a SQLite file in a temporary directory.
pub struct Server {
    pub base: String,
    pub http: reqwest::Client,
    pub state: AppState,
    pub model: Arc<ScriptedModel>,
    pub dir: TempDir,
    _background: nomos_http::workers::Background,
}

pub async fn server(script: &str) -> Server {
    server_with(script, static_auth()).await
}

pub async fn server_with(script: &str, auth: Auth) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    serve(store, script, auth, dir).await
}

pub async fn serve(store: Arc<dyn Store>, script: &str, auth: Auth, dir: TempDir) -> Server {
    let model = Arc::new(ScriptedModel::from_yaml_str(script).unwrap());
    let state = state(store, model.clone(), auth);
    listen(state, model, dir).await
}

/// A server over a SQLite file whose agent configuration `configure` adjusts.
pub async fn server_configured(script: &str, configure: impl FnOnce(&mut AgentConfig)) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let model = Arc::new(ScriptedModel::from_yaml_str(script).unwrap());
    let state = state_configured(store, model.clone(), static_auth(), 4096, configure);
    listen(state, model, dir).await
}

/// A server over a SQLite file with the given model and executor (the `model` field is
/// then an empty script).
pub async fn serve_parts(
    model: Arc<dyn nomos_core::ports::chat::ChatModel>,
    executor: Arc<dyn nomos_core::ports::exec::Executor>,
) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let mut config = AgentConfig::spec_defaults();
    // SAFE-2: backups of the local executor's changes stay in the temporary directory.
    config.backup.root = std::env::temp_dir()
        .join("nomos-http-tests-backup")
        .display()
        .to_string();
    config.classifier = Arc::new(|command: &str, _shell| classifier(command));
    let metrics = Arc::new(Metrics::default());
    let agent = Agent::builder(store, executor, model)
        .config(config)
        .build();
    let (stop, stopping) = watch::channel(false);
    std::mem::forget(stop);
    let state = AppState::new(agent, static_auth(), metrics, false, stopping);
    listen(state, Arc::new(ScriptedModel::new(Vec::new())), dir).await
}

async fn listen(state: AppState, model: Arc<ScriptedModel>, dir: TempDir) -> Server {
    let background = nomos_http::workers::start(&state.agent, state.metrics.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = nomos_http::app(state.clone());
    let listener = nomos_http::JsonErrorListener::new(listener);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Server {
        base,
        http: nomos_llm::tls::http_client(),
        state,
        model,
        dir,
        _background: background,
    }
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.get(self.url(path)).bearer_auth(OPERATOR)
    }

    pub fn post(&self, path: &str, body: Value) -> reqwest::RequestBuilder {
        self.http
            .post(self.url(path))
            .bearer_auth(OPERATOR)
            .json(&body)
    }

    pub async fn json(&self, path: &str) -> Value {
        let response = self.get(path).send().await.unwrap();
        assert_eq!(response.status(), 200, "GET {path}");
        response.json().await.unwrap()
    }

    pub async fn create_session(&self) -> String {
        let response = self
            .http
            .post(self.url("/api/sessions"))
            .bearer_auth(OPERATOR)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        let body: Value = response.json().await.unwrap();
        body["id"].as_str().unwrap().to_owned()
    }

    pub async fn say(&self, id: &str, text: &str) -> reqwest::Response {
        self.post(
            &format!("/api/sessions/{id}/messages"),
            serde_json::json!({"text": text}),
        )
        .send()
        .await
        .unwrap()
    }

    /// Opens an event stream.
    pub async fn events(&self, path: &str, last_event_id: Option<i64>) -> Sse {
        let mut request = self.get(path);
        if let Some(last) = last_event_id {
            request = request.header("Last-Event-ID", last.to_string());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Sse::new(response)
    }
}

/// One server-sent event.
#[derive(Clone, Debug, PartialEq)]
pub struct SseEvent {
    pub id: Option<i64>,
    pub event: String,
    pub data: String,
}

impl SseEvent {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap()
    }
}

/// A minimal SSE reader over a response body.
pub struct Sse {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl Sse {
    pub fn new(response: reqwest::Response) -> Sse {
        Sse {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// The next event (comments skipped), or `None` when the stream ends.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = SseEvent {
                    id: None,
                    event: "message".into(),
                    data: String::new(),
                };
                let mut any = false;
                for line in block.lines() {
                    if let Some(id) = line.strip_prefix("id: ") {
                        event.id = Some(id.parse().unwrap());
                        any = true;
                    } else if let Some(kind) = line.strip_prefix("event: ") {
                        event.event = kind.to_owned();
                        any = true;
                    } else if let Some(data) = line.strip_prefix("data: ") {
                        event.data.push_str(data);
                        any = true;
                    }
                }
                if any {
                    return Some(event);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.body.next())
                .await
                .expect("no event within 20 s")?;
            self.buffer
                .push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        }
    }

    /// Durable events up to and including the next one of `kind`.
    pub async fn until(&mut self, kind: &str) -> Vec<SseEvent> {
        let mut seen = Vec::new();
        while let Some(event) = self.next().await {
            let done = event.event == kind;
            if event.id.is_some() {
                seen.push(event);
            }
            if done {
                return seen;
            }
        }
        panic!("stream ended before {kind}; saw {seen:?}");
    }
}

/// Waits until the session has no running turn (its last turn event is `turn.done`).
pub async fn settle(server: &Server, id: &str) {
    let session: nomos_core::SessionId = id.parse().unwrap();
    for _ in 0..400 {
        let events = server
            .state
            .agent
            .store()
            .events_after(Some(session), 0, 100_000)
            .await
            .unwrap();
        let last_turn = events
            .iter()
            .rev()
            .find(|e| matches!(e.event.kind(), "turn.started" | "turn.done"));
        if server.state.turns.running() == 0
            && last_turn.is_none_or(|e| e.event.kind() == "turn.done")
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("session {id} did not settle");
}
