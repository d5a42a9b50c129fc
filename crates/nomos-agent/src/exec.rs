//! Dispatching executions (EXEC-2, EXEC-5, EXEC-7): the command runs in a task of its
//! own that always records how it ended, even when the caller goes away.
//!
//! Every gate decision and every command run is also one structured log line (target
//! `nomos::audit`, fields `session`, `execution`, `host`, `class`, `principal` where
//! known, and `exit` for a run), so an operator can follow them in the server's log.

use nomos_core::ports::chat::ToolCall;
use nomos_core::ports::exec::ExecError;
use nomos_core::record::{ExecOutput, ToolCallOutcome, ToolCallRecord};
use nomos_core::session::{Action, STOPPED_BY_OPERATOR, ToolInput, ToolReply};
use nomos_core::{ExecutionId, SessionId, Timestamp};

use crate::agent::Agent;
use crate::cancel::RunEnd;

/// The model's `run` call an execution answers, recorded with the execution's end in
/// one commit (TURN-4), by the task that owns the execution.
#[derive(Clone, Debug)]
pub(crate) struct CallToRecord {
    pub call: ToolCall,
    pub started: Timestamp,
}

impl CallToRecord {
    /// The call's record with its result, as of `now`.
    pub(crate) fn record(
        &self,
        id: SessionId,
        now: Timestamp,
        outcome: ToolCallOutcome,
        result: &str,
    ) -> ToolCallRecord {
        tool_call_record(id, &self.call, self.started, now, outcome, result)
    }
}

/// TURN-4: one record per call, with its arguments, result, start and duration.
pub(crate) fn tool_call_record(
    id: SessionId,
    call: &ToolCall,
    started: Timestamp,
    now: Timestamp,
    outcome: ToolCallOutcome,
    result: &str,
) -> ToolCallRecord {
    ToolCallRecord {
        session_id: id,
        call_id: call.id.clone(),
        name: call.name.clone(),
        arguments: call.arguments.clone(),
        result: result.to_owned(),
        outcome,
        started_at: started,
        duration_ms: now.since(started).as_millis().max(0) as u64,
    }
}

impl Agent {
    /// Runs an execution already committed as `running` and records its end, together with
    /// the tool call it answers when there is one. Returns the tool result for the model.
    pub(crate) async fn dispatch(
        &self,
        id: SessionId,
        execution_id: ExecutionId,
        host: String,
        command: String,
        call: Option<CallToRecord>,
    ) -> (ToolCallOutcome, String) {
        let call_after_panic = call.clone();
        let agent = self.clone();
        let limits = self.inner.config.exec_limits;
        // CONTROL-1: the running turn's stop reaches the command, and the turn waits for
        // its end to be recorded before it ends.
        let control = self.inner.controls.get(id);
        let task_guard = control.as_ref().map(|c| c.task());
        let task = tokio::spawn(async move {
            let _task_guard = task_guard;
            // SAFE-2: the safety nets the core asks for run first; a net that failed
            // stopped the change, which the core already ended `failed`.
            let stopped = agent
                .run_safety_nets(control.as_deref(), id, execution_id, &host, limits)
                .await;
            // EXEC-7: exactly the string that was classified and shown. EXEC-8: marked
            // with the execution's id, so a restart can stop what is left of it.
            let end = match &stopped {
                Some(_) => None,
                None => Some(
                    agent
                        .run_stoppable(
                            control.as_deref(),
                            &host,
                            &command,
                            limits,
                            execution_id,
                            id,
                        )
                        .await,
                ),
            };
            let (result, text, outcome, exit) = match end {
                Some(RunEnd::Finished(result)) => {
                    let text = result_text(&result);
                    let outcome = if result.is_ok() {
                        ToolCallOutcome::Ok
                    } else {
                        ToolCallOutcome::Error
                    };
                    let exit = exit_text(&result);
                    (
                        Ended::Finished(result.map_err(|e| e.to_string())),
                        text,
                        outcome,
                        exit,
                    )
                }
                Some(RunEnd::Stopped) => (
                    Ended::Stopped,
                    format!("command {STOPPED_BY_OPERATOR}; it was killed and did not finish"),
                    ToolCallOutcome::Interrupted,
                    STOPPED_BY_OPERATOR.to_owned(),
                ),
                None => (
                    Ended::BySafetyNet,
                    format!("command {}", stopped.clone().unwrap_or_default()),
                    ToolCallOutcome::Error,
                    "stopped by its safety net".to_owned(),
                ),
            };
            let recorded = agent
                .mutate_recovering(id, |session, now| {
                    let finished = match &result {
                        Ended::Finished(result) => {
                            session.handle_execution_finished(now, execution_id, result.clone())
                        }
                        Ended::Stopped => session.handle_execution_stopped(now, execution_id),
                        // SAFE-2: the core ended it when its net failed.
                        Ended::BySafetyNet => Ok(()),
                    };
                    // SAFE-4: a check's call reads the core's verdict on the step first.
                    let text = match session.check_reply(execution_id) {
                        Some(verdict) => format!("{verdict}\n{text}"),
                        None => text.clone(),
                    };
                    // SECRET-2: the core stores the result as the model may read it.
                    let stored = call
                        .as_ref()
                        .map(|call| session.record_tool_call(call.record(id, now, outcome, &text)));
                    let class = session.execution(execution_id).map(|e| e.class);
                    let principal = session
                        .approvals()
                        .iter()
                        .find(|a| a.execution_id == execution_id)
                        .and_then(|a| a.decided_by.clone());
                    (finished, class, principal, stored, text)
                })
                .await
                .map(|(decided, events)| {
                    agent.publish(&events);
                    decided
                });
            let (class, principal, text) = match &recorded {
                Ok((_, class, principal, _, text)) => (*class, principal.clone(), text.clone()),
                Err(_) => (None, None, text),
            };
            // What the caller hands on (to the model, or to an MCP client) is what was
            // stored; when nothing could be stored, it is redacted the same way.
            let text = match &recorded {
                Ok((_, _, _, Some(stored), _)) => stored.clone(),
                _ => nomos_core::redaction::redact_for_model(&text),
            };
            tracing::info!(
                target: "nomos::audit",
                session = %id,
                execution = %execution_id,
                host = %host,
                class = class.map(|c| c.as_str()).unwrap_or("unknown"),
                principal = principal.as_deref().unwrap_or("-"),
                exit = %exit,
                "command ran"
            );
            match recorded.map(|(finished, _, _, _, _)| finished) {
                Ok(Ok(())) => {}
                Ok(Err(refused)) => {
                    tracing::warn!(%execution_id, error = %refused, "execution end refused by the core")
                }
                Err(err) => {
                    tracing::error!(%execution_id, error = %err, "could not record the end of an execution")
                }
            }
            (outcome, text)
        });
        match task.await {
            Ok(done) => done,
            Err(join) => {
                // The task panicked or was cancelled at shutdown: record the failure (EXEC-2).
                let error = format!("execution task ended abnormally: {join}");
                let recorded = self
                    .mutate(id, |session, now| {
                        let finished = session.handle_execution_finished(
                            now,
                            execution_id,
                            Err(error.clone()),
                        );
                        if let Some(call) = &call_after_panic {
                            session.record_tool_call(call.record(
                                id,
                                now,
                                ToolCallOutcome::Error,
                                &error,
                            ));
                        }
                        finished
                    })
                    .await;
                match recorded {
                    Ok(Ok(())) => {}
                    Ok(Err(refused)) => {
                        tracing::warn!(%execution_id, error = %refused, "the end of an execution whose task ended abnormally was refused by the core")
                    }
                    Err(err) => {
                        tracing::error!(%execution_id, error = %err, "could not record the end of an execution whose task ended abnormally")
                    }
                }
                (ToolCallOutcome::Error, error)
            }
        }
    }
}

