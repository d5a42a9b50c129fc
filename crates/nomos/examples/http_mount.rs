//! The HTTP API inside an application that already has its own axum routes: the Nomos
//! router is nested under `/ops`, served on 127.0.0.1 (a port the system picks), asked a
//! few requests, then shut down.
//!
//! ```text
//! cargo run -p nomos --example http_mount
//! ```

use std::sync::Arc;

use anyhow::{Context, ensure};
use axum::Router;
use axum::routing::get;
use nomos::Agent;
use nomos::http::{AppState, Auth, Metrics, Role, StaticToken};
use nomos::llm::ScriptedModel;
use nomos::sqlite::SqliteStore;
use nomos::ssh::LocalExecutor;
use tokio::sync::watch;

const TOKEN: &str = "example-operator-token";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let store = Arc::new(SqliteStore::in_memory().await?);
    let model = Arc::new(ScriptedModel::cycling(Vec::new()));
    let agent = Agent::builder(store, Arc::new(LocalExecutor::new()), model).build();
    agent.reconcile_startup().await?;

    let auth = Auth::Required {
        tokens: vec![StaticToken::from_secret("embedder", TOKEN, Role::Operator)],
        oidc: None,
        store: None,
    };
    let (stop, stopping) = watch::channel(false);
    let state = AppState::new(agent, auth, Arc::new(Metrics::default()), false, stopping);

    // The application's own routes, with the Nomos API under a prefix of its own.
    let app = Router::new()
        .route("/", get(|| async { "the embedding application" }))
        .nest("/ops", nomos::http::app(state));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let mut shutdown = stop.subscribe();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = shutdown.wait_for(|stopped| *stopped).await;
            })
            .await
    });

    let client = nomos_llm::tls::http_client();
    let own = client.get(format!("{base}/")).send().await?.text().await?;
    let health = client.get(format!("{base}/ops/healthz")).send().await?;
    let health_status = health.status();
    let anonymous = client
        .post(format!("{base}/ops/api/sessions"))
        .send()
        .await?
        .status();
    let created = client
        .post(format!("{base}/ops/api/sessions"))
        .bearer_auth(TOKEN)
        .send()
        .await?;
    let created_status = created.status();
    let body: serde_json::Value = created.json().await?;
    let id = body["id"]
        .as_str()
        .with_context(|| format!("a session id in {created_status} {body}"))?
        .to_owned();
    println!("GET  /                  -> {own:?}");
    println!("GET  /ops/healthz       -> {health_status}");
    println!("POST /ops/api/sessions  -> {anonymous} without a token");
    println!("POST /ops/api/sessions  -> {created_status} with a token: session {id}");

    // Close the client's idle connections, then stop the server; it drains and returns.
    drop(client);
    let _ = stop.send(true);
    server.await.context("the server task")??;

    ensure!(own == "the embedding application");
    ensure!(health_status.is_success(), "healthz: {health_status}");
    ensure!(
        anonymous.as_u16() == 401,
        "a request without a token is refused"
    );
    ensure!(
        created_status.is_success(),
        "creating a session: {created_status}"
    );
    println!("ok: the API answered under /ops beside the application's own routes");
    Ok(())
}
