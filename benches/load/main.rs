//! `nomos-load`: the load check of `nomos-server`, on loopback only and bounded in time.
//!
//! It starts the real server binary (demo model, `--no-auth`, a temporary data directory,
//! SQLite or the PostgreSQL URL given, which must be on loopback) and measures:
//!
//! * turns/s: `--workers` tasks, each with its own session, post a message and read the
//!   session's event stream to its `turn.done`, again and again for `--seconds` seconds. The
//!   demo model plays its script per session (six model calls, `uptime` and `df -h` on
//!   `local`), so a turn is complete when its `turn.done` has no error and none of its tool
//!   calls was refused; only complete turns are counted.
//! * SSE fan-out: `--subscribers` connections hold the global stream `/api/events` open
//!   while sessions are created one at a time (`--events`); each receipt's delay runs from
//!   the event's committed time (`at`) to its arrival, reported for the last subscriber to
//!   get it and for any subscriber (p50/p99).
//!
//! With `--processes N` (PostgreSQL only) it starts N servers on the one database: the turn
//! workers and the subscribers are spread over them and the fan-out's sessions are created
//! on the last one, so most subscribers hear of them through another process (REPLICA-3).
//! `--compare-processes` runs one process and then N in the same run, each part on a fresh
//! database.
//!
//! CPU: the client's own and the servers' (user + system, from `/proc/<pid>/stat`), per
//! phase, and for each part the client's `getrusage(RUSAGE_SELF)` against the servers'
//! `getrusage(RUSAGE_CHILDREN)` once they have exited, so the figures can be shown to be the
//! servers' and not the client's.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use clap::Parser;
use nix::sys::resource::{UsageWho, getrusage};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

/// Every phase ends within this long, whatever happens.
const PHASE_LIMIT: Duration = Duration::from_secs(300);

/// One turn ends within this long, or the client gives up on it.
const TURN_LIMIT: Duration = Duration::from_secs(60);

#[derive(Debug, Parser)]
#[command(about = "Load check of nomos-server on loopback")]
struct Args {
    /// The nomos-server binary (default: $CARGO_TARGET_DIR or target, then release/nomos-server).
    #[arg(long)]
    server: Option<PathBuf>,
    /// postgres://... on loopback (default: SQLite in the temporary data directory).
    #[arg(long)]
    database_url: Option<String>,
    /// Concurrent sessions in the turns phase.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Length of the turns phase, in seconds.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Connections holding `/api/events` open in the fan-out phase.
    #[arg(long, default_value_t = 1000)]
    subscribers: usize,
    /// Events (new sessions) fanned out.
    #[arg(long, default_value_t = 30)]
    events: usize,
    /// Only the turns phase.
    #[arg(long)]
    skip_fanout: bool,
    /// Servers started on the one PostgreSQL (needs `--database-url`).
    #[arg(long, default_value_t = 1)]
    processes: usize,
    /// Runs one process, then `--processes`, in one run, each on a fresh database.
    #[arg(long)]
    compare_processes: bool,
}

/// CPU seconds (user + system) of a process, from `/proc/<pid>/stat`.
fn cpu_seconds(pid: &str) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    // The command name is in parentheses and may hold spaces: count fields after it.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .context("no ')' in /proc/<pid>/stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of the file (utime, stime) are the 12th and 13th after the name.
    let ticks: u64 = fields
        .get(11..13)
        .context("short /proc/<pid>/stat")?
        .iter()
        .map(|f| f.parse::<u64>().unwrap_or(0))
        .sum();
    Ok(ticks as f64 / 100.0)
}

/// CPU seconds (user + system) of all the servers.
fn servers_cpu(servers: &[Server]) -> anyhow::Result<f64> {
    servers.iter().map(|s| cpu_seconds(&s.pid)).sum()
}

/// CPU of the client and of the servers over one phase.
struct Cpu<'a> {
    servers: &'a [Server],
    client: f64,
    server: f64,
    started: Instant,
}

