//! Reading a streamed reply: server-sent events in, deltas to the sink, one assembled reply out.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use nomos_core::ports::chat::{ChatDelta, ChatResponse, DeltaSink, ModelError};

use crate::openai::{error_chain, millis, provider_error};
use crate::reply::ReplyParts;
use crate::wire::{self, WireChunk};

/// Reads the event stream of `response` until `[DONE]` (or the end of the body), passing text
/// and tool-call starts to `sink`. `idle` bounds the silence between two events. `capture`,
/// when given, receives every byte read, as it came.
pub(crate) async fn read_stream(
    response: reqwest::Response,
    sink: DeltaSink<'_>,
    idle: Duration,
    capture: Option<&Mutex<Vec<u8>>>,
) -> Result<ChatResponse, ModelError> {
    let status = response.status().as_u16();
    let mut events = response
        .bytes_stream()
        .inspect(|piece| {
            if let (Some(capture), Ok(bytes)) = (capture, piece) {
                capture
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(bytes);
            }
        })
        .eventsource();
    let mut assembler = StreamAssembler::default();
    loop {
        let next = tokio::time::timeout(idle, events.next())
            .await
            .map_err(|_| ModelError::Timeout {
                after_ms: millis(idle),
            })?;
        let event = match next {
            None => break,
            Some(Ok(event)) => event,
            Some(Err(EventStreamError::Transport(err))) => {
                if err.is_timeout() {
                    return Err(ModelError::Timeout {
                        after_ms: millis(idle),
                    });
                }
                return Err(ModelError::StreamCut(format!(
                    "after {} chunks: {}",
                    assembler.chunks,
                    error_chain(&err)
                )));
            }
            Some(Err(err)) => {
                return Err(ModelError::Decode(format!(
                    "event stream after {} chunks: {err}",
                    assembler.chunks
                )));
            }
        };
        if event.event == "error" {
            return Err(error_event(status, &event.data));
        }
        if assembler.feed(status, &event.data, sink)? == Flow::Done {
            break;
        }
    }
    assembler.finish()
}

fn error_event(status: u16, data: &str) -> ModelError {
    match serde_json::from_str::<serde_json::Value>(data) {
        Ok(body) => provider_error(status, &body),
        Err(_) => ModelError::Status {
            status,
            message: data.trim().to_owned(),
        },
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Flow {
    More,
    Done,
}

/// A tool call whose pieces are still arriving.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Accumulates chunks: text, refusal text, tool calls by their `index`, finish reason, usage.
#[derive(Debug, Default)]
struct StreamAssembler {
    parts: ReplyParts,
    calls: BTreeMap<u32, PartialCall>,
    chunks: usize,
    done: bool,
}

impl StreamAssembler {
    fn feed(&mut self, status: u16, data: &str, sink: DeltaSink<'_>) -> Result<Flow, ModelError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Flow::More);
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(Flow::Done);
        }
        self.chunks += 1;
        let chunk: WireChunk = serde_json::from_str(data).map_err(|err| {
            ModelError::Decode(format!(
                "stream chunk {} is not a chat-completion chunk: {err} (chunk starts with {:?})",
                self.chunks,
                preview(data)
            ))
        })?;
        if let Some(error) = &chunk.error {
            return Err(provider_error(
                status,
                &serde_json::json!({ "error": error }),
            ));
        }
        if let Some(usage) = &chunk.usage {
            self.parts.usage = usage.to_usage();
        }
        // Nomos asks for one choice; only the first is read.
        let Some(choice) = chunk.choices.into_iter().flatten().next() else {
            return Ok(Flow::More);
        };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.parts.content.push_str(&text);
                sink(ChatDelta::Text { text });
            }
            if let Some(refusal) = delta.refusal {
                self.parts.refusal.push_str(&refusal);
            }
            for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
                let index = call
                    .index
                    .unwrap_or(u32::try_from(position).unwrap_or(u32::MAX));
                let partial = self.calls.entry(index).or_default();
                if partial.id.is_none() {
                    partial.id = call.id.filter(|id| !id.is_empty());
                }
                if let Some(function) = call.function {
                    if partial.name.is_empty()
                        && let Some(name) = function.name.as_deref().filter(|n| !n.is_empty())
                    {
                        partial.name = name.to_owned();
                        sink(ChatDelta::ToolCallStarted {
                            index,
                            name: name.to_owned(),
                        });
                    }
                    if let Some(arguments) = function.arguments_text() {
                        partial.arguments.push_str(&arguments);
                    }
                }
            }
        }
        if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
            self.parts.finish_reason = Some(reason);
        }
        Ok(Flow::More)
    }

    fn finish(mut self) -> Result<ChatResponse, ModelError> {
        if !self.done && self.parts.finish_reason.is_none() {
            return Err(ModelError::StreamCut(format!(
                "the stream ended after {} chunks with no finish_reason and no [DONE]",
                self.chunks
            )));
        }
        for (index, call) in std::mem::take(&mut self.calls) {
            if call.name.is_empty() {
                return Err(ModelError::Decode(format!(
                    "streamed tool call {index} never named its function"
                )));
            }
            let arguments = Some(call.arguments);
            self.parts
                .tool_calls
                .push(wire::tool_call(call.id, call.name, arguments));
        }
        self.parts.into_response()
    }
}

pub(crate) fn preview(text: &str) -> String {
    text.chars().take(200).collect()
}
