//! EVAL-6: every golden case recorded against an OpenAI-compatible server on loopback that
//! plays the case's script, then replayed offline from the recordings, with the same verdicts.
//! And EVAL-4: the `any` cases' pass rates against that endpoint over five runs each.

// Helpers outside #[test] functions panic on setup failures, like the tests do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;
use std::time::Duration;

use nomos_core::ports::chat::{
    ChatMessage, ChatModel, ChatRequest, ChatResponse, FinishReason, ModelError, ToolCall, ToolSpec,
};
use nomos_golden::manifest::{Case, CaseModel, Manifest};
use nomos_golden::report::{CaseResult, Verdict};
use nomos_golden::run::ModelChoice;
use nomos_golden::{CaseSelection, RunOptions, run_manifest};
use nomos_llm::{OpenAiConfig, RetryPolicy, ScriptedModel, Transport};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn manifest() -> Manifest {
    Manifest::load(
        &std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
        )
        .join("../../evals/golden.yaml"),
    )
    .unwrap()
}

fn script_of(case: &Case) -> ScriptedModel {
    let replies: Vec<yaml_serde::Value> = case
        .steps
        .iter()
        .flat_map(|s| s.model.iter().cloned())
        .collect();
    ScriptedModel::from_yaml_value(yaml_serde::Value::Sequence(replies)).unwrap()
}

/// An OpenAI-compatible endpoint that plays a case's script; once the script is played out,
/// a conversation that starts again (system prompt and one operator message) starts it again.
struct ScriptedEndpoint {
    case: Case,
    script: Mutex<ScriptedModel>,
}

impl Respond for ScriptedEndpoint {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let request = port_request(&body);
        let mut script = self.script.lock().unwrap();
        if request.messages.len() == 2 && script.remaining() == 0 {
            *script = script_of(&self.case);
        }
        let answer = futures::executor::block_on(script.complete(&request, &|_| {}));
        wire_reply(answer)
    }
}

fn port_request(body: &Value) -> ChatRequest {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let messages = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match m["role"].as_str().unwrap() {
            "system" => ChatMessage::System {
                content: text(&m["content"]).into(),
            },
            "user" => ChatMessage::User {
                content: text(&m["content"]).into(),
            },
            "assistant" => ChatMessage::Assistant {
                content: m["content"].as_str().map(Into::into),
                tool_calls: m["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| ToolCall {
                        id: text(&c["id"]),
                        name: text(&c["function"]["name"]),
                        arguments: text(&c["function"]["arguments"]),
                    })
                    .collect(),
            },
            _ => ChatMessage::Tool {
                call_id: text(&m["tool_call_id"]).into(),
                content: text(&m["content"]).into(),
            },
        })
        .collect();
    let tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| ToolSpec {
            name: text(&t["function"]["name"]),
            description: text(&t["function"]["description"]),
            parameters: t["function"]["parameters"].clone(),
        })
        .collect();
    ChatRequest { messages, tools }
}

fn wire_reply(answer: Result<ChatResponse, ModelError>) -> ResponseTemplate {
    let error = |status: u16, message: String| {
        ResponseTemplate::new(status).set_body_json(json!({"error": {"message": message}}))
    };
    let response = match answer {
        Ok(response) => response,
        Err(ModelError::Status { status, message }) => return error(status, message),
        Err(ModelError::Empty { .. }) => ChatResponse {
            content: None,
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: Default::default(),
        },
        Err(other) => return error(400, other.to_string()),
    };
    let calls: Vec<Value> = response
        .tool_calls
        .iter()
        .map(|c| {
            json!({"id": c.id, "type": "function",
                   "function": {"name": c.name, "arguments": c.arguments}})
        })
        .collect();
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let mut message = json!({"role": "assistant", "content": response.content.unwrap_or_default()});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-golden", "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    }))
}

/// A loopback endpoint playing `case`, and the configuration that reaches it.
async fn endpoint(case: &Case) -> (MockServer, OpenAiConfig) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ScriptedEndpoint {
            case: case.clone(),
            script: Mutex::new(script_of(case)),
        })
        .mount(&server)
        .await;
    let config = OpenAiConfig::builder(format!("{}/v1", server.uri()), "scripted")
        .transport(Transport::Buffered)
        .timeout(Duration::from_secs(10))
        .retry(RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
        })
        .build()
        .unwrap();
    (server, config)
}

async fn run_one(case: &Case, model: ModelChoice, repeat: u32) -> CaseResult {
    let manifest = Manifest {
        cases: vec![case.clone()],
    };
    let options = RunOptions {
        model,
        repeat,
        min_pass_rate: 1.0,
        parallel: 1,
        tags: Vec::new(),
        cases: CaseSelection::All,
        case_timeout: None,
    };
    let mut report = run_manifest(&manifest, &options, |_| {}).await;
    report.cases.remove(0)
}

// rule: EVAL-6, EVAL-2
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_golden_case_recorded_from_an_endpoint_replays_offline_with_the_same_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let mut differ = Vec::new();
    let mut n_replayed = 0;
    let mut n_passed = 0;
    for case in manifest().cases {
        let recordings = dir.path().join(&case.name);
        let (server, config) = endpoint(&case).await;
        let recorded = run_one(&case, ModelChoice::Record(config, recordings.clone()), 1).await;
        drop(server);
        // EVAL-7: beside the recordings, the exact bytes of each exchange.
        let wire = recordings
            .join(nomos_golden::run::WIRE_DIR)
            .join(nomos_golden::run::path_safe(&case.name));
        let n_wire = std::fs::read_dir(&wire)
            .map(|dir| {
                dir.filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .path()
                        .to_string_lossy()
                        .ends_with(".response")
                })
                .count()
            })
            .unwrap_or(0);
        assert!(
            n_wire > 0,
            "{}: no exchange in {}",
            case.name,
            wire.display()
        );
        let replayed = run_one(&case, ModelChoice::Replay(recordings), 1).await;
        n_replayed += 1;
        if replayed.result == Verdict::Pass {
            n_passed += 1;
        } else {
            eprintln!(
                "{}: {:?} / {:?}",
                case.name, recorded.failures, replayed.failures
            );
        }
        if recorded.result != replayed.result {
            differ.push(format!(
                "{}: recorded {:?} {:?}, replayed {:?} {:?}",
                case.name, recorded.result, recorded.failures, replayed.result, replayed.failures
            ));
        }
    }
    assert!(n_replayed >= 20, "{n_replayed}");
    eprintln!("{n_passed} of {n_replayed} cases pass recorded and replayed");
    // Every case passes with the stub, so a well-played endpoint passes them all too.
    assert_eq!(n_passed, n_replayed);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

// rule: EVAL-4
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_any_cases_pass_every_run_against_the_scripted_endpoint() {
    let mut rates = Vec::new();
    for case in manifest()
        .cases
        .into_iter()
        .filter(|c| c.model == CaseModel::Any)
    {
        let (_server, config) = endpoint(&case).await;
        let result = run_one(&case, ModelChoice::OpenAi(config), 5).await;
        rates.push((
            case.name.clone(),
            result.passes,
            result.runs,
            result.failures,
        ));
    }
    // The numbers the report quotes (`-- --nocapture`).
    for (name, passes, runs, _) in &rates {
        eprintln!("{name}: {passes}/{runs}");
    }
    assert!(rates.len() >= 8, "at least 8 any cases");
    let failing: Vec<_> = rates.iter().filter(|(_, p, r, _)| p != r).collect();
    assert!(failing.is_empty(), "{failing:?}");
    assert!(rates.iter().all(|(_, _, runs, _)| *runs == 5));
}
