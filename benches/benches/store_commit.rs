//! Criterion bench: commit throughput of a typical turn (one assistant message, three
//! tool calls, one plan-step change and their six events) on SQLite (a WAL file in a
//! temp dir) and on Postgres (the test-support throwaway server, or the one named by
//! `NOMOS_TEST_PG_URL`; skipped with a note when none can start).

use std::cell::Cell;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nomos_core::event::DomainEvent;
use nomos_core::ports::store::{Commit, Store};
use nomos_core::record::{SessionRecord, ToolCallOutcome};
use nomos_core::{Role, SessionStatus, StepStatus};
use nomos_test_support::store_contract::fixtures::{
    at, create_commit, event, message, session, session_id, step, tool_call,
};
use tokio::runtime::Runtime;

/// The commit of turn `n` of a session at `version`.
fn turn_commit(record: &SessionRecord, version: i64, n: u64) -> Commit {
    let id = record.id;
    let now = n as i64 * 10;
    let mut row = record.clone();
    row.n_messages = n;
    row.last_activity_at = at(now);
    let mut running = step(id, 1, 1 + (n % 3) as u32, StepStatus::Running);
    running.started_at = Some(at(now));
    running.updated_at = at(now);
    let calls: Vec<_> = (1..=3)
        .map(|k| {
            let mut call = tool_call(id, &format!("turn-{n}-call-{k}"));
            call.started_at = at(now);
            call
        })
        .collect();
    let mut events = vec![
        event(
            now,
            DomainEvent::MessageAppended {
                message_id: id.message_id(n),
                role: Role::Assistant,
            },
        ),
        event(
            now,
            DomainEvent::StepStarted {
                generation: 1,
                seq: running.seq,
            },
        ),
    ];
    events.extend(calls.iter().map(|c| {
        event(
            now,
            DomainEvent::ToolCalled {
                call_id: c.call_id.clone(),
                name: c.name.clone(),
                outcome: ToolCallOutcome::Ok,
            },
        )
    }));
    events.push(event(now, DomainEvent::Nudged));
    Commit {
        expected_version: Some(version),
        session: Some(row),
        steps: vec![running],
        messages: vec![message(
            id,
            n,
            Role::Assistant,
            "checking the bridge logs, then restarting it",
        )],
        tool_calls: calls,
        events,
        ..Commit::default()
    }
}

/// Creates the session with a three-step plan and benches turn commits against it.
fn bench_store(c: &mut Criterion, name: &str, rt: &Runtime, store: &dyn Store) {
    let record = session(session_id(1), SessionStatus::Executing);
    let plan = Commit {
        steps: (1..=3)
            .map(|seq| step(record.id, 1, seq, StepStatus::Pending))
            .collect(),
        ..create_commit(record.clone())
    };
    if let Err(err) = rt.block_on(store.commit(plan)) {
        eprintln!("store_commit/{name}: cannot create the session: {err}");
        return;
    }
    let version = Cell::new(1i64);
    let mut group = c.benchmark_group("store_commit");
    group.throughput(Throughput::Elements(1));
    group.sample_size(30);
    group.bench_function(name, |b| {
        b.iter(|| {
            let v = version.get();
            let receipt = rt.block_on(store.commit(turn_commit(&record, v, v as u64)));
            match receipt {
                Ok(receipt) => version.set(receipt.version),
                Err(err) => panic!("commit failed: {err}"),
            }
        })
    });
    group.finish();
}

fn store_commit(c: &mut Criterion) {
    let rt = match Runtime::new() {
        Ok(rt) => rt,
        Err(err) => panic!("cannot start a runtime: {err}"),
    };
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("cannot make a temp dir: {err}"),
    };
    match rt.block_on(nomos_sqlite::SqliteStore::open_in_data_dir(dir.path())) {
        Ok(store) => bench_store(c, "sqlite_wal_file", &rt, &store),
        Err(err) => eprintln!("store_commit/sqlite: skipped, cannot open: {err}"),
    }
    let postgres = rt.block_on(async {
        let url = nomos_test_support::postgres::try_fresh_database().await?;
        nomos_postgres::PgStore::connect(&url)
            .await
            .map_err(|e| e.to_string())
    });
    match postgres {
        Ok(store) => bench_store(c, "postgres", &rt, &store),
        Err(why) => eprintln!("store_commit/postgres: skipped, no server: {why}"),
    }
}

criterion_group!(benches, store_commit);
criterion_main!(benches);
