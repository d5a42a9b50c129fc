//! The wire log keeps the exact bytes a server sent, streamed or whole, so a test can serve
//! them again (EVAL-7).

use nomos_core::ports::chat::ChatModel;
use nomos_llm::{OpenAiModel, Transport};
use wiremock::MockServer;

use crate::support::{builder, request, serve, sse_raw};

/// The files of `dir` whose names end in `suffix`.
fn files(dir: &std::path::Path, suffix: &str) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    found.sort();
    found
}

// rule: EVAL-7
#[tokio::test]
async fn a_streamed_reply_is_kept_byte_for_byte_with_the_request_sent() {
    let server = MockServer::start().await;
    // Irregular spacing and a comment line: kept as sent, not re-encoded.
    let body = ": keep-alive\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"up 3 days\"},\"finish_reason\":null}]}\n\ndata:{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    serve(&server, sse_raw(body)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = builder(&server.uri(), Transport::Streaming)
        .build()
        .unwrap()
        .with_wire_log(dir.path().join("wire"));
    assert_eq!(
        config.wire_log_dir(),
        Some(dir.path().join("wire").as_path())
    );
    let model = OpenAiModel::new(config).unwrap();
    let reply = model.complete(&request("uptime?"), &|_| {}).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("up 3 days"));
    let wire = dir.path().join("wire");
    let responses = files(&wire, ".response");
    assert_eq!(responses.len(), 1);
    assert_eq!(std::fs::read(&responses[0]).unwrap(), body.as_bytes());
    let sent = &server.received_requests().await.unwrap()[0].body;
    assert_eq!(
        &std::fs::read(&files(&wire, ".request.json")[0]).unwrap(),
        sent
    );
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&files(&wire, ".meta.json")[0]).unwrap()).unwrap();
    assert_eq!(meta["status"], 200);
    assert_eq!(meta["content_type"], "text/event-stream");
    assert_eq!(meta["model"], "test-model");
}

// rule: EVAL-7
#[tokio::test]
async fn without_a_wire_log_nothing_is_written() {
    let server = MockServer::start().await;
    serve(
        &server,
        sse_raw("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"),
    )
    .await;
    let config = builder(&server.uri(), Transport::Streaming)
        .build()
        .unwrap();
    assert_eq!(config.wire_log_dir(), None);
    let reply = OpenAiModel::new(config)
        .unwrap()
        .complete(&request("hi"), &|_| {})
        .await
        .unwrap();
    assert_eq!(reply.content.as_deref(), Some("hi"));
}
