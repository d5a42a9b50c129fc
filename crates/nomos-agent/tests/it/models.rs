//! The runtime against an OpenAI-compatible server on loopback that behaves like the local
//! servers operators point Nomos at: no tool-call ids, empty ids, ids repeated per reply,
//! arguments as a JSON object (TURN-10).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use nomos_agent::{Agent, AgentConfig, ManualClock};
use nomos_core::ExecutionStatus;
use nomos_core::ports::store::{ExecutionFilter, Store};
use nomos_core::{SessionId, Timestamp};
use nomos_llm::{OpenAiConfig, OpenAiModel, RetryPolicy, Transport};
use nomos_sqlite::SqliteStore;
use nomos_ssh::LocalExecutor;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::START;

/// Answers the n-th request with the n-th template (the last one repeats).
struct Sequence {
    replies: Vec<ResponseTemplate>,
    next: AtomicUsize,
}

impl Respond for Sequence {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        self.replies[n.min(self.replies.len() - 1)].clone()
    }
}

fn sse(chunks: &[Value]) -> ResponseTemplate {
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(body.into_bytes(), "text/event-stream")
}

/// Ollama's OpenAI-compatible stream: the whole call in one chunk, no `id`, no `index`,
/// `finish_reason: "stop"`.
pub fn ollama_call(command: &str) -> ResponseTemplate {
    let arguments = json!({"host": "local", "command": command}).to_string();
    sse(&[
        json!({"id": "chatcmpl-7", "object": "chat.completion.chunk", "model": "llama3.1",
               "system_fingerprint": "fp_ollama",
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": "",
                 "tool_calls": [{"type": "function",
                   "function": {"name": "run", "arguments": arguments}}]},
                 "finish_reason": null}]}),
        json!({"id": "chatcmpl-7", "object": "chat.completion.chunk", "model": "llama3.1",
               "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}]}),
    ])
}

/// A whole reply whose calls all carry the id `call_0` and object arguments.
pub fn repeated_id_calls(commands: &[&str]) -> ResponseTemplate {
    let calls: Vec<Value> = commands
        .iter()
        .map(|command| {
            json!({"id": "call_0", "type": "function",
                   "function": {"name": "run", "arguments": {"host": "local", "command": command}}})
        })
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-8", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": null, "tool_calls": calls}}]
    }))
}

pub fn text_reply(text: &str) -> ResponseTemplate {
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ])
}

pub struct Endpoint {
    pub server: MockServer,
    pub agent: Agent,
    pub store: Arc<SqliteStore>,
    _dir: tempfile::TempDir,
}

/// An agent whose model is an OpenAI-compatible server playing `replies` in order.
pub async fn endpoint(
    replies: Vec<ResponseTemplate>,
    tune: impl FnOnce(&mut AgentConfig),
) -> Endpoint {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Sequence {
            replies,
            next: AtomicUsize::new(0),
        })
        .mount(&server)
        .await;
    let config = OpenAiConfig::builder(format!("{}/v1", server.uri()), "llama3.1")
        .transport(Transport::Streaming)
        .timeout(Duration::from_secs(10))
        .retry(RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
        })
        .build()
        .unwrap();
    let model = Arc::new(OpenAiModel::new(config).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let mut agent_config = AgentConfig::spec_defaults();
    agent_config.backup.root = dir.path().join("backup").display().to_string();
    tune(&mut agent_config);
    let agent = Agent::builder(store.clone(), Arc::new(LocalExecutor::new()), model)
        .config(agent_config)
        .clock(Arc::new(ManualClock::starting_at(Timestamp::from_millis(
            START,
        ))))
        .build();
    Endpoint {
        server,
        agent,
        store,
        _dir: dir,
    }
}

impl Endpoint {
    pub async fn bodies(&self) -> Vec<Value> {
        self.server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .map(|r| serde_json::from_slice(&r.body).unwrap())
            .collect()
    }

