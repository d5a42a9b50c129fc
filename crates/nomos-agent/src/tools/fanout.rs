//! `run` on a group (FLEET-1, FLEET-2): the shell that resolves the group, asks the core
//! once, and drives the rolling window the core decides, host by host.
//!
//! The driver runs in a task of its own, like every dispatch (EXEC-2): each host's end is
//! recorded, and the window advanced, in one commit; hosts that end together share it.
//! The model's `run` call is recorded at the end with the per-host table. Each host's
//! output streams live while it runs (FLEET-7), keyed by its execution.

use std::collections::HashMap;

use nomos_core::fanout::{
    FanoutId, FanoutLimits, GroupError, canary_required_by, canary_size, resolve_list, resolve_tag,
    summary_table,
};
use nomos_core::ports::chat::ToolCall;
use nomos_core::ports::exec::ExecError;
use nomos_core::record::{ExecOutput, ToolCallOutcome};
use nomos_core::session::{Action, GroupRun, ToolInput};
use nomos_core::{ExecutionId, SessionId, Timestamp};
use tokio::task::JoinSet;

use crate::agent::Agent;
use crate::client::CallReply;
use crate::config::ApprovalPolicy;
use crate::error::AgentError;
use crate::exec::{CallToRecord, tool_call_record};
use crate::tools::args::GroupTarget;

/// A `run` on a group as the model asked for it.
pub(crate) struct GroupCall {
    pub target: GroupTarget,
    pub command: String,
    pub max_parallel: Option<u32>,
    pub max_failures: Option<u32>,
    pub canary: Option<u32>,
}

impl Agent {
    /// FLEET-1: resolves the group, lets the core decide once, and drives the fan-out
    /// when it may start. Refusals and approval requests are recorded with the call.
    pub(crate) async fn handle_run_group(
        &self,
        id: SessionId,
        call: &ToolCall,
        started: Timestamp,
        group: GroupCall,
    ) -> Result<CallReply, AgentError> {
        let resolved = self.resolve_group(&group);
        let (hosts, limits, canary) = match resolved {
            Ok(found) => found,
            Err(error) => {
                return self
                    .record_result(
                        id,
                        call,
                        started,
                        ToolCallOutcome::Error,
                        &error.to_string(),
                    )
                    .await;
            }
        };
        // EXEC-7: the string classified is the string every host runs.
        let members: Vec<&str> = hosts.iter().map(String::as_str).collect();
        let classification = crate::shells::classify_for(
            &self.inner.config.classifier,
            self.inner.executor.as_ref(),
            &members,
            &group.command,
        );
        // FLEET-6, GATE-10: a group that will wait for the operator is previewed on each
        // host it asks for (the canary's, when there is one), in the window's batches.
        let previewed = &hosts[..if canary > 0 {
            canary as usize
        } else {
            hosts.len()
        }];
        let previews = self
            .previews_for_group(id, previewed, &group.command, &classification, limits)
            .await?;
        let input = ToolInput::RunGroup(GroupRun {
            group: group.target.label(),
            hosts,
            command: group.command.clone(),
            classification,
            limits,
            canary,
            previews,
        });
        let policy = self.inner.config.approvals;
        // The reply carries the one action the call queued; the shell acts on it once,
        // after the commit.
        let (reply, _queued) = self
            .mutate_acting(id, |session, now| {
                let mut reply = session.handle_tool(now, &call.id, input.clone());
                match reply.action {
                    // The driver records the call with the table at the end.
                    Some(Action::StartFanout { .. }) => {}
                    Some(Action::AwaitApproval { approval_id, .. })
                        if policy == ApprovalPolicy::RefuseWithoutOperator =>
                    {
                        reply = crate::turn::deny_for_no_operator(
                            session,
                            now,
                            approval_id,
                            format!(
                                "Refused: this command needs the operator's approval, and nobody can approve it here (approval {approval_id} was denied by policy: no operator). It ran on no host."
                            ),
                        );
                        session.record_tool_call(tool_call_record(
                            id, call, started, now, reply.outcome, &reply.text,
                        ));
                    }
                    _ => {
                        reply.text = session.record_tool_call(tool_call_record(
                            id,
                            call,
                            started,
                            now,
                            reply.outcome,
                            &reply.text,
                        ));
                    }
                }
                reply
            })
            .await?;
        crate::exec::log_gate_decision(id, &group.target.label(), &input, &reply);
        match reply.action {
            Some(Action::StartFanout { fanout_id }) => {
                let to_record = CallToRecord {
                    call: call.clone(),
                    started,
                };
                let (outcome, text) = self.drive_fanout(id, fanout_id, Some(to_record)).await;
                Ok(CallReply::new(outcome, text))
            }
            Some(Action::AwaitApproval { approval_id, .. }) => Ok(CallReply {
                approval_id: Some(approval_id),
                ..CallReply::new(reply.outcome, reply.text)
            }),
            _ => Ok(CallReply::new(reply.outcome, reply.text)),
        }
    }

