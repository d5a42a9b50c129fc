//! Bench: the wall time of turn N in one long session (N = 1, 10, 100, 300), with the
//! scripted stub model, the local executor, on SQLite and on PostgreSQL, for command outputs
//! of 0 and 50 KB, each with a real `sh` and with an executor that answers at once (no
//! process). Each turn is one operator message, one `run` and one closing answer.
//!
//! A turn's cost should not grow with the session: the table prints each turn's time as the
//! median of the 11 turns around it (shifted to fit the session: turn 1 is the median of
//! turns 1..=11) and the ratio to turn 1; one turn alone is too noisy on a shared machine.
//! The last columns compare what the turns cost in CPU (the process's and its commands'),
//! which another tenant's load moves less than the wall time.
//! `NOMOS_BENCH_TURNS` sets the session's length (default 300), `NOMOS_BENCH_CASE` runs
//! only the rows whose `store/KB/command` contains it (`sqlite/50/none`, for a profile);
//! PostgreSQL is the
//! test-support throwaway server (or `NOMOS_TEST_PG_URL`), skipped when none starts.

// A bench that cannot set up has nothing to measure: failing loudly is right.
#![allow(clippy::expect_used, clippy::print_stdout, clippy::print_stderr)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};
use nomos_agent::Agent;
use nomos_benches::Immediate;
use nomos_core::ports::exec::Executor;
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

/// Where a turn's command runs.
#[derive(Clone, Copy, Debug)]
enum Run {
    /// A real `sh -c` through the local executor.
    Shell,
    /// An executor that answers at once with the same output: the turn without a process,
    /// so what grows with the session is told apart from what spawning costs.
    NoProcess,
}

impl Run {
    fn name(self) -> &'static str {
        match self {
            Run::Shell => "sh",
            Run::NoProcess => "none",
        }
    }
}

/// The CPU this process and its waited-for children (the commands' shells) have used.
fn cpu_used() -> Duration {
    let of = |who| {
        let usage = getrusage(who).expect("getrusage");
        let time = |t: nix::sys::time::TimeVal| {
            Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
        };
        time(usage.user_time()) + time(usage.system_time())
    };
    of(UsageWho::RUSAGE_SELF) + of(UsageWho::RUSAGE_CHILDREN)
}

/// Each turn's wall time and CPU time (of the whole process and its commands: what the
/// machine spent on the turn, which a busy machine's scheduling moves less than the wall).
struct Times {
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
}

/// Runs `n_turns` turns in one session and returns each turn's times.
async fn session_times(store: Arc<dyn Store>, bytes: usize, run: Run, n_turns: usize) -> Times {
    let executor: Arc<dyn Executor> = match run {
        Run::Shell => Arc::new(LocalExecutor::new()),
        Run::NoProcess => Arc::new(Immediate { bytes }),
    };
    let agent = Agent::builder(store, executor, Arc::new(script(bytes))).build();
    let id = agent.create_session().await.expect("session");
    let mut times = Times {
        wall: Vec::with_capacity(n_turns),
        cpu: Vec::with_capacity(n_turns),
    };
    for n in 1..=n_turns {
        let (started, cpu) = (Instant::now(), cpu_used());
        let report = agent
            .send_message(id, &format!("turn {n}: run it"))
            .await
            .expect("turn");
        times.wall.push(started.elapsed());
        times.cpu.push(cpu_used().saturating_sub(cpu));
        assert_eq!(report.error, None, "turn {n}: {report:?}");
        assert_eq!(report.n_tool_calls, 1, "turn {n}: {report:?}");
    }
    times
}

/// Each store's rows: output bytes and where the command runs.
const CASES: [(usize, Run); 4] = [
    (0, Run::Shell),
    (50 * 1024, Run::Shell),
    (0, Run::NoProcess),
    (50 * 1024, Run::NoProcess),
];

/// Turns in the window whose median stands for turn N.
const WINDOW: usize = 11;

/// The median of the [`WINDOW`] turns around turn `n` (1-based), the window shifted to fit
/// the session: turn 1 is the median of turns 1..=11, the last turn of the last 11.
fn around(times: &[Duration], n: usize) -> Duration {
    let half = WINDOW / 2;
    let hi = (n.max(1) + half).max(WINDOW).min(times.len());
    let lo = hi.saturating_sub(WINDOW - 1).max(1);
    let mut window: Vec<Duration> = times[lo - 1..hi].to_vec();
    window.sort();
    window[window.len() / 2]
}

/// The median of some turns.
fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

/// Named in the header: the first and the last tenth of the session's turns.
const TENTH: &str = "10%";

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
    let only = std::env::var("NOMOS_BENCH_CASE").unwrap_or_default();
    let wanted = |name: &str, bytes: usize, run: Run| {
        format!("{name}/{}/{}", bytes / 1024, run.name()).contains(&only)
    };
    let rt_handle = rt.handle().clone();
    let pg_wanted = CASES
        .iter()
        .any(|(bytes, run)| wanted("postgres", *bytes, *run));
    let pg_ok = pg_wanted
        && rt
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
    let mut header = "| store | output | command |".to_owned();
    for n in &reported {
        header.push_str(&format!(" turn {n} (ms) |"));
    }
    header.push_str(&format!(
        " turn {} / turn 1 | last {TENTH} / first {TENTH} | total (s) | CPU first {TENTH} (ms) | CPU last {TENTH} / first {TENTH} |",
        n_turns
    ));
    println!("{header}");
    println!("|{}", "---|".repeat(reported.len() + 8));
    let mut case = 0;
    for (name, open) in &stores {
        for (bytes, run) in CASES {
            case += 1;
            if !wanted(name, bytes, run) {
                continue;
            }
            let store = open(case);
            let Times { wall: times, cpu } = rt.block_on(session_times(store, bytes, run, n_turns));
            let mut row = format!("| {name} | {} KB | {} |", bytes / 1024, run.name());
            for n in &reported {
                row.push_str(&format!(" {} |", ms(around(&times, *n))));
            }
            let ratio = around(&times, n_turns).as_secs_f64() / around(&times, 1).as_secs_f64();
            let total: Duration = times.iter().sum();
            let tenth = (n_turns / 10).max(1);
            let (first, last) = (median(&times[..tenth]), median(&times[n_turns - tenth..]));
            let trend = last.as_secs_f64() / first.as_secs_f64();
            let (cpu_first, cpu_last) = (median(&cpu[..tenth]), median(&cpu[n_turns - tenth..]));
            row.push_str(&format!(
                " {ratio:.2} | {trend:.2} | {:.1} | {} | {:.2} |",
                total.as_secs_f64(),
                ms(cpu_first),
                cpu_last.as_secs_f64() / cpu_first.as_secs_f64()
            ));
            println!("{row}");
        }
    }
}
