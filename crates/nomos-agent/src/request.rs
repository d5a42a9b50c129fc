//! Preparing each model request and taking its reply: dangling calls closed (TURN-7), the
//! conversation fitted to the context budget (TURN-9), and the reply's tool-call ids made
//! unique within the session (TURN-10).

use nomos_core::SessionId;
use nomos_core::ports::chat::{ChatRequest, ChatResponse, make_call_ids_unique};
use nomos_core::record::{ToolCallOutcome, ToolCallRecord};

use crate::agent::Agent;
use crate::error::AgentError;
use crate::history::{INTERRUPTED_RESULT, build_history};
use crate::tools::builtin_specs;
use crate::turn::TurnFailure;

/// A request ready to send, and the tool-call ids the session has used so far.
pub(crate) struct Prepared {
    pub request: ChatRequest,
    pub used_call_ids: Vec<String>,
}

impl Agent {
    /// Prepares the request, asks the model, and returns its reply with ids the session has
    /// not used (TURN-10), so the history sends back exactly the ids the store holds.
    pub(crate) async fn next_reply(&self, id: SessionId) -> Result<ChatResponse, TurnFailure> {
        let prepared = self.prepare_request(id).await?;
        let mut response = self.ask_model(id, &prepared.request).await?;
        let n_replaced = make_call_ids_unique(
            prepared.used_call_ids.iter().map(String::as_str),
            &mut response.tool_calls,
        );
        if n_replaced > 0 {
            tracing::debug!(session = %id, n_replaced, "replaced missing or repeated tool-call ids");
        }
        Ok(response)
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
        Ok(Prepared {
            request: ChatRequest {
                messages: history.messages,
                tools,
            },
            used_call_ids,
        })
    }
}
