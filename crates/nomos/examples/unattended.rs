//! An embedding without an operator never waits forever. Two configurations:
//!
//! * `ApprovalPolicy::RefuseWithoutOperator`: a request for approval is denied in the
//!   commit that makes it; the model reads the refusal in the same turn and goes on.
//! * `ApprovalPolicy::AwaitOperator` with a short approval TTL: a request waits that long,
//!   then the sweep expires it (expiry means deny, GATE-7) and a late decision is refused.
//!   A real embedding runs the sweeps with `Agent::start_workers`; this example moves a
//!   manual clock and calls `Agent::sweep_once` itself.
//!
//! ```text
//! cargo run -p nomos --example unattended
//! ```

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, ensure};
use nomos::llm::ScriptedModel;
use nomos::session::DecisionError;
use nomos::sqlite::SqliteStore;
use nomos::ssh::LocalExecutor;
use nomos::{
    Agent, AgentConfig, AgentError, ApprovalPolicy, ApprovalStatus, Decision, ManualClock,
    NO_OPERATOR, Span, Timestamp,
};

/// A plan, the operator's assent, then a destructive command that needs its own approval.
fn script(target: &Path, last_words: &str) -> String {
    format!(
        r#"
- tool_calls:
    - {{name: set_goal, arguments: {{goal: "remove an old file"}}}}
    - {{name: propose_plan, arguments: {{steps: [{{title: "remove the file"}}]}}}}
- text: "Plan ready."
- tool_calls:
    - {{name: run, arguments: {{host: local, command: "rm -f {target}"}}}}
- text: "{last_words}"
"#,
        target = target.display()
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir().context("creating a scratch directory")?;
    let target = dir.path().join("old.log");
    std::fs::write(&target, "still here")?;
    refuse_at_once(&target).await?;
    expire_after_a_minute(&target).await?;
    ensure!(target.exists(), "no unanswered request may run");
    println!("ok: nothing waited forever and nothing ran without an approval");
    Ok(())
}

async fn refuse_at_once(target: &Path) -> anyhow::Result<()> {
    let store = Arc::new(SqliteStore::in_memory().await?);
    let model = Arc::new(ScriptedModel::from_yaml_str(&script(
        target,
        "Nobody can approve the removal, so the file stays.",
    ))?);
    let mut config = AgentConfig::spec_defaults();
    config.approvals = ApprovalPolicy::RefuseWithoutOperator;
    let agent = Agent::builder(store, Arc::new(LocalExecutor::new()), model.clone())
        .config(config)
        .build();
    let session = agent.create_session().await?;
    agent.send_message(session, "remove the old log").await?;
    let turn = agent.send_message(session, "go ahead").await?;

    let snapshot = agent.session(session).await?;
    let approval = snapshot
        .approvals
        .first()
        .context("the request is persisted")?;
    let calls = agent.store().tool_calls(session).await?;
    let run = calls
        .iter()
        .rfind(|c| c.name == "run")
        .context("a run call")?;
    println!(
        "refuse at once: {:?} by {:?}",
        approval.status, approval.decided_by
    );
    println!("  the model read: {}", run.result);
    println!("  and said: {:?}", turn.final_text);
    ensure!(turn.approvals_requested.is_empty(), "nothing may wait");
    ensure!(approval.status == ApprovalStatus::Denied, "denied at once");
    ensure!(approval.decided_by.as_deref() == Some(NO_OPERATOR));
    ensure!(model.remaining() == 0, "the turn went on to its end");
    Ok(())
}

async fn expire_after_a_minute(target: &Path) -> anyhow::Result<()> {
    let store = Arc::new(SqliteStore::in_memory().await?);
    let model = Arc::new(ScriptedModel::from_yaml_str(&script(
        target,
        "The removal waits for an approval.",
    ))?);
    let clock = ManualClock::starting_at(Timestamp::from_millis(1_800_000_000_000));
    let mut config = AgentConfig::spec_defaults();
    config.approvals = ApprovalPolicy::AwaitOperator;
    config.session.approval_ttl = Span::from_mins(1);
    let agent = Agent::builder(store, Arc::new(LocalExecutor::new()), model)
        .config(config)
        .clock(Arc::new(clock.clone()))
        .build();
    let session = agent.create_session().await?;
    agent.send_message(session, "remove the old log").await?;
    let turn = agent.send_message(session, "go ahead").await?;
    let approval_id = *turn
        .approvals_requested
        .first()
        .context("a request waits for the operator")?;

    clock.advance(Span::from_mins(2));
    let report = agent.sweep_once().await?;
    let late = agent
        .decide(approval_id, Decision::Approve, Some("late"))
        .await;
    let status = agent
        .store()
        .approval(approval_id)
        .await?
        .context("the approval is in the store")?
        .status;
    println!(
        "expire after a minute: {} expired by the sweep, now {status:?}",
        report.approvals_expired
    );
    match &late {
        Ok(_) => println!("  a late approval was accepted"),
        Err(error) => println!("  a late approval is refused: {error}"),
    }
    ensure!(
        report.approvals_expired == 1,
        "the sweep expires the request"
    );
    ensure!(status == ApprovalStatus::Expired);
    ensure!(
        matches!(
            late,
            Err(AgentError::Decision(DecisionError::NotPending { .. }))
        ),
        "a late decision must be refused"
    );
    Ok(())
}
