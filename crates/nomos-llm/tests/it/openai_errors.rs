//! Every way a model call fails says what happened (TURN-2), and the retryable ones are retried
//! within the policy's bounds (TURN-3 for empty replies).

use std::time::{Duration, SystemTime};

use nomos_core::ports::chat::{ChatModel, ModelError};
use nomos_llm::{OpenAiConfig, OpenAiModel, RetryPolicy, Transport};
use serde_json::json;
use tokio::net::TcpListener;
use wiremock::{MockServer, ResponseTemplate};

use crate::support::{
    builder, chunk, completion, json_reply, model, model_attempts, request, serve, serve_first,
    sse, text_completion,
};

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

// rule: TURN-2
#[tokio::test]
async fn an_http_error_carries_the_status_and_the_providers_message_for_turn_2() {
    let server = MockServer::start().await;
    let body = json!({"error": {"message": "This model's maximum context length is 8192 tokens", "type": "invalid_request_error", "code": "context_length_exceeded"}});
    serve(&server, ResponseTemplate::new(400).set_body_json(body)).await;

    let err = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Status {
            status: 400,
            message: "This model's maximum context length is 8192 tokens".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "model endpoint returned HTTP 400: This model's maximum context length is 8192 tokens"
    );
    // A client error is not retried.
    assert_eq!(requests(&server).await, 1);
}

// rule: TURN-2
#[tokio::test]
async fn an_error_body_that_is_not_json_is_quoted_for_turn_2() {
    let server = MockServer::start().await;
    serve(
        &server,
        ResponseTemplate::new(502).set_body_string("upstream connect error"),
    )
    .await;

    let err = model_attempts(&server, Transport::Streaming, 1)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Status {
            status: 502,
            message: "upstream connect error".into()
        }
    );
}

// rule: TURN-2
#[tokio::test]
async fn an_error_without_a_body_names_the_status_for_turn_2() {
    let server = MockServer::start().await;
    serve(&server, ResponseTemplate::new(401)).await;

    let err = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Status {
            status: 401,
            message: "Unauthorized".into()
        }
    );
}

#[tokio::test]
async fn a_server_error_is_retried_and_the_next_answer_is_used() {
    let server = MockServer::start().await;
    serve_first(
        &server,
        1,
        ResponseTemplate::new(503).set_body_string("overloaded"),
    )
    .await;
    serve(&server, json_reply(text_completion("recovered"))).await;

    let response = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap();

    assert_eq!(response.content.as_deref(), Some("recovered"));
    assert_eq!(requests(&server).await, 2);
}

// rule: TURN-2
#[tokio::test]
async fn server_errors_stop_after_max_attempts_with_the_last_cause_for_turn_2() {
    let server = MockServer::start().await;
    serve(
        &server,
        ResponseTemplate::new(500).set_body_json(json!({"error": {"message": "boom"}})),
    )
    .await;

    let err = model(&server, Transport::Streaming)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Status {
            status: 500,
            message: "boom".into()
        }
    );
    assert_eq!(requests(&server).await, 3);
}

// rule: TURN-2
#[tokio::test]
async fn rate_limiting_reports_retry_after_seconds_for_turn_2() {
    let server = MockServer::start().await;
    serve(
        &server,
        ResponseTemplate::new(429)
            .insert_header("retry-after", "7")
            .set_body_json(json!({"error": {"message": "Rate limit reached for requests"}})),
    )
    .await;

    let err = model_attempts(&server, Transport::Buffered, 1)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::RateLimited {
            retry_after_ms: Some(7000),
            message: "Rate limit reached for requests".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "model endpoint is rate limiting (HTTP 429), retry after 7000 ms: Rate limit reached for requests"
    );
}

// rule: TURN-2
#[tokio::test]
async fn rate_limiting_reads_retry_after_as_an_http_date_for_turn_2() {
    let server = MockServer::start().await;
    let when = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
    serve(
        &server,
        ResponseTemplate::new(429).insert_header("retry-after", when.as_str()),
    )
    .await;

    let err = model_attempts(&server, Transport::Buffered, 1)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    match err {
        ModelError::RateLimited {
            retry_after_ms: Some(ms),
            message,
        } => {
            assert!((100_000..=121_000).contains(&ms), "{ms}");
            assert_eq!(message, "Too Many Requests");
        }
        other => panic!("expected rate limiting with a delay, got {other:?}"),
    }
}

#[tokio::test]
async fn a_short_retry_after_is_waited_out_and_the_call_succeeds() {
    let server = MockServer::start().await;
    serve_first(
        &server,
        1,
        ResponseTemplate::new(429).insert_header("retry-after", "0"),
    )
    .await;
    serve(&server, json_reply(text_completion("after the wait"))).await;

    let response = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap();

    assert_eq!(response.content.as_deref(), Some("after the wait"));
    assert_eq!(requests(&server).await, 2);
}

#[tokio::test]
async fn a_retry_after_beyond_max_delay_is_returned_at_once() {
    let server = MockServer::start().await;
    serve(
        &server,
        ResponseTemplate::new(429).insert_header("retry-after", "3600"),
    )
    .await;

    let err = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert!(matches!(
        err,
        ModelError::RateLimited {
            retry_after_ms: Some(3_600_000),
            ..
        }
    ));
    assert_eq!(requests(&server).await, 1);
}

#[tokio::test]
async fn openai_retry_after_ms_header_is_read() {
    let server = MockServer::start().await;
    serve(
        &server,
        ResponseTemplate::new(429).insert_header("retry-after-ms", "250"),
    )
    .await;

    let err = model_attempts(&server, Transport::Buffered, 1)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert!(
        matches!(
            err,
            ModelError::RateLimited {
                retry_after_ms: Some(250),
                ..
            }
        ),
        "{err:?}"
    );
}

