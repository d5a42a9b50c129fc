//! The OpenAI-compatible model reading server-sent events: deltas, tool calls by index, usage.

use std::time::Duration;

use nomos_core::ports::chat::{ChatDelta, ChatModel, FinishReason, ModelError, ToolCall, Usage};
use nomos_llm::{OpenAiModel, Transport};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use wiremock::MockServer;

use crate::support::{
    Deltas, builder, chunk, finish_chunk, json_reply, model, model_attempts, quick_retry, request,
    sent_bodies, serve, sse, sse_raw, text_completion, usage_chunk,
};

#[tokio::test]
async fn streamed_text_arrives_as_deltas_and_is_assembled() {
    let server = MockServer::start().await;
    serve(
        &server,
        sse(&[
            chunk(json!({"role": "assistant", "content": ""})),
            chunk(json!({"content": "Disk usage "})),
            chunk(json!({"content": "is at 41%."})),
            finish_chunk("stop"),
            usage_chunk(None),
        ]),
    )
    .await;
    let deltas = Deltas::default();

    let response = model(&server, Transport::Streaming)
        .complete(&request("disk?"), &|d| deltas.push(d))
        .await
        .unwrap();

    assert_eq!(deltas.texts(), ["Disk usage ", "is at 41%."]);
    assert_eq!(response.content.as_deref(), Some("Disk usage is at 41%."));
    assert_eq!(response.finish_reason, FinishReason::Stop);
    assert_eq!(
        response.usage,
        Usage {
            prompt_tokens: 40,
            completion_tokens: 7,
            cost_usd: None
        }
    );
}

#[tokio::test]
async fn streaming_request_asks_for_usage_and_event_stream() {
    let server = MockServer::start().await;
    serve(
        &server,
        sse(&[chunk(json!({"content": "hi"})), finish_chunk("stop")]),
    )
    .await;

    model(&server, Transport::Streaming)
        .complete(&request("hi"), &|_| {})
        .await
        .unwrap();

    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies[0]["stream"], true);
    assert_eq!(bodies[0]["stream_options"], json!({"include_usage": true}));
    let received = server.received_requests().await.unwrap();
    assert_eq!(
        received[0].headers.get("accept").unwrap(),
        "text/event-stream"
    );
    assert_eq!(
        received[0].headers.get("authorization").unwrap(),
        "Bearer sk-test-key"
    );
}

#[tokio::test]
async fn openrouter_cost_arrives_in_the_usage_chunk() {
    let server = MockServer::start().await;
    serve(
        &server,
        sse(&[
            chunk(json!({"content": "ok"})),
            finish_chunk("stop"),
            usage_chunk(Some(0.0031)),
        ]),
    )
    .await;

    let response = model(&server, Transport::Streaming)
        .complete(&request("hi"), &|_| {})
        .await
        .unwrap();

    assert_eq!(response.usage.cost_usd, Some(0.0031));
    assert_eq!(response.usage.prompt_tokens, 40);
}

#[tokio::test]
async fn tool_call_arguments_split_across_chunks_are_joined() {
    let server = MockServer::start().await;
    serve(
        &server,
        sse(&[
            chunk(json!({"role": "assistant", "content": null, "tool_calls": [
                {"index": 0, "id": "call_1", "type": "function", "function": {"name": "run", "arguments": ""}}
            ]})),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"host\": \"lo"}}]})),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "cal\", \"command\""}}]})),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": ": \"uptime\"}"}}]})),
            finish_chunk("tool_calls"),
            usage_chunk(None),
        ]),
    )
    .await;
    let deltas = Deltas::default();

    let response = model(&server, Transport::Streaming)
        .complete(&request("uptime"), &|d| deltas.push(d))
        .await
        .unwrap();

    assert_eq!(
        response.tool_calls,
        [ToolCall {
            id: "call_1".into(),
            name: "run".into(),
            arguments: r#"{"host": "local", "command": "uptime"}"#.into(),
        }]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        deltas.all(),
        [ChatDelta::ToolCallStarted {
            index: 0,
            name: "run".into()
        }]
    );
}

