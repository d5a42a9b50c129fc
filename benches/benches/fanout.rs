//! Fan-out bench (FLEET-2): `uname -a` on 100 real hosts (one loopback sshd each, every
//! host's `uname` delayed by its own 50-200 ms), once as one `run` on a tag and once as
//! the same 100 commands through `run` one after another. One run, printed as a table:
//! the fan-out's wall time against the slowest host's own time (goal: under 2x) and
//! against the one-after-another total.
//!
//! `cargo bench -p nomos-benches --bench fanout` runs 100 hosts; `cargo test --benches`
//! runs it once with 10, as a smoke test.

#![allow(clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_agent::{Access, Agent, AgentConfig};
use nomos_core::ports::store::Store;
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::{FleetExecutor, Inventory, SshConfig};
use nomos_test_support::fleet::{HostSpec, TestFleet};

/// The artificial latency of host `i`, spread over 50-200 ms.
fn latency_ms(i: usize) -> u64 {
    50 + (i as u64 * 37) % 151
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let n = if full { 100 } else { 10 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(bench(n));
}

async fn bench(n: usize) {
    let specs: Vec<HostSpec> = (0..n)
        .map(|i| {
            let ms = latency_ms(i);
            HostSpec::up(&format!("lxc:b{i:03}"), &["bench"]).program(
                "uname",
                &format!(
                    "sleep {}.{:03}; exec /bin/uname \"$@\"",
                    ms / 1000,
                    ms % 1000
                ),
            )
        })
        .collect();
    let started = Instant::now();
    let fleet = TestFleet::start(specs);
    eprintln!("fanout bench: {n} sshd hosts up in {:?}", started.elapsed());
    let inventory = Inventory::parse(&fleet.inventory_toml(), "bench.toml").expect("inventory");
    let ssh = SshConfig::new(&fleet.known_hosts_path).with_connect_timeout(Duration::from_secs(10));
    let executor = FleetExecutor::new(inventory, ssh);
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(
        SqliteStore::open_in_data_dir(dir.path())
            .await
            .expect("store"),
    );
    let model = Arc::new(ScriptedModel::from_yaml_str("[]").expect("model"));
    let mut config = AgentConfig::spec_defaults();
    config.fanout_max_parallel = 100;
    // The table of 100 hosts is cut for the model; the bench reads the executions.
    let agent = Agent::builder(store.clone(), Arc::new(executor), model)
        .config(config)
        .build();
    let id = agent
        .create_client_session("fanout-bench 1")
        .await
        .expect("session");
    let run = |args: String| {
        let agent = agent.clone();
        async move {
            agent
                .call_tool(id, Access::Operate, "run", &args)
                .await
                .expect("run")
        }
    };
    // Warm the pool: one connection per host, so both measurements run commands only.
    let warm = run(format!(
        r#"{{"host": "tag:bench", "command": "true", "max_parallel": {n}}}"#
    ))
    .await;
    assert!(warm.text.contains(&format!("{n} ok")), "{}", warm.text);

    let t = Instant::now();
    let fanned = run(format!(
        r#"{{"host": "tag:bench", "command": "uname -a", "max_parallel": {n}}}"#
    ))
    .await;
    let fanout_wall = t.elapsed();
    assert!(fanned.text.contains(&format!("{n} ok")), "{}", fanned.text);
    let snapshot = store
        .load_session(id)
        .await
        .expect("load")
        .expect("session");
    let fanout = snapshot.fanouts.last().expect("fan-out");
    let slowest_ms = fanout
        .hosts
        .iter()
        .filter_map(|h| snapshot.executions.iter().find(|e| e.id == h.execution_id))
        .filter_map(|e| e.output.as_ref().map(|o| o.duration_ms))
        .max()
        .expect("durations");

    let t = Instant::now();
    for host in &fleet.hosts {
        let reply = run(format!(
            r#"{{"host": "{}", "command": "uname -a"}}"#,
            host.slug
        ))
        .await;
        assert!(reply.text.starts_with("exit 0"), "{}", reply.text);
    }
    let sequential = t.elapsed();

    let wall_ms = fanout_wall.as_secs_f64() * 1000.0;
    println!("fan-out of `uname -a` to {n} hosts (latency 50-200 ms each), one run:");
    println!("| measure | ms |");
    println!("|---|---|");
    println!("| fan-out wall time (one `run` on tag:bench, max_parallel {n}) | {wall_ms:.0} |");
    println!("| slowest host's own time | {slowest_ms} |");
    println!(
        "| same {n} commands one after another through `run` | {:.0} |",
        sequential.as_secs_f64() * 1000.0
    );
    println!(
        "| wall / slowest | {:.2}x (goal < 2x) |",
        wall_ms / slowest_ms as f64
    );
    println!(
        "| one-after-another / wall | {:.1}x |",
        sequential.as_secs_f64() * 1000.0 / wall_ms
    );
}
