//! Record/replay: real exchanges saved one file per request, keyed by a hash of the normalized
//! request, and played back later without a network.
//!
//! Normalizing keeps what the model reads and drops what varies between two runs of the same
//! conversation: tool-call ids become `call_1`, `call_2`... in order of appearance, tool-call
//! arguments that are valid JSON are re-encoded with sorted keys, text is trimmed, and tools are
//! sorted by name. The key is the SHA-256 of the normalized request encoded as JSON with sorted
//! keys and no spaces.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use nomos_core::ports::chat::{
    ChatDelta, ChatMessage, ChatModel, ChatRequest, ChatResponse, DeltaSink, ModelError,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::error::RecordError;
use crate::scripted::summary;

const FORMAT: u32 = 1;

/// Whether this process runs in CI, where recording is refused (CI replays, it never calls a
/// paid endpoint by accident).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CiEnvironment {
    /// The `CI` variable is set to a non-empty value.
    Detected,
    /// It is not.
    Absent,
}

impl CiEnvironment {
    /// Reads the `CI` environment variable.
    pub fn from_env() -> Self {
        Self::from_value(std::env::var_os("CI").as_deref().and_then(|v| v.to_str()))
    }

    /// Interprets a value of `CI` (`None` when it is not set).
    pub fn from_value(value: Option<&str>) -> Self {
        match value {
            Some(v) if !v.trim().is_empty() => CiEnvironment::Detected,
            _ => CiEnvironment::Absent,
        }
    }
}

/// The identity of a request for recording: its hash and a short human summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestKey {
    hash: String,
    summary: String,
}

impl RequestKey {
    /// Normalizes and hashes `request`.
    pub fn of(request: &ChatRequest) -> Self {
        let canonical = canonical_json(&normalize(request));
        let digest = Sha256::digest(canonical.as_bytes());
        let mut hash = String::with_capacity(64);
        for byte in digest {
            // Writing to a String cannot fail.
            let _ = write!(hash, "{byte:02x}");
        }
        RequestKey {
            hash,
            summary: summary(request),
        }
    }

    /// The SHA-256 of the normalized request, in lowercase hex.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The last user message and the tool names, for error messages.
    pub fn summary(&self) -> &str {
        &self.summary
    }

    fn file_in(&self, dir: &Path) -> PathBuf {
        dir.join(format!("{}.json", self.hash))
    }
}

/// One recorded exchange, as stored.
#[derive(Debug, Serialize, Deserialize)]
struct Recording {
    format: u32,
    key: String,
    summary: String,
    model: String,
    request: Value,
    response: ChatResponse,
}

/// Wraps a model and saves each successful exchange to a directory (failures are not saved:
/// the wrapped model already retried them, and a replay should not fail where the run did not).
#[derive(Clone, Debug)]
pub struct RecordingModel<M> {
    inner: M,
    dir: PathBuf,
}

impl<M: ChatModel> RecordingModel<M> {
    /// Records `inner`'s exchanges into `dir` (created if missing). Refused in CI.
    pub fn new(inner: M, dir: impl Into<PathBuf>, ci: CiEnvironment) -> Result<Self, RecordError> {
        if ci == CiEnvironment::Detected {
            return Err(RecordError::RefusedInCi);
        }
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|err| RecordError::Directory {
            path: dir.clone(),
            message: err.to_string(),
        })?;
        Ok(RecordingModel { inner, dir })
    }

    /// Like [`Self::new`], reading `CI` from the process environment.
    pub fn from_ci_env(inner: M, dir: impl Into<PathBuf>) -> Result<Self, RecordError> {
        Self::new(inner, dir, CiEnvironment::from_env())
    }

    /// The wrapped model.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    async fn save(
        &self,
        key: &RequestKey,
        request: &ChatRequest,
        response: &ChatResponse,
    ) -> Result<(), ModelError> {
        let recording = Recording {
            format: FORMAT,
            key: key.hash.clone(),
            summary: key.summary.clone(),
            model: self.inner.name(),
            request: normalize(request),
            response: response.clone(),
        };
        let path = key.file_in(&self.dir);
        let failed = |err: &dyn std::fmt::Display| {
            ModelError::Script(format!(
                "could not write recording {}: {err}",
                path.display()
            ))
        };
        let mut text = serde_json::to_string_pretty(&recording).map_err(|e| failed(&e))?;
        text.push('\n');
        // Write beside the target and rename, so a crash never leaves half a recording.
        let partial = self.dir.join(format!(".{}.partial", key.hash));
        tokio::fs::write(&partial, text)
            .await
            .map_err(|e| failed(&e))?;
        tokio::fs::rename(&partial, &path)
            .await
            .map_err(|e| failed(&e))?;
        Ok(())
    }
}

#[async_trait]
impl<M: ChatModel> ChatModel for RecordingModel<M> {
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        let response = self.inner.complete(request, sink).await?;
        self.save(&RequestKey::of(request), request, &response)
            .await?;
        Ok(response)
    }

    fn name(&self) -> String {
        format!("record:{}", self.inner.name())
    }
}

/// Plays recorded exchanges back; a request with no recording is a `ModelError::Script` that
/// names its hash and summary.
#[derive(Clone, Debug)]
pub struct ReplayModel {
    dir: PathBuf,
}

