//! The chat-model port: one request in, one assembled reply out, deltas streamed to a sink.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// One message of the conversation sent to the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// System prompt or a system note.
    System {
        /// Text.
        content: String,
    },
    /// The operator (or a resume note written on the operator's behalf).
    User {
        /// Text.
        content: String,
    },
    /// The model's earlier reply.
    Assistant {
        /// Text, if any.
        content: Option<String>,
        /// Tool calls, if any.
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call (TURN-7: exactly one per call).
    Tool {
        /// The call it answers.
        call_id: String,
        /// The result text.
        content: String,
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
    /// The tools on offer.
    pub tools: Vec<ToolSpec>,
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
            | ModelError::Refusal(_)
            | ModelError::Decode(_)
            | ModelError::Script(_) => false,
        }
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
