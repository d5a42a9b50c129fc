//! Bringing your own ports: an in-memory fleet as the `Executor` (nothing runs on a real
//! host) and a `ChatModel` wrapper that logs every call and stops a turn once a token
//! budget is spent.
//!
//! ```text
//! cargo run -p nomos --example custom_ports
//! ```

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::ensure;
use async_trait::async_trait;
use nomos::Agent;
use nomos::llm::ScriptedModel;
use nomos::ports::chat::{ChatModel, ChatRequest, ChatResponse, DeltaSink, ModelError};
use nomos::ports::exec::{ExecError, ExecLimits, Executor, HostInfo};
use nomos::record::ExecOutput;
use nomos::sqlite::SqliteStore;

/// A fleet that answers from a table of canned outputs and remembers what it was asked
/// to run. It runs exactly the string it is given (EXEC-7): the lookup is by that string.
#[derive(Clone, Default)]
struct FakeFleet {
    hosts: Vec<HostInfo>,
    outputs: HashMap<(String, String), String>,
    ran: Arc<Mutex<Vec<(String, String)>>>,
}

impl FakeFleet {
    fn host(mut self, slug: &str) -> FakeFleet {
        self.hosts.push(HostInfo {
            slug: slug.into(),
            address: format!("{slug}.example.invalid"),
            tags: vec!["fake".into()],
            host_keys: Vec::new(),
        });
        self
    }

    fn answers(mut self, host: &str, command: &str, stdout: &str) -> FakeFleet {
        self.outputs
            .insert((host.into(), command.into()), stdout.into());
        self
    }

    fn ran(&self) -> Vec<(String, String)> {
        self.ran
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl Executor for FakeFleet {
    async fn run(
        &self,
        host: &str,
        command: &str,
        _limits: ExecLimits,
    ) -> Result<ExecOutput, ExecError> {
        if !self.hosts.iter().any(|h| h.slug == host) {
            return Err(ExecError::UnknownHost {
                host: host.into(),
                known: self.hosts.iter().map(|h| h.slug.clone()).collect(),
            });
        }
        self.ran
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((host.into(), command.into()));
        Ok(match self.outputs.get(&(host.into(), command.into())) {
            Some(stdout) => ExecOutput {
                exit_code: Some(0),
                stdout: stdout.clone(),
                duration_ms: 3,
                ..ExecOutput::default()
            },
            None => ExecOutput {
                exit_code: Some(127),
                stderr: format!("{command}: not in the fake fleet"),
                duration_ms: 1,
                ..ExecOutput::default()
            },
        })
    }

    fn hosts(&self) -> Vec<HostInfo> {
        self.hosts.clone()
    }
}

/// Wraps any model: logs each call and refuses to call it once `budget` tokens are spent.
struct Budgeted<M> {
    inner: M,
    budget: u64,
    spent: AtomicU64,
}

#[async_trait]
impl<M: ChatModel> ChatModel for Budgeted<M> {
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        let spent = self.spent.load(Ordering::SeqCst);
        if spent >= self.budget {
            // A refusal is not retried: the turn ends with this as its error (TURN-2).
            return Err(ModelError::Refusal(format!(
                "token budget spent ({spent} of {} tokens)",
                self.budget
            )));
        }
        let response = self.inner.complete(request, sink).await?;
        let used = response.usage.prompt_tokens + response.usage.completion_tokens;
        let total = self.spent.fetch_add(used, Ordering::SeqCst) + used;
        println!(
            "model call: {} messages in, {} tool call(s) out, {used} tokens ({total} in all)",
            request.messages.len(),
            response.tool_calls.len()
        );
        Ok(response)
    }

    fn name(&self) -> String {
        format!("budgeted:{}", self.inner.name())
    }
}

const SCRIPT: &str = r#"
- tool_calls:
    - {name: run, arguments: {host: web-1, command: "df -h /"}}
    - {name: run, arguments: {host: db-1, command: "df -h /"}}
  usage: {prompt_tokens: 900, completion_tokens: 40}
- text: "web-1 is at 41%, db-1 at 93%."
  usage: {prompt_tokens: 1000, completion_tokens: 20}
- text: "never played: the budget is spent before this call"
"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let fleet = FakeFleet::default()
        .host("web-1")
        .host("db-1")
        .answers("web-1", "df -h /", "/dev/sda1  40G  16G  24G  41% /")
        .answers("db-1", "df -h /", "/dev/sda1  40G  37G   3G  93% /");
    let model = Budgeted {
        inner: ScriptedModel::from_yaml_str(SCRIPT)?,
        budget: 1500,
        spent: AtomicU64::new(0),
    };
    let store = Arc::new(SqliteStore::in_memory().await?);
    let agent = Agent::builder(store, Arc::new(fleet.clone()), Arc::new(model)).build();
    println!("model: {}", agent.model_name());

    let session = agent.create_session().await?;
    let first = agent
        .send_message(session, "How full are the disks?")
        .await?;
    println!("turn 1: {:?}", first.final_text);
    let second = agent.send_message(session, "And now?").await?;
    println!("turn 2 error: {:?}", second.error);

    ensure!(first.error.is_none(), "turn 1 failed: {:?}", first.error);
    ensure!(
        fleet.ran()
            == [
                ("web-1".to_owned(), "df -h /".to_owned()),
                ("db-1".to_owned(), "df -h /".to_owned())
            ],
        "unexpected commands: {:?}",
        fleet.ran()
    );
    ensure!(
        second
            .error
            .as_deref()
            .is_some_and(|e| e.contains("token budget spent")),
        "turn 2 should end with the budget's refusal: {second:?}"
    );
    println!("ok: two commands ran on the fake fleet; the budget stopped the second turn");
    Ok(())
}
