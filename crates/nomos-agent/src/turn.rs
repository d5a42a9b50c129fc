//! The turn loop (TURN-1..8): ask the model, route each tool call through the core, run
//! what the gate allows, persist everything, and emit `turn.done` exactly once.

use nomos_core::event::TurnCause;
use nomos_core::ports::chat::{ChatDelta, ChatRequest, ChatResponse, ModelError, ToolCall, Usage};
use nomos_core::record::{ToolCallOutcome, ToolCallRequest};
use nomos_core::session::{Action, StepBudget, StepVerdict, ToolInput, ToolReply, TurnEnd};
use nomos_core::{ApprovalId, Decision, ExecutionId, SessionId, Timestamp};
use tokio::task::JoinHandle;

use crate::agent::Agent;
use crate::bus::LiveEvent;
use crate::client::{Access, CallReply};
use crate::config::{ApprovalPolicy, NO_OPERATOR};
use crate::error::AgentError;
use crate::exec::{CallToRecord, tool_call_record};
use crate::locks::SessionGuard;
use crate::tools::{ArgsError, Call, ExtraToolKind, builtin_specs, parse_call};

/// What one turn did.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnReport {
    /// The session.
    pub session_id: SessionId,
    /// Tool calls made.
    pub n_tool_calls: u32,
    /// The final text of the turn, if it ended in text.
    pub final_text: Option<String>,
    /// The real cause when the turn failed (TURN-2).
    pub error: Option<String>,
    /// Approvals requested during the turn and waiting for a decision (requests that
    /// [`ApprovalPolicy::RefuseWithoutOperator`] denied at once are not listed).
    pub approvals_requested: Vec<ApprovalId>,
    /// Tokens (and cost) the turn spent.
    pub usage: Usage,
}

impl TurnReport {
    pub(crate) fn new(session_id: SessionId) -> TurnReport {
        TurnReport {
            session_id,
            n_tool_calls: 0,
            final_text: None,
            error: None,
            approvals_requested: Vec::new(),
            usage: Usage::default(),
        }
    }
}

/// Why a turn stopped early.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TurnFailure {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// CONTROL-1: the operator stopped the turn.
    #[error("{}", nomos_core::session::STOPPED_BY_OPERATOR)]
    Stopped,
}

