//! `nomos-server`: reads the configuration, builds the runtime, reconciles what a previous
//! run left behind, starts the workers and serves the HTTP API until SIGINT or SIGTERM.
//! `check-config` validates the configuration without starting; `hosts check` connects to
//! each inventory host.
//! `nomos-server mcp` serves one MCP session on stdin/stdout instead (MCP-1), over the same
//! data directory and store, logging to stderr only.

mod check;
mod config;
mod features;
mod hosts;
mod runtime;
mod telemetry;
mod token;

use std::io::IsTerminal;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use tokio::sync::watch;

use crate::config::{Config, LogFormat, RawConfig};

/// How long shutdown waits for requests, streams and turns to finish.
const DRAIN: Duration = Duration::from_secs(10);

/// Exit status for a configuration that does not validate.
const EXIT_CONFIG: u8 = 2;
/// How long shutdown waits for the turns it stopped to let go of their sessions.
const STOP_TURNS: Duration = Duration::from_secs(2);

/// The Nomos server.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Configuration file (default: ./nomos.toml when it exists).
    #[arg(long, short, global = true)]
    config: Option<PathBuf>,
    /// Listen address (overrides `listen` and NOMOS_LISTEN).
    #[arg(long, global = true)]
    listen: Option<String>,
    /// Data directory (overrides `data_dir` and NOMOS_DATA_DIR).
    #[arg(long, global = true)]
    data_dir: Option<String>,
    /// Log format: text or json.
    #[arg(long, global = true)]
    log_format: Option<String>,
    /// Serve without authentication (only on a loopback address).
    #[arg(long, global = true)]
    no_auth: bool,
    /// What to do (default: serve).
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the HTTP API and the web UI (the default).
    Serve,
    /// Validate the configuration, inventory, policy and model settings without
    /// starting; exit 0 when all are valid, 2 naming what is wrong and where.
    CheckConfig,
    /// Serve Nomos's tools to one MCP client on stdin/stdout (for clients that spawn a
    /// process). Uses the same data directory and store as the server, which keeps running
    /// the sweeps and where the operator decides approvals.
    Mcp,
    /// The inventory's hosts.
    Hosts {
        #[command(subcommand)]
        command: HostsCommand,
    },
    /// Named bearer tokens kept in the data directory (AUTHZ-1).
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Make a new token, print it once, and keep only its SHA-256 in the data directory's
    /// tokens.toml; a running server accepts it at once.
    Create {
        /// operator, viewer or agent (an MCP client or other automation).
        #[arg(long, default_value = "agent")]
        role: String,
        /// The token's name: who it is in sessions, decisions and logs.
        #[arg(long)]
        name: String,
    },
    /// List the named tokens (name and role; the tokens themselves are never kept).
    List,
    /// Revoke a named token; a running server refuses it at once.
    Revoke {
        /// The token's name.
        name: String,
    },
}

