//! Preparing each model request and taking its reply: dangling calls closed (TURN-7), the
//! conversation fitted to the context budget (TURN-9), and the reply's tool-call ids made
//! unique within the session (TURN-10).

use nomos_core::SessionId;
use nomos_core::ports::chat::{ChatRequest, ChatResponse, make_call_ids_unique};
use nomos_core::record::{ToolCallOutcome, ToolCallRecord};

use crate::agent::Agent;
use crate::budget::{self, Budget, Context};
use crate::error::AgentError;
use crate::history::{INTERRUPTED_RESULT, ModelHistory};
use crate::turn::TurnFailure;

impl Agent {
    /// Prepares the request, asks the model, and returns its reply with ids the session has
    /// not used (TURN-10), so the history sends back exactly the ids the store holds.
    pub(crate) async fn next_reply(&self, id: SessionId) -> Result<ChatResponse, TurnFailure> {
        let mut request = self.prepare_request(id).await?;
        let mut response = match self.ask_model(id, &request).await {
            Ok(response) => response,
            // TURN-9: the model says the request is too big; compact once, harder, and ask
            // again. If that fails too, its error is the turn's cause (TURN-2).
            Err(err) if err.is_context_exceeded() => {
                let target = self.budget().target_tokens() / 2;
                let fit = self.compact(id, target, &mut request);
                tracing::warn!(session = %id, error = %err, ?fit, "the model's context was exceeded; compacted and asking again");
                self.ask_model(id, &request).await?
            }
            Err(err) => return Err(err.into()),
        };
        let calls = &mut response.tool_calls;
        let n_replaced = self
            .live_history(id, |history| {
                make_call_ids_unique(|c| history.is_used(c), history.n_used(), calls)
            })
            .await?;
        if n_replaced > 0 {
            tracing::debug!(session = %id, n_replaced, "replaced missing or repeated tool-call ids");
        }
        Ok(response)
    }

    pub(crate) fn budget(&self) -> Budget {
        Budget {
            context_tokens: self.inner.config.context_tokens,
            model_output_bytes: self.inner.config.model_output_bytes,
        }
    }

    /// Builds the request from the session's live history (rebuilt from the store when this
    /// process has none at the session's version), closing dangling calls first (TURN-7).
    pub(crate) async fn prepare_request(&self, id: SessionId) -> Result<ChatRequest, AgentError> {
        let dangling = self.live_history(id, |history| history.dangling()).await?;
        if !dangling.is_empty() {
            let now = self.now();
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
        let tools = &self.inner.tools;
        let target = self.budget().target_tokens();
        let (request, fit) = self
            .live_history(id, |history| {
                let plan = history.plan();
                let window = history.window();
                let fit = window.fit(target, tools, plan.as_deref());
                let request = window.request(tools, plan.as_deref());
                (request, fit)
            })
            .await?;
        if fit.tokens_after < fit.tokens_before {
            tracing::info!(session = %id, ?fit, "fitted the request to the model's context");
        }
        Ok(request)
    }

    /// Runs `f` on the session's history, rebuilding it from the store first when this
    /// process has none at the version it last committed.
    async fn live_history<T>(
        &self,
        id: SessionId,
        mut f: impl FnMut(&mut ModelHistory) -> T,
    ) -> Result<T, AgentError> {
        let histories = &self.inner.histories;
        if let Some(value) = histories.with(id, self.inner.cache.version(id), &mut f) {
            return Ok(value);
        }
        let store = &self.inner.store;
        let epoch = histories.epoch(id);
        let snapshot = self.session(id).await?;
        let messages = store.messages(id).await?;
        let calls = store.tool_calls(id).await?;
        let mut history = ModelHistory::rebuild(
            self.budget(),
            &self.inner.config.system_prompt,
            &snapshot,
            &messages,
            &calls,
        );
        tracing::debug!(session = %id, version = history.version(), "rebuilt the model history from the store");
        let value = f(&mut history);
        if self.inner.cache.version(id) != Some(history.version()) {
            // The cached aggregate is older than the store: decide on a fresh load.
            self.inner.cache.forget(id);
        }
        histories.keep(id, epoch, history);
        Ok(value)
    }

    /// TURN-9 after the model refused the request's size: fits the history harder and
    /// builds the request again.
    fn compact(&self, id: SessionId, target: usize, request: &mut ChatRequest) -> budget::Fit {
        let tools = &self.inner.tools;
        let refit = self.inner.histories.with(id, None, |history| {
            let plan = history.plan();
            let window = history.window();
            let fit = window.fit(target, tools, plan.as_deref());
            (fit, window.request(tools, plan.as_deref()))
        });
        match refit {
            Some((fit, compacted)) => {
                *request = compacted;
                fit
            }
            None => budget::fit(request, target, &Context::default()),
        }
    }
}
