//! The OpenAI chat-completions wire format: request, reply, stream chunk and error bodies.
//! These types stay inside this crate; the rest of Nomos sees only the port's types.

use std::collections::HashSet;

use nomos_core::ports::chat::{ChatMessage, ChatRequest, FinishReason, ToolCall, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A `POST /chat/completions` body.
#[derive(Debug, Serialize)]
pub(crate) struct WireRequest<'a> {
    pub model: &'a str,
    pub messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<WireTool<'a>>,
    /// `auto` whenever there are tools. OpenAI assumes it; llama.cpp's Python server reads
    /// the tools only when it is sent, and otherwise answers in plain text (EVAL-7).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
}

/// Which tools the model may call: Nomos always leaves the choice to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ToolChoice {
    /// The model calls any of the tools, or none.
    Auto,
}

/// `stream_options: {"include_usage": true}` asks for a final usage chunk.
#[derive(Debug, Serialize)]
pub(crate) struct StreamOptions {
    pub include_usage: bool,
}

#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub(crate) enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCallOut<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Debug, Serialize)]
pub(crate) struct WireToolCallOut<'a> {
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: WireFunctionOut<'a>,
}

#[derive(Debug, Serialize)]
pub(crate) struct WireFunctionOut<'a> {
    pub name: &'a str,
    pub arguments: &'a str,
}

#[derive(Debug, Serialize)]
pub(crate) struct WireTool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: WireFunctionDef<'a>,
}

#[derive(Debug, Serialize)]
pub(crate) struct WireFunctionDef<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub parameters: &'a Value,
}

/// Builds the wire messages and tools of a port request.
pub(crate) fn messages_and_tools(
    request: &ChatRequest,
) -> (Vec<WireMessage<'_>>, Vec<WireTool<'_>>) {
    let messages = request
        .messages
        .iter()
        .map(|message| match message {
            ChatMessage::System { content } => WireMessage::System { content },
            ChatMessage::User { content } => WireMessage::User { content },
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => WireMessage::Assistant {
                content: content.as_deref(),
                tool_calls: tool_calls
                    .iter()
                    .map(|call| WireToolCallOut {
                        id: &call.id,
                        kind: "function",
                        function: WireFunctionOut {
                            name: &call.name,
                            arguments: &call.arguments,
                        },
                    })
                    .collect(),
            },
            ChatMessage::Tool { call_id, content } => WireMessage::Tool {
                tool_call_id: call_id,
                content,
            },
        })
        .collect();
    let tools = request
        .tools
        .iter()
        .map(|tool| WireTool {
            kind: "function",
            function: WireFunctionDef {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.parameters,
            },
        })
        .collect();
    (messages, tools)
}

