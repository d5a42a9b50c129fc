//! Approval requests as an MCP client sees them, and `wait_for_approval` (MCP-1): the
//! client waits; only the operator decides, in Nomos (MCP-2).

use std::time::Duration;

use nomos_agent::{Agent, AgentError, LiveEvent, output_text};
use nomos_core::record::{Approval, Execution};
use nomos_core::{ApprovalId, ApprovalStatus, ExecutionStatus, SessionId};
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::tools::{DEFAULT_WAIT_SECS, MAX_WAIT_SECS};

/// How often a wait reads the store again when nothing was heard on the bus.
const STORE_POLL: Duration = Duration::from_secs(1);

/// An approval request, with what the operator is shown and where they decide.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApprovalRequest {
    /// The id `wait_for_approval` takes.
    pub approval_id: String,
    /// The exact command that would run (EXEC-7).
    pub command: String,
    /// The host it would run on.
    pub host: String,
    /// Its class.
    pub class: String,
    /// When the request expires (expiry means denied), RFC 3339.
    pub expires_at: String,
    /// Where the operator decides.
    pub operations_url: String,
}

impl ApprovalRequest {
    /// The request of `approval_id`, with a link under `web_base` (or a relative one).
    pub async fn load(
        agent: &Agent,
        approval_id: ApprovalId,
        web_base: Option<&str>,
    ) -> Result<ApprovalRequest, AgentError> {
        let approval = agent
            .store()
            .approval(approval_id)
            .await?
            .ok_or(AgentError::ApprovalNotFound(approval_id))?;
        Ok(ApprovalRequest::of(&approval, web_base))
    }

    fn of(approval: &Approval, web_base: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            approval_id: approval.id.to_string(),
            command: approval.binding.command.clone(),
            host: approval.binding.host.clone(),
            class: approval.binding.class.as_str().to_owned(),
            expires_at: approval.expires_at.to_rfc3339(),
            operations_url: format!(
                "{}/operations",
                web_base.unwrap_or("").trim_end_matches('/')
            ),
        }
    }

    /// The request in a sentence or two, for the client's model.
    pub fn describe(&self) -> String {
        format!(
            "Approval {} waits for the operator: `{}` on {} ({}), until {}. The operator decides at {}; call wait_for_approval with this approval_id to wait for the decision.",
            self.approval_id,
            self.command,
            self.host,
            self.class,
            self.expires_at,
            self.operations_url
        )
    }
}

/// The arguments of `wait_for_approval`, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitArgs {
    /// The approval.
    pub approval_id: ApprovalId,
    /// How long to wait at most.
    pub timeout: Duration,
}

impl WaitArgs {
    /// Reads the arguments; the error says what is wrong.
    pub fn parse(arguments: &serde_json::Value) -> Result<WaitArgs, String> {
        let id = match arguments.get("approval_id") {
            Some(serde_json::Value::String(id)) => id,
            Some(other) => {
                return Err(format!(
                    "invalid arguments for wait_for_approval: approval_id must be a string, got {other}"
                ));
            }
            None => {
                return Err(
                    "invalid arguments for wait_for_approval: approval_id is required".to_owned(),
                );
            }
        };
        let Ok(uuid) = Uuid::parse_str(id.trim()) else {
            return Err(format!(
                "invalid arguments for wait_for_approval: approval_id `{id}` is not an approval id (a UUID)"
            ));
        };
        let secs = match arguments.get("timeout_secs") {
            None | Some(serde_json::Value::Null) => DEFAULT_WAIT_SECS,
            Some(value) => match value.as_u64() {
                Some(secs) if (1..=MAX_WAIT_SECS).contains(&secs) => secs,
                _ => {
                    return Err(format!(
                        "invalid arguments for wait_for_approval: timeout_secs must be an integer from 1 to {MAX_WAIT_SECS}, got {value}"
                    ));
                }
            },
        };
        Ok(WaitArgs {
            approval_id: ApprovalId(uuid),
            timeout: Duration::from_secs(secs),
        })
    }
}

/// What the wait found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
struct WaitResult {
    approval_id: String,
    /// `pending` (the wait timed out), `approved`, `denied`, `expired` or `cancelled`.
    decision: String,
    decided_by: Option<String>,
    /// The execution's status (`running` while an approved command still runs).
    execution_status: Option<String>,
    /// The command's result, once it finished.
    result: Option<String>,
}

