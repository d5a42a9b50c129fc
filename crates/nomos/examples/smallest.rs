//! The smallest embedding: SQLite in a temporary file, the local executor, the scripted
//! model, one turn, and the events it committed.
//!
//! ```text
//! cargo run -p nomos --example smallest
//! ```

use std::sync::Arc;

use anyhow::{Context, ensure};
use nomos::event::DomainEvent;
use nomos::llm::ScriptedModel;
use nomos::sqlite::SqliteStore;
use nomos::ssh::LocalExecutor;
use nomos::{Agent, ExecutionStatus, LiveEvent};

/// The model's side of the conversation: check the machine, then answer.
const SCRIPT: &str = r#"
- tool_calls:
    - {name: run, arguments: {host: local, command: "uptime"}}
- text: "The machine is up; the load is in the output above."
"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir().context("creating a data directory")?;
    let store = Arc::new(
        SqliteStore::open_in_data_dir(dir.path())
            .await
            .context("opening the store")?,
    );
    let model = Arc::new(ScriptedModel::from_yaml_str(SCRIPT)?);
    let agent = Agent::builder(store, Arc::new(LocalExecutor::new()), model).build();

    // Live events arrive on the bus after each commit; subscribe before the turn.
    let mut live = agent.bus().subscribe();
    let session = agent.create_session().await?;
    let turn = agent
        .send_message(session, "How is this machine doing?")
        .await?;
    println!(
        "turn: {} tool call(s), error: {:?}",
        turn.n_tool_calls, turn.error
    );
    println!("answer: {}", turn.final_text.as_deref().unwrap_or(""));

    // The durable log: numbered per session, without gaps.
    let events = agent.store().events_after(Some(session), 0, 1000).await?;
    for record in &events {
        println!("{:>3} {}", record.seq, record.event.kind());
    }
    let mut n_live = 0;
    while let Ok(event) = live.try_recv() {
        if matches!(event, LiveEvent::Committed(_)) {
            n_live += 1;
        }
    }

    ensure!(turn.error.is_none(), "the turn failed: {:?}", turn.error);
    ensure!(turn.n_tool_calls == 1, "expected one tool call");
    let seqs: Vec<i64> = events.iter().map(|r| r.seq).collect();
    ensure!(
        seqs == (1..=events.len() as i64).collect::<Vec<_>>(),
        "gaps in the event log: {seqs:?}"
    );
    ensure!(
        events.iter().any(|r| matches!(
            r.event,
            DomainEvent::ExecutionStatusChanged {
                status: ExecutionStatus::Completed,
                ..
            }
        )),
        "uptime did not run to its end"
    );
    ensure!(
        n_live == events.len(),
        "the bus carried {n_live} committed events, the log has {}",
        events.len()
    );
    println!("ok: {} events, the same {n_live} live", events.len());
    Ok(())
}
