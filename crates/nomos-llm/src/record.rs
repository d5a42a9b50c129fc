//! Record/replay: real exchanges saved one file per request, keyed by a hash of the normalized
//! request, and played back later without a network.
//!
//! Normalizing keeps what the model reads and drops what varies between two runs of the same
//! conversation (EVAL-6): tool-call ids become `call_1`, `call_2`... in order of appearance;
//! every UUID in any text or argument (session, approval and execution ids) becomes `<id1>`,
//! `<id2>`... in order of appearance; RFC 3339 times become `<time>`; tool-call arguments that
//! are valid JSON are re-encoded with sorted keys, text is trimmed, and tools are sorted by name. The key is the SHA-256 of the normalized request encoded as JSON with sorted
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

    /// Whether recording from `endpoint` counts as recording in CI: an endpoint on loopback
    /// (`localhost`, `127.0.0.0/8`, `::1`) is a local server, never a paid one, so recording
    /// from it is allowed everywhere; any other endpoint is refused when `CI` is set.
    pub fn for_endpoint(endpoint: &reqwest::Url) -> Self {
        if endpoint_is_loopback(endpoint) {
            CiEnvironment::Absent
        } else {
            Self::from_env()
        }
    }

    /// Interprets a value of `CI` (`None` when it is not set).
    pub fn from_value(value: Option<&str>) -> Self {
        match value {
            Some(v) if !v.trim().is_empty() => CiEnvironment::Detected,
            _ => CiEnvironment::Absent,
        }
    }
}

fn endpoint_is_loopback(endpoint: &reqwest::Url) -> bool {
    let Some(host) = endpoint.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => bare.eq_ignore_ascii_case("localhost"),
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
    let mut uuids = Varying::default();
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| match message {
            ChatMessage::System { content } => {
                json!({"role": "system", "content": uuids.text(content.trim())})
            }
            ChatMessage::User { content } => {
                json!({"role": "user", "content": uuids.text(content.trim())})
            }
            ChatMessage::Assistant { content, tool_calls } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        let text = uuids.text(&call.arguments);
                        let arguments = serde_json::from_str::<Value>(&text)
                            .unwrap_or(Value::String(text));
                        json!({"id": stable_id(&call.id), "name": call.name, "arguments": arguments})
                    })
                    .collect();
                json!({
                    "role": "assistant",
                    "content": content.as_deref().map(str::trim).filter(|c| !c.is_empty()).map(|c| uuids.text(c)),
                    "tool_calls": calls,
                })
            }
            ChatMessage::Tool { call_id, content } => {
                json!({"role": "tool", "call_id": stable_id(call_id), "content": uuids.text(content.trim())})
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

/// What differs between two runs of one conversation, inside text: UUIDs, numbered in order of
/// appearance (the same UUID gets the same number), and RFC 3339 times.
#[derive(Default)]
struct Varying {
    uuids: HashMap<String, usize>,
}

impl Varying {
    fn text(&mut self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut idx = 0;
        let mut copied = 0;
        while idx < bytes.len() {
            if let Some(len) = uuid_at(bytes, idx) {
                out.push_str(&text[copied..idx]);
                let next = self.uuids.len() + 1;
                let n = *self
                    .uuids
                    .entry(text[idx..idx + len].to_ascii_lowercase())
                    .or_insert(next);
                out.push_str(&format!("<id{n}>"));
                idx += len;
                copied = idx;
            } else if let Some(len) = time_at(bytes, idx) {
                out.push_str(&text[copied..idx]);
                out.push_str("<time>");
                idx += len;
                copied = idx;
            } else {
                idx += 1;
            }
        }
        out.push_str(&text[copied..]);
        out
    }
}

/// The length of a UUID (`8-4-4-4-12` hex digits) starting at `idx` and not inside a longer
/// word, if one does.
fn uuid_at(bytes: &[u8], idx: usize) -> Option<usize> {
    const GROUPS: [usize; 5] = [8, 4, 4, 4, 12];
    if idx > 0 && bytes[idx - 1].is_ascii_alphanumeric() {
        return None;
    }
    let mut at = idx;
    for (n, len) in GROUPS.iter().enumerate() {
        if n > 0 {
            if bytes.get(at) != Some(&b'-') {
                return None;
            }
            at += 1;
        }
        let group = bytes.get(at..at + len)?;
        if !group.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        at += len;
    }
    if bytes.get(at).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    Some(at - idx)
}

/// The length of an RFC 3339 time (`2027-01-15T08:00:00`, optional fraction and offset)
/// starting at `idx`, if one does.
fn time_at(bytes: &[u8], idx: usize) -> Option<usize> {
    if idx > 0 && bytes[idx - 1].is_ascii_digit() {
        return None;
    }
    let pattern = b"dddd-dd-ddTdd:dd:dd";
    let head = bytes.get(idx..idx + pattern.len())?;
    for (byte, want) in head.iter().zip(pattern) {
        let ok = match want {
            b'd' => byte.is_ascii_digit(),
            b'T' => matches!(byte, b'T' | b' '),
            other => byte == other,
        };
        if !ok {
            return None;
        }
    }
    let mut at = idx + pattern.len();
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
    }
    match bytes.get(at) {
        Some(b'Z') => at += 1,
        Some(b'+' | b'-')
            if bytes.get(at + 1..at + 6).is_some_and(|o| {
                o[0].is_ascii_digit() && o[1].is_ascii_digit() && o[2] == b':'
            }) =>
        {
            at += 6
        }
        _ => {}
    }
    Some(at - idx)
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
                    }]
                    .into(),
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

    fn with_tool_result(content: &str) -> ChatRequest {
        let mut request = request("call_a", "{}", &["run"]);
        request.messages[3] = ChatMessage::Tool {
            call_id: "call_a".into(),
            content: content.into(),
        };
        request
    }

    // rule: EVAL-6
    #[test]
    fn ids_and_times_that_differ_between_runs_do_not_change_the_key() {
        let one = with_tool_result(
            "Approval 0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b requested for execution 11111111-2222-4333-8444-555555555555 at 2027-01-15T08:00:00.123Z; approval 0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b expires 2027-01-15T08:30:00+00:00",
        );
        let two = with_tool_result(
            "Approval 9f8e7d6c-5b4a-4321-8fed-cba987654321 requested for execution aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee at 2031-06-01T12:34:56.999Z; approval 9f8e7d6c-5b4a-4321-8fed-cba987654321 expires 2031-06-01T13:04:56+00:00",
        );
        assert_eq!(RequestKey::of(&one), RequestKey::of(&two));
        // The same id twice and two different ids are still told apart.
        let swapped = with_tool_result(
            "Approval 11111111-2222-4333-8444-555555555555 requested for execution 0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b at 2027-01-15T08:00:00.123Z; approval 0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b expires 2027-01-15T08:30:00+00:00",
        );
        assert_ne!(RequestKey::of(&one), RequestKey::of(&swapped));
        assert_eq!(
            Varying::default().text("run 0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b at 2027-01-15T08:00:00Z, not x0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"),
            "run <id1> at <time>, not x0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
        );
        let other_text = with_tool_result("42% used");
        assert_ne!(RequestKey::of(&one), RequestKey::of(&other_text));
    }
}