impl Cpu<'_> {
    fn start(servers: &[Server]) -> anyhow::Result<Cpu<'_>> {
        Ok(Cpu {
            servers,
            client: cpu_seconds("self")?,
            server: servers_cpu(servers)?,
            started: Instant::now(),
        })
    }

    fn report(&self) -> anyhow::Result<String> {
        let client = cpu_seconds("self")? - self.client;
        let server = servers_cpu(self.servers)? - self.server;
        let wall = self.started.elapsed().as_secs_f64();
        Ok(format!(
            "CPU over {wall:.1} s: client {client:.2} s, server {server:.2} s (client/server {:.2})",
            if server > 0.0 {
                client / server
            } else {
                f64::NAN
            }
        ))
    }
}

/// User + system seconds from `getrusage`.
fn rusage_seconds(who: UsageWho) -> anyhow::Result<f64> {
    let usage = getrusage(who).context("getrusage")?;
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    Ok(secs(usage.user_time()) + secs(usage.system_time()))
}

struct Server {
    child: tokio::process::Child,
    pid: String,
    port: u16,
    _data: tempfile::TempDir,
}

fn is_loopback_url(url: &str) -> bool {
    match reqwest::Url::parse(url) {
        Ok(url) => matches!(
            url.host_str(),
            Some("127.0.0.1" | "localhost" | "[::1]" | "::1")
        ),
        Err(_) => false,
    }
}

