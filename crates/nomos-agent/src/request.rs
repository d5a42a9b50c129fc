//! Preparing each model request and taking its reply: dangling calls closed (TURN-7), the
//! conversation fitted to the context budget (TURN-9), and the reply's tool-call ids made
//! unique within the session (TURN-10).

use nomos_core::SessionId;
use nomos_core::ports::chat::{ChatRequest, ChatResponse, make_call_ids_unique};
use nomos_core::ports::store::SessionSnapshot;
use nomos_core::record::{ToolCallOutcome, ToolCallRecord};

use crate::agent::Agent;
use crate::budget::{self, Budget, Context};
use crate::error::AgentError;
use crate::history::{INTERRUPTED_RESULT, build_history};
use crate::tools::builtin_specs;
use crate::turn::TurnFailure;

/// A request ready to send, and the tool-call ids the session has used so far.
pub(crate) struct Prepared {
    pub request: ChatRequest,
    pub used_call_ids: Vec<String>,
    pub context: Context,
}

impl Agent {
    /// Prepares the request, asks the model, and returns its reply with ids the session has
    /// not used (TURN-10), so the history sends back exactly the ids the store holds.
    pub(crate) async fn next_reply(&self, id: SessionId) -> Result<ChatResponse, TurnFailure> {
        let mut prepared = self.prepare_request(id).await?;
        let mut response = match self.ask_model(id, &prepared.request).await {
            Ok(response) => response,
            // TURN-9: the model says the request is too big; compact once, harder, and ask
            // again. If that fails too, its error is the turn's cause (TURN-2).
            Err(err) if err.is_context_exceeded() => {
                let target = self.budget().target_tokens() / 2;
                let fit = budget::fit(&mut prepared.request, target, &prepared.context);
                tracing::warn!(session = %id, error = %err, ?fit, "the model's context was exceeded; compacted and asking again");
                self.ask_model(id, &prepared.request).await?
            }
            Err(err) => return Err(err.into()),
        };
        let n_replaced = make_call_ids_unique(
            prepared.used_call_ids.iter().map(String::as_str),
            &mut response.tool_calls,
        );
        if n_replaced > 0 {
            tracing::debug!(session = %id, n_replaced, "replaced missing or repeated tool-call ids");
        }
        Ok(response)
    }

    fn budget(&self) -> Budget {
        Budget {
            context_tokens: self.inner.config.context_tokens,
            model_output_bytes: self.inner.config.model_output_bytes,
        }
    }

    /// Builds the request, closing dangling calls first (TURN-7).
    pub(crate) async fn prepare_request(&self, id: SessionId) -> Result<Prepared, AgentError> {
        let store = &self.inner.store;
        let messages = store.messages(id).await?;
        let calls = store.tool_calls(id).await?;
        let history = build_history(&self.inner.config.system_prompt, &messages, &calls);
        if !history.dangling.is_empty() {
            let now = self.now();
            let dangling = history.dangling.clone();
            self.mutate(id, |session, _| {
                for call in &dangling {
                    session.record_tool_call(ToolCallRecord {
                        session_id: id,
                        call_id: call.call_id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                        result: INTERRUPTED_RESULT.to_owned(),
                        outcome: ToolCallOutcome::Interrupted,
                        started_at: now,
                        duration_ms: 0,
                    });
                }
            })
            .await?;
        }
        let mut used_call_ids: Vec<String> = messages
            .iter()
            .flat_map(|m| m.tool_calls.iter().map(|c| c.call_id.clone()))
            .collect();
        used_call_ids.extend(calls.iter().map(|c| c.call_id.clone()));
        let mut tools = builtin_specs();
        tools.extend(self.inner.extra.specs());
        let mut context = match store.load_session(id).await? {
            Some(snapshot) => budget_context(&snapshot),
            None => Context::default(),
        };
        let mut request = ChatRequest {
            messages: history.messages,
            tools,
        };
        let budget = self.budget();
        budget::model_view(&mut request, &budget, &mut context);
        let fit = budget::fit(&mut request, budget.target_tokens(), &context);
        if fit.tokens_after < fit.tokens_before {
            tracing::info!(session = %id, ?fit, "fitted the request to the model's context");
        }
        Ok(Prepared {
            request,
            used_call_ids,
            context,
        })
    }
}

/// The executions behind `run` calls and the current plan, from the session's rows.
fn budget_context(snapshot: &SessionSnapshot) -> Context {
    let executions = snapshot
        .executions
        .iter()
        .filter_map(|e| e.tool_call_id.clone().map(|call| (call, e.id)))
        .collect();
    let generation = snapshot.steps.iter().map(|s| s.generation).max();
    let plan: Vec<String> = snapshot
        .steps
        .iter()
        .filter(|s| Some(s.generation) == generation)
        .map(|s| format!("{}. {} [{}]", s.seq, s.title, s.status))
        .collect();
    Context {
        executions,
        plan: (!plan.is_empty()).then(|| plan.join("\n")),
        originals: Default::default(),
    }
}
