//! Deciding approvals from code: an operator without a person, that assents to a plan and
//! approves or denies each request by a policy of its own. The gate's refusals stay in
//! force whatever the model does: nothing that changes state before a plan (GATE-2) or
//! before the assent (GATE-3), a destructive command only with its own approval (GATE-5),
//! and each approval decided once, by its id (GATE-7).
//!
//! ```text
//! cargo run -p nomos --example headless_operator
//! ```

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, ensure};
use nomos::llm::ScriptedModel;
use nomos::record::{Approval, ToolCallOutcome};
use nomos::session::DecisionError;
use nomos::sqlite::SqliteStore;
use nomos::ssh::LocalExecutor;
use nomos::{Agent, AgentError, ApprovalStatus, Decision, SessionId};

/// The policy: deleting anything under the cache directory is fine, nothing else is.
struct CachePolicy {
    cache: String,
}

impl CachePolicy {
    fn decide(&self, approval: &Approval) -> Decision {
        let allowed = format!("rm -rf {}", self.cache);
        if approval.binding.host == "local" && approval.binding.command == allowed {
            Decision::Approve
        } else {
            Decision::Deny
        }
    }
}

fn script(dir: &Path) -> String {
    let dir = dir.display();
    format!(
        r#"
- tool_calls:
    - {{name: run, arguments: {{host: local, command: "rm -rf {dir}/cache"}}}}
- tool_calls:
    - {{name: set_goal, arguments: {{goal: "free the disk by clearing the cache"}}}}
    - {{name: propose_plan, arguments: {{steps: [{{title: "clear {dir}/cache"}}, {{title: "tidy up {dir}/keep"}}]}}}}
  expect: {{last_tool_result_contains: "Propose a plan first"}}
- tool_calls:
    - {{name: run, arguments: {{host: local, command: "rm -rf {dir}/cache"}}}}
- text: "Here is the plan; I will wait for your approval."
  expect: {{last_tool_result_contains: "has not approved the plan"}}
- tool_calls:
    - {{name: run, arguments: {{host: local, command: "rm -rf {dir}/cache"}}}}
    - {{name: run, arguments: {{host: local, command: "rm -rf {dir}/keep"}}}}
  expect: {{last_user_contains: "approved"}}
- text: "Both deletions wait for their own approval."
- text: "The cache is cleared."
- text: "Understood: {dir}/keep stays."
"#
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir().context("creating a scratch directory")?;
    std::fs::create_dir_all(dir.path().join("cache"))?;
    std::fs::write(dir.path().join("cache/blob"), "old")?;
    std::fs::create_dir_all(dir.path().join("keep"))?;
    std::fs::write(dir.path().join("keep/notes"), "precious")?;
    let policy = CachePolicy {
        cache: format!("{}/cache", dir.path().display()),
    };

    let store = Arc::new(SqliteStore::in_memory().await?);
    let model = Arc::new(ScriptedModel::from_yaml_str(&script(dir.path()))?);
    let agent = Agent::builder(store, Arc::new(LocalExecutor::new()), model.clone()).build();
    let session = agent.create_session().await?;

    // Turn 1: the model tries to delete before a plan, then before the assent.
    agent
        .send_message(session, "The disk is full; clear the cache.")
        .await?;
    let snapshot = agent.session(session).await?;
    println!("plan generation {}:", snapshot.record.plan_generation);
    for step in &snapshot.steps {
        println!("  {}. {}", step.seq, step.title);
    }

    // The headless operator assents to the plan the way an operator does (GATE-4).
    let turn = agent.send_message(session, "approved").await?;
    println!("requests waiting: {}", turn.approvals_requested.len());

    let mut decided = Vec::new();
    for approval_id in &turn.approvals_requested {
        let approval = agent
            .store()
            .approval(*approval_id)
            .await?
            .context("a requested approval is in the store")?;
        let decision = policy.decide(&approval);
        println!("{decision:?}: {}", approval.binding.command);
        let (report, continuation) = agent
            .decide(*approval_id, decision, Some("cache-policy"))
            .await?;
        println!(
            "  ran: {}; the model answered: {:?}",
            report.dispatched, continuation.final_text
        );
        decided.push(*approval_id);
    }

    // GATE-7: a second decision on the same approval is refused.
    let again = agent
        .decide(decided[0], Decision::Deny, Some("cache-policy"))
        .await;
    println!("deciding again: {}", describe(&again));
    ensure!(
        matches!(
            again,
            Err(AgentError::Decision(DecisionError::NotPending { .. }))
        ),
        "a second decision must be refused"
    );

    print_refusals(&agent, session).await?;
    let snapshot = agent.session(session).await?;
    let statuses: Vec<ApprovalStatus> = snapshot.approvals.iter().map(|a| a.status).collect();
    ensure!(
        statuses == [ApprovalStatus::Approved, ApprovalStatus::Denied],
        "unexpected approvals: {statuses:?}"
    );
    ensure!(
        !dir.path().join("cache").exists(),
        "the approved delete ran"
    );
    ensure!(
        dir.path().join("keep/notes").exists(),
        "the denied delete never ran"
    );
    ensure!(
        model.remaining() == 0,
        "the script was not played to its end"
    );
    println!("ok: the policy approved one delete and denied the other; the gate held");
    Ok(())
}

/// The `run` calls the gate refused, with the directive the model read.
async fn print_refusals(agent: &Agent, session: SessionId) -> anyhow::Result<()> {
    let calls = agent.store().tool_calls(session).await?;
    let refused: Vec<_> = calls
        .iter()
        .filter(|c| c.name == "run" && c.outcome == ToolCallOutcome::Refused)
        .collect();
    for call in &refused {
        println!("refused: {}", call.result);
    }
    ensure!(
        refused.len() == 2,
        "expected the GATE-2 and GATE-3 refusals"
    );
    Ok(())
}

fn describe<T>(res: &Result<T, AgentError>) -> String {
    match res {
        Ok(_) => "accepted".to_owned(),
        Err(error) => format!("refused ({error})"),
    }
}
