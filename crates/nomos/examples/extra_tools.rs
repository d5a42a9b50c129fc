//! An embedder's own tools: a read-only one that runs at any time, and a gated one that
//! runs only after the operator approved the plan (GATE-3).
//!
//! ```text
//! cargo run -p nomos --example extra_tools
//! ```

use std::sync::{Arc, Mutex, PoisonError};

use anyhow::ensure;
use async_trait::async_trait;
use nomos::Agent;
use nomos::llm::ScriptedModel;
use nomos::ports::chat::ToolSpec;
use nomos::record::ToolCallOutcome;
use nomos::sqlite::SqliteStore;
use nomos::ssh::LocalExecutor;
use nomos::tools::{ExtraTool, ExtraToolKind};
use serde_json::{Value, json};

/// Reads the on-call rota: nothing changes, so it runs whenever the model asks.
struct OnCall;

#[async_trait]
impl ExtraTool for OnCall {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "who_is_on_call".into(),
            description: "Read-only. Returns who is on call for a team.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"team": {"type": "string"}},
                "required": ["team"]
            }),
        }
    }

    fn kind(&self) -> ExtraToolKind {
        ExtraToolKind::ReadOnly
    }

    async fn call(&self, arguments: Value) -> Result<String, String> {
        match arguments["team"].as_str() {
            Some("storage") => Ok("alice (until 18:00 UTC)".into()),
            Some(team) => Err(format!("no rota for team {team:?}")),
            None => Err("missing `team`".into()),
        }
    }
}

/// Opens a ticket in the embedder's tracker: it changes state, so it is gated.
#[derive(Clone, Default)]
struct OpenTicket {
    opened: Arc<Mutex<Vec<String>>>,
}

impl OpenTicket {
    fn opened(&self) -> Vec<String> {
        self.opened
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl ExtraTool for OpenTicket {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "open_ticket".into(),
            description:
                "Changes state. Opens a ticket; needs the operator's approval of the plan.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"]
            }),
        }
    }

    fn kind(&self) -> ExtraToolKind {
        ExtraToolKind::Gated
    }

    async fn call(&self, arguments: Value) -> Result<String, String> {
        let title = arguments["title"].as_str().ok_or("missing `title`")?;
        let mut opened = self.opened.lock().unwrap_or_else(PoisonError::into_inner);
        opened.push(title.to_owned());
        Ok(format!("ticket #{} opened", opened.len()))
    }
}

const SCRIPT: &str = r#"
- tool_calls:
    - {name: who_is_on_call, arguments: {team: storage}}
    - {name: open_ticket, arguments: {title: "disk on db-1 is filling up"}}
- tool_calls:
    - {name: set_goal, arguments: {goal: "get the storage team onto db-1's disk"}}
    - {name: propose_plan, arguments: {steps: [{title: "open a ticket for alice"}]}}
  expect: {last_tool_result_contains: "has not approved the plan"}
- text: "Alice is on call. Shall I open the ticket?"
- tool_calls:
    - {name: open_ticket, arguments: {title: "disk on db-1 is filling up"}}
  expect: {last_user_contains: "approved"}
- text: "Ticket opened for alice."
"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let store = Arc::new(SqliteStore::in_memory().await?);
    let model = Arc::new(ScriptedModel::from_yaml_str(SCRIPT)?);
    let tickets = OpenTicket::default();
    let agent = Agent::builder(store.clone(), Arc::new(LocalExecutor::new()), model.clone())
        .extra_tool(Arc::new(OnCall))
        .extra_tool(Arc::new(tickets.clone()))
        .build();

    let session = agent.create_session().await?;
    let first = agent
        .send_message(session, "db-1's disk is filling up; tell the storage team")
        .await?;
    println!("turn 1: {}", first.final_text.as_deref().unwrap_or(""));
    ensure!(
        tickets.opened().is_empty(),
        "the gated tool ran before the approval"
    );

    let second = agent.send_message(session, "approved").await?;
    println!("turn 2: {}", second.final_text.as_deref().unwrap_or(""));

    for call in agent.store().tool_calls(session).await? {
        println!("{:<16} {:<8?} {}", call.name, call.outcome, call.result);
    }
    let calls = agent.store().tool_calls(session).await?;
    let outcomes: Vec<(&str, ToolCallOutcome)> = calls
        .iter()
        .filter(|c| c.name == "who_is_on_call" || c.name == "open_ticket")
        .map(|c| (c.name.as_str(), c.outcome))
        .collect();
    ensure!(
        outcomes
            == [
                ("who_is_on_call", ToolCallOutcome::Ok),
                ("open_ticket", ToolCallOutcome::Refused),
                ("open_ticket", ToolCallOutcome::Ok),
            ],
        "unexpected outcomes: {outcomes:?}"
    );
    ensure!(tickets.opened().len() == 1, "expected exactly one ticket");
    ensure!(
        model.remaining() == 0,
        "the script was not played to its end"
    );
    println!("ok: the read-only tool ran at once, the gated one only after the approval");
    Ok(())
}
