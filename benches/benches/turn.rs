//! Criterion bench: the overhead Nomos adds to one turn (core + store + bus), with the
//! scripted stub model, five `run true` tool calls on the local executor and SQLite.
//!
//! Two more figures, side by side in the same run, split the turn: the same turn on an
//! executor that answers at once (Nomos alone), and five `sh -c true` through the local
//! executor with no agent at all (spawning alone).

// A bench that cannot set up has nothing to measure: failing loudly is right.
#![allow(clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use nomos_agent::Agent;
use nomos_benches::Immediate;
use nomos_core::Span;
use nomos_core::ports::exec::{ExecLimits, Executor};
use nomos_llm::{ScriptedModel, ScriptedReply, ScriptedToolCall};
use nomos_sqlite::SqliteStore;
use nomos_ssh::LocalExecutor;
use serde_json::json;

fn script() -> ScriptedModel {
    let calls = (0..5)
        .map(|_| ScriptedToolCall::new("run", json!({"host": "local", "command": "true"})))
        .collect();
    ScriptedModel::cycling(vec![
        ScriptedReply::tool_calls(calls),
        ScriptedReply::text("All five ran."),
    ])
}

fn agent(
    rt: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    executor: Arc<dyn Executor>,
) -> Agent {
    let agent = rt.block_on(async {
        let store = SqliteStore::open_in_data_dir(dir).await.expect("sqlite");
        Agent::builder(Arc::new(store), executor, Arc::new(script())).build()
    });
    // One turn first, to prove the path works end to end.
    let report = rt.block_on(async {
        let id = agent.create_session().await.expect("session");
        agent
            .send_message(id, "run true five times")
            .await
            .expect("turn")
    });
    assert_eq!(report.n_tool_calls, 5, "{report:?}");
    assert_eq!(report.error, None);
    agent
}

fn bench_turn(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let local_dir = tempfile::tempdir().expect("tempdir");
    let local = agent(&rt, local_dir.path(), Arc::new(LocalExecutor::new()));
    let immediate_dir = tempfile::tempdir().expect("tempdir");
    let immediate = agent(&rt, immediate_dir.path(), Arc::new(Immediate::default()));
    let shell = LocalExecutor::new();
    let limits = ExecLimits::with_timeout(Span::from_secs(30));

    let mut group = c.benchmark_group("turn");
    group.sample_size(20);
    for (name, agent) in [
        ("five_run_true_sqlite", &local),
        ("five_run_immediate_sqlite", &immediate),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let id = agent.create_session().await.expect("session");
                    agent
                        .send_message(id, "run true five times")
                        .await
                        .expect("turn")
                })
            })
        });
    }
    group.bench_function("five_sh_true_alone", |b| {
        b.iter(|| {
            rt.block_on(async {
                for _ in 0..5 {
                    let out = shell.execute("true", limits).await.expect("sh");
                    assert_eq!(out.exit_code, Some(0));
                }
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench_turn);
criterion_main!(benches);