async fn start_server(binary: &PathBuf, database_url: Option<&str>) -> anyhow::Result<Server> {
    let data = tempfile::Builder::new().prefix("nomos-load-").tempdir()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut command = tokio::process::Command::new(binary);
    command
        .args(["--no-auth", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--data-dir")
        .arg(data.path())
        .current_dir(data.path())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    for (name, _) in std::env::vars() {
        if name.starts_with("NOMOS_") {
            command.env_remove(name);
        }
    }
    if let Some(url) = database_url {
        command.env("NOMOS_DATABASE_URL", url);
    }
    let child = command
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let pid = child.id().context("the server has no pid")?.to_string();
    let client = nomos_llm::tls::http_client();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let healthy = client
            .get(format!("http://127.0.0.1:{port}/healthz"))
            .timeout(Duration::from_secs(1))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if healthy {
            return Ok(Server {
                child,
                pid,
                port,
                _data: data,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the server did not become healthy within 30 s")
}

/// One SSE block: its id, kind and data.
#[derive(Debug, Default)]
struct Block {
    id: Option<i64>,
    kind: String,
    data: String,
}

/// Splits SSE text into blocks as bytes arrive.
#[derive(Default)]
struct SseParser {
    buffer: Vec<u8>,
    block: Block,
}

impl SseParser {
    fn push(&mut self, bytes: &[u8], out: &mut Vec<Block>) {
        self.buffer.extend_from_slice(bytes);
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
            if line.is_empty() {
                let block = std::mem::take(&mut self.block);
                if !block.kind.is_empty() || block.id.is_some() {
                    out.push(block);
                }
            } else if let Some(id) = line.strip_prefix("id: ") {
                self.block.id = id.trim().parse().ok();
            } else if let Some(kind) = line.strip_prefix("event: ") {
                self.block.kind = kind.to_owned();
            } else if let Some(data) = line.strip_prefix("data: ") {
                self.block.data = data.to_owned();
            }
        }
    }
}

/// What the workers saw.
#[derive(Debug, Default)]
struct Turns {
    complete: u64,
    failed: u64,
    refused_calls: u64,
    tool_calls: u64,
    conflicts: u64,
}

async fn worker(port: u16, until: Instant) -> anyhow::Result<Turns> {
    let client = nomos_llm::tls::http_client();
    let base = format!("http://127.0.0.1:{port}");
    let session: serde_json::Value = client
        .post(format!("{base}/api/sessions"))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let id = session["id"].as_str().context("no session id")?.to_owned();
    let mut turns = Turns::default();
    let mut last = 0;
    while Instant::now() < until {
        // `turn.done` is published a moment before the session is released, so an
        // immediate next message can get TURN-8's 409: send it again shortly after.
        loop {
            let status = client
                .post(format!("{base}/api/sessions/{id}/messages"))
                .json(&serde_json::json!({"text": "how is the host?"}))
                .send()
                .await?
                .status();
            if status.as_u16() == 409 {
                turns.conflicts += 1;
                if Instant::now() > until + TURN_LIMIT {
                    bail!(
                        "session {id} stayed busy (409) for {} s",
                        TURN_LIMIT.as_secs()
                    );
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
                continue;
            }
            if !status.is_success() {
                bail!("posting a message: HTTP {status}");
            }
            break;
        }
        let turn = tokio::time::timeout(TURN_LIMIT, read_turn(&client, &base, &id, &mut last))
            .await
            .context("a turn did not end within 60 s")??;
        turns.tool_calls += turn.tool_calls;
        turns.refused_calls += turn.refused;
        if turn.error.is_none() && turn.refused == 0 {
            turns.complete += 1;
        } else {
            turns.failed += 1;
        }
    }
    Ok(turns)
}

struct TurnSeen {
    tool_calls: u64,
    refused: u64,
    error: Option<String>,
}

async fn read_turn(
    client: &reqwest::Client,
    base: &str,
    id: &str,
    last: &mut i64,
) -> anyhow::Result<TurnSeen> {
    let mut response = client
        .get(format!("{base}/api/sessions/{id}/events"))
        .header("Last-Event-ID", last.to_string())
        .send()
        .await?
        .error_for_status()?;
    let mut parser = SseParser::default();
    let mut blocks = Vec::new();
    let mut seen = TurnSeen {
        tool_calls: 0,
        refused: 0,
        error: None,
    };
    let mut started = false;
    while let Some(chunk) = response.chunk().await? {
        parser.push(&chunk, &mut blocks);
        for block in blocks.drain(..) {
            if let Some(id) = block.id {
                *last = id;
            }
            match block.kind.as_str() {
                "turn.started" => started = true,
                "tool.called" if started => {
                    seen.tool_calls += 1;
                    if block.data.contains("\"outcome\":\"refused\"") {
                        seen.refused += 1;
                    }
                }
                "turn.done" if started => {
                    let record: serde_json::Value = serde_json::from_str(&block.data)?;
                    seen.error = record["event"]["error"].as_str().map(str::to_owned);
                    return Ok(seen);
                }
                _ => {}
            }
        }
    }
    bail!("the event stream ended before turn.done")
}

async fn measure_turns(servers: &[Server], workers: usize, seconds: f64) -> anyhow::Result<()> {
    let cpu = Cpu::start(servers)?;
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = (0..workers)
        .map(|i| tokio::spawn(worker(servers[i % servers.len()].port, until)))
        .collect();
    let mut all = Turns::default();
    for task in tasks {
        let turns = tokio::time::timeout(PHASE_LIMIT, task).await???;
        all.complete += turns.complete;
        all.failed += turns.failed;
        all.refused_calls += turns.refused_calls;
        all.tool_calls += turns.tool_calls;
        all.conflicts += turns.conflicts;
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "turns: {} complete in {elapsed:.1} s with {workers} workers = {:.1} complete turns/s; {} incomplete; {} of {} tool calls refused; {} immediate re-sends refused with 409",
        all.complete,
        all.complete as f64 / elapsed,
        all.failed,
        all.refused_calls,
        all.tool_calls,
        all.conflicts
    );
    println!("turns: {}", cpu.report()?);
    Ok(())
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// A subscriber of `/api/events`: connects, reports ready, and records `(global_seq, delay
/// in ms)` for each event until told to stop.
async fn subscriber(
    port: u16,
    ready: Arc<Semaphore>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<Vec<(i64, f64)>> {
    let stream = TcpStream::connect(("127.0.0.1", port)).await?;
    let (read, mut write) = stream.into_split();
    write
        .write_all(
            b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
        )
        .await?;
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            bail!("the server closed the stream before its headers ended");
        }
        if line == b"\r\n" {
            break;
        }
    }
    ready.add_permits(1);
    let mut receipts = Vec::new();
    let mut stop = stop;
    loop {
        line.clear();
        let n = tokio::select! {
            n = reader.read_until(b'\n', &mut line) => n?,
            _ = stop.changed() => break,
        };
        if n == 0 {
            break;
        }
        // Chunked transfer: the frame lines arrive inside chunks; only `data:` lines matter.
        let Some(data) = line.strip_prefix(b"data: ") else {
            continue;
        };
        let received = now_ms();
        let Ok(record) = serde_json::from_slice::<serde_json::Value>(data) else {
            continue;
        };
        let (Some(seq), Some(at)) = (record["global_seq"].as_i64(), record["at"].as_str()) else {
            continue;
        };
        let Ok(at) = chrono::DateTime::parse_from_rfc3339(at) else {
            continue;
        };
        receipts.push((seq, received - at.timestamp_millis() as f64));
    }
    Ok(receipts)
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

async fn measure_fanout(
    servers: &[Server],
    n_subscribers: usize,
    n_events: usize,
) -> anyhow::Result<()> {
    let connecting = Cpu::start(servers)?;
    let ready = Arc::new(Semaphore::new(0));
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut tasks = Vec::with_capacity(n_subscribers);
    for i in 0..n_subscribers {
        tasks.push(tokio::spawn(subscriber(
            servers[i % servers.len()].port,
            ready.clone(),
            stopping.clone(),
        )));
    }
    let n = u32::try_from(n_subscribers).context("too many subscribers")?;
    tokio::time::timeout(PHASE_LIMIT, ready.acquire_many(n))
        .await
        .context("the subscribers did not all connect")??
        .forget();
    println!(
        "fan-out: {n_subscribers} subscribers connected; {}",
        connecting.report()?
    );
    let delivering = Cpu::start(servers)?;
    let client = nomos_llm::tls::http_client();
    // Created on the last server: with several, most subscribers hear of them elsewhere.
    let creator = servers.last().context("no server")?.port;
    for _ in 0..n_events {
        client
            .post(format!("http://127.0.0.1:{creator}/api/sessions"))
            .send()
            .await?
            .error_for_status()?;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let _ = stop.send(true);
    let mut by_event: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
    for task in tasks {
        for (seq, delay) in tokio::time::timeout(PHASE_LIMIT, task).await??? {
            by_event.entry(seq).or_default().push(delay);
        }
    }
    let cpu = delivering.report()?;
    let seen = by_event.len();
    let complete: Vec<&Vec<f64>> = by_event
        .values()
        .filter(|d| d.len() == n_subscribers)
        .collect();
    let mut last: Vec<f64> = complete
        .iter()
        .map(|d| d.iter().copied().fold(f64::MIN, f64::max))
        .collect();
    last.sort_by(f64::total_cmp);
    let mut every: Vec<f64> = complete.iter().flat_map(|d| d.iter().copied()).collect();
    every.sort_by(f64::total_cmp);
    println!(
        "fan-out to {n_subscribers} subscribers: {}/{seen} events reached all; delay to the last subscriber p50 {:.1} ms, p99 {:.1} ms; any subscriber p50 {:.1} ms, p99 {:.1} ms",
        complete.len(),
        pct(&last, 50.0),
        pct(&last, 99.0),
        pct(&every, 50.0),
        pct(&every, 99.0)
    );
    println!("fan-out: delivering {n_events} events; {cpu}");
    Ok(())
}

/// A new, empty database on the server of `url` (loopback, checked by the caller), named
/// `name`, and its URL.
fn fresh_database(url: &str, name: &str) -> anyhow::Result<String> {
    let mut admin = reqwest::Url::parse(url).context("--database-url")?;
    admin.set_path("/postgres");
    for sql in [
        format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        format!("CREATE DATABASE {name}"),
    ] {
        let status = std::process::Command::new("psql")
            .args([admin.as_str(), "-qc", &sql])
            .status()
            .context("running psql")?;
        if !status.success() {
            bail!("psql {sql}: {status}");
        }
    }
    let mut fresh = admin;
    fresh.set_path(&format!("/{name}"));
    Ok(fresh.to_string())
}

/// Stops the servers: SIGTERM first, for a graceful shutdown; SIGKILL if one takes longer
/// than 15 s.
async fn stop_servers(servers: Vec<Server>) {
    for server in &servers {
        let _ = std::process::Command::new("kill").arg(&server.pid).status();
    }
    for mut server in servers {
        if tokio::time::timeout(Duration::from_secs(15), server.child.wait())
            .await
            .is_err()
        {
            let _ = server.child.start_kill();
            let _ = server.child.wait().await;
        }
    }
}

/// One part of the run: `processes` servers on one store, the turns, then the fan-out.
async fn run(
    args: &Args,
    binary: &PathBuf,
    database_url: Option<&str>,
    processes: usize,
) -> anyhow::Result<()> {
    let store = match (database_url, processes) {
        (None, _) => "sqlite".to_owned(),
        (Some(_), 1) => "postgres".to_owned(),
        (Some(_), n) => format!("postgres x{n}"),
    };
    println!("[{store}]");
    let client_before = rusage_seconds(UsageWho::RUSAGE_SELF)?;
    let children_before = rusage_seconds(UsageWho::RUSAGE_CHILDREN)?;
    let mut servers = Vec::with_capacity(processes);
    for _ in 0..processes {
        match start_server(binary, database_url).await {
            Ok(server) => servers.push(server),
            Err(error) => {
                stop_servers(servers).await;
                return Err(error);
            }
        }
    }
    for server in &servers {
        println!("server pid {} on 127.0.0.1:{}", server.pid, server.port);
    }
    let result = async {
        measure_turns(&servers, args.workers, args.seconds).await?;
        if !args.skip_fanout {
            measure_fanout(&servers, args.subscribers, args.events).await?;
        }
        anyhow::Ok(())
    }
    .await;
    stop_servers(servers).await;
    let client = rusage_seconds(UsageWho::RUSAGE_SELF)? - client_before;
    let server = rusage_seconds(UsageWho::RUSAGE_CHILDREN)? - children_before;
    println!(
        "getrusage over the part: client {client:.2} s, servers {server:.2} s (client/servers {:.2})",
        if server > 0.0 {
            client / server
        } else {
            f64::NAN
        }
    );
    result
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(url) = &args.database_url
        && !is_loopback_url(url)
    {
        bail!(
            "--database-url: only a database on loopback (127.0.0.1, localhost) is allowed, got {url}"
        );
    }
    if args.processes == 0 {
        bail!("--processes: at least one server");
    }
    if args.processes > 1 && args.database_url.is_none() {
        bail!(
            "--processes {} needs --database-url: several servers share one PostgreSQL",
            args.processes
        );
    }
    let binary = match &args.server {
        Some(path) => path.clone(),
        None => {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("CARGO_MANIFEST_DIR")
                        .map(|dir| PathBuf::from(dir).join("../target"))
                })
                .unwrap_or_else(|| PathBuf::from("target"));
            target.join("release/nomos-server")
        }
    };
    let counts = if args.compare_processes && args.processes > 1 {
        vec![1, args.processes]
    } else {
        vec![args.processes]
    };
    for processes in counts {
        let url = match &args.database_url {
            Some(url) => Some(fresh_database(url, &format!("nomos_load_{processes}p"))?),
            None => None,
        };
        run(&args, &binary, url.as_deref(), processes).await?;
    }
    Ok(())
}