impl Agent {
    /// Sends an operator message and runs the turn it starts, to its end. TURN-8: refused
    /// with [`AgentError::TurnInProgress`] while another turn of the session runs.
    ///
    /// The message is persisted before the model is asked; every tool call the model makes
    /// goes through the core's gate; the turn ends with exactly one `turn.done` (TURN-1).
    /// Model and executor failures do not fail the call: they end the turn with the real
    /// cause in [`TurnReport::error`].
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use nomos_agent::Agent;
    /// use nomos_core::record::ToolCallOutcome;
    /// use nomos_llm::ScriptedModel;
    /// use nomos_sqlite::SqliteStore;
    /// use nomos_ssh::LocalExecutor;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedModel::from_yaml_str(
    ///     r#"
    /// - tool_calls:
    ///     - {name: run, arguments: {host: local, command: "systemctl restart nginx"}}
    /// - text: "I will propose a plan first."
    /// "#,
    /// )?;
    /// let store = Arc::new(SqliteStore::in_memory().await?);
    /// let agent = Agent::builder(store, Arc::new(LocalExecutor::new()), Arc::new(model)).build();
    /// let session = agent.create_session().await?;
    ///
    /// let turn = agent.send_message(session, "restart nginx").await?;
    /// assert_eq!(turn.error, None);
    /// assert_eq!(turn.final_text.as_deref(), Some("I will propose a plan first."));
    /// // GATE-2: the restart was refused with a directive result, and nothing ran.
    /// let calls = agent.store().tool_calls(session).await?;
    /// assert_eq!(calls[0].outcome, ToolCallOutcome::Refused);
    /// assert!(agent.session(session).await?.executions.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn send_message(&self, id: SessionId, text: &str) -> Result<TurnReport, AgentError> {
        let guard = self.begin_message(id, text, None).await?;
        Ok(self.drive_turn(id, guard, TurnCause::Operator).await)
    }

    /// Like [`Agent::send_message`], but the turn runs in a task of its own (so it goes
    /// on when the caller goes away). The message is persisted before this returns.
    pub async fn spawn_message(
        &self,
        id: SessionId,
        text: &str,
    ) -> Result<JoinHandle<TurnReport>, AgentError> {
        self.spawn_message_by(id, text, None).await
    }

    /// [`Agent::spawn_message`] from a known principal: an assent the message opens
    /// records who granted it and the request that carried it (AUDIT-1).
    pub async fn spawn_message_by(
        &self,
        id: SessionId,
        text: &str,
        by: Option<&nomos_core::record::Decider>,
    ) -> Result<JoinHandle<TurnReport>, AgentError> {
        let guard = self.begin_message(id, text, by).await?;
        let agent = self.clone();
        Ok(tokio::spawn(async move {
            agent.drive_turn(id, guard, TurnCause::Operator).await
        }))
    }

    async fn begin_message(
        &self,
        id: SessionId,
        text: &str,
        by: Option<&nomos_core::record::Decider>,
    ) -> Result<SessionGuard, AgentError> {
        if text.trim().is_empty() {
            return Err(AgentError::EmptyMessage);
        }
        let guard = self
            .inner
            .locks
            .try_lock(id)
            .await
            .ok_or(AgentError::TurnInProgress(id))?;
        self.mutate(id, |session, now| {
            session.handle_operator_message_by(now, text, by);
            session.handle_turn_started(now, TurnCause::Operator);
        })
        .await?;
        // CONTROL-1: from here the turn can be stopped.
        self.inner.controls.open(id);
        Ok(guard)
    }

    /// Runs a turn whose `turn.started` is committed, and always ends it with exactly one
    /// `turn.done` (TURN-1).
    pub(crate) async fn drive_turn(
        &self,
        id: SessionId,
        guard: SessionGuard,
        cause: TurnCause,
    ) -> TurnReport {
        let mut report = TurnReport::new(id);
        let result = self.stoppable(id, self.turn_loop(id, &mut report)).await;
        self.end_turn(id, &mut report, result.err(), cause, guard)
            .await;
        report
    }

    /// SESSION-4 on a clean end, then `turn.done` with the real error, if any. The session
    /// is released before `turn.done` is published, so a client that answers the moment it
    /// hears of the end finds the session free (TURN-8).
    pub(crate) async fn end_turn(
        &self,
        id: SessionId,
        report: &mut TurnReport,
        failure: Option<TurnFailure>,
        cause: TurnCause,
        guard: SessionGuard,
    ) {
        report.error = failure.map(|f| f.to_string());
        let final_text = report.final_text.clone();
        let error = report.error.clone();
        let n_tool_calls = report.n_tool_calls;
        let thresholds = self.inner.config.sweep;
        let res = self
            .mutate_recovering(id, |session, now| {
                // SESSION-4: the core decides; a failed turn is never an answer (SWEEP-2).
                let end = match (&error, &final_text) {
                    (Some(error), _) => Some(TurnEnd::Failed(error)),
                    (None, Some(text)) => Some(TurnEnd::Answer(text)),
                    (None, None) => None,
                };
                if let Some(end) = end {
                    session.handle_turn_end(now, end, &thresholds);
                }
                session.handle_turn_done(now, error.clone(), n_tool_calls);
            })
            .await;
        self.inner.controls.close(id);
        guard.release().await;
        match res {
            Ok(((), events)) => self.publish(&events),
            Err(err) => {
                tracing::error!(session = %id, ?cause, error = %err, "could not record the end of a turn");
            }
        }
    }

    pub(crate) async fn turn_loop(
        &self,
        id: SessionId,
        report: &mut TurnReport,
    ) -> Result<(), TurnFailure> {
        // MCP-1: an outside client drives this session; Nomos's model never speaks in it.
        // The client is set at creation and never changes, so a cached aggregate knows it.
        let client_driven = match self.inner.cache.client_driven(id) {
            Some(client_driven) => client_driven,
            None => self.session(id).await?.record.client.is_some(),
        };
        if client_driven {
            return Ok(());
        }
        let mut budget = StepBudget::new(self.inner.config.step_limit, report.n_tool_calls);
        loop {
            let response = self.next_reply(id).await?;
            report.usage.add(&response.usage);
            let text = response.content.clone().unwrap_or_default();
            let requests: Vec<ToolCallRequest> = response
                .tool_calls
                .iter()
                .map(|c| ToolCallRequest {
                    call_id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect();
            self.mutate(id, |session, now| {
                session.append_assistant_message(now, &text, requests.clone())
            })
            .await?;
            if response.tool_calls.is_empty() {
                report.final_text = Some(text);
                return Ok(());
            }
            for (idx, call) in response.tool_calls.iter().enumerate() {
                // TURN-6: the core counts the calls and words the refusal.
                if let StepVerdict::Limit { result } = budget.admit() {
                    // The rest of this reply's calls are answered, never left dangling.
                    for rest in &response.tool_calls[idx..] {
                        self.record_result(id, rest, self.now(), ToolCallOutcome::Refused, &result)
                            .await?;
                    }
                    report.final_text = Some(budget.summary(&text));
                    return Ok(());
                }
                report.n_tool_calls = budget.used();
                let reply = self.handle_call(id, Access::Operate, call).await?;
                report.approvals_requested.extend(reply.approval_id);
            }
        }
    }

    /// Asks the model, streaming text deltas to the bus; an empty reply is retried a
    /// bounded number of times (TURN-3) and then reported with its real cause (TURN-2).
    pub(crate) async fn ask_model(
        &self,
        id: SessionId,
        request: &ChatRequest,
    ) -> Result<ChatResponse, ModelError> {
        let bus = self.inner.bus.clone();
        let message_id = self.inner.cache.next_message_id(id);
        let sink = move |delta: ChatDelta| {
            if let ChatDelta::Text { text } = delta {
                bus.publish(LiveEvent::TextDelta {
                    session_id: id,
                    message_id,
                    text,
                });
            }
        };
        let mut attempt = 0;
        loop {
            let empty = match self.inner.model.complete(request, &sink).await {
                Ok(response) if !response.is_empty() => return Ok(response),
                Ok(response) => ModelError::Empty {
                    finish_reason: finish_reason_text(&response.finish_reason),
                },
                Err(empty @ ModelError::Empty { .. }) => empty,
                Err(other) => return Err(other),
            };
            if attempt >= self.inner.config.empty_reply_retries {
                return Err(empty);
            }
            attempt += 1;
            tracing::warn!(session = %id, attempt, "empty model reply; asking again");
        }
    }

    /// Decides and runs one tool call, and persists it with its result (TURN-4, TURN-5).
    /// The one path of every tool call, the model's in a turn and an outside client's
    /// ([`Agent::call_tool`]).
    pub(crate) async fn handle_call(
        &self,
        id: SessionId,
        access: Access,
        call: &ToolCall,
    ) -> Result<CallReply, AgentError> {
        let started = self.now();
        if let Some(refusal) = self.access_refusal(access, call) {
            return self
                .record_result(id, call, started, ToolCallOutcome::Refused, &refusal)
                .await;
        }
        let (outcome, result) = match parse_call(&call.name, &call.arguments) {
            Ok(Call::Knowledge(knowledge)) => {
                let used = knowledge.knowledge_use();
                let res = crate::tools::knowledge::run_knowledge_call(
                    self.inner.store.as_ref(),
                    self.inner.executor.as_ref(),
                    knowledge,
                    started,
                )
                .await;
                let (outcome, text) = match res {
                    Ok(text) => (ToolCallOutcome::Ok, text),
                    Err(text) => (ToolCallOutcome::Error, text),
                };
                // The accounting of WRITEBACK-1 and the call's record, in one commit.
                return self
                    .mutate(id, |session, now| {
                        if outcome == ToolCallOutcome::Ok
                            && let Some(used) = used
                        {
                            session.handle_knowledge_use(now, used);
                        }
                        session.record_tool_call(tool_call_record(
                            id, call, started, now, outcome, &text,
                        ))
                    })
                    .await
                    .map(|stored| CallReply::new(outcome, stored));
            }
            Ok(Call::ExecutionOutput {
                execution_id,
                offset,
                limit,
            }) => {
                self.execution_output(id, &execution_id, offset, limit)
                    .await?
            }
            Ok(Call::Run { host, command }) => {
                return self.handle_run(id, call, started, host, command).await;
            }
            Ok(Call::DiscoverGuests { host }) => {
                return self.handle_discover(id, call, started, host).await;
            }
            Ok(Call::RunGroup {
                target,
                command,
                max_parallel,
                max_failures,
                canary,
            }) => {
                let group = crate::tools::fanout::GroupCall {
                    target,
                    command,
                    max_parallel,
                    max_failures,
                    canary,
                };
                return self.handle_run_group(id, call, started, group).await;
            }
            Ok(Call::Core(input)) => return self.decide_core(id, call, started, input).await,
            Ok(Call::ProposePlan { steps, revision }) => {
                // GATE-9: declared commands are classified and their hosts resolved here.
                let hosts = self.inner.executor.hosts();
                match crate::declare::declare_steps(
                    steps,
                    &self.inner.config.classifier,
                    self.inner.executor.as_ref(),
                    &hosts,
                ) {
                    Ok(steps) => {
                        let input = ToolInput::ProposePlan { steps, revision };
                        let reply = self
                            .mutate(id, |session, now| {
                                let reply = session.handle_tool(now, &call.id, input.clone());
                                session.record_tool_call(tool_call_record(
                                    id,
                                    call,
                                    started,
                                    now,
                                    reply.outcome,
                                    &reply.text,
                                ));
                                CallReply::new(reply.outcome, reply.text)
                            })
                            .await?;
                        // GATE-10 (rev. 3): the declared changes' previews run only for a
                        // proposal the core accepted and recorded, each recorded before
                        // it runs, and are attached to the plan the operator is shown.
                        if reply.outcome == ToolCallOutcome::Ok {
                            self.preview_declared(id).await?;
                        }
                        return Ok(reply);
                    }
                    Err(text) => (ToolCallOutcome::Error, text),
                }
            }
            Err(ArgsError::UnknownTool(name)) => {
                self.handle_extra(id, &name, &call.arguments).await?
            }
            Err(invalid) => (ToolCallOutcome::Error, invalid.to_string()),
        };
        self.record_result(id, call, started, outcome, &result)
            .await
    }

    /// `run`: the gate's decision commits with the call's record, or (when the command is
    /// dispatched) with `running`, and the execution's task records the end and the call.
    async fn handle_run(
        &self,
        id: SessionId,
        call: &ToolCall,
        started: Timestamp,
        host: String,
        command: String,
    ) -> Result<CallReply, AgentError> {
        let hosts = self.inner.executor.hosts();
        if !hosts.iter().any(|h| h.slug == host) {
            let known: Vec<String> = hosts.into_iter().map(|h| h.slug).collect();
            let error = nomos_core::ports::exec::ExecError::UnknownHost { host, known };
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
        // EXEC-7: the string classified is the string that runs.
        // CLASSIFY-8: read in the grammar of the shell the executor runs it with on `host`.
        let classification = crate::shells::classify_for(
            &self.inner.config.classifier,
            self.inner.executor.as_ref(),
            &[host.as_str()],
            &command,
        );
        // GATE-10: a command that will wait for the operator is previewed first.
        let preview = self
            .preview_for_run(id, &host, &command, &classification)
            .await?;
        let input = ToolInput::Run {
            host: host.clone(),
            command: command.clone(),
            classification,
            preview,
        };
        let policy = self.inner.config.approvals;
        // EXEC-6: a dispatch comes with `running` in the same commit, so the command starts
        // only after `running` is stored, and only when the core said so.
        let (reply, actions) = self
            .mutate_acting(id, |session, now| {
                let mut reply = session.handle_tool(now, &call.id, input.clone());
                match reply.action {
                    // The execution's task records the call with the command's end.
                    Some(Action::Dispatch { .. }) => {}
                    // Nobody will answer: deny in the commit that persists the request.
                    Some(Action::AwaitApproval { approval_id, .. })
                        if policy == ApprovalPolicy::RefuseWithoutOperator =>
                    {
                        reply = deny_for_no_operator(
                            session,
                            now,
                            approval_id,
                            no_operator_result(approval_id),
                        );
                        session.record_tool_call(tool_call_record(
                            id,
                            call,
                            started,
                            now,
                            reply.outcome,
                            &reply.text,
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
        crate::exec::log_gate_decision(id, &host, &input, &reply);
        // The shell acts on what the core queued, once, after the commit.
        let mut approval_id = None;
        for action in actions {
            match action {
                Action::Dispatch { execution_id } => {
                    return Ok(self
                        .dispatch_for_call(id, execution_id, &host, &command, call, started)
                        .await);
                }
                Action::AwaitApproval {
                    approval_id: id, ..
                } => approval_id = Some(id),
                // A single host's `run` never starts a fan-out.
                Action::StartFanout { .. } => {}
            }
        }
        Ok(CallReply {
            approval_id,
            ..CallReply::new(reply.outcome, reply.text)
        })
    }

    /// A lifecycle call the core decides alone: the decision and the call's record, in one
    /// commit. When the decision dispatches a command (SAFE-4: marking a step with a check
    /// done runs its check), the command runs after the commit and its task records the
    /// call with the verdict.
    async fn decide_core(
        &self,
        id: SessionId,
        call: &ToolCall,
        started: Timestamp,
        input: ToolInput,
    ) -> Result<CallReply, AgentError> {
        let (reply, actions) = self
            .mutate_acting(id, |session, now| {
                let reply = session.handle_tool(now, &call.id, input.clone());
                let dispatched = match reply.action {
                    Some(Action::Dispatch { execution_id }) => session
                        .execution(execution_id)
                        .map(|e| (e.host.clone(), e.command.clone())),
                    _ => None,
                };
                if dispatched.is_none() {
                    session.record_tool_call(tool_call_record(
                        id,
                        call,
                        started,
                        now,
                        reply.outcome,
                        &reply.text,
                    ));
                }
                (CallReply::new(reply.outcome, reply.text), dispatched)
            })
            .await?;
        for action in actions {
            if let (Action::Dispatch { execution_id }, (_, Some((host, command)))) =
                (action, &reply)
            {
                return Ok(self
                    .dispatch_for_call(id, execution_id, host, command, call, started)
                    .await);
            }
        }
        Ok(reply.0)
    }

    /// Runs a dispatched execution that answers the model's `call` and makes its end the
    /// call's reply; the execution's task records the call with the command's end (TURN-4).
    async fn dispatch_for_call(
        &self,
        id: SessionId,
        execution_id: ExecutionId,
        host: &str,
        command: &str,
        call: &ToolCall,
        started: Timestamp,
    ) -> CallReply {
        let to_record = CallToRecord {
            call: call.clone(),
            started,
        };
        let (outcome, text) = self
            .dispatch(
                id,
                execution_id,
                host.to_owned(),
                command.to_owned(),
                Some(to_record),
            )
            .await;
        CallReply::new(outcome, text)
    }

    async fn handle_extra(
        &self,
        id: SessionId,
        name: &str,
        arguments: &str,
    ) -> Result<(ToolCallOutcome, String), AgentError> {
        let Some(tool) = self.inner.extra.find(name) else {
            let mut names: Vec<String> = builtin_specs().into_iter().map(|s| s.name).collect();
            names.extend(self.inner.extra.specs().into_iter().map(|s| s.name));
            return Ok((
                ToolCallOutcome::Error,
                format!(
                    "unknown tool `{name}`; available tools: {}",
                    names.join(", ")
                ),
            ));
        };
        // GATE-3: the core decides whether the tool may run now.
        let kind = tool.kind();
        if let Some(refused) = self
            .mutate(id, |session, now| {
                session.handle_extra_tool(now, name, kind)
            })
            .await?
        {
            return Ok((refused.outcome, refused.text));
        }
        let args: serde_json::Value = match serde_json::from_str(if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        }) {
            Ok(args) => args,
            Err(e) => {
                return Ok((
                    ToolCallOutcome::Error,
                    format!("invalid arguments for {name}: {e}"),
                ));
            }
        };
        match tool.call(args).await {
            Ok(text) => {
                if tool.kind() == ExtraToolKind::ReadOnly {
                    self.mutate(id, |session, now| {
                        session
                            .handle_knowledge_use(now, nomos_core::session::KnowledgeUse::Discovery)
                    })
                    .await?;
                }
                Ok((ToolCallOutcome::Ok, text))
            }
            Err(text) => Ok((ToolCallOutcome::Error, text)),
        }
    }

    /// TURN-4: one record per call, with its arguments, result, start and duration.
    pub(crate) async fn record_result(
        &self,
        id: SessionId,
        call: &ToolCall,
        started: Timestamp,
        outcome: ToolCallOutcome,
        result: &str,
    ) -> Result<CallReply, AgentError> {
        // SECRET-2: the caller hands on what the core stored for the model.
        let stored = self
            .mutate(id, |session, now| {
                session.record_tool_call(tool_call_record(id, call, started, now, outcome, result))
            })
            .await?;
        Ok(CallReply::new(outcome, stored))
    }
}

fn finish_reason_text(reason: &nomos_core::ports::chat::FinishReason) -> String {
    use nomos_core::ports::chat::FinishReason;
    match reason {
        FinishReason::Stop => "stop".to_owned(),
        FinishReason::ToolCalls => "tool_calls".to_owned(),
        FinishReason::Length => "length".to_owned(),
        FinishReason::ContentFilter => "content_filter".to_owned(),
        FinishReason::Other(other) => other.clone(),
    }
}

/// The `run` result when [`ApprovalPolicy::RefuseWithoutOperator`] denied the request.
/// `ApprovalPolicy::RefuseWithoutOperator`: nobody will answer the request, so it is denied
/// in the commit that persists it, and the call is refused with `text` (or the core's
/// refusal, should the denial itself be refused).
pub(crate) fn deny_for_no_operator(
    session: &mut nomos_core::session::Session,
    now: Timestamp,
    approval_id: ApprovalId,
    text: String,
) -> ToolReply {
    let text = match session.handle_decision(now, approval_id, Decision::Deny, Some(NO_OPERATOR)) {
        Ok(_) => text,
        Err(refused) => refused.to_string(),
    };
    ToolReply {
        outcome: ToolCallOutcome::Refused,
        text,
        action: None,
    }
}

fn no_operator_result(approval_id: ApprovalId) -> String {
    format!(
        "Refused: this command needs the operator's approval, and nobody can approve it here (approval {approval_id} was denied by policy: no operator). It did not run. Do not call run for it again; report what it would change and finish with what you could do read-only."
    )
}