    async fn execution_statuses(&self, id: SessionId) -> Vec<ExecutionStatus> {
        let filter = ExecutionFilter {
            session: Some(id),
            ..ExecutionFilter::default()
        };
        let executions = self.store.list_executions(&filter).await.unwrap();
        executions.into_iter().map(|e| e.status).collect()
    }
}

/// Each tool result the last request sent, by the id of the call it answers, checked against
/// the calls the assistant messages carried.
fn results_sent(body: &Value) -> Vec<(String, String)> {
    let messages = body["messages"].as_array().unwrap();
    let mut called = Vec::new();
    let mut answered = Vec::new();
    for message in messages {
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            called.push(call["id"].as_str().unwrap().to_owned());
        }
        if message["role"] == "tool" {
            answered.push((
                message["tool_call_id"].as_str().unwrap().to_owned(),
                message["content"].as_str().unwrap().to_owned(),
            ));
        }
    }
    let answered_ids: Vec<String> = answered.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(called, answered_ids, "each call answered once, in order");
    answered
}

// rule: TURN-10, TURN-4
#[tokio::test]
async fn two_replies_without_ids_each_record_their_run_and_get_their_own_result() {
    let e = endpoint(
        vec![
            ollama_call("echo first-output"),
            ollama_call("echo second-output"),
            text_reply("Both ran."),
        ],
        |_| {},
    )
    .await;
    let id = e.agent.create_session().await.unwrap();
    let report = e
        .agent
        .send_message(id, "run the two checks")
        .await
        .unwrap();
    assert_eq!(report.error, None);
    assert_eq!(report.n_tool_calls, 2);

    let calls = e.store.tool_calls(id).await.unwrap();
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0].call_id, calls[1].call_id);
    assert_eq!(
        e.execution_statuses(id).await,
        [ExecutionStatus::Completed, ExecutionStatus::Completed],
        "each run's end is recorded"
    );
    let bodies = e.bodies().await;
    let results = results_sent(&bodies[2]);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].0, calls[0].call_id);
    assert!(results[0].1.contains("first-output"), "{results:?}");
    assert!(results[1].1.contains("second-output"), "{results:?}");
}

// rule: TURN-10
#[tokio::test]
async fn ids_repeated_within_and_across_replies_never_collide_in_the_store() {
    let e = endpoint(
        vec![
            repeated_id_calls(&["echo a1", "echo a2"]),
            repeated_id_calls(&["echo b1"]),
            text_reply("Done."),
        ],
        |_| {},
    )
    .await;
    let id = e.agent.create_session().await.unwrap();
    let report = e.agent.send_message(id, "three checks").await.unwrap();
    assert_eq!(report.error, None);
    let calls = e.store.tool_calls(id).await.unwrap();
    let mut ids: Vec<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids.len(), 3);
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3, "{calls:?}");
    assert!(
        e.execution_statuses(id)
            .await
            .iter()
            .all(|s| *s == ExecutionStatus::Completed)
    );
    let bodies = e.bodies().await;
    let results = results_sent(&bodies[2]);
    let outputs: Vec<bool> = ["a1", "a2", "b1"]
        .iter()
        .zip(&results)
        .map(|(want, (_, content))| content.contains(want))
        .collect();
    assert_eq!(outputs, [true, true, true], "{results:?}");
}

// rule: TURN-10
#[tokio::test]
async fn any_model_adapter_that_repeats_an_id_is_corrected_by_the_runtime() {
    let w = super::world(
        r#"
- tool_calls:
    - {id: same, name: run, arguments: {host: local, command: "echo one"}}
- tool_calls:
    - {id: same, name: run, arguments: {host: local, command: "echo two"}}
- text: "ok"
"#,
    )
    .await;
    let id = w.agent.create_session().await.unwrap();
    let report = w.agent.send_message(id, "twice").await.unwrap();
    assert_eq!(report.error, None);
    let calls = w.calls(id).await;
    assert_eq!(calls[0].call_id, "same");
    assert_ne!(calls[1].call_id, "same");
    assert!(calls[1].result.contains("two"), "{}", calls[1].result);
}