/// A whole (non-streaming) reply.
#[derive(Debug, Deserialize)]
pub(crate) struct WireResponse {
    pub choices: Option<Vec<WireChoice>>,
    pub usage: Option<WireUsage>,
    pub error: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireChoice {
    pub message: Option<WireReplyMessage>,
    pub finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireReplyMessage {
    pub content: Option<Value>,
    pub refusal: Option<String>,
    pub tool_calls: Option<Vec<WireToolCallIn>>,
}

/// A tool call in a reply or a stream delta (fields arrive piecemeal when streaming).
#[derive(Debug, Deserialize)]
pub(crate) struct WireToolCallIn {
    pub index: Option<u32>,
    pub id: Option<String>,
    pub function: Option<WireFunctionIn>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireFunctionIn {
    pub name: Option<String>,
    /// A JSON string normally; some servers send an object.
    pub arguments: Option<Value>,
}

impl WireFunctionIn {
    /// The arguments as raw text, passed through unchanged when they are a string.
    pub fn arguments_text(&self) -> Option<String> {
        match &self.arguments {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => Some(other.to_string()),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireUsage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    /// OpenRouter reports the cost of the call in US dollars.
    pub cost: Option<f64>,
}

impl WireUsage {
    pub fn to_usage(&self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.unwrap_or(0),
            completion_tokens: self.completion_tokens.unwrap_or(0),
            cost_usd: self.cost,
        }
    }
}

/// One `data:` chunk of a streamed reply.
#[derive(Debug, Deserialize)]
pub(crate) struct WireChunk {
    pub choices: Option<Vec<WireChunkChoice>>,
    pub usage: Option<WireUsage>,
    pub error: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireChunkChoice {
    pub delta: Option<WireDelta>,
    pub finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireDelta {
    pub content: Option<String>,
    pub refusal: Option<String>,
    pub tool_calls: Option<Vec<WireToolCallIn>>,
}

/// Text of a reply's `content`: a string, or an array of `{"type":"text","text":...}` parts.
pub(crate) fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let text: String = parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect();
            Some(text)
        }
        _ => None,
    }
}

/// The finish reason in the port's terms.
pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" | "end_turn" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" | "max_tokens" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// The provider's error message in an error body: `{"error":{"message":..}}`,
/// `{"error":"..."}`, `{"message":..}` or `{"detail":..}`.
pub(crate) fn provider_message(body: &Value) -> Option<String> {
    let error = body.get("error").unwrap_or(body);
    if let Some(text) = error.as_str() {
        return Some(text.to_owned());
    }
    let message = error.get("message").or_else(|| error.get("detail"))?;
    let mut text = match message {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    // OpenRouter puts the upstream provider's own words in `metadata.raw`.
    if let Some(raw) = error.pointer("/metadata/raw").and_then(Value::as_str)
        && !raw.is_empty()
        && !text.contains(raw)
    {
        text = format!("{text} ({raw})");
    }
    Some(text)
}

/// A numeric HTTP-like `code` inside an error body, when it is one.
pub(crate) fn provider_code(error: &Value) -> Option<u16> {
    let code = error.get("code")?;
    let code = code
        .as_u64()
        .or_else(|| code.as_str().and_then(|s| s.parse().ok()))?;
    u16::try_from(code).ok().filter(|c| (400..600).contains(c))
}

/// Builds a tool call. A missing id is left empty here: [`unique_call_ids`] names it once the
/// whole reply is known.
pub(crate) fn tool_call(id: Option<String>, name: String, arguments: Option<String>) -> ToolCall {
    ToolCall {
        id: id.unwrap_or_default(),
        name,
        // No arguments at all (absent, null or blank) is the empty object; anything else is
        // passed through as the model wrote it, malformed or not (TURN-5).
        arguments: arguments
            .filter(|a| !a.trim().is_empty())
            .unwrap_or_else(|| "{}".to_owned()),
    }
}

/// TURN-10 at the edge: the reply's call ids made unique against the ids already in the
/// conversation (servers that omit ids, send empty ones, or number each reply from zero).
pub(crate) fn unique_call_ids(request: &ChatRequest, calls: &mut [ToolCall]) {
    let mut used: HashSet<&str> = HashSet::new();
    for message in &request.messages {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                used.extend(tool_calls.iter().map(|c| c.id.as_str()));
            }
            ChatMessage::Tool { call_id, .. } => {
                used.insert(call_id);
            }
            ChatMessage::System { .. } | ChatMessage::User { .. } => {}
        }
    }
    nomos_core::ports::chat::make_call_ids_unique(|id| used.contains(id), used.len(), calls);
}

#[cfg(test)]
mod tests {
    use nomos_core::ports::chat::ToolSpec;
    use serde_json::json;

    use super::*;

    #[test]
    fn port_messages_become_openai_roles_with_tool_call_ids() {
        let request = ChatRequest {
            messages: vec![
                ChatMessage::System {
                    content: "be brief".into(),
                },
                ChatMessage::User {
                    content: "uptime?".into(),
                },
                ChatMessage::Assistant {
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: "call_1".into(),
                        name: "run".into(),
                        arguments: r#"{"command":"uptime"}"#.into(),
                    }]
                    .into(),
                },
                ChatMessage::Tool {
                    call_id: "call_1".into(),
                    content: "up 3 days".into(),
                },
            ],
            tools: vec![ToolSpec {
                name: "run".into(),
                description: "run a command".into(),
                parameters: json!({"type": "object"}),
            }]
            .into(),
        };
        let (messages, tools) = messages_and_tools(&request);
        let body = serde_json::to_value((&messages, &tools)).unwrap();
        assert_eq!(
            body,
            json!([[
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "uptime?"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "run", "arguments": "{\"command\":\"uptime\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "up 3 days"}
            ], [
                {"type": "function", "function": {
                    "name": "run", "description": "run a command", "parameters": {"type": "object"}
                }}
            ]])
        );
    }

    #[test]
    fn provider_messages_are_found_in_the_usual_shapes() {
        let cases = [
            (
                json!({"error": {"message": "bad key", "code": 401}}),
                "bad key",
            ),
            (json!({"error": "model not found"}), "model not found"),
            (json!({"detail": "no such route"}), "no such route"),
            (
                json!({"error": {"message": "Provider returned error", "metadata": {"raw": "overloaded"}}}),
                "Provider returned error (overloaded)",
            ),
        ];
        for (body, expected) in cases {
            assert_eq!(provider_message(&body).as_deref(), Some(expected));
        }
        assert_eq!(provider_message(&json!({"ok": true})), None);
    }

    #[test]
    fn finish_reasons_map_to_the_port_enum() {
        assert_eq!(finish_reason("stop"), FinishReason::Stop);
        assert_eq!(finish_reason("tool_calls"), FinishReason::ToolCalls);
        assert_eq!(finish_reason("length"), FinishReason::Length);
        assert_eq!(finish_reason("content_filter"), FinishReason::ContentFilter);
        assert_eq!(finish_reason("eos"), FinishReason::Other("eos".into()));
    }
}
