//! The OpenAI-compatible chat model: one `POST /chat/completions` per attempt, bounded retries.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use nomos_core::ports::chat::{
    ChatDelta, ChatModel, ChatRequest, ChatResponse, DeltaSink, ModelError,
};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use serde_json::Value;

use crate::config::{OpenAiConfig, Transport};
use crate::error::ConfigError;
use crate::reply::ReplyParts;
use crate::retry::parse_retry_after;
use crate::stream::{preview, read_stream};
use crate::wire::{self, StreamOptions, ToolChoice, WireRequest, WireResponse};
use crate::wire_log::Exchange;

/// A chat model behind an OpenAI-compatible endpoint (OpenRouter, OpenAI, Ollama, vLLM,
/// llama.cpp, LiteLLM).
///
/// Each call sends the conversation and the tools, streams text deltas to the sink, and returns
/// the assembled reply. Failures carry their real cause (TURN-2): the HTTP status with the
/// provider's message, rate limiting with `Retry-After`, a timeout, a refused connection,
/// `finish_reason=length`, refusal text or a content filter, an empty reply, a cut stream.
/// Retryable failures are tried again under the configured [`crate::RetryPolicy`]; a failure
/// after text already reached the sink is not retried (the sink cannot take text back), except
/// an empty reply (TURN-3), which showed nothing worth keeping.
#[derive(Clone, Debug)]
pub struct OpenAiModel {
    config: OpenAiConfig,
    client: reqwest::Client,
}

impl OpenAiModel {
    /// Builds the HTTP client for `config`.
    pub fn new(config: OpenAiConfig) -> Result<Self, ConfigError> {
        let client = crate::tls::http_client_builder()
            .connect_timeout(config.timeout())
            .build()
            .map_err(|err| ConfigError::Client(error_chain(&err)))?;
        Ok(OpenAiModel { config, client })
    }

    /// The configuration in use.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    fn body(&self, request: &ChatRequest) -> Result<Vec<u8>, ModelError> {
        let (messages, tools) = wire::messages_and_tools(request);
        let streaming = self.config.transport() == Transport::Streaming;
        let tool_choice = (!tools.is_empty()).then_some(ToolChoice::Auto);
        let body = WireRequest {
            model: self.config.model(),
            messages,
            tools,
            tool_choice,
            stream: streaming,
            stream_options: streaming.then_some(StreamOptions {
                include_usage: true,
            }),
            max_tokens: self.config.max_tokens(),
            temperature: self.config.temperature(),
        };
        serde_json::to_vec(&body)
            .map_err(|err| ModelError::Decode(format!("could not encode the request: {err}")))
    }

    async fn attempt(&self, body: &[u8], sink: DeltaSink<'_>) -> Result<ChatResponse, ModelError> {
        let timeout = self.config.timeout();
        match self.config.transport() {
            // The whole exchange must fit in the timeout.
            Transport::Buffered => tokio::time::timeout(timeout, self.exchange(body, sink))
                .await
                .unwrap_or(Err(ModelError::Timeout {
                    after_ms: millis(timeout),
                })),
            // The headers must come within the timeout, and then each chunk (see
            // read_stream); TURN-12: the whole reply within the reply deadline.
            Transport::Streaming => {
                let deadline = self.config.reply_deadline();
                tokio::time::timeout(deadline, self.exchange(body, sink))
                    .await
                    .unwrap_or(Err(ModelError::Deadline {
                        after_ms: millis(deadline),
                    }))
            }
        }
    }

    async fn exchange(&self, body: &[u8], sink: DeltaSink<'_>) -> Result<ChatResponse, ModelError> {
        let timeout = self.config.timeout();
        let accept = match self.config.transport() {
            Transport::Streaming => "text/event-stream",
            Transport::Buffered => "application/json",
        };
        let mut builder = self
            .client
            .post(self.config.endpoint().clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept)
            .body(body.to_vec());
        if let Some(value) = self.config.api_key().and_then(|key| key.header_value()) {
            builder = builder.header(AUTHORIZATION, value);
        }
        for (name, value) in self.config.headers() {
            builder = builder.header(name, value);
        }
        let response = tokio::time::timeout(timeout, builder.send())
            .await
            .map_err(|_| ModelError::Timeout {
                after_ms: millis(timeout),
            })?
            .map_err(|err| transport_error(&err, timeout))?;
        let status = response.status();
        if !status.is_success() {
            return Err(status_error(response, timeout, |content_type, bytes| {
                if let Some(log) = self.config.wire_log() {
                    log.save(&self.exchange_record(body, status.as_u16(), content_type, bytes));
                }
            })
            .await);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if content_type.starts_with("text/event-stream") {
            let Some(log) = self.config.wire_log() else {
                return read_stream(response, sink, timeout, None).await;
            };
            let captured = Mutex::new(Vec::new());
            let res = read_stream(response, sink, timeout, Some(&captured)).await;
            let bytes = captured.into_inner().unwrap_or_else(|e| e.into_inner());
            log.save(&self.exchange_record(body, status.as_u16(), &content_type, &bytes));
            return res;
        }
        // A whole JSON reply (asked for, or sent by a server that does not stream).
        let bytes = tokio::time::timeout(timeout, response.bytes())
            .await
            .map_err(|_| ModelError::Timeout {
                after_ms: millis(timeout),
            })?
            .map_err(|err| transport_error(&err, timeout))?;
        if let Some(log) = self.config.wire_log() {
            log.save(&self.exchange_record(body, status.as_u16(), &content_type, &bytes));
        }
        let parts = parse_whole_reply(status.as_u16(), &bytes)?;
        if !parts.content.is_empty() && parts.refusal.is_empty() {
            sink(ChatDelta::Text {
                text: parts.content.clone(),
            });
        }
        for (index, call) in parts.tool_calls.iter().enumerate() {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            sink(ChatDelta::ToolCallStarted {
                index,
                name: call.name.clone(),
            });
        }
        parts.into_response()
    }
}