/// A model that runs a long command, then reads back a slice the cut named, then answers.
struct ReadsWhatWasCut {
    next: AtomicUsize,
}

fn whole_call(name: &str, arguments: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "tool_calls": [{"id": "", "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}}]}}]
    }))
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in {text}"))
        + start.len();
    let to = text[from..].find(end).unwrap() + from;
    &text[from..to]
}

impl Respond for ReadsWhatWasCut {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let last = body["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        match self.next.fetch_add(1, Ordering::SeqCst) {
            0 => whole_call("run", json!({"host": "local", "command": "seq 1 10000"})),
            1 => {
                let execution_id = between(&last, "execution_id: \"", "\"");
                let offset: usize = between(&last, "offset: ", ",").parse().unwrap();
                whole_call(
                    "get_execution_output",
                    json!({"execution_id": execution_id, "offset": offset, "limit": 2000}),
                )
            }
            _ => text_reply("Read it all."),
        }
    }
}

// rule: TURN-9
#[tokio::test]
async fn the_model_reads_a_cut_result_while_the_store_keeps_it_whole() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ReadsWhatWasCut {
            next: AtomicUsize::new(0),
        })
        .mount(&server)
        .await;
    let mut e = endpoint(Vec::new(), |_| {}).await;
    e.agent = agent_for(&server, e.store.clone());
    e.server = server;
    let id = e.agent.create_session().await.unwrap();
    let report = e.agent.send_message(id, "count to 10000").await.unwrap();
    assert_eq!(report.error, None);

    let calls = e.store.tool_calls(id).await.unwrap();
    assert!(calls[0].result.contains("\n5000\n"));
    assert!(
        calls[0].result.len() > 48_000,
        "the store keeps the whole output"
    );
    let bodies = e.bodies().await;
    let shown = bodies[1]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(shown.len() < 8 * 1024 + 400, "{}", shown.len());
    assert!(shown.contains("bytes cut here"), "{shown}");
    assert!(shown.ends_with("9999\n10000\n"), "the tail is kept");
    let read = bodies[2]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(read.starts_with("[bytes 4096..6096 of"), "{read}");
    let expected = &calls[0].result[4096..6096];
    assert!(read.ends_with(expected), "{read}");
}

fn agent_for(server: &MockServer, store: Arc<SqliteStore>) -> Agent {
    let config = OpenAiConfig::builder(format!("{}/v1", server.uri()), "llama3.1")
        .transport(Transport::Buffered)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let model = Arc::new(OpenAiModel::new(config).unwrap());
    Agent::builder(store, Arc::new(LocalExecutor::new()), model)
        .clock(Arc::new(ManualClock::starting_at(Timestamp::from_millis(
            START,
        ))))
        .build()
}

fn context_exceeded() -> ResponseTemplate {
    ResponseTemplate::new(400).set_body_json(json!({"error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens.",
        "type": "invalid_request_error", "code": "context_length_exceeded"}}))
}

// rule: TURN-9, TURN-2
#[tokio::test]
async fn a_context_overflow_is_compacted_and_asked_once_more() {
    let e = endpoint(vec![context_exceeded(), text_reply("Fits now.")], |_| {}).await;
    let id = e.agent.create_session().await.unwrap();
    let report = e.agent.send_message(id, "hello").await.unwrap();
    assert_eq!(report.error, None);
    assert_eq!(report.final_text.as_deref(), Some("Fits now."));
    assert_eq!(e.bodies().await.len(), 2);
}

// rule: TURN-9, TURN-2
#[tokio::test]
async fn a_second_overflow_ends_the_turn_with_the_providers_words() {
    let e = endpoint(vec![context_exceeded()], |_| {}).await;
    let id = e.agent.create_session().await.unwrap();
    let report = e.agent.send_message(id, "hello").await.unwrap();
    let error = report.error.unwrap();
    assert!(error.contains("HTTP 400"), "{error}");
    assert!(error.contains("maximum context length is 8192"), "{error}");
    assert_eq!(e.bodies().await.len(), 2, "one compaction, one retry");
}
