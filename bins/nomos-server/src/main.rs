//! `nomos-server`: reads the configuration, builds the runtime, reconciles what a previous
//! run left behind, starts the workers and serves the HTTP API until SIGINT or SIGTERM.
//! `nomos-server mcp` serves one MCP session on stdin/stdout instead (MCP-1), over the same
//! data directory and store, logging to stderr only.

mod config;
mod runtime;
mod token;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use tokio::sync::watch;

use crate::config::{Config, LogFormat, RawConfig};

/// How long shutdown waits for requests, streams and turns to finish.
const DRAIN: Duration = Duration::from_secs(10);

/// The Nomos server.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Configuration file (default: ./nomos.toml when it exists).
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Listen address (overrides `listen` and NOMOS_LISTEN).
    #[arg(long)]
    listen: Option<String>,
    /// Data directory (overrides `data_dir` and NOMOS_DATA_DIR).
    #[arg(long)]
    data_dir: Option<String>,
    /// Log format: text or json.
    #[arg(long)]
    log_format: Option<String>,
    /// Serve without authentication (only on a loopback address).
    #[arg(long)]
    no_auth: bool,
    /// What to run (default: the HTTP server).
    #[command(subcommand)]
    command: Option<Mode>,
}

/// What the process serves.
#[derive(Debug, Subcommand)]
enum Mode {
    /// Serve Nomos's tools to one MCP client on stdin/stdout (for clients that spawn a
    /// process). Uses the same data directory and store as the server, which keeps running
    /// the sweeps and where the operator decides approvals.
    Mcp,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let config = match load(&args) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("nomos-server: {error:#}");
            return ExitCode::from(2);
        }
    };
    init_logs(config.log_format);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("nomos-server: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let run = match args.command {
        None => runtime.block_on(serve(config)),
        Some(Mode::Mcp) => runtime.block_on(serve_mcp(config)),
    };
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error:#}");
            eprintln!("nomos-server: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// File, then environment, then flags; then validation.
fn load(args: &Args) -> anyhow::Result<Config> {
    let default = PathBuf::from("nomos.toml");
    let mut raw = match &args.config {
        Some(path) => RawConfig::from_file(path)?,
        None if default.exists() => RawConfig::from_file(&default)?,
        None => RawConfig::default(),
    };
    raw.apply_env(|name| std::env::var(name).ok());
    if let Some(listen) = &args.listen {
        raw.listen = Some(listen.clone());
    }
    if let Some(dir) = &args.data_dir {
        raw.data_dir = Some(dir.clone());
    }
    if let Some(format) = &args.log_format {
        raw.log_format = Some(format.clone());
    }
    if args.no_auth {
        raw.auth.mode = Some("none".to_owned());
    }
    Ok(Config::validate(raw)?)
}

fn init_logs(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,tower_http=info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let rt = runtime::build(&config).await?;
    let report = nomos_http::workers::reconcile_startup(&rt.agent, &rt.metrics)
        .await
        .context("reconciling executions left by a previous run")?;
    tracing::info!(?report, "start-up reconcile done");
    let background = nomos_http::workers::start(&rt.agent, rt.metrics.clone());
    let (stop, stopping) = watch::channel(false);
    let state = nomos_http::AppState::new(rt.agent, rt.auth, rt.metrics, rt.demo, stopping);
    let turns = state.turns.clone();
    let app = nomos_http::app(state.clone());
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("listening on {}", config.listen))?;
    let address = listener.local_addr()?;
    if rt.demo {
        tracing::warn!("{}", nomos_http::api::system::DEMO_NOTICE);
    }
    tracing::info!(%address, model = %state.info.model, auth = ?state.auth_mode(), "serving");
    match &rt.new_token {
        Some(token) => println!(
            "Nomos is running. Open http://{address}/#token={token}\n(the token is stored in {}; it is printed only once)",
            token::token_path(&config.data_dir).display()
        ),
        None => println!("Nomos is running on http://{address}/"),
    }
    let mut signalled = stop.subscribe();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        let _ = signalled.wait_for(|stopping| *stopping).await;
    });
    let server = tokio::spawn(async move { server.await });
    shutdown_signal().await;
    tracing::info!("shutting down: draining requests, streams and turns");
    let _ = stop.send(true);
    match tokio::time::timeout(DRAIN, server).await {
        Ok(result) => result
            .context("the server task failed")?
            .context("serving")?,
        Err(_) => tracing::warn!("requests still open after {DRAIN:?}; closing them"),
    }
    let left = turns.drain(DRAIN).await;
    if left > 0 {
        tracing::warn!(
            left,
            "turns still running at shutdown; the start-up reconcile will clean up"
        );
    }
    background.shutdown().await;
    Ok(())
}

/// One MCP session on stdio. No start-up reconcile and no sweeps: the server process that
/// shares the store runs those, and a reconcile here would fail its running commands.
async fn serve_mcp(config: Config) -> anyhow::Result<()> {
    let (agent, _metrics, _demo) = runtime::build_agent(&config).await?;
    let base_url = format!("http://{}", config.listen);
    tracing::info!(data_dir = %config.data_dir.display(), "serving MCP on stdio");
    nomos_mcp::serve_stdio(agent, Some(base_url))
        .await
        .context("serving MCP on stdio")
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    let mut terminate =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(terminate) => terminate,
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                let _ = interrupt.await;
                return;
            }
        };
    tokio::select! {
        _ = interrupt => {}
        _ = terminate.recv() => {}
    }
}