#[tokio::test]
async fn parallel_tool_calls_are_assembled_by_index() {
    let server = MockServer::start().await;
    serve(
        &server,
        sse(&[
            chunk(json!({"content": "Running both."})),
            chunk(json!({"tool_calls": [
                {"index": 0, "id": "call_a", "type": "function", "function": {"name": "run", "arguments": "{\"command\":"}}
            ]})),
            chunk(json!({"tool_calls": [
                {"index": 1, "id": "call_b", "type": "function", "function": {"name": "get_entity", "arguments": "{\"name\""}}
            ]})),
            chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": ":\"web-1\"}"}}]})),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"df -h\"}"}}]})),
            finish_chunk("tool_calls"),
        ]),
    )
    .await;
    let deltas = Deltas::default();

    let response = model(&server, Transport::Streaming)
        .complete(&request("go"), &|d| deltas.push(d))
        .await
        .unwrap();

    let calls: Vec<(&str, &str, &str)> = response
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a", "run", r#"{"command":"df -h"}"#),
            ("call_b", "get_entity", r#"{"name":"web-1"}"#)
        ]
    );
    assert_eq!(response.content.as_deref(), Some("Running both."));
    assert_eq!(
        deltas.all(),
        [
            ChatDelta::Text {
                text: "Running both.".into()
            },
            ChatDelta::ToolCallStarted {
                index: 0,
                name: "run".into()
            },
            ChatDelta::ToolCallStarted {
                index: 1,
                name: "get_entity".into()
            },
        ]
    );
}

#[tokio::test]
async fn comments_and_keepalives_in_the_stream_are_ignored() {
    let server = MockServer::start().await;
    let body = format!(
        ": OPENROUTER PROCESSING\n\n: keep-alive\n\ndata: {}\n\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk(json!({"content": "fine"})),
        finish_chunk("stop")
    );
    serve(&server, sse_raw(&body)).await;

    let response = model(&server, Transport::Streaming)
        .complete(&request("hi"), &|_| {})
        .await
        .unwrap();

    assert_eq!(response.content.as_deref(), Some("fine"));
}

#[tokio::test]
async fn a_stream_with_a_finish_reason_but_no_done_marker_is_complete() {
    let server = MockServer::start().await;
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        chunk(json!({"content": "fine"})),
        finish_chunk("stop")
    );
    serve(&server, sse_raw(&body)).await;

    let response = model(&server, Transport::Streaming)
        .complete(&request("hi"), &|_| {})
        .await
        .unwrap();

    assert_eq!(response.content.as_deref(), Some("fine"));
}

// rule: TURN-2
#[tokio::test]
async fn a_stream_that_stops_midway_is_reported_as_cut_for_turn_2() {
    let server = MockServer::start().await;
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        chunk(json!({"content": "Checking the"})),
        chunk(json!({"content": " disks"}))
    );
    serve(&server, sse_raw(&body)).await;
    let deltas = Deltas::default();

    let err = model(&server, Transport::Streaming)
        .complete(&request("disk?"), &|d| deltas.push(d))
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::StreamCut(
            "the stream ended after 2 chunks with no finish_reason and no [DONE]".into()
        )
    );
    // Text already reached the sink, so the call is not tried again behind its back.
    assert_eq!(deltas.texts(), ["Checking the", " disks"]);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

// rule: TURN-2
#[tokio::test]
async fn a_connection_dropped_mid_stream_is_reported_as_cut_for_turn_2() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        read_request(&mut socket).await;
        let first = format!("data: {}\n\n", chunk(json!({"content": "Half a"})));
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        let piece = format!("{:x}\r\n{first}\r\n", first.len());
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(piece.as_bytes()).await.unwrap();
        socket.flush().await.unwrap();
        // Close without the terminating zero-length chunk.
    });
    let config = builder(&format!("http://{address}"), Transport::Streaming)
        .build()
        .unwrap();

    let err = OpenAiModel::new(config)
        .unwrap()
        .complete(&request("hi"), &|_| {})
        .await
        .unwrap_err();

    server.await.unwrap();
    match err {
        ModelError::StreamCut(message) => assert!(message.contains("after 1 chunks"), "{message}"),
        other => panic!("expected a cut stream, got {other:?}"),
    }
}

