//! The live history of a real agent (SQLite, local commands, the scripted model) against a
//! rebuild from what the store holds: after turns with every kind of commit, after another
//! process wrote to the session (a conflict), and in a process that never saw the session
//! (a miss).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use nomos_core::ports::chat::{ChatModel, ChatRequest, ChatResponse, DeltaSink, ModelError};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::LocalExecutor;

use super::*;
use crate::Agent;

/// One turn of every kind of commit: goal, plan, step updates, a command with coloured
/// output, a refused state change, a knowledge lookup, the end of the task and a text.
const SCRIPT: &str = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "check the host"}}
    - {name: propose_plan, arguments: {steps: [{title: "look"}, {title: "restart"}]}}
- tool_calls:
    - {name: update_plan_step, arguments: {seq: 1, status: running}}
    - {name: run, arguments: {host: local, command: "printf '\\033[1mload\\033[0m 0.1\\n'; seq 1 3000"}}
- tool_calls:
    - {name: run, arguments: {host: local, command: "systemctl restart nginx"}}
    - {name: update_plan_step, arguments: {seq: 1, status: done}}
- tool_calls:
    - {name: complete_task, arguments: {outcome: success, summary: "looked"}}
- text: "Done."
"#;

/// The scripted model, keeping every request it was sent.
#[derive(Clone)]
struct Recording {
    model: ScriptedModel,
    requests: Arc<Mutex<Vec<ChatRequest>>>,
}

#[async_trait]
impl ChatModel for Recording {
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(request.clone());
        self.model.complete(request, sink).await
    }

    fn name(&self) -> String {
        "recording".into()
    }
}

fn agent(store: Arc<SqliteStore>) -> (Agent, Recording) {
    let model = Recording {
        model: ScriptedModel::from_yaml_str(SCRIPT)
            .unwrap()
            .per_conversation(),
        requests: Arc::default(),
    };
    let agent = Agent::builder(
        store,
        Arc::new(LocalExecutor::new()),
        Arc::new(model.clone()),
    )
    .build();
    (agent, model)
}

/// The agent's live history equals a rebuild from the store, at the store's version.
async fn assert_live_equals_rebuild(agent: &Agent, id: SessionId, what: &str) {
    let store = agent.store();
    let snapshot = store.load_session(id).await.unwrap().unwrap();
    let messages = store.messages(id).await.unwrap();
    let calls = store.tool_calls(id).await.unwrap();
    let rebuilt = ModelHistory::rebuild(
        agent.budget(),
        &agent.config().system_prompt,
        &snapshot,
        &messages,
        &calls,
    );
    let live = agent
        .inner
        .histories
        .with(id, None, |h| {
            (h.version(), h.unfitted(), h.dangling(), h.plan())
        })
        .unwrap_or_else(|| panic!("{what}: the agent keeps no history"));
    assert_eq!(live.0, snapshot.record.version, "{what}: version");
    assert_eq!(live.1, rebuilt.unfitted(), "{what}: messages");
    assert_eq!(live.2, rebuilt.dangling(), "{what}: dangling calls");
    assert_eq!(live.3, rebuilt.plan(), "{what}: plan");
}

fn last_user_messages(model: &Recording) -> Vec<String> {
    let requests = model.requests.lock().unwrap();
    let last = requests.last().unwrap();
    last.messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { content } => Some(content.to_string()),
            _ => None,
        })
        .collect()
}

// rule: TURN-7
#[tokio::test]
async fn the_live_history_equals_a_rebuild_after_turns_with_every_kind_of_commit() {
    let store = Arc::new(SqliteStore::in_memory().await.unwrap());
    let (agent, model) = agent(store);
    let id = agent.create_session().await.unwrap();
    for n in 1..=3 {
        let report = agent.send_message(id, &format!("turn {n}")).await.unwrap();
        assert_eq!(report.error, None, "turn {n}: {report:?}");
        assert_live_equals_rebuild(&agent, id, &format!("after turn {n}")).await;
    }
    // No request read the store: each was the live history, and the last one shows
    // the whole conversation.
    assert!(last_user_messages(&model).iter().any(|m| m == "turn 1"));
    assert!(last_user_messages(&model).iter().any(|m| m == "turn 3"));
}

// rule: TURN-7
#[tokio::test]
async fn a_write_by_another_process_is_a_conflict_and_the_history_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let first_store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let second_store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let (first, first_model) = agent(first_store);
    let (second, _) = agent(second_store);
    let id = first.create_session().await.unwrap();
    first.send_message(id, "from the first").await.unwrap();
    // Another process drives the same session behind the first one's back.
    let report = second.send_message(id, "from the second").await.unwrap();
    assert_eq!(report.error, None);
    // The first one's cache is stale: its first commit conflicts, and its requests
    // are built again from the store, with the other process's turn in them.
    let report = first
        .send_message(id, "from the first again")
        .await
        .unwrap();
    assert_eq!(report.error, None);
    let users = last_user_messages(&first_model);
    assert!(users.iter().any(|m| m == "from the second"), "{users:?}");
    assert_live_equals_rebuild(&first, id, "after a conflict").await;
}

// rule: TURN-7
#[tokio::test]
async fn a_process_that_never_saw_the_session_rebuilds_its_history_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let (first, _) = agent(store);
    let id = first.create_session().await.unwrap();
    first.send_message(id, "before the restart").await.unwrap();
    drop(first);
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let (later, model) = agent(store);
    let report = later.send_message(id, "after the restart").await.unwrap();
    assert_eq!(report.error, None);
    let users = last_user_messages(&model);
    assert!(users.iter().any(|m| m == "before the restart"), "{users:?}");
    assert_live_equals_rebuild(&later, id, "after a miss").await;
}
