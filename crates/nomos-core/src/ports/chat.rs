//! The chat-model port: one request in, one assembled reply out, deltas streamed to a sink.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// One message of the conversation sent to the model.
///
/// Texts are shared (`Arc<str>`): the runtime keeps a session's conversation across
/// requests, and each request holds the same texts instead of copies, so building one costs
/// the same however much the conversation holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// System prompt or a system note.
    System {
        /// Text.
        content: Arc<str>,
    },
    /// The operator (or a resume note written on the operator's behalf).
    User {
        /// Text.
        content: Arc<str>,
    },
    /// The model's earlier reply.
    Assistant {
        /// Text, if any.
        content: Option<Arc<str>>,
        /// Tool calls, if any.
        tool_calls: Arc<[ToolCall]>,
    },
    /// The result of one tool call (TURN-7: exactly one per call).
    Tool {
        /// The call it answers.
        call_id: Arc<str>,
        /// The result text.
        content: Arc<str>,
    },
}

/// A tool call made by the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id for the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Arguments as JSON text, exactly as the model produced them (may be malformed: TURN-5).
    pub arguments: String,
}

/// A tool the model may call, with a JSON-schema for its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Name.
    pub name: String,
    /// The contract, in words the model reads.
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// What the runtime asks the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The conversation, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// The tools on offer (shared: the same for every request of a runtime).
    pub tools: Arc<[ToolSpec]>,
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end.
    Stop,
    /// It wants tools called.
    ToolCalls,
    /// It hit the token limit.
    Length,
    /// A provider filter stopped it.
    ContentFilter,
    /// Anything else the provider said, verbatim.
    Other(String),
}

/// Token usage (and cost when the provider reports it).
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Cost in US dollars, when reported.
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Adds another call's usage to this one (per-turn sums).
    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }
}

/// The model's assembled reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// Text, if any.
    pub content: Option<String>,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped.
    pub finish_reason: FinishReason,
    /// Usage of this call.
    pub usage: Usage,
}

impl ChatResponse {
    /// TURN-3: a reply with no text (or only whitespace) and no tool calls.
    pub fn is_empty(&self) -> bool {
        self.tool_calls.is_empty() && self.content.as_deref().is_none_or(|c| c.trim().is_empty())
    }
}

/// A piece of the reply as it streams.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChatDelta {
    /// More text.
    Text {
        /// The new text.
        text: String,
    },
    /// A tool call began (its arguments arrive in the assembled reply).
    ToolCallStarted {
        /// Index among this reply's calls.
        index: u32,
        /// Tool name.
        name: String,
    },
}

/// Receives deltas while the model speaks.
pub type DeltaSink<'a> = &'a (dyn Fn(ChatDelta) + Send + Sync);

/// Why a model call failed (TURN-2: each variant carries the real cause).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an HTTP error. Retryable for 5xx.
    #[error("model endpoint returned HTTP {status}: {message}")]
    Status {
        /// HTTP status code.
        status: u16,
        /// The provider's error message.
        message: String,
    },
    /// HTTP 429. Retryable after `retry_after_ms`.
    #[error("model endpoint is rate limiting (HTTP 429){}: {message}", retry_after_ms.map(|ms| format!(", retry after {ms} ms")).unwrap_or_default())]
    RateLimited {
        /// Milliseconds the provider asked us to wait.
        retry_after_ms: Option<u64>,
        /// The provider's message.
        message: String,
    },
    /// The request took longer than the configured timeout. Retryable.
    #[error("model request timed out after {after_ms} ms")]
    Timeout {
        /// The timeout that elapsed.
        after_ms: u64,
    },
    /// TURN-12: the reply was still coming when its overall deadline passed (a stream
    /// that trickles). Not retryable: the same request would trickle again.
    #[error(
        "model reply took longer than its deadline of {after_ms} ms and was stopped (the stream was still sending)"
    )]
    Deadline {
        /// The deadline that passed.
        after_ms: u64,
    },
    /// The endpoint could not be reached. Retryable.
    #[error("could not connect to the model endpoint: {0}")]
    Connect(String),
    /// The reply stopped at the token limit (`finish_reason=length`). Not retryable.
    #[error("model stopped at its token limit (finish_reason=length)")]
    Length,
    /// The model refused (refusal text or a content filter). Not retryable.
    #[error("model refused: {0}")]
    Refusal(String),
    /// The reply had no text and no tool calls. Retryable (TURN-3).
    #[error("model returned an empty reply (finish_reason={finish_reason})")]
    Empty {
        /// The finish reason the provider sent.
        finish_reason: String,
    },
    /// The stream ended before its terminator. Retryable.
    #[error("model stream was cut before it finished: {0}")]
    StreamCut(String),
    /// The provider's reply could not be decoded. Not retryable.
    #[error("could not decode the model reply: {0}")]
    Decode(String),
    /// A scripted or replayed model has nothing for this request. Not retryable.
    #[error("scripted model: {0}")]
    Script(String),
}

impl ModelError {
    /// Whether trying the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Status { status, .. } => *status >= 500,
            ModelError::RateLimited { .. }
            | ModelError::Timeout { .. }
            | ModelError::Connect(_)
            | ModelError::Empty { .. }
            | ModelError::StreamCut(_) => true,
            ModelError::Length
            | ModelError::Deadline { .. }
            | ModelError::Refusal(_)
            | ModelError::Decode(_)
            | ModelError::Script(_) => false,
        }
    }
}