// rule: TURN-2
#[tokio::test]
async fn a_slow_endpoint_times_out_for_turn_2() {
    for transport in [Transport::Buffered, Transport::Streaming] {
        let server = MockServer::start().await;
        serve(
            &server,
            json_reply(text_completion("too late")).set_delay(Duration::from_secs(5)),
        )
        .await;
        let config = builder(&server.uri(), transport)
            .timeout(Duration::from_millis(200))
            .retry(RetryPolicy::no_retry())
            .build()
            .unwrap();

        let err = OpenAiModel::new(config)
            .unwrap()
            .complete(&request("x"), &|_| {})
            .await
            .unwrap_err();

        assert_eq!(err, ModelError::Timeout { after_ms: 200 }, "{transport:?}");
        assert_eq!(err.to_string(), "model request timed out after 200 ms");
    }
}

// rule: TURN-2
#[tokio::test]
async fn a_closed_port_is_a_connection_error_not_an_empty_reply_for_turn_2() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let config = OpenAiConfig::builder(format!("http://{address}/v1"), "m")
        .retry(RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
        })
        .build()
        .unwrap();

    let err = OpenAiModel::new(config)
        .unwrap()
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    match &err {
        ModelError::Connect(message) => {
            assert!(
                message.to_lowercase().contains("connection refused"),
                "{message}"
            )
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
    assert!(err.is_retryable());
}

// rule: TURN-2
#[tokio::test]
async fn finish_reason_length_is_reported_and_not_retried_for_turn_2() {
    let server = MockServer::start().await;
    serve(
        &server,
        json_reply(completion(
            json!({"role": "assistant", "content": "The disks are"}),
            "length",
        )),
    )
    .await;

    let err = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(err, ModelError::Length);
    assert_eq!(
        err.to_string(),
        "model stopped at its token limit (finish_reason=length)"
    );
    assert_eq!(requests(&server).await, 1);
}

// rule: TURN-2
#[tokio::test]
async fn a_content_filter_stop_is_a_refusal_naming_the_filter_for_turn_2() {
    let server = MockServer::start().await;
    serve(
        &server,
        json_reply(completion(
            json!({"role": "assistant", "content": ""}),
            "content_filter",
        )),
    )
    .await;

    let err = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Refusal(
            "the provider's content filter stopped the reply (finish_reason=content_filter)".into()
        )
    );
}

// rule: TURN-2
#[tokio::test]
async fn refusal_text_is_carried_to_the_operator_for_turn_2() {
    let server = MockServer::start().await;
    let message = json!({"role": "assistant", "content": null, "refusal": "I can't assist with that request."});
    serve(&server, json_reply(completion(message, "stop"))).await;

    let err = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err.to_string(),
        "model refused: I can't assist with that request."
    );
}

// rule: TURN-3
#[tokio::test]
async fn an_empty_reply_is_retried_and_the_next_answer_is_used_for_turn_3() {
    let server = MockServer::start().await;
    serve_first(
        &server,
        1,
        sse(&[
            chunk(json!({"role": "assistant", "content": ""})),
            crate::support::finish_chunk("stop"),
        ]),
    )
    .await;
    serve(
        &server,
        sse(&[
            chunk(json!({"content": "second try"})),
            crate::support::finish_chunk("stop"),
        ]),
    )
    .await;

    let response = model(&server, Transport::Streaming)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap();

    assert_eq!(response.content.as_deref(), Some("second try"));
    assert_eq!(requests(&server).await, 2);
}

// rule: TURN-3
// rule: TURN-2
#[tokio::test]
async fn empty_replies_stop_after_max_attempts_with_their_finish_reason_for_turn_3() {
    let server = MockServer::start().await;
    serve(
        &server,
        json_reply(completion(
            json!({"role": "assistant", "content": "  "}),
            "stop",
        )),
    )
    .await;

    let err = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Empty {
            finish_reason: "stop".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "model returned an empty reply (finish_reason=stop)"
    );
    assert_eq!(requests(&server).await, 3);
}

#[tokio::test]
async fn a_reply_that_is_not_a_chat_completion_is_a_decode_error() {
    let server = MockServer::start().await;
    serve(
        &server,
        ResponseTemplate::new(200).set_body_string("<html>captive portal</html>"),
    )
    .await;

    let err = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    match &err {
        ModelError::Decode(message) => {
            assert!(message.contains("captive portal"), "{message}");
            assert!(
                message.starts_with("the reply is not a chat completion"),
                "{message}"
            );
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    assert_eq!(requests(&server).await, 1);
}

#[tokio::test]
async fn a_garbled_stream_chunk_is_a_decode_error() {
    let server = MockServer::start().await;
    serve(
        &server,
        crate::support::sse_raw("data: {\"choices\": [\n\n"),
    )
    .await;

    let err = model(&server, Transport::Streaming)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    match &err {
        ModelError::Decode(message) => {
            assert!(
                message.starts_with("stream chunk 1 is not a chat-completion chunk"),
                "{message}"
            )
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

// rule: TURN-2
#[tokio::test]
async fn an_error_object_in_a_200_reply_is_reported_with_its_code_for_turn_2() {
    let server = MockServer::start().await;
    serve(
        &server,
        json_reply(json!({"error": {"message": "No endpoints found", "code": 404}})),
    )
    .await;

    let err = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Status {
            status: 404,
            message: "No endpoints found".into()
        }
    );
}
