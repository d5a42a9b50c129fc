//! Integration tests of the MCP server over real parts: the real router of `nomos-http` on
//! loopback with its bearer auth, a real SQLite store, the local executor (or the golden
//! suite's simulated fleet), and a real `rmcp` client over streamable HTTP.

// The harness is shared by the test modules only; it is not an API.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod access;
mod authz;
mod flow;
mod gates;
mod malformed;
mod no_decision;

use std::sync::Arc;
use std::time::Duration;

use nomos_agent::{Agent, AgentConfig, Clock};
use nomos_core::SessionId;
use nomos_core::ports::chat::ChatModel;
use nomos_core::ports::exec::Executor;
use nomos_core::ports::store::Store;
use nomos_http::{AppState, Auth, Metrics, Role, StaticToken};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::LocalExecutor;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::sync::watch;

pub const OPERATOR: &str = "operator-secret";
pub const VIEWER: &str = "viewer-secret";
/// AUTHZ-1: an agent token (`claude-code`), as the README's MCP recipes give a client.
pub const AGENT: &str = "agent-secret";
/// The operator (`bob`) who decides in Nomos: the REST helpers below use this token, since
/// no principal decides the requests of a session it drives (AUTHZ-2), and clients here
/// often hold alice's token.
pub const DECIDER: &str = "bob-secret";

/// An MCP client connected to Nomos.
pub type Client = RunningService<RoleClient, ClientConfig>;

/// Nomos serving its router (REST and `/mcp`) on loopback.
pub struct Nomos {
    pub base: String,
    pub http: reqwest::Client,
    pub agent: Agent,
    _dir: Option<TempDir>,
}

/// What a server is built from.
pub struct Parts {
    pub store: Arc<dyn Store>,
    pub executor: Arc<dyn Executor>,
    pub clock: Option<Arc<dyn Clock>>,
}

/// A server over a SQLite file in a temporary directory and the local executor.
pub async fn nomos() -> Nomos {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let parts = Parts {
        store,
        executor: Arc::new(LocalExecutor::new()),
        clock: None,
    };
    let mut nomos = serve(parts).await;
    nomos._dir = Some(dir);
    nomos
}

/// A server over these parts, with operator tokens (`alice`, and `bob` who decides), a
/// viewer token (`victor`) and an agent token (`claude-code`). Nomos's own model is a script with no replies: it must never be asked.
pub async fn serve(parts: Parts) -> Nomos {
    let auth = Auth::Required {
        tokens: vec![
            StaticToken::from_secret("alice", OPERATOR, Role::Operator),
            StaticToken::from_secret("victor", VIEWER, Role::Viewer),
            StaticToken::from_secret("claude-code", AGENT, Role::Agent),
            StaticToken::from_secret("bob", DECIDER, Role::Operator),
        ],
        oidc: None,
        store: None,
    };
    let model: Arc<dyn ChatModel> = Arc::new(ScriptedModel::from_yaml_str("[]").unwrap());
    let mut config = AgentConfig::spec_defaults();
    // SAFE-2: the golden cases' simulated fleet answers only scripted commands, so it
    // holds no backups (as in the golden runner); backups are proved in nomos-agent.
    config.backup.mode = nomos_core::safety::BackupMode::Off;
    let mut builder = Agent::builder(parts.store, parts.executor, model).config(config);
    if let Some(clock) = parts.clock {
        builder = builder.clock(clock);
    }
    let agent = builder.build();
    let (stop, stopping) = watch::channel(false);
    // Tests never shut the server down; leak the sender so streams stay open.
    std::mem::forget(stop);
    let state = AppState::new(
        agent.clone(),
        auth,
        Arc::new(Metrics::default()),
        false,
        stopping,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = nomos_http::app(state);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Nomos {
        base,
        http: nomos_llm::tls::http_client(),
        agent,
        _dir: None,
    }
}

impl Nomos {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// An MCP client named `name version`, with `token`.
    pub async fn connect(&self, token: &str, name: &str, version: &str) -> Client {
        let config = StreamableHttpClientTransportConfig::with_uri(self.url("/mcp"))
            .auth_header(token.to_owned());
        let transport = StreamableHttpClientTransport::from_config(config);
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(name, version),
        );
        info.serve(transport).await.unwrap()
    }

    /// `GET path` as the deciding operator, as JSON.
    pub async fn get(&self, path: &str) -> Value {
        let response = self
            .http
            .get(self.url(path))
            .bearer_auth(DECIDER)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "GET {path}");
        response.json().await.unwrap()
    }

    /// `POST path` as the deciding operator; the status and the JSON body.
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.post_as(DECIDER, path, body).await
    }

    /// `POST path` with `token`; the status and the JSON body.
    pub async fn post_as(&self, token: &str, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(self.url(path))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// The Nomos session of the MCP client named `client` (`name version`).
    pub async fn session_of(&self, client: &str) -> SessionId {
        let sessions = self.get("/api/sessions").await;
        let id = sessions
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["client"] == client)
            .unwrap_or_else(|| panic!("no session of {client} in {sessions}"))["id"]
            .as_str()
            .unwrap()
            .to_owned();
        SessionId(id.parse().unwrap())
    }

    /// The operator says `text` in the session, in Nomos's UI (the API).
    pub async fn say(&self, id: SessionId, text: &str) {
        let (status, body) = self
            .post(
                &format!("/api/sessions/{id}/messages"),
                json!({ "text": text }),
            )
            .await;
        assert_eq!(status, 202, "{body}");
    }

    /// The operator decides an approval; the status and the body.
    pub async fn decide(&self, approval_id: &str, decision: &str) -> (u16, Value) {
        self.post(
            &format!("/api/approvals/{approval_id}/decision"),
            json!({ "decision": decision }),
        )
        .await
    }
}

/// Calls a tool; panics on a protocol error (a tool's own error is a result).
pub async fn call(client: &Peer<RoleClient>, name: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object, got {arguments}");
    };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    tokio::time::timeout(Duration::from_secs(60), client.call_tool(params))
        .await
        .expect("the call answered within a minute")
        .unwrap_or_else(|e| panic!("{name}: protocol error {e}"))
}

/// The text of a result.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            rmcp::model::ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether the result is a tool error (a refusal or a failure).
pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// The structured result.
pub fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or(Value::Null)
}