impl OpenAiModel {
    fn exchange_record<'a>(
        &'a self,
        request: &'a [u8],
        status: u16,
        content_type: &'a str,
        response: &'a [u8],
    ) -> Exchange<'a> {
        Exchange {
            endpoint: self.config.endpoint().as_str(),
            model: self.config.model(),
            request,
            status,
            content_type,
            response,
        }
    }
}

#[async_trait]
impl ChatModel for OpenAiModel {
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        let body = self.body(request)?;
        let policy = self.config.retry();
        let mut attempt = 1;
        loop {
            let emitted = AtomicBool::new(false);
            let tracking = |delta: ChatDelta| {
                emitted.store(true, Ordering::Relaxed);
                sink(delta);
            };
            let err = match self.attempt(&body, &tracking).await {
                Ok(mut response) => {
                    wire::unique_call_ids(request, &mut response.tool_calls);
                    return Ok(response);
                }
                Err(err) => err,
            };
            let shown = emitted.load(Ordering::Relaxed) && !matches!(err, ModelError::Empty { .. });
            if !err.is_retryable() || shown || attempt >= policy.max_attempts {
                return Err(err);
            }
            let retry_after = match &err {
                ModelError::RateLimited { retry_after_ms, .. } => {
                    retry_after_ms.map(Duration::from_millis)
                }
                _ => None,
            };
            let Some(delay) = policy.delay_after(attempt, retry_after) else {
                return Err(err);
            };
            tracing::warn!(
                model = self.config.model(),
                attempt,
                delay_ms = millis(delay),
                error = %err,
                "model call failed, trying again"
            );
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    fn name(&self) -> String {
        format!("openai:{}", self.config.model())
    }
}

/// Parses a whole (non-streaming) reply body.
fn parse_whole_reply(status: u16, bytes: &[u8]) -> Result<ReplyParts, ModelError> {
    let text = String::from_utf8_lossy(bytes);
    let reply: WireResponse = serde_json::from_slice(bytes).map_err(|err| {
        ModelError::Decode(format!(
            "the reply is not a chat completion: {err} (body starts with {:?})",
            preview(&text)
        ))
    })?;
    let choice = reply.choices.into_iter().flatten().next();
    let Some(choice) = choice else {
        if let Some(error) = reply.error {
            return Err(provider_error(
                status,
                &serde_json::json!({ "error": error }),
            ));
        }
        return Err(ModelError::Empty {
            finish_reason: "none (the reply had no choices)".into(),
        });
    };
    let mut parts = ReplyParts {
        finish_reason: choice.finish_reason.filter(|r| !r.is_empty()),
        usage: reply.usage.unwrap_or_default().to_usage(),
        ..ReplyParts::default()
    };
    if let Some(message) = choice.message {
        parts.content = message
            .content
            .as_ref()
            .and_then(wire::content_text)
            .unwrap_or_default();
        parts.refusal = message.refusal.unwrap_or_default();
        for (position, call) in message.tool_calls.into_iter().flatten().enumerate() {
            let function = call.function.ok_or_else(|| {
                ModelError::Decode(format!("tool call {position} has no function"))
            })?;
            let arguments = function.arguments_text();
            let name = function.name.filter(|n| !n.is_empty()).ok_or_else(|| {
                ModelError::Decode(format!("tool call {position} has no function name"))
            })?;
            parts
                .tool_calls
                .push(wire::tool_call(call.id, name, arguments));
        }
    }
    Ok(parts)
}

/// An error body (or an `error` object inside a 200 reply or a stream) as a port error.
pub(crate) fn provider_error(status: u16, body: &Value) -> ModelError {
    let message = wire::provider_message(body).unwrap_or_else(|| body.to_string());
    let status = body
        .get("error")
        .and_then(wire::provider_code)
        .unwrap_or(status);
    if status == 429 {
        return ModelError::RateLimited {
            retry_after_ms: None,
            message,
        };
    }
    ModelError::Status { status, message }
}

/// Reads a non-2xx response into `Status` or `RateLimited`, with the provider's message.
/// `keep` sees the content type and the body as received.
async fn status_error(
    response: reqwest::Response,
    timeout: Duration,
    keep: impl FnOnce(&str, &[u8]),
) -> ModelError {
    let status = response.status();
    let retry_after = retry_after(response.headers());
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let bytes = match tokio::time::timeout(timeout, response.bytes()).await {
        Ok(Ok(bytes)) => bytes.to_vec(),
        Ok(Err(_)) | Err(_) => Vec::new(),
    };
    keep(&content_type, &bytes);
    let body = String::from_utf8_lossy(&bytes).into_owned();
    let message = match serde_json::from_str::<Value>(&body) {
        Ok(json) => wire::provider_message(&json).unwrap_or_else(|| preview(body.trim())),
        Err(_) => preview(body.trim()),
    };
    let message = if message.is_empty() {
        status.canonical_reason().unwrap_or("no message").to_owned()
    } else {
        message
    };
    if status == StatusCode::TOO_MANY_REQUESTS {
        return ModelError::RateLimited {
            retry_after_ms: retry_after.map(millis),
            message,
        };
    }
    ModelError::Status {
        status: status.as_u16(),
        message,
    }
}

/// `retry-after-ms` (OpenAI) or `Retry-After` (seconds or an HTTP date).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    parse_retry_after(value, SystemTime::now())
}

/// A failure below HTTP: a refused connection, a timeout, a broken transfer.
fn transport_error(err: &reqwest::Error, timeout: Duration) -> ModelError {
    if err.is_timeout() {
        return ModelError::Timeout {
            after_ms: millis(timeout),
        };
    }
    if err.is_body() || err.is_decode() {
        return ModelError::StreamCut(error_chain(err));
    }
    ModelError::Connect(error_chain(err))
}

/// The error and its sources, joined: `error sending request ...: tcp connect error: ...`.
pub(crate) fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
