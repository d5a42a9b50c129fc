//! Recording real exchanges and replaying them without the endpoint.

use nomos_core::ports::chat::{ChatDelta, ChatModel, ModelError};
use nomos_llm::{
    CiEnvironment, RecordError, RecordingModel, ReplayModel, RequestKey, ScriptedModel,
    ScriptedReply, ScriptedToolCall, Transport,
};
use serde_json::json;
use wiremock::MockServer;

use crate::support::{Deltas, chunk, finish_chunk, model, request, serve, sse, usage_chunk};

#[tokio::test]
async fn an_exchange_recorded_from_a_real_endpoint_replays_without_it() {
    let server = MockServer::start().await;
    serve(
        &server,
        sse(&[
            chunk(json!({"content": "Uptime is 12 days."})),
            finish_chunk("stop"),
            usage_chunk(Some(0.002)),
        ]),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let recorder = RecordingModel::new(
        model(&server, Transport::Streaming),
        dir.path(),
        CiEnvironment::Absent,
    )
    .unwrap();
    let recorded = recorder
        .complete(&request("uptime?"), &|_| {})
        .await
        .unwrap();
    drop(server);

    let replay = ReplayModel::open(dir.path()).unwrap();
    let deltas = Deltas::default();
    let replayed = replay
        .complete(&request("uptime?"), &|d| deltas.push(d))
        .await
        .unwrap();

    assert_eq!(replayed, recorded);
    assert_eq!(replayed.usage.cost_usd, Some(0.002));
    assert_eq!(deltas.texts(), ["Uptime is 12 days."]);
    let key = RequestKey::of(&request("uptime?"));
    let file = dir.path().join(format!("{}.json", key.hash()));
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(stored["model"], "openai:test-model");
    assert_eq!(
        stored["request"]["messages"][1],
        json!({"role": "user", "content": "uptime?"})
    );
}

#[tokio::test]
async fn each_request_gets_its_own_recording() {
    let script = ScriptedModel::new(vec![
        ScriptedReply::text("first answer"),
        ScriptedReply::tool_calls(vec![ScriptedToolCall::new(
            "run",
            json!({"host": "local", "command": "uptime"}),
        )]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let recorder = RecordingModel::new(script, dir.path(), CiEnvironment::Absent).unwrap();
    recorder.complete(&request("one"), &|_| {}).await.unwrap();
    recorder.complete(&request("two"), &|_| {}).await.unwrap();
    let n_files = std::fs::read_dir(dir.path()).unwrap().count();

    let replay = ReplayModel::open(dir.path()).unwrap();
    let deltas = Deltas::default();
    let two = replay
        .complete(&request("two"), &|d| deltas.push(d))
        .await
        .unwrap();
    let one = replay.complete(&request("one"), &|_| {}).await.unwrap();

    assert_eq!(n_files, 2);
    assert_eq!(one.content.as_deref(), Some("first answer"));
    assert_eq!(two.tool_calls[0].name, "run");
    assert_eq!(
        deltas.all(),
        [ChatDelta::ToolCallStarted {
            index: 0,
            name: "run".into()
        }]
    );
}

#[tokio::test]
async fn a_request_without_recording_names_its_hash_and_summary() {
    let dir = tempfile::tempdir().unwrap();
    let replay = ReplayModel::open(dir.path()).unwrap();
    let key = RequestKey::of(&request("restart nginx"));

    let err = replay
        .complete(&request("restart nginx"), &|_| {})
        .await
        .unwrap_err();

    let ModelError::Script(message) = err else {
        panic!("expected a script error, got {err:?}")
    };
    assert!(
        message.starts_with(&format!("no recording for request {}", key.hash())),
        "{message}"
    );
    assert!(
        message.contains("last user message: \"restart nginx\""),
        "{message}"
    );
    assert!(message.contains("tools: [run]"), "{message}");
}

#[test]
fn recording_is_refused_in_ci() {
    let dir = tempfile::tempdir().unwrap();
    let script = ScriptedModel::new(Vec::new());

    let err = RecordingModel::new(script, dir.path(), CiEnvironment::from_value(Some("true")))
        .unwrap_err();

    assert_eq!(err, RecordError::RefusedInCi);
}

#[test]
fn recording_from_a_loopback_endpoint_is_allowed_in_ci_and_from_any_other_follows_ci() {
    for local in [
        "http://127.0.0.1:8080/v1",
        "http://127.3.4.5/v1",
        "http://localhost:11434/v1",
        "http://[::1]:9000/v1",
    ] {
        let url = reqwest::Url::parse(local).unwrap();
        assert_eq!(
            CiEnvironment::for_endpoint(&url),
            CiEnvironment::Absent,
            "{local}"
        );
    }
    let remote = reqwest::Url::parse("https://api.openai.com/v1").unwrap();
    assert_eq!(
        CiEnvironment::for_endpoint(&remote),
        CiEnvironment::from_env(),
        "a remote endpoint follows the CI variable"
    );
}

#[test]
fn replay_from_a_missing_directory_is_refused_at_once() {
    let err = ReplayModel::open("/nonexistent/recordings").unwrap_err();
    assert_eq!(
        err.to_string(),
        "recording directory /nonexistent/recordings cannot be used: not a directory (record a run first)"
    );
}

#[tokio::test]
async fn a_damaged_recording_is_a_decode_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let key = RequestKey::of(&request("x"));
    let file = dir.path().join(format!("{}.json", key.hash()));
    std::fs::write(&file, "{\"format\": 1").unwrap();
    let replay = ReplayModel::open(dir.path()).unwrap();

    let err = replay.complete(&request("x"), &|_| {}).await.unwrap_err();

    let ModelError::Decode(message) = err else {
        panic!("expected a decode error, got {err:?}")
    };
    assert!(
        message.starts_with(&format!("recording {} is not valid", file.display())),
        "{message}"
    );
}

#[tokio::test]
async fn failed_calls_are_not_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let script = ScriptedModel::new(vec![ScriptedReply::fault(nomos_llm::ScriptedFault::Length)]);
    let recorder = RecordingModel::new(script, dir.path(), CiEnvironment::Absent).unwrap();

    let err = recorder.complete(&request("x"), &|_| {}).await.unwrap_err();

    assert_eq!(err, ModelError::Length);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
