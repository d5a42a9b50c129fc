//! Faults the runtime recovers from by itself: a restart that finds turns open and
//! commands running (TURN-11, EXEC-8), a model that trickles (TURN-12), a disk that
//! fills up mid-turn (EXEC-9, TURN-1).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use nomos_agent::{Agent, AgentError, WriteHealth};
use nomos_core::event::{DomainEvent, PendingEvent, TurnCause};
use nomos_core::ports::chat::{
    ChatModel, ChatRequest, ChatResponse, DeltaSink, FinishReason, ModelError, Usage,
};
use nomos_core::ports::store::{Commit, Store};
use nomos_core::sweep::{INTERRUPTED_REASON, TURN_INTERRUPTED_BY_RESTART};
use nomos_core::{ExecutionStatus, SessionId};
use nomos_sqlite::SqliteStore;
use nomos_ssh::LocalExecutor;
use nomos_test_support::small_disk::SmallDisk;
use nomos_test_support::sshd::processes_matching;
use nomos_test_support::store_contract::fixtures::execution;
use tokio::sync::Notify;

use crate::{START, world};

/// Commits what a crashed run leaves: a `turn.started` with no `turn.done`, and, when
/// given, an execution `running` on `local` with `command`.
async fn crashed_turn(agent: &Agent, store: &SqliteStore, command: Option<&str>) -> SessionId {
    let id = agent.create_session().await.unwrap();
    let snapshot = store.load_session(id).await.unwrap().unwrap();
    let mut executions = Vec::new();
    if let Some(command) = command {
        let mut running = execution(
            id,
            1,
            ExecutionStatus::Running,
            nomos_core::Timestamp::from_millis(START),
        );
        running.host = "local".into();
        running.command = command.into();
        running.class = nomos_core::CommandClass::ReadOnly;
        running.started_at = Some(nomos_core::Timestamp::from_millis(START));
        executions.push(running);
    }
    store
        .commit(Commit {
            expected_version: Some(snapshot.record.version),
            session: Some(snapshot.record.clone()),
            executions,
            events: vec![PendingEvent {
                at: nomos_core::Timestamp::from_millis(START),
                event: DomainEvent::TurnStarted {
                    cause: TurnCause::Operator,
                },
            }],
            ..Commit::default()
        })
        .await
        .unwrap();
    id
}

// rule: TURN-11
#[tokio::test]
async fn the_start_up_reconcile_closes_every_open_turn_exactly_once() {
    let w = world("[]").await;
    let first = crashed_turn(&w.agent, &w.store, None).await;
    let second = crashed_turn(&w.agent, &w.store, None).await;
    let report = w.agent.reconcile_startup().await.unwrap();
    assert_eq!(report.turns_closed, 2);
    for id in [first, second] {
        assert_eq!(
            w.dones(id).await,
            vec![Some(TURN_INTERRUPTED_BY_RESTART.to_owned())]
        );
    }
    let again = w.agent.reconcile_startup().await.unwrap();
    assert_eq!(again.turns_closed, 0, "a closed turn is not closed twice");
    assert_eq!(w.dones(first).await.len(), 1);
}

// rule: EXEC-8
#[tokio::test]
async fn a_command_left_running_is_stopped_at_start_up_and_its_outcome_is_unknown() {
    let w = world("[]").await;
    let needle = format!("sleep 3001.{}", std::process::id());
    let id = crashed_turn(&w.agent, &w.store, Some(&needle)).await;
    let execution_id = id.execution_id(1);
    // What a killed server leaves: the command's process, carrying its marker.
    let mut survivor = std::process::Command::new("sh")
        .args(["-c", &format!("{needle}; true")])
        .env(
            nomos_ssh::ssh::command::MARKER_VAR,
            execution_id.to_string(),
        )
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if !processes_matching(&needle).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!processes_matching(&needle).is_empty(), "the survivor runs");

    let report = w.agent.reconcile_startup().await.unwrap();
    let _ = survivor.wait();

    assert_eq!(report.commands_stopped, 1);
    assert_eq!(report.executions_failed, 1);
    assert!(
        processes_matching(&needle).is_empty(),
        "`{needle}` survived"
    );
    let execution = w.store.execution(execution_id).await.unwrap().unwrap();
    assert_eq!(execution.status, ExecutionStatus::Failed);
    assert_eq!(execution.error.as_deref(), Some(INTERRUPTED_REASON));
    assert!(INTERRUPTED_REASON.contains("outcome unknown"));
}

