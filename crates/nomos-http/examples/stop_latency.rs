//! CONTROL-1: how long a stop takes, from `POST /api/sessions/{id}/stop` to the turn's
//! `turn.done` on the session's event stream, over real HTTP on loopback.
//!
//! Two cases, `N` stops each (50 unless given as the first argument): a turn stopped while
//! the model streams (a loopback endpoint that trickles forever), and a turn stopped while
//! a local `sleep 30` runs (its process group killed). Prints p50, p99 and max per case.
//!
//! ```text
//! cargo run -p nomos-http --example stop_latency -- 50
//! ```

use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use nomos_agent::{Agent, AgentConfig};
use nomos_core::ports::chat::ChatModel;
use nomos_http::{AppState, Auth, Metrics};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::LocalExecutor;
use nomos_test_support::trickle::TricklingModel;
use serde_json::Value;
use tokio::sync::watch;

type Res<T> = Result<T, Box<dyn Error>>;

/// A server on loopback with `model`; returns its base URL.
async fn serve(model: Arc<dyn ChatModel>, dir: &std::path::Path) -> Res<String> {
    let store = Arc::new(SqliteStore::open_in_data_dir(dir).await?);
    let agent = Agent::builder(store, Arc::new(LocalExecutor::new()), model)
        .config(AgentConfig::spec_defaults())
        .build();
    let (stop, stopping) = watch::channel(false);
    // The server runs until the program ends.
    std::mem::forget(stop);
    let state = AppState::new(
        agent,
        Auth::Disabled,
        Arc::new(Metrics::default()),
        false,
        stopping,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let app = nomos_http::app(state);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(base)
}

/// Reads an event stream until an event of `kind`; returns when it arrived.
async fn until(
    body: &mut (impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    buffer: &mut String,
    kind: &str,
) -> Res<Instant> {
    let needle = format!("event: {kind}\n");
    loop {
        if let Some(at) = buffer.find(&needle) {
            let seen = Instant::now();
            let end = buffer[at..]
                .find("\n\n")
                .map_or(buffer.len(), |e| at + e + 2);
            buffer.drain(..end);
            return Ok(seen);
        }
        let chunk = tokio::time::timeout(Duration::from_secs(30), body.next())
            .await?
            .ok_or("the event stream ended")??;
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
}

/// `n` stops of turns started by `say` in one session; `ready` waits until the turn is
/// in the state to stop. Returns each stop's time to `turn.done`.
async fn measure<F, Fut>(base: &str, n: usize, mut ready: F) -> Res<Vec<Duration>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let http = nomos_llm::tls::http_client();
    let session: Value = http
        .post(format!("{base}/api/sessions"))
        .send()
        .await?
        .json()
        .await?;
    let id = session["id"].as_str().ok_or("no session id")?.to_owned();
    let events = http
        .get(format!("{base}/api/sessions/{id}/events"))
        .send()
        .await?;
    let mut body = Box::pin(events.bytes_stream());
    let mut buffer = String::new();
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let sent = http
            .post(format!("{base}/api/sessions/{id}/messages"))
            .json(&serde_json::json!({"text": "go on"}))
            .send()
            .await?;
        if sent.status() != 202 {
            return Err(format!("message answered {}", sent.status()).into());
        }
        until(&mut body, &mut buffer, "turn.started").await?;
        ready().await;
        let started = Instant::now();
        let stopped = http
            .post(format!("{base}/api/sessions/{id}/stop"))
            .send()
            .await?;
        if stopped.status() != 202 {
            return Err(format!("stop answered {}", stopped.status()).into());
        }
        let done = until(&mut body, &mut buffer, "turn.done").await?;
        times.push(done - started);
    }
    Ok(times)
}

fn report(case: &str, mut times: Vec<Duration>) {
    times.sort();
    let pick = |q: f64| times[((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1];
    println!(
        "{case}: n={} p50={:.1} ms p99={:.1} ms max={:.1} ms",
        times.len(),
        pick(0.50).as_secs_f64() * 1e3,
        pick(0.99).as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3,
    );
}

#[tokio::main]
async fn main() -> Res<()> {
    let n: usize = std::env::args().nth(1).map_or(Ok(50), |a| a.parse())?;

    // A turn stopped while the model streams.
    let trickle = Arc::new(TricklingModel::start(Duration::from_millis(20)).await);
    let config = nomos_llm::OpenAiConfig::builder(trickle.base_url(), "trickle").build()?;
    let model = Arc::new(nomos_llm::OpenAiModel::new(config)?);
    let dir = tempfile::tempdir()?;
    let base = serve(model, dir.path()).await?;
    let times = measure(&base, n, || {
        let trickle = trickle.clone();
        async move {
            while trickle.n_open() == 0 {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
    })
    .await?;
    report("stop mid model stream", times);

    // A turn stopped while a local `sleep 30` runs.
    let sleep = format!("sleep 30.{}07", std::process::id());
    let script: String = (0..n)
        .map(|_| {
            format!("- tool_calls:\n    - {{name: run, arguments: {{host: local, command: \"{sleep}\"}}}}\n")
        })
        .collect();
    let model = Arc::new(ScriptedModel::from_yaml_str(&script)?);
    let dir = tempfile::tempdir()?;
    let base = serve(model, dir.path()).await?;
    let needle = sleep.clone();
    let times = measure(&base, n, move || {
        let needle = needle.clone();
        async move {
            while nomos_test_support::sshd::processes_matching(&needle).is_empty() {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
    })
    .await?;
    report("stop mid local command", times);
    if !nomos_test_support::sshd::processes_matching(&sleep).is_empty() {
        return Err(format!("`{sleep}` survived a stop").into());
    }
    Ok(())
}