/// How a command ended, for the log: its exit code, the signal, or the failure.
fn exit_text(result: &Result<ExecOutput, ExecError>) -> String {
    match result {
        Ok(ExecOutput {
            exit_code: Some(code),
            ..
        }) => code.to_string(),
        Ok(ExecOutput {
            signal: Some(signal),
            ..
        }) => format!("signal {signal}"),
        Ok(_) => "unknown".to_owned(),
        Err(error) => format!("error: {error}"),
    }
}

/// One log line for the gate's decision on a `run` call.
pub(crate) fn log_gate_decision(id: SessionId, host: &str, input: &ToolInput, reply: &ToolReply) {
    let class = match input {
        ToolInput::Run { classification, .. } => classification.class.as_str(),
        ToolInput::RunGroup(run) => run.classification.class.as_str(),
        _ => "unknown",
    };
    let (decision, execution) = match &reply.action {
        Some(Action::Dispatch { execution_id }) => ("run", Some(*execution_id)),
        Some(Action::StartFanout { .. }) => ("fan_out", None),
        Some(Action::AwaitApproval { execution_id, .. }) => {
            ("approval_requested", Some(*execution_id))
        }
        None => (reply.outcome.as_str(), None),
    };
    tracing::info!(
        target: "nomos::audit",
        session = %id,
        execution = execution.map(|e| e.to_string()).as_deref().unwrap_or("-"),
        host,
        class,
        decision,
        "gate decided"
    );
}

/// The result text of a completed command, as a `run` call reports it (EXEC-5).
pub fn output_text(output: &ExecOutput) -> String {
    result_text(&Ok(output.clone()))
}

/// The tool result for a finished command: exit status, duration, output, and what the
/// caps cut (EXEC-5).
pub(crate) fn result_text(
    result: &Result<ExecOutput, nomos_core::ports::exec::ExecError>,
) -> String {
    match result {
        Err(error) => format!("command failed: {error}"),
        Ok(output) => {
            let status = match (&output.exit_code, &output.signal) {
                (Some(code), _) => format!("exit {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                (None, None) => "no exit status".to_owned(),
            };
            let mut text = format!("{status} ({} ms)", output.duration_ms);
            for (name, body, cut) in [
                ("stdout", &output.stdout, output.stdout_cut),
                ("stderr", &output.stderr, output.stderr_cut),
            ] {
                if !body.is_empty() {
                    text.push_str(&format!("\n{name}:\n{body}"));
                }
                if cut > 0 {
                    text.push_str(&format!("\n[{name}: {cut} more bytes were cut]"));
                }
            }
            text
        }
    }
}

/// How a dispatched command ended, for the record.
enum Ended {
    /// It ran to its end (or failed).
    Finished(Result<nomos_core::record::ExecOutput, String>),
    /// The operator stopped it.
    Stopped,
    /// SAFE-2: its safety net failed, so it never ran (the core ended it `failed`).
    BySafetyNet,
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: EXEC-5
    #[test]
    fn result_text_reports_exit_code_output_and_what_was_cut() {
        let output = ExecOutput {
            exit_code: Some(2),
            stdout: "hello".into(),
            stderr: "oops".into(),
            stdout_cut: 100,
            duration_ms: 12,
            ..ExecOutput::default()
        };
        let text = result_text(&Ok(output));
        assert_eq!(
            text,
            "exit 2 (12 ms)\nstdout:\nhello\n[stdout: 100 more bytes were cut]\nstderr:\noops"
        );
    }
}