// rule: TURN-12
#[tokio::test]
async fn a_trickling_model_ends_the_turn_with_the_deadline_and_frees_the_session() {
    let server =
        nomos_test_support::trickle::TricklingModel::start(Duration::from_millis(50)).await;
    let config = nomos_llm::OpenAiConfig::builder(server.base_url(), "trickle")
        .timeout(Duration::from_secs(2))
        .reply_deadline(Duration::from_millis(500))
        .build()
        .unwrap();
    let model = Arc::new(nomos_llm::OpenAiModel::new(config).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let agent = Agent::builder(store.clone(), Arc::new(LocalExecutor::new()), model).build();
    let id = agent.create_session().await.unwrap();

    let report = agent.send_message(id, "hello").await.unwrap();
    let error = report.error.unwrap();
    assert!(error.contains("deadline of 500 ms"), "{error}");
    // The session is free again: the next message starts a turn of its own.
    let again = agent.send_message(id, "again").await.unwrap();
    assert!(again.error.unwrap().contains("deadline"));
    assert_eq!(server.n_requests(), 2);
}

/// A model that answers "done" once it is let go.
struct GatedModel {
    gate: Arc<Notify>,
}

#[async_trait]
impl ChatModel for GatedModel {
    async fn complete(
        &self,
        _request: &ChatRequest,
        _sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        self.gate.notified().await;
        Ok(ChatResponse {
            content: Some("done".into()),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: Usage::default(),
        })
    }

    fn name(&self) -> String {
        "gated".into()
    }
}

// rule: EXEC-9
// rule: TURN-1
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_in_flight_when_the_disk_fills_still_ends_once_space_is_back() {
    let disk = SmallDisk::mount(6);
    let store = Arc::new(
        SqliteStore::open_in_data_dir(disk.path().join("data"))
            .await
            .unwrap(),
    );
    let gate = Arc::new(Notify::new());
    let model = Arc::new(GatedModel { gate: gate.clone() });
    let agent = Agent::builder(store.clone(), Arc::new(LocalExecutor::new()), model).build();
    let id = agent.create_session().await.unwrap();
    let turn = agent.spawn_message(id, "hello").await.unwrap();

    disk.fill();
    gate.notify_one();
    // The turn's next commit fails; the runtime sees it.
    let mut failing = false;
    for _ in 0..200 {
        if matches!(agent.write_health(), WriteHealth::Failing(_)) {
            failing = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(failing, "the full disk was never noticed");
    assert!(
        agent.check_writes().await.is_err(),
        "readiness sees the failing writes"
    );
    // While the disk is full a new message fails cleanly: the session is held.
    let refused = agent.send_message(id, "more").await.unwrap_err();
    assert!(
        matches!(refused, AgentError::TurnInProgress(_)),
        "{refused:?}"
    );

    disk.free();
    let report = tokio::time::timeout(Duration::from_secs(30), turn)
        .await
        .unwrap()
        .unwrap();
    let error = report.error.unwrap();
    assert!(
        error.contains("full"),
        "the turn ends with the real cause: {error}"
    );
    let events = store.events_after(Some(id), 0, 1000).await.unwrap();
    let dones: Vec<_> = events
        .iter()
        .filter_map(|r| match &r.event {
            DomainEvent::TurnDone { error, .. } => Some(error.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(dones.len(), 1, "{dones:?}");
    assert!(dones[0].as_deref().unwrap_or("").contains("full"));
    agent.check_writes().await.unwrap();
    assert_eq!(agent.write_health(), WriteHealth::Healthy);
    // And the next turn runs and ends normally.
    let next = agent.spawn_message(id, "again").await.unwrap();
    gate.notify_one();
    let next = next.await.unwrap();
    assert_eq!(next.error, None);
    assert_eq!(next.final_text.as_deref(), Some("done"));
}