#[derive(Debug, Subcommand)]
enum HostsCommand {
    /// Connect to each host, run `true`, and print reachability, the authentication
    /// method and the host key's fingerprint and trust; exit 1 when a host fails.
    Check {
        /// Record host keys not yet in known_hosts, after printing their fingerprints.
        #[arg(long)]
        trust_new: bool,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(Command::Mcp) = &args.command
        && let Err(error) =
            features::Built::THIS.require(features::Feature::Mcp, "nomos-server mcp")
    {
        eprintln!("nomos-server: {error}");
        return ExitCode::from(EXIT_CONFIG);
    }
    let (config, source) = match load(&args) {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!("nomos-server: {error:#}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    // Only the server exports decisions; the one-shot commands log to stderr alone.
    let exports = matches!(args.command, None | Some(Command::Mcp));
    let otlp = if exports {
        config.otlp_logs_url.as_deref()
    } else {
        None
    };
    let telemetry = match init_logs(config.log_format, otlp) {
        Ok(telemetry) => telemetry,
        Err(error) => {
            eprintln!("nomos-server: {error:#}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    if let Some(Command::CheckConfig) = &args.command {
        return check::check_config(&config, source.as_deref());
    }
    if let Some(Command::Token { command }) = &args.command {
        return match command {
            TokenCommand::Create { role, name } => token::create_command(&config, role, name),
            TokenCommand::List => token::list_command(&config),
            TokenCommand::Revoke { name } => token::revoke_command(&config, name),
        };
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("nomos-server: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(Command::Hosts {
        command: HostsCommand::Check { trust_new },
    }) = &args.command
    {
        let trust = if *trust_new {
            hosts::NewKeys::Record
        } else {
            hosts::NewKeys::Report
        };
        return runtime.block_on(hosts::check(&config, trust));
    }
    let run = match args.command {
        Some(Command::Mcp) => runtime.block_on(serve_mcp(config)),
        _ => runtime.block_on(serve(config)),
    };
    telemetry.flush();
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error:#}");
            eprintln!("nomos-server: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// File, then environment, then flags; then validation. Also returns the file read.
fn load(args: &Args) -> anyhow::Result<(Config, Option<PathBuf>)> {
    let default = PathBuf::from("nomos.toml");
    let source = match &args.config {
        Some(path) => Some(path.clone()),
        None if default.exists() => Some(default),
        None => None,
    };
    let mut raw = match &source {
        Some(path) => RawConfig::from_file(path)?,
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
    Ok((Config::validate(raw)?, source))
}

/// What the logs need at the end: the OTLP provider to flush, when there is one.
struct Logs {
    #[cfg(feature = "otlp")]
    provider: Option<opentelemetry_sdk::logs::SdkLoggerProvider>,
}

impl Logs {
    /// AUTHZ-4: the decision records still queued go out before the process ends.
    fn flush(self) {
        #[cfg(feature = "otlp")]
        if let Some(provider) = self.provider
            && let Err(error) = provider.shutdown()
        {
            eprintln!("nomos-server: flushing the OTLP log records: {error}");
        }
    }
}

/// Logs go to stderr, with colour only when it is a terminal.
/// AUTHZ-4: with an OTLP endpoint, the decisions' lines are also OTLP log records; the
/// provider is shut down (flushed) when the server ends. Without the `otlp` feature the
/// configuration never has an endpoint (validation refuses it).
fn init_logs(format: LogFormat, otlp_logs_url: Option<&str>) -> anyhow::Result<Logs> {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,tower_http=info"));
    let fmt = tracing_subscriber::fmt::layer()
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let fmt = match format {
        LogFormat::Json => fmt.json().boxed(),
        LogFormat::Text => fmt.boxed(),
    };
    let registry = tracing_subscriber::registry().with(filter).with(fmt);
    #[cfg(feature = "otlp")]
    {
        let provider = otlp_logs_url.map(telemetry::provider).transpose()?;
        let otlp = provider.as_ref().map(telemetry::audit_layer);
        registry.with(otlp).init();
        Ok(Logs { provider })
    }
    #[cfg(not(feature = "otlp"))]
    {
        if otlp_logs_url.is_some() {
            let setting = "telemetry.otlp_endpoint";
            return Err(features::NotBuilt::new(features::Feature::Otlp, setting).into());
        }
        registry.init();
        Ok(Logs {})
    }
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let rt = runtime::build(&config).await?;
    // REPLICA-2: registered before the reconcile, so other instances leave ours alone.
    let heartbeat = rt
        .agent
        .start_heartbeat()
        .await
        .context("registering this instance")?;
    // REPLICA-3: other processes' events join this process's bus.
    let (feed_stop, feed_stopped) = watch::channel(false);
    let feed = runtime::start_feed(&rt, feed_stopped);
    let report = nomos_http::workers::reconcile_startup(&rt.agent, &rt.metrics)
        .await
        .context("reconciling executions left by a previous run")?;
    tracing::info!(?report, "start-up reconcile done");
    let background = nomos_http::workers::start(&rt.agent, rt.metrics.clone());
    // AUTHZ-4: waiting requests go to the configured channels, from tasks of their own.
    let _channels = (!config.channels.is_empty()).then(|| {
        let base = config
            .notify_base_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", config.listen));
        nomos_http::channels::start(
            rt.agent.clone(),
            config.channels.clone().into(),
            base,
            nomos_http::channels::Retry::default(),
        )
    });
    // FLEET-3: the Proxmox nodes' guests, found again while the server starts serving.
    let _discovery = nomos_http::workers::discover_guests_at_startup(&rt.agent);
    let (stop, stopping) = watch::channel(false);
    let state = nomos_http::AppState::new(rt.agent, rt.auth, rt.metrics, rt.demo, stopping);
    let turns = state.turns.clone();
    let agent = state.agent.clone();
    let app = nomos_http::app(state.clone());
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("listening on {}", config.listen))?;
    let address = listener.local_addr()?;
    if rt.demo {
        tracing::warn!("{}", nomos_http::api::system::DEMO_NOTICE);
    }
    tracing::info!(%address, model = %state.info.model, auth = ?state.auth_mode(), "serving");
    // A closed stdout (a supervisor that stopped reading) must not stop the server.
    let mut stdout = std::io::stdout();
    let _ = match &rt.new_token {
        Some(token) => writeln!(
            stdout,
            "Nomos is running. Open http://{address}/#token={token}\n(the token is stored in {}; it is printed only once)",
            token::token_path(&config.data_dir).display()
        ),
        None => writeln!(stdout, "Nomos is running on http://{address}/"),
    };
    let _ = stdout.flush();
    let mut signalled = stop.subscribe();
    let listener = nomos_http::JsonErrorListener::new(listener);
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
        // TURN-11: the turns shutdown interrupts end here, each with its own `turn.done`.
        tracing::warn!(left, "turns still running at shutdown; stopping them");
        let stopped = turns.stop_all(STOP_TURNS).await;
        match agent.end_interrupted_turns(&stopped).await {
            Ok(closed) => tracing::info!(closed, "turns stopped by the shutdown were ended"),
            Err(error) => tracing::error!(
                %error,
                "could not end the turns the shutdown stopped; the start-up reconcile will"
            ),
        }
    }
    background.shutdown().await;
    let _ = feed_stop.send(true);
    if let Some(feed) = feed {
        let _ = feed.await;
    }
    if let Some(heartbeat) = heartbeat {
        heartbeat.shutdown().await;
    }
    Ok(())
}

/// One MCP session on stdio. No start-up reconcile and no sweeps: the server process that
/// shares the store runs those, and a reconcile here would fail its running commands.
#[cfg(feature = "mcp")]
async fn serve_mcp(config: Config) -> anyhow::Result<()> {
    let (agent, _metrics, _demo) = runtime::build_agent(&config).await?;
    // REPLICA-2: on a shared PostgreSQL the servers leave this process's commands alone.
    let heartbeat = agent
        .start_heartbeat()
        .await
        .context("registering this instance")?;
    let base_url = format!("http://{}", config.listen);
    tracing::info!(data_dir = %config.data_dir.display(), "serving MCP on stdio");
    let served = nomos_mcp::serve_stdio(agent, Some(base_url))
        .await
        .context("serving MCP on stdio");
    if let Some(heartbeat) = heartbeat {
        heartbeat.shutdown().await;
    }
    served
}

/// Not reached: `main` refuses the command first when MCP is not built in.
#[cfg(not(feature = "mcp"))]
async fn serve_mcp(_config: Config) -> anyhow::Result<()> {
    let missing = features::NotBuilt::new(features::Feature::Mcp, "nomos-server mcp");
    Err(missing.into())
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
