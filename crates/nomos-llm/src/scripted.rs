//! The scripted stub model: plays a list of replies, in order, and fails loudly when the script
//! runs out or the conversation is not the one a reply expects.
//!
//! A script in YAML is a sequence of replies:
//!
//! ```yaml
//! - text: "Checking the disks."            # text and/or tool calls
//!   tool_calls:
//!     - name: run
//!       arguments: {host: local, command: "df -h"}   # a mapping is sent as JSON text;
//!       id: call_1                                    # a string is passed raw (TURN-5 tests)
//!   expect:                                # optional: the request must match, or the call fails
//!     last_user_contains: "disk"
//!     last_tool_result_contains: "Filesystem"
//!     tools_include: [run]
//!     request_not_contains: ["BEGIN OPENSSH PRIVATE KEY"]   # no message of the request holds it
//!   usage: {prompt_tokens: 120, completion_tokens: 12}   # optional
//! - error: empty                           # a model fault: empty, empty_ok, timeout, connect, length,
//! - error: {status: 500, message: boom}    # stream_cut, {status, message}, {refusal: text},
//! - error: {status: 429, retry_after_ms: 2000}        # 429 is rate limiting
//! ```

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use nomos_core::ports::chat::{
    ChatDelta, ChatMessage, ChatModel, ChatRequest, ChatResponse, DeltaSink, FinishReason,
    ModelError, ToolCall, Usage,
};
use serde::Deserialize;
use serde_json::Value;

use crate::error::ScriptError;

/// A tool call a scripted reply makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedToolCall {
    /// The call's id; `call_<n>_<i>` (n-th reply played, i-th call) when `None`.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text, exactly as the model would send them (may be malformed).
    pub arguments: String,
}

