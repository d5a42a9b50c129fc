//! Criterion bench: the overhead Nomos adds to one turn (core + store + bus), with the
//! scripted stub model, five `run true` tool calls on the local executor and SQLite.

// A bench that cannot set up has nothing to measure: failing loudly is right.
#![allow(clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use nomos_agent::Agent;
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

fn bench_turn(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = rt.block_on(async {
        let store = SqliteStore::open_in_data_dir(dir.path())
            .await
            .expect("sqlite");
        Agent::builder(
            Arc::new(store),
            Arc::new(LocalExecutor::new()),
            Arc::new(script()),
        )
        .build()
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

    let mut group = c.benchmark_group("turn");
    group.sample_size(20);
    group.bench_function("five_run_true_sqlite", |b| {
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
    group.finish();
}

criterion_group!(benches, bench_turn);
criterion_main!(benches);
