//! Integration tests of the runtime: the scripted stub model, a real SQLite store in a
//! temporary directory, and the local executor running real commands.

// The harness is shared by the test modules only; it is not an API.
#![allow(missing_docs)]
// Helpers outside #[test] functions panic on setup failures, like the tests do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod audit;
mod backup;
mod canary;
mod faults;
mod fleet;
mod fleet_preview;
mod flow;
mod guests;
mod live;
mod models;
mod previews;
mod snapshot;
mod sweeps;
mod turns;
mod verify;

use std::sync::Arc;

use nomos_agent::{Agent, AgentConfig, ManualClock};
use nomos_core::event::DomainEvent;
use nomos_core::ports::store::{SessionSnapshot, Store};
use nomos_core::record::{Message, ToolCallRecord};
use nomos_core::{SessionId, Span, Timestamp};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::LocalExecutor;
use tempfile::TempDir;

/// One agent over real parts, with a scripted model and a manual clock.
pub struct World {
    pub agent: Agent,
    pub model: Arc<ScriptedModel>,
    pub store: Arc<SqliteStore>,
    pub clock: ManualClock,
    pub dir: TempDir,
}

pub const START: i64 = 1_800_000_000_000;

pub async fn world(script: &str) -> World {
    world_with(script, |_| {}).await
}

pub async fn world_with(script: &str, tune: impl FnOnce(&mut AgentConfig)) -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let model = Arc::new(ScriptedModel::from_yaml_str(script).unwrap());
    agent_over(store, model, dir, tune)
}

pub fn agent_over(
    store: Arc<SqliteStore>,
    model: Arc<ScriptedModel>,
    dir: TempDir,
    tune: impl FnOnce(&mut AgentConfig),
) -> World {
    let clock = ManualClock::starting_at(Timestamp::from_millis(START));
    let mut config = AgentConfig::spec_defaults();
    config.resume.backoff = vec![Span::from_millis(5), Span::from_millis(10)];
    // SAFE-2: a change's backups stay in the test's own directory.
    config.backup.root = dir.path().join("backup").display().to_string();
    tune(&mut config);
    let agent = Agent::builder(store.clone(), Arc::new(LocalExecutor::new()), model.clone())
        .config(config)
        .clock(Arc::new(clock.clone()))
        .build();
    World {
        agent,
        model,
        store,
        clock,
        dir,
    }
}

impl World {
    pub async fn snapshot(&self, id: SessionId) -> SessionSnapshot {
        self.store.load_session(id).await.unwrap().unwrap()
    }

    pub async fn events(&self, id: SessionId) -> Vec<DomainEvent> {
        let records = self.store.events_after(Some(id), 0, 10_000).await.unwrap();
        let seqs: Vec<i64> = records.iter().map(|r| r.seq).collect();
        let expected: Vec<i64> = (1..=records.len() as i64).collect();
        assert_eq!(seqs, expected, "event seqs have gaps");
        records.into_iter().map(|r| r.event).collect()
    }

    pub async fn calls(&self, id: SessionId) -> Vec<ToolCallRecord> {
        self.store.tool_calls(id).await.unwrap()
    }

    pub async fn calls_named(&self, id: SessionId, name: &str) -> Vec<ToolCallRecord> {
        self.calls(id)
            .await
            .into_iter()
            .filter(|c| c.name == name)
            .collect()
    }

    pub async fn messages(&self, id: SessionId) -> Vec<Message> {
        self.store.messages(id).await.unwrap()
    }

    /// The `turn.done` events, with their error.
    pub async fn dones(&self, id: SessionId) -> Vec<Option<String>> {
        self.events(id)
            .await
            .into_iter()
            .filter_map(|e| match e {
                DomainEvent::TurnDone { error, .. } => Some(error),
                _ => None,
            })
            .collect()
    }
}