impl ScriptedToolCall {
    /// A call with well-formed JSON arguments.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        ScriptedToolCall {
            id: None,
            name: name.into(),
            arguments: arguments.to_string(),
        }
    }

    /// A call whose argument text is passed as is (to test malformed arguments, TURN-5).
    pub fn raw(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        ScriptedToolCall {
            id: None,
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// A model fault a scripted reply simulates.
#[derive(Clone, Debug, PartialEq)]
pub enum ScriptedFault {
    /// No text and no tool calls (`ModelError::Empty`).
    Empty,
    /// An HTTP error status with the provider's message.
    Status {
        /// The status code.
        status: u16,
        /// The message.
        message: String,
    },
    /// HTTP 429.
    RateLimited {
        /// The requested wait.
        retry_after_ms: Option<u64>,
        /// The message.
        message: String,
    },
    /// The request timed out.
    Timeout,
    /// The endpoint could not be reached.
    Connect,
    /// `finish_reason=length`.
    Length,
    /// The model refused, with this text.
    Refusal(String),
    /// The stream stopped before its end.
    StreamCut,
    /// An adapter's `Ok` answer with no text and no tool calls (`error: empty_ok`): the
    /// runtime must treat it as the empty reply it is (TURN-3).
    EmptyOk,
}

impl ScriptedFault {
    /// The port error this fault stands for.
    pub fn to_error(&self) -> ModelError {
        match self {
            ScriptedFault::Empty | ScriptedFault::EmptyOk => ModelError::Empty {
                finish_reason: "stop".into(),
            },
            ScriptedFault::Status { status, message } => ModelError::Status {
                status: *status,
                message: message.clone(),
            },
            ScriptedFault::RateLimited {
                retry_after_ms,
                message,
            } => ModelError::RateLimited {
                retry_after_ms: *retry_after_ms,
                message: message.clone(),
            },
            ScriptedFault::Timeout => ModelError::Timeout { after_ms: 0 },
            ScriptedFault::Connect => ModelError::Connect("scripted connection failure".into()),
            ScriptedFault::Length => ModelError::Length,
            ScriptedFault::Refusal(text) => ModelError::Refusal(text.clone()),
            ScriptedFault::StreamCut => {
                ModelError::StreamCut("scripted stream cut before its end".into())
            }
        }
    }
}

/// What the conversation must look like when a reply is played. Unset parts are not checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// The last user message contains this text.
    #[serde(default)]
    pub last_user_contains: Option<String>,
    /// The last tool result contains this text.
    #[serde(default)]
    pub last_tool_result_contains: Option<String>,
    /// These tools are on offer.
    #[serde(default)]
    pub tools_include: Vec<String>,
    /// No message of the request (system, user, assistant text or tool result) contains any
    /// of these texts (SECRET-2: what the model must never read).
    #[serde(default)]
    pub request_not_contains: Vec<String>,
}

impl Expectation {
    /// `Err` names the first part of the expectation the request does not meet.
    pub fn check(&self, request: &ChatRequest) -> Result<(), String> {
        if let Some(wanted) = &self.last_user_contains {
            let last = request.messages.iter().rev().find_map(|m| match m {
                ChatMessage::User { content } => Some(content),
                _ => None,
            });
            match last {
                None => {
                    return Err(format!(
                        "expected a user message containing {wanted:?}, but the conversation has none"
                    ));
                }
                Some(text) if !text.contains(wanted.as_str()) => {
                    return Err(format!(
                        "expected the last user message to contain {wanted:?}, got {:?}",
                        short(text)
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some(wanted) = &self.last_tool_result_contains {
            let last = request.messages.iter().rev().find_map(|m| match m {
                ChatMessage::Tool { content, .. } => Some(content),
                _ => None,
            });
            match last {
                None => {
                    return Err(format!(
                        "expected a tool result containing {wanted:?}, but the conversation has none"
                    ));
                }
                Some(text) if !text.contains(wanted.as_str()) => {
                    return Err(format!(
                        "expected the last tool result to contain {wanted:?}, got {:?}",
                        short(text)
                    ));
                }
                Some(_) => {}
            }
        }
        for unwanted in &self.request_not_contains {
            let found = request.messages.iter().find_map(|m| {
                let text = match m {
                    ChatMessage::System { content }
                    | ChatMessage::User { content }
                    | ChatMessage::Tool { content, .. } => Some(content),
                    ChatMessage::Assistant { content, .. } => content.as_ref(),
                };
                text.filter(|t| t.contains(unwanted.as_str()))
            });
            if let Some(text) = found {
                return Err(format!(
                    "expected no message of the request to contain {unwanted:?}, got {:?}",
                    short(text)
                ));
            }
        }
        let offered: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        if let Some(missing) = self
            .tools_include
            .iter()
            .find(|t| !offered.contains(&t.as_str()))
        {
            return Err(format!(
                "expected the tools on offer to include {missing:?}, got [{}]",
                offered.join(", ")
            ));
        }
        Ok(())
    }
}

/// What a scripted reply does when played.
#[derive(Clone, Debug, PartialEq)]
pub enum ScriptedAnswer {
    /// The model answers with text and/or tool calls.
    Reply {
        /// Text, if any (streamed to the sink word by word).
        text: Option<String>,
        /// Tool calls, in order.
        tool_calls: Vec<ScriptedToolCall>,
        /// Usage reported for the call.
        usage: Usage,
    },
    /// The model fails.
    Fault(ScriptedFault),
}

/// One step of a script: an answer, and optionally what the request must look like.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "RawReply")]
pub struct ScriptedReply {
    /// What the model does.
    pub answer: ScriptedAnswer,
    /// What the request must look like; a mismatch is a `ModelError::Script`.
    pub expect: Option<Expectation>,
}

impl ScriptedReply {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self::answer(Some(text.into()), Vec::new())
    }

    /// An answer made of tool calls.
    pub fn tool_calls(calls: Vec<ScriptedToolCall>) -> Self {
        Self::answer(None, calls)
    }

    /// An answer with text and tool calls.
    pub fn answer(text: Option<String>, tool_calls: Vec<ScriptedToolCall>) -> Self {
        ScriptedReply {
            answer: ScriptedAnswer::Reply {
                text,
                tool_calls,
                usage: Usage::default(),
            },
            expect: None,
        }
    }

    /// A simulated model fault.
    pub fn fault(fault: ScriptedFault) -> Self {
        ScriptedReply {
            answer: ScriptedAnswer::Fault(fault),
            expect: None,
        }
    }

    /// Attaches an expectation on the request.
    pub fn expecting(mut self, expect: Expectation) -> Self {
        self.expect = Some(expect);
        self
    }
}

/// What happens after the last reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// One more request is a `ModelError::Script`.
    Fail,
    /// The script starts over.
    Repeat,
    /// The position is read from the conversation: the number of assistant messages since
    /// its last user message. Every conversation (every session) has its own, and each
    /// message of the operator (or note of the runtime) starts the script again.
    PerConversation,
}

#[derive(Debug, Default)]
struct Cursor {
    next: usize,
    played: usize,
}

/// A model that plays a script. Clones share one position in the script, so a test or an eval
/// can hand a clone to the runtime and later ask how many replies are left.
#[derive(Clone)]
pub struct ScriptedModel {
    replies: Arc<[ScriptedReply]>,
    cursor: Arc<Mutex<Cursor>>,
    ending: Ending,
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("replies", &self.replies.len())
            .field("remaining", &self.remaining())
            .field("ending", &self.ending)
            .finish()
    }
}

impl ScriptedModel {
    /// A script that fails (`ModelError::Script`) when asked for more replies than it has.
    pub fn new(replies: Vec<ScriptedReply>) -> Self {
        Self::with_ending(replies, Ending::Fail)
    }

    /// A script that starts over after its last reply (it never runs out).
    pub fn cycling(replies: Vec<ScriptedReply>) -> Self {
        Self::with_ending(replies, Ending::Repeat)
    }

    /// The same script, played from its start at each user message of a conversation: the
    /// position is the number of assistant messages since the last user message of the
    /// request, so concurrent sessions never share one, and a turn that outlives its script
    /// fails like [`ScriptedModel::new`]'s. [`ScriptedModel::remaining`] and
    /// [`ScriptedModel::played`] count all conversations together.
    pub fn per_conversation(self) -> Self {
        ScriptedModel {
            ending: Ending::PerConversation,
            ..self
        }
    }

    fn with_ending(replies: Vec<ScriptedReply>, ending: Ending) -> Self {
        ScriptedModel {
            replies: replies.into(),
            cursor: Arc::default(),
            ending,
        }
    }

    /// Reads a script from YAML text (a sequence of replies, see the module docs).
    pub fn from_yaml_str(yaml: &str) -> Result<Self, ScriptError> {
        let replies = parse_replies(yaml, "<inline>")?;
        Ok(Self::new(replies))
    }

    /// Reads a script from a YAML value (for scripts embedded in a larger document).
    pub fn from_yaml_value(value: yaml_serde::Value) -> Result<Self, ScriptError> {
        Ok(Self::new(replies_from_value(value, "<value>")?))
    }

    /// Reads a script from a YAML file.
    pub fn from_yaml_file(path: impl AsRef<Path>) -> Result<Self, ScriptError> {
        let path = path.as_ref();
        let yaml = std::fs::read_to_string(path).map_err(|err| ScriptError::Read {
            path: path.to_owned(),
            message: err.to_string(),
        })?;
        Ok(Self::new(parse_replies(
            &yaml,
            &path.display().to_string(),
        )?))
    }

    /// Replies not yet played (in the current pass, for a cycling script).
    pub fn remaining(&self) -> usize {
        self.replies.len().saturating_sub(self.lock().next)
    }

    /// Replies played so far, over all passes.
    pub fn played(&self) -> usize {
        self.lock().played
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cursor> {
        // The cursor is two counters updated together; a panic elsewhere cannot leave it torn.
        self.cursor.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the next reply if the request meets its expectation.
    fn take(&self, request: &ChatRequest) -> Result<(usize, ScriptedReply), ModelError> {
        let mut cursor = self.lock();
        let len = self.replies.len();
        if self.ending == Ending::PerConversation {
            cursor.next = position_in_conversation(request);
        }
        if cursor.next >= len {
            if self.ending == Ending::Repeat && len > 0 {
                cursor.next = 0;
            } else {
                return Err(ModelError::Script(format!(
                    "no reply left: all {len} scripted replies were used, and another request came ({})",
                    summary(request)
                )));
            }
        }
        let reply = &self.replies[cursor.next];
        if let Some(expect) = &reply.expect
            && let Err(problem) = expect.check(request)
        {
            return Err(ModelError::Script(format!(
                "reply {} of {len}: {problem}",
                cursor.next + 1
            )));
        }
        let reply = reply.clone();
        cursor.next += 1;
        cursor.played += 1;
        Ok((cursor.played, reply))
    }
}

#[async_trait]
impl ChatModel for ScriptedModel {
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        let (n_played, reply) = self.take(request)?;
        play(n_played, reply, sink)
    }

    fn name(&self) -> String {
        "stub".to_owned()
    }
}

/// Plays one reply: streams its text to `sink` word by word and names its tool calls;
/// `n_played` (the replies played so far, this one included) makes the calls' default ids.
pub(crate) fn play(
    n_played: usize,
    reply: ScriptedReply,
    sink: DeltaSink<'_>,
) -> Result<ChatResponse, ModelError> {
    let (text, calls, usage) = match reply.answer {
        ScriptedAnswer::Fault(ScriptedFault::EmptyOk) => {
            return Ok(ChatResponse {
                content: None,
                tool_calls: Vec::new(),
                finish_reason: FinishReason::Stop,
                usage: Usage::default(),
            });
        }
        ScriptedAnswer::Fault(fault) => return Err(fault.to_error()),
        ScriptedAnswer::Reply {
            text,
            tool_calls,
            usage,
        } => (text, tool_calls, usage),
    };
    if let Some(text) = &text {
        for piece in text.split_inclusive(' ') {
            sink(ChatDelta::Text {
                text: piece.to_owned(),
            });
        }
    }
    let mut tool_calls = Vec::with_capacity(calls.len());
    for (i, call) in calls.into_iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        sink(ChatDelta::ToolCallStarted {
            index,
            name: call.name.clone(),
        });
        tool_calls.push(ToolCall {
            id: call.id.unwrap_or_else(|| format!("call_{n_played}_{i}")),
            name: call.name,
            arguments: call.arguments,
        });
    }
    let finish_reason = if tool_calls.is_empty() {
        FinishReason::Stop
    } else {
        FinishReason::ToolCalls
    };
    let response = ChatResponse {
        content: text,
        tool_calls,
        finish_reason,
        usage,
    };
    if response.is_empty() {
        return Err(ModelError::Empty {
            finish_reason: "stop".into(),
        });
    }
    Ok(response)
}

/// The number of assistant messages after the request's last user message.
fn position_in_conversation(request: &ChatRequest) -> usize {
    request
        .messages
        .iter()
        .rev()
        .take_while(|m| !matches!(m, ChatMessage::User { .. }))
        .filter(|m| matches!(m, ChatMessage::Assistant { .. }))
        .count()
}

/// A short description of a request for error messages: last user message and tool names.
pub(crate) fn summary(request: &ChatRequest) -> String {
    let last_user = request.messages.iter().rev().find_map(|m| match m {
        ChatMessage::User { content } => Some(&**content),
        _ => None,
    });
    let tools: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    format!(
        "last user message: {:?}; {} messages; tools: [{}]",
        short(last_user.unwrap_or("")),
        request.messages.len(),
        tools.join(", ")
    )
}

fn short(text: &str) -> String {
    let mut cut: String = text.chars().take(80).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

fn parse_replies(yaml: &str, origin: &str) -> Result<Vec<ScriptedReply>, ScriptError> {
    let value: yaml_serde::Value = yaml_serde::from_str(yaml).map_err(|err| ScriptError::Yaml {
        origin: origin.to_owned(),
        message: err.to_string(),
    })?;
    replies_from_value(value, origin)
}

/// Reads each reply on its own, so an error names the reply it is about (1-based).
fn replies_from_value(
    value: yaml_serde::Value,
    origin: &str,
) -> Result<Vec<ScriptedReply>, ScriptError> {
    let yaml_serde::Value::Sequence(items) = value else {
        return Err(ScriptError::Yaml {
            origin: origin.to_owned(),
            message: "a script is a sequence of replies (`- text: ...`)".into(),
        });
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            yaml_serde::from_value(item).map_err(|err| ScriptError::Yaml {
                origin: origin.to_owned(),
                message: format!("reply {}: {err}", i + 1),
            })
        })
        .collect()
}

/// A reply as written in YAML, before its parts are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReply {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<RawToolCall>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    expect: Option<Expectation>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

impl TryFrom<RawReply> for ScriptedReply {
    type Error = String;

    fn try_from(raw: RawReply) -> Result<Self, Self::Error> {
        let answer = match raw.error {
            Some(error) => {
                if raw.text.is_some() || !raw.tool_calls.is_empty() || raw.usage.is_some() {
                    return Err(
                        "a scripted reply has either an error or text/tool_calls/usage, not both"
                            .into(),
                    );
                }
                ScriptedAnswer::Fault(parse_fault(&error)?)
            }
            None => {
                if raw.text.is_none() && raw.tool_calls.is_empty() {
                    return Err("a scripted reply needs text, tool_calls or error".into());
                }
                let tool_calls = raw
                    .tool_calls
                    .into_iter()
                    .map(|call| {
                        let arguments = match call.arguments {
                            None | Some(Value::Null) => "{}".to_owned(),
                            Some(Value::String(text)) => text,
                            Some(other) => other.to_string(),
                        };
                        ScriptedToolCall {
                            id: call.id,
                            name: call.name,
                            arguments,
                        }
                    })
                    .collect();
                ScriptedAnswer::Reply {
                    text: raw.text,
                    tool_calls,
                    usage: raw.usage.unwrap_or_default(),
                }
            }
        };
        Ok(ScriptedReply {
            answer,
            expect: raw.expect,
        })
    }
}

const FAULT_NAMES: &str = "empty, empty_ok, timeout, connect, length, stream_cut, \
     {status: N, message: ...}, {refusal: ...}";

fn parse_fault(error: &Value) -> Result<ScriptedFault, String> {
    match error {
        Value::String(name) => match name.as_str() {
            "empty" => Ok(ScriptedFault::Empty),
            "timeout" => Ok(ScriptedFault::Timeout),
            "connect" => Ok(ScriptedFault::Connect),
            "length" => Ok(ScriptedFault::Length),
            "stream_cut" => Ok(ScriptedFault::StreamCut),
            "empty_ok" => Ok(ScriptedFault::EmptyOk),
            other => Err(format!(
                "unknown error {other:?}; expected one of {FAULT_NAMES}"
            )),
        },
        Value::Object(map) => {
            if let Some(unknown) = map.keys().find(|k| {
                !matches!(
                    k.as_str(),
                    "status" | "message" | "refusal" | "retry_after_ms"
                )
            }) {
                return Err(format!(
                    "unknown error field {unknown:?}; expected one of {FAULT_NAMES}"
                ));
            }
            let message = match map.get("message") {
                None => "scripted failure".to_owned(),
                Some(Value::String(text)) => text.clone(),
                Some(other) => return Err(format!("error message must be text, got {other}")),
            };
            if let Some(refusal) = map.get("refusal") {
                let text = refusal
                    .as_str()
                    .ok_or_else(|| format!("error refusal must be text, got {refusal}"))?;
                return Ok(ScriptedFault::Refusal(text.to_owned()));
            }
            let Some(status) = map.get("status") else {
                return Err(format!(
                    "an error mapping needs status or refusal; expected one of {FAULT_NAMES}"
                ));
            };
            let status = status
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .filter(|s| (400..600).contains(s))
                .ok_or_else(|| {
                    format!("error status must be an HTTP error code (400-599), got {status}")
                })?;
            let retry_after_ms =
                match map.get("retry_after_ms") {
                    None => None,
                    Some(ms) => Some(ms.as_u64().ok_or_else(|| {
                        format!("retry_after_ms must be a whole number, got {ms}")
                    })?),
                };
            if status == 429 {
                return Ok(ScriptedFault::RateLimited {
                    retry_after_ms,
                    message,
                });
            }
            if retry_after_ms.is_some() {
                return Err("retry_after_ms goes with status 429 only".into());
            }
            Ok(ScriptedFault::Status { status, message })
        }
        other => Err(format!(
            "error must be a name or a mapping, got {other}; expected one of {FAULT_NAMES}"
        )),
    }
}
