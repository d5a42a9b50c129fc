//! Helpers: a delta collector, configurations pointed at a loopback server, wire-format bodies.

use std::sync::Mutex;
use std::time::Duration;

use nomos_core::ports::chat::{ChatDelta, ChatMessage, ChatRequest, ToolSpec};
use nomos_llm::{ApiKey, OpenAiConfig, OpenAiConfigBuilder, OpenAiModel, RetryPolicy, Transport};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Collects what a model streams to its sink.
#[derive(Default)]
pub struct Deltas(Mutex<Vec<ChatDelta>>);

impl Deltas {
    pub fn push(&self, delta: ChatDelta) {
        self.0.lock().unwrap().push(delta);
    }

    pub fn all(&self) -> Vec<ChatDelta> {
        self.0.lock().unwrap().clone()
    }

    pub fn texts(&self) -> Vec<String> {
        self.all()
            .into_iter()
            .filter_map(|d| match d {
                ChatDelta::Text { text } => Some(text),
                ChatDelta::ToolCallStarted { .. } => None,
            })
            .collect()
    }
}

/// Retries with tiny delays, so tests do not wait.
pub fn quick_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_secs(1),
    }
}

pub fn builder(base_url: &str, transport: Transport) -> OpenAiConfigBuilder {
    OpenAiConfig::builder(format!("{base_url}/v1"), "test-model")
        .api_key(ApiKey::new("sk-test-key").unwrap())
        .transport(transport)
        .timeout(Duration::from_secs(10))
        .retry(quick_retry())
}

pub fn model(server: &MockServer, transport: Transport) -> OpenAiModel {
    OpenAiModel::new(builder(&server.uri(), transport).build().unwrap()).unwrap()
}

/// A model whose retry policy allows `max_attempts` attempts.
pub fn model_attempts(server: &MockServer, transport: Transport, max_attempts: u32) -> OpenAiModel {
    let retry = RetryPolicy {
        max_attempts,
        ..quick_retry()
    };
    OpenAiModel::new(
        builder(&server.uri(), transport)
            .retry(retry)
            .build()
            .unwrap(),
    )
    .unwrap()
}

pub fn run_tool() -> ToolSpec {
    ToolSpec {
        name: "run".into(),
        description: "Run a shell command on a host.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"host": {"type": "string"}, "command": {"type": "string"}},
            "required": ["host", "command"]
        }),
    }
}

pub fn request(user: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::System {
                content: "You are Nomos.".into(),
            },
            ChatMessage::User {
                content: user.into(),
            },
        ],
        tools: vec![run_tool()].into(),
    }
}

/// A whole chat-completion reply.
pub fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    })
}

pub fn text_completion(text: &str) -> Value {
    completion(json!({"role": "assistant", "content": text}), "stop")
}

pub fn json_reply(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

/// An event stream of `chunks` followed by `data: [DONE]`.
pub fn sse(chunks: &[Value]) -> ResponseTemplate {
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    sse_raw(&body)
}

pub fn sse_raw(body: &str) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_raw(body.as_bytes().to_vec(), "text/event-stream")
}

/// One streamed chunk with a delta.
pub fn chunk(delta: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
           "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

pub fn finish_chunk(reason: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
           "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

pub fn usage_chunk(cost: Option<f64>) -> Value {
    let mut usage = json!({"prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47});
    if let Some(cost) = cost {
        usage["cost"] = json!(cost);
    }
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": usage})
}

/// Answers every chat-completion request with `response`.
pub async fn serve(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .mount(server)
        .await;
}

/// Answers the first `n` requests with `response` (then falls through to other mocks).
pub async fn serve_first(server: &MockServer, n: u64, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .up_to_n_times(n)
        .with_priority(1)
        .mount(server)
        .await;
}

/// The JSON bodies the server received, in order.
pub async fn sent_bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}