/// Blocks until the approval is decided and, when approved, its command finished; or until
/// the timeout; or until the client cancels the request.
pub async fn wait_for_approval(
    agent: &Agent,
    session: SessionId,
    args: WaitArgs,
    web_base: Option<&str>,
    cancel: &CancellationToken,
) -> Result<CallToolResult, AgentError> {
    let deadline = tokio::time::Instant::now() + args.timeout;
    // Subscribe before reading, so no decision falls between the read and the wait.
    let mut events = agent.bus().subscribe();
    loop {
        let approval = agent.store().approval(args.approval_id).await?;
        let Some(approval) = approval.filter(|a| a.session_id == session) else {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "approval {} not found in this session",
                args.approval_id
            ))]));
        };
        let execution = agent.store().execution(approval.execution_id).await?;
        let done = match approval.status {
            ApprovalStatus::Pending => false,
            ApprovalStatus::Approved => execution.as_ref().is_some_and(|e| e.status.is_terminal()),
            ApprovalStatus::Denied | ApprovalStatus::Expired | ApprovalStatus::Cancelled => true,
        };
        if done || tokio::time::Instant::now() >= deadline || cancel.is_cancelled() {
            return Ok(result(&approval, execution.as_ref(), web_base));
        }
        // The bus carries this process's commits; a decision made by another process that
        // shares the store (the server, for `nomos-server mcp`) is read back every second.
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => {}
            _ = tokio::time::sleep(STORE_POLL) => {}
            _ = cancel.cancelled() => {}
            _ = next_event_of(&mut events, session) => {}
        }
    }
}

async fn next_event_of(
    events: &mut tokio::sync::broadcast::Receiver<LiveEvent>,
    session: SessionId,
) {
    loop {
        match events.recv().await {
            Ok(LiveEvent::Committed(event)) if event.session_id == session => return,
            Ok(_) => {}
            // Missed events: read the store again.
            Err(RecvError::Lagged(_)) => return,
            Err(RecvError::Closed) => {
                std::future::pending::<()>().await;
            }
        }
    }
}

fn result(
    approval: &Approval,
    execution: Option<&Execution>,
    web_base: Option<&str>,
) -> CallToolResult {
    let decision = approval.status.as_str().to_owned();
    let outcome = execution.and_then(|e| match (e.status, &e.output, &e.error) {
        (ExecutionStatus::Completed, Some(output), _) => Some(output_text(output)),
        (ExecutionStatus::Failed | ExecutionStatus::Cancelled, _, Some(error)) => {
            Some(format!("command failed: {error}"))
        }
        _ => None,
    });
    let text = match approval.status {
        ApprovalStatus::Pending => format!(
            "No decision yet on approval {}. {} Call wait_for_approval again to keep waiting.",
            approval.id,
            ApprovalRequest::of(approval, web_base).describe()
        ),
        ApprovalStatus::Approved => match &outcome {
            Some(outcome) => format!(
                "Approved{}; the command ran: {outcome}",
                by(approval.decided_by.as_deref())
            ),
            None => format!(
                "Approved{}; the command is still running. Call wait_for_approval again for its result.",
                by(approval.decided_by.as_deref())
            ),
        },
        ApprovalStatus::Denied => format!(
            "Denied{}: the command did not run and will not. Do not ask again; tell your user.",
            by(approval.decided_by.as_deref())
        ),
        ApprovalStatus::Expired => {
            "Expired without an answer, which counts as denied: the command did not run.".to_owned()
        }
        ApprovalStatus::Cancelled => {
            "Voided (the task ended or the plan changed): the command did not run.".to_owned()
        }
    };
    let structured = WaitResult {
        approval_id: approval.id.to_string(),
        decision,
        decided_by: approval.decided_by.clone(),
        execution_status: execution.map(|e| e.status.as_str().to_owned()),
        result: outcome,
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = serde_json::to_value(&structured).ok();
    result
}

fn by(decided_by: Option<&str>) -> String {
    decided_by
        .map(|who| format!(" by {who}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_args(arguments: serde_json::Value, expected: Result<u64, &str>) {
        let parsed = WaitArgs::parse(&arguments).map(|a| a.timeout.as_secs());
        match (parsed, expected) {
            (Ok(secs), Ok(want)) => assert_eq!(secs, want),
            (Err(error), Err(want)) => assert!(error.contains(want), "{error}"),
            (got, want) => panic!("got {got:?}, wanted {want:?}"),
        }
    }

    // rule: MCP-1
    #[test]
    fn wait_arguments_are_checked_and_the_timeout_is_bounded() {
        let id = "0b7c2a5e-6f1d-4c7e-9a63-2f0b1d3c4e5f";
        check_args(
            serde_json::json!({ "approval_id": id }),
            Ok(DEFAULT_WAIT_SECS),
        );
        check_args(
            serde_json::json!({ "approval_id": id, "timeout_secs": 600 }),
            Ok(600),
        );
        check_args(
            serde_json::json!({ "approval_id": id, "timeout_secs": 601 }),
            Err("from 1 to 600"),
        );
        check_args(
            serde_json::json!({ "approval_id": id, "timeout_secs": 0 }),
            Err("from 1 to 600"),
        );
        check_args(
            serde_json::json!({ "approval_id": "abc" }),
            Err("not an approval id"),
        );
        check_args(serde_json::json!({}), Err("approval_id is required"));
    }
}