async fn read_request(socket: &mut tokio::net::TcpStream) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = socket.read(&mut buf).await.unwrap();
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        if let Some(end) = text.find("\r\n\r\n") {
            let length: usize = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if seen.len() >= end + 4 + length {
                return;
            }
        }
        if n == 0 {
            return;
        }
    }
}

// rule: TURN-2
#[tokio::test]
async fn an_error_chunk_mid_stream_carries_the_providers_status_for_turn_2() {
    let server = MockServer::start().await;
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        chunk(json!({"content": ""})),
        json!({"error": {"code": 502, "message": "upstream provider went away"}})
    );
    serve(&server, sse_raw(&body)).await;

    let err = model_attempts(&server, Transport::Streaming, 1)
        .complete(&request("hi"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Status {
            status: 502,
            message: "upstream provider went away".into()
        }
    );
}

// rule: TURN-2
#[tokio::test]
async fn streamed_refusal_text_is_a_refusal_for_turn_2() {
    let server = MockServer::start().await;
    serve(
        &server,
        sse(&[
            chunk(json!({"refusal": "I can't help "})),
            chunk(json!({"refusal": "with that."})),
            finish_chunk("stop"),
        ]),
    )
    .await;

    let err = model(&server, Transport::Streaming)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(err, ModelError::Refusal("I can't help with that.".into()));
}

#[tokio::test]
async fn a_server_that_answers_json_to_a_streaming_request_is_still_understood() {
    let server = MockServer::start().await;
    serve(&server, json_reply(text_completion("not streamed"))).await;
    let deltas = Deltas::default();

    let response = model(&server, Transport::Streaming)
        .complete(&request("hi"), &|d| deltas.push(d))
        .await
        .unwrap();

    assert_eq!(response.content.as_deref(), Some("not streamed"));
    assert_eq!(deltas.texts(), ["not streamed"]);
}

#[tokio::test]
async fn a_stream_cut_before_any_text_is_retried() {
    let server = MockServer::start().await;
    let cut = format!(
        "data: {}\n\n",
        chunk(json!({"role": "assistant", "content": ""}))
    );
    crate::support::serve_first(&server, 1, sse_raw(&cut)).await;
    serve(
        &server,
        sse(&[chunk(json!({"content": "whole"})), finish_chunk("stop")]),
    )
    .await;
    let deltas = Deltas::default();

    let response = model(&server, Transport::Streaming)
        .complete(&request("hi"), &|d| deltas.push(d))
        .await
        .unwrap();

    assert_eq!(response.content.as_deref(), Some("whole"));
    assert_eq!(deltas.texts(), ["whole"]);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

// rule: TURN-12
#[tokio::test]
async fn a_stream_that_keeps_trickling_ends_at_the_reply_deadline_and_is_not_retried() {
    let server =
        nomos_test_support::trickle::TricklingModel::start(Duration::from_millis(50)).await;
    let config = nomos_llm::OpenAiConfig::builder(server.base_url(), "test-model")
        .transport(Transport::Streaming)
        .timeout(Duration::from_secs(2))
        .reply_deadline(Duration::from_millis(600))
        .retry(quick_retry())
        .build()
        .unwrap();
    let deltas = Deltas::default();
    let started = std::time::Instant::now();
    let err = OpenAiModel::new(config)
        .unwrap()
        .complete(&request("hi"), &|d| deltas.push(d))
        .await
        .unwrap_err();
    assert_eq!(err, ModelError::Deadline { after_ms: 600 });
    assert!(err.to_string().contains("deadline of 600 ms"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(
        deltas.texts().len() > 3,
        "the stream was trickling: {:?}",
        deltas.texts()
    );
    assert_eq!(server.n_requests(), 1, "a deadline is not retried");
}

#[test]
fn the_reply_deadline_defaults_to_ten_minutes() {
    let config = nomos_llm::OpenAiConfig::builder("http://127.0.0.1:1/v1", "m")
        .build()
        .unwrap();
    assert_eq!(config.reply_deadline(), Duration::from_secs(600));
}