impl ReplayModel {
    /// Replays the recordings in `dir`, which must exist.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, RecordError> {
        let dir = dir.into();
        if !dir.is_dir() {
            return Err(RecordError::Directory {
                path: dir,
                message: "not a directory (record a run first)".into(),
            });
        }
        Ok(ReplayModel { dir })
    }

    async fn load(&self, key: &RequestKey) -> Result<ChatResponse, ModelError> {
        let path = key.file_in(&self.dir);
        let text = match tokio::fs::read_to_string(&path).await {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(ModelError::Script(format!(
                    "no recording for request {} in {} ({})",
                    key.hash,
                    self.dir.display(),
                    key.summary
                )));
            }
            Err(err) => {
                return Err(ModelError::Script(format!(
                    "could not read recording {}: {err}",
                    path.display()
                )));
            }
        };
        let recording: Recording = serde_json::from_str(&text).map_err(|err| {
            ModelError::Decode(format!("recording {} is not valid: {err}", path.display()))
        })?;
        if recording.format != FORMAT || recording.key != key.hash {
            return Err(ModelError::Decode(format!(
                "recording {} does not match: format {} key {} (expected format {FORMAT} key {})",
                path.display(),
                recording.format,
                recording.key,
                key.hash
            )));
        }
        Ok(recording.response)
    }
}

#[async_trait]
impl ChatModel for ReplayModel {
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        let response = self.load(&RequestKey::of(request)).await?;
        if let Some(text) = response.content.as_ref().filter(|t| !t.is_empty()) {
            sink(ChatDelta::Text { text: text.clone() });
        }
        for (i, call) in response.tool_calls.iter().enumerate() {
            let index = u32::try_from(i).unwrap_or(u32::MAX);
            sink(ChatDelta::ToolCallStarted {
                index,
                name: call.name.clone(),
            });
        }
        Ok(response)
    }

    fn name(&self) -> String {
        let dir = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        format!("replay:{dir}")
    }
}

/// The request as recorded and hashed (see the module docs).
fn normalize(request: &ChatRequest) -> Value {
    let mut ids: HashMap<String, String> = HashMap::new();
    let mut stable_id = |id: &str| -> String {
        let next = ids.len() + 1;
        ids.entry(id.to_owned())
            .or_insert_with(|| format!("call_{next}"))
            .clone()
    };
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| match message {
            ChatMessage::System { content } => json!({"role": "system", "content": content.trim()}),
            ChatMessage::User { content } => json!({"role": "user", "content": content.trim()}),
            ChatMessage::Assistant { content, tool_calls } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        let arguments = serde_json::from_str::<Value>(&call.arguments)
                            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                        json!({"id": stable_id(&call.id), "name": call.name, "arguments": arguments})
                    })
                    .collect();
                json!({
                    "role": "assistant",
                    "content": content.as_deref().map(str::trim).filter(|c| !c.is_empty()),
                    "tool_calls": calls,
                })
            }
            ChatMessage::Tool { call_id, content } => {
                json!({"role": "tool", "call_id": stable_id(call_id), "content": content.trim()})
            }
        })
        .collect();
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            json!({"name": tool.name, "description": tool.description.trim(), "parameters": tool.parameters})
        })
        .collect();
    tools.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    json!({"messages": messages, "tools": tools})
}

/// JSON with object keys sorted and no whitespace, whatever map order serde_json was built with.
fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use nomos_core::ports::chat::{ToolCall, ToolSpec};

    use super::*;

    fn request(call_id: &str, arguments: &str, tools: &[&str]) -> ChatRequest {
        ChatRequest {
            messages: vec![
                ChatMessage::System {
                    content: "You are Nomos.".into(),
                },
                ChatMessage::User {
                    content: "check disks ".into(),
                },
                ChatMessage::Assistant {
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: call_id.into(),
                        name: "run".into(),
                        arguments: arguments.into(),
                    }],
                },
                ChatMessage::Tool {
                    call_id: call_id.into(),
                    content: "42% used".into(),
                },
            ],
            tools: tools
                .iter()
                .map(|name| ToolSpec {
                    name: (*name).into(),
                    description: "d".into(),
                    parameters: json!({"type": "object", "properties": {"b": {}, "a": {}}}),
                })
                .collect(),
        }
    }

    #[test]
    fn volatile_ids_key_order_and_tool_order_do_not_change_the_key() {
        let one = RequestKey::of(&request(
            "call_abc",
            r#"{"host":"local","command":"df -h"}"#,
            &["run", "set_goal"],
        ));
        let two = RequestKey::of(&request(
            "call_xyz",
            r#"{ "command": "df -h", "host": "local" }"#,
            &["set_goal", "run"],
        ));
        assert_eq!(one.hash(), two.hash());
        assert_eq!(one.hash().len(), 64);
    }

    #[test]
    fn what_the_model_reads_changes_the_key() {
        let base = RequestKey::of(&request("c", r#"{"command":"df -h"}"#, &["run"]));
        let other_args = RequestKey::of(&request("c", r#"{"command":"df -i"}"#, &["run"]));
        let other_tools = RequestKey::of(&request("c", r#"{"command":"df -h"}"#, &["run", "x"]));
        assert_ne!(base.hash(), other_args.hash());
        assert_ne!(base.hash(), other_tools.hash());
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let value = json!({"b": [{"z": 1, "a": null}], "a": "x\"y"});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":"x\"y","b":[{"a":null,"z":1}]}"#
        );
    }

    #[test]
    fn ci_is_detected_from_a_non_empty_value() {
        assert_eq!(
            CiEnvironment::from_value(Some("true")),
            CiEnvironment::Detected
        );
        assert_eq!(CiEnvironment::from_value(Some("")), CiEnvironment::Absent);
        assert_eq!(CiEnvironment::from_value(None), CiEnvironment::Absent);
    }
}