    fn resolve_group(
        &self,
        group: &GroupCall,
    ) -> Result<(Vec<String>, FanoutLimits, u32), GroupError> {
        let inventory = self.inner.executor.hosts();
        let hosts = match &group.target {
            GroupTarget::Tag(tag) => resolve_tag(tag, &inventory)?,
            GroupTarget::Hosts(list) => resolve_list(list, &inventory)?,
        };
        let config = &self.inner.config;
        let limits = FanoutLimits::for_call(
            config.fanout,
            config.fanout_max_parallel,
            group.max_parallel,
            group.max_failures,
        )?;
        // FLEET-5: the core decides the canary from the call and the policy's tags.
        let required_by = canary_required_by(&hosts, &inventory, &config.canary_tags);
        let canary = canary_size(group.canary, required_by, hosts.len())?;
        Ok((hosts, limits, canary))
    }

    /// FLEET-2: runs a fan-out the core let start, to its end, and returns the per-host
    /// table; records the call it answers, when there is one, with that table.
    pub(crate) async fn drive_fanout(
        &self,
        id: SessionId,
        fanout_id: FanoutId,
        call: Option<CallToRecord>,
    ) -> (ToolCallOutcome, String) {
        let agent = self.clone();
        let task = tokio::spawn(async move { agent.fanout_loop(id, fanout_id, call).await });
        match task.await {
            Ok(done) => done,
            Err(join) => (
                ToolCallOutcome::Error,
                format!("fan-out task ended abnormally: {join}"),
            ),
        }
    }