impl ModelError {
    /// TURN-9: the provider refused the request as larger than the model's context (OpenAI,
    /// vLLM and OpenRouter say "maximum context length", llama.cpp's server "exceeds the
    /// available context size", others "prompt is too long" or "too many tokens").
    pub fn is_context_exceeded(&self) -> bool {
        let ModelError::Status { status, message } = self else {
            return false;
        };
        if !matches!(status, 400 | 413 | 422) {
            return false;
        }
        let message = message.to_lowercase();
        [
            "context length",
            "context_length",
            "context size",
            "context window",
            "prompt is too long",
            "too many tokens",
            "reduce the length",
            "exceeds the available context",
        ]
        .iter()
        .any(|needle| message.contains(needle))
    }
}

/// A chat model: OpenAI-compatible HTTP, a scripted stub, a replay of recordings.
///
/// Nothing a model returns bypasses the gate: every tool call in a [`ChatResponse`] goes
/// through the core before anything runs, and a call the rules forbid is answered with a
/// directive refusal. An `Err` ends the turn with that error as its real cause (TURN-2);
/// an empty reply is asked again a bounded number of times (TURN-3).
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// Sends the conversation and returns the assembled reply, streaming deltas to `sink`.
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError>;

    /// A short name for logs and eval tables (`stub`, `openai:gpt-4o-mini`).
    fn name(&self) -> String;
}

/// TURN-10: makes the tool-call ids of one reply unique within the session. A missing (empty)
/// id, an id repeated within `calls`, or one `is_used` (the session's earlier calls, `n_used`
/// distinct ids) is replaced by a fresh `call_nomos_<n>` that is in neither; the others are
/// kept as the server sent them. Returns how many ids were replaced. It costs the same
/// however many ids the session has used.
pub fn make_call_ids_unique(
    is_used: impl Fn(&str) -> bool,
    n_used: usize,
    calls: &mut [ToolCall],
) -> usize {
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut next = n_used + 1;
    let mut n_replaced = 0;
    for call in calls.iter_mut() {
        let id = call.id.trim();
        if !id.is_empty() && !taken.contains(id) && !is_used(id) {
            taken.insert(id.to_owned());
            continue;
        }
        let fresh = loop {
            let candidate = format!("call_nomos_{next}");
            next += 1;
            if !taken.contains(&candidate) && !is_used(&candidate) {
                break candidate;
            }
        };
        taken.insert(fresh.clone());
        call.id = fresh;
        n_replaced += 1;
    }
    n_replaced
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(ids: &[&str]) -> Vec<ToolCall> {
        ids.iter()
            .map(|id| ToolCall {
                id: (*id).to_owned(),
                name: "run".to_owned(),
                arguments: "{}".to_owned(),
            })
            .collect()
    }

    fn check_unique(used: &[&str], sent: &[&str], expected: &[&str]) {
        let mut calls = calls(sent);
        let set: std::collections::HashSet<&str> = used.iter().copied().collect();
        let n_replaced = make_call_ids_unique(|id| set.contains(id), set.len(), &mut calls);
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, expected);
        let n_changed = sent.iter().zip(&ids).filter(|(s, i)| s != i).count();
        assert_eq!(n_replaced, n_changed, "{sent:?} -> {ids:?}");
    }

    // rule: TURN-9
    #[test]
    fn context_overflow_errors_of_the_usual_servers_are_recognised() {
        let status = |status: u16, message: &str| ModelError::Status {
            status,
            message: message.to_owned(),
        };
        let overflows = [
            status(
                400,
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 210000 tokens.",
            ),
            status(
                400,
                "the request exceeds the available context size, try increasing it",
            ),
            status(400, "prompt is too long: 215000 tokens > 200000 maximum"),
            status(413, "Request too large: too many tokens"),
        ];
        for err in &overflows {
            assert!(err.is_context_exceeded(), "{err}");
        }
        let others = [
            status(400, "invalid tool schema"),
            status(500, "maximum context length exceeded"),
            ModelError::Length,
        ];
        for err in &others {
            assert!(!err.is_context_exceeded(), "{err}");
        }
    }

    // rule: TURN-10
    #[test]
    fn missing_empty_and_repeated_ids_get_fresh_ones_and_sent_ids_are_kept() {
        check_unique(&[], &["a", "b"], &["a", "b"]);
        check_unique(&[], &["", " "], &["call_nomos_1", "call_nomos_2"]);
        check_unique(&[], &["call_0", "call_0"], &["call_0", "call_nomos_1"]);
        check_unique(&["call_0"], &["call_0"], &["call_nomos_2"]);
        check_unique(
            &["call_nomos_2", "x"],
            &["x", ""],
            &["call_nomos_3", "call_nomos_4"],
        );
        // A fresh id skips one the session already used, though the count says it is next.
        check_unique(&["call_nomos_2"], &[""], &["call_nomos_3"]);
    }

    // rule: TURN-10
    #[test]
    fn replaced_ids_never_collide_with_the_session_or_each_other() {
        let used: Vec<String> = (0..50).map(|n| format!("call_nomos_{n}")).collect();
        let mut reply = calls(&["", "call_nomos_7", "", "dup", "dup"]);
        let set: std::collections::HashSet<&str> = used.iter().map(String::as_str).collect();
        make_call_ids_unique(|id| set.contains(id), set.len(), &mut reply);
        let mut all: Vec<&str> = used.iter().map(String::as_str).collect();
        all.extend(reply.iter().map(|c| c.id.as_str()));
        let distinct: std::collections::HashSet<&str> = all.iter().copied().collect();
        assert_eq!(distinct.len(), all.len(), "{all:?}");
        assert_eq!(reply[3].id, "dup");
    }
}
