//! Bench: the wall time of turn N in one long session (N = 1, 10, 100, 300), with the
//! scripted stub model, the local executor, on SQLite and on PostgreSQL, for command outputs
//! of 0 and 50 KB. Each turn is one operator message, one `run` and one closing answer.
//!
//! A turn's cost should not grow with the session: the table prints each turn's time as the
//! median of the turns around it (N-2..=N+2, clipped to the session) and the ratio to turn 1.
//! `NOMOS_BENCH_TURNS` sets the session's length (default 300); PostgreSQL is the
//! test-support throwaway server (or `NOMOS_TEST_PG_URL`), skipped when none starts.

// A bench that cannot set up has nothing to measure: failing loudly is right.
#![allow(clippy::expect_used, clippy::print_stdout, clippy::print_stderr)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_agent::Agent;
use nomos_core::ports::store::Store;
use nomos_llm::{ScriptedModel, ScriptedReply, ScriptedToolCall};
use nomos_ssh::LocalExecutor;
use serde_json::json;

/// Opens a fresh store for one case of the table.
type OpenStore = Box<dyn Fn(usize) -> Arc<dyn Store>>;

/// The turns the table reports.
const REPORTED: [usize; 4] = [1, 10, 100, 300];

/// A read-only command printing `bytes` bytes (or nothing).
fn command(bytes: usize) -> String {
    if bytes == 0 {
        "true".to_owned()
    } else {
        format!("yes 'nomos turn bench output line' | head -c {bytes}")
    }
}

fn script(bytes: usize) -> ScriptedModel {
    ScriptedModel::cycling(vec![
        ScriptedReply::tool_calls(vec![ScriptedToolCall::new(
            "run",
            json!({"host": "local", "command": command(bytes)}),
        )]),
        ScriptedReply::text("It ran."),
    ])
}

/// Runs `n_turns` turns in one session and returns each turn's wall time.
async fn session_times(store: Arc<dyn Store>, bytes: usize, n_turns: usize) -> Vec<Duration> {
    let agent = Agent::builder(
        store,
        Arc::new(LocalExecutor::new()),
        Arc::new(script(bytes)),
    )
    .build();
    let id = agent.create_session().await.expect("session");
    let mut times = Vec::with_capacity(n_turns);
    for n in 1..=n_turns {
        let started = Instant::now();
        let report = agent
            .send_message(id, &format!("turn {n}: run it"))
            .await
            .expect("turn");
        times.push(started.elapsed());
        assert_eq!(report.error, None, "turn {n}: {report:?}");
        assert_eq!(report.n_tool_calls, 1, "turn {n}: {report:?}");
    }
    times
}

/// The median of the turns around turn `n` (1-based).
fn around(times: &[Duration], n: usize) -> Duration {
    let lo = n.saturating_sub(2).max(1);
    let hi = (n + 2).min(times.len());
    let mut window: Vec<Duration> = times[lo - 1..hi].to_vec();
    window.sort();
    window[window.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn main() {
    // `cargo test --benches` runs each bench once with `--bench` absent: keep it short then.
    let benching = std::env::args().any(|a| a == "--bench");
    let n_turns: usize = std::env::var("NOMOS_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if benching { 300 } else { 12 });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut stores: Vec<(&str, OpenStore)> = Vec::new();
    let sqlite_dir = dir.path().to_owned();
    let rt_handle = rt.handle().clone();
    stores.push((
        "sqlite",
        Box::new(move |case| {
            let path = sqlite_dir.join(format!("case{case}"));
            std::fs::create_dir_all(&path).expect("dir");
            let store = rt_handle
                .block_on(nomos_sqlite::SqliteStore::open_in_data_dir(&path))
                .expect("sqlite");
            Arc::new(store) as Arc<dyn Store>
        }),
    ));
    let rt_handle = rt.handle().clone();
    let pg_ok = rt
        .block_on(nomos_test_support::postgres::try_fresh_database())
        .map_err(|why| eprintln!("turn_growth/postgres: skipped, no server: {why}"))
        .is_ok();
    if pg_ok {
        stores.push((
            "postgres",
            Box::new(move |_| {
                rt_handle.block_on(async {
                    let url = nomos_test_support::postgres::fresh_database().await;
                    Arc::new(nomos_postgres::PgStore::connect(&url).await.expect("pg"))
                        as Arc<dyn Store>
                })
            }),
        ));
    }
    let reported: Vec<usize> = REPORTED.iter().copied().filter(|n| *n <= n_turns).collect();
    let mut header = "| store | output |".to_owned();
    for n in &reported {
        header.push_str(&format!(" turn {n} (ms) |"));
    }
    header.push_str(&format!(" turn {} / turn 1 | total (s) |", n_turns));
    println!("{header}");
    println!("|{}", "---|".repeat(reported.len() + 4));
    let mut case = 0;
    for (name, open) in &stores {
        for bytes in [0usize, 50 * 1024] {
            case += 1;
            let store = open(case);
            let times = rt.block_on(session_times(store, bytes, n_turns));
            let mut row = format!("| {name} | {} KB |", bytes / 1024);
            for n in &reported {
                row.push_str(&format!(" {} |", ms(around(&times, *n))));
            }
            let ratio = around(&times, n_turns).as_secs_f64() / around(&times, 1).as_secs_f64();
            let total: Duration = times.iter().sum();
            row.push_str(&format!(" {ratio:.2} | {:.1} |", total.as_secs_f64()));
            println!("{row}");
        }
    }
}