    async fn fanout_loop(
        &self,
        id: SessionId,
        fanout_id: FanoutId,
        call: Option<CallToRecord>,
    ) -> (ToolCallOutcome, String) {
        let limits = self.inner.config.exec_limits;
        let policy = self.inner.config.approvals;
        let mut running: JoinSet<(ExecutionId, String, HostRun)> = JoinSet::new();
        let mut tasks: HashMap<tokio::task::Id, ExecutionId> = HashMap::new();
        let mut ended: Vec<(ExecutionId, Result<ExecOutput, String>)> = Vec::new();
        loop {
            let results = std::mem::take(&mut ended);
            let recorded = self
                .mutate_recovering(id, |session, now| {
                    for (execution_id, result) in &results {
                        if let Err(refused) =
                            session.handle_execution_finished(now, *execution_id, result.clone())
                        {
                            tracing::warn!(%execution_id, error = %refused, "execution end refused by the core");
                        }
                    }
                    session.advance_fanout(now, fanout_id);
                    // The dispatches it queued are acted on below, after this commit
                    // returns (a conflict drops the session and decides again).
                    let mut started: Vec<ExecutionId> = Vec::new();
                    while let Some(action) = session.poll_action() {
                        match action {
                            Action::Dispatch { execution_id } => started.push(execution_id),
                            // FLEET-5: the rest after a canary wait for the operator; with
                            // nobody to answer, they are denied in this same commit.
                            Action::AwaitApproval { approval_id, .. }
                                if policy == ApprovalPolicy::RefuseWithoutOperator =>
                            {
                                crate::turn::deny_for_no_operator(
                                    session,
                                    now,
                                    approval_id,
                                    String::new(),
                                );
                            }
                            _ => {}
                        }
                    }
                    started
                        .iter()
                        .filter_map(|e| session.execution(*e))
                        .map(|e| (e.id, e.host.clone(), e.command.clone()))
                        .collect::<Vec<_>>()
                })
                .await;
            let started = match recorded {
                Ok((started, events)) => {
                    self.publish(&events);
                    started
                }
                Err(error) => {
                    tracing::error!(session = %id, %fanout_id, %error, "could not record a fan-out step");
                    Vec::new()
                }
            };
            for (execution_id, host, command) in started {
                let agent = self.clone();
                let handle = running.spawn(async move {
                    // SAFE-1, SAFE-2: each host's nets run before its change; a net that
                    // failed ended that host's change `failed`, and it does not run.
                    if agent
                        .run_safety_nets(None, id, execution_id, &host, limits)
                        .await
                        .is_some()
                    {
                        return (execution_id, host, HostRun::StoppedByNet);
                    }
                    // EXEC-7, EXEC-8: the exact string, marked with the execution's id.
                    // FLEET-7, EXEC-10: each host streams into its own live output, with
                    // its own coalescing and cap; all of it is out before its end is
                    // recorded.
                    let (live, published) =
                        crate::live::live_output(agent.inner.bus.clone(), id, execution_id);
                    let result = agent
                        .inner
                        .executor
                        .run_streamed(&host, &command, limits, &execution_id.to_string(), live)
                        .await;
                    let _ =
                        tokio::time::timeout(std::time::Duration::from_secs(2), published).await;
                    (execution_id, host, HostRun::Ran(result))
                });
                tasks.insert(handle.id(), execution_id);
            }
            let Some(first) = running.join_next_with_id().await else {
                break;
            };
            let mut batch = vec![first];
            while let Some(more) = running.try_join_next_with_id() {
                batch.push(more);
            }
            for joined in batch {
                match joined {
                    Ok((task, (execution_id, _, HostRun::StoppedByNet))) => {
                        // The core ended it `failed` when its net failed.
                        tasks.remove(&task);
                        tracing::info!(%execution_id, "a fan-out host's change was stopped by its safety net");
                    }
                    Ok((task, (execution_id, host, HostRun::Ran(result)))) => {
                        tasks.remove(&task);
                        tracing::info!(
                            target: "nomos::audit",
                            session = %id,
                            execution = %execution_id,
                            host = %host,
                            fanout = %fanout_id,
                            exit = %exit_text(&result),
                            "command ran"
                        );
                        ended.push((execution_id, result.map_err(|e| e.to_string())));
                    }
                    Err(join) => {
                        if let Some(execution_id) = tasks.remove(&join.id()) {
                            ended.push((
                                execution_id,
                                Err(format!("execution task ended abnormally: {join}")),
                            ));
                        }
                    }
                }
            }
        }
        let cap = self.inner.config.model_output_bytes;
        let recorded = self
            .mutate_recovering(id, |session, now| {
                let text = session
                    .fanouts()
                    .iter()
                    .find(|f| f.id == fanout_id)
                    .map(|f| summary_table(f, session.executions(), cap))
                    .unwrap_or_else(|| format!("fan-out {fanout_id} not found"));
                // SECRET-2: the rows hand on what the core stored for the model.
                match &call {
                    Some(call) => {
                        session.record_tool_call(call.record(id, now, ToolCallOutcome::Ok, &text))
                    }
                    None => nomos_core::redaction::redact_for_model(&text),
                }
            })
            .await;
        match recorded {
            Ok((text, events)) => {
                self.publish(&events);
                (ToolCallOutcome::Ok, text)
            }
            Err(error) => (
                ToolCallOutcome::Error,
                format!("could not record the fan-out's end: {error}"),
            ),
        }
    }
}

/// How one host's task of a fan-out ended.
enum HostRun {
    /// The command ran (or could not be run) with this result.
    Ran(Result<ExecOutput, ExecError>),
    /// SAFE-1, SAFE-2: its safety net failed, so the core ended it `failed` and it never ran.
    StoppedByNet,
}

fn exit_text(result: &Result<ExecOutput, ExecError>) -> String {
    match result {
        Ok(output) => match (output.exit_code, &output.signal) {
            (Some(code), _) => code.to_string(),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "unknown".to_owned(),
        },
        Err(error) => format!("error: {error}"),
    }
}
