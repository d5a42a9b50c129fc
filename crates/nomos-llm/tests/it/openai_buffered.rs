//! The OpenAI-compatible model with one JSON reply per request: what it sends, what it returns.

use nomos_core::ports::chat::{ChatDelta, ChatMessage, ChatModel, FinishReason, ToolCall, Usage};
use nomos_llm::{OpenAiConfig, OpenAiModel, Transport};
use serde_json::json;
use wiremock::MockServer;

use crate::support::{
    Deltas, builder, completion, json_reply, model, request, run_tool, sent_bodies, serve,
    text_completion,
};

#[tokio::test]
async fn text_reply_comes_back_with_usage_and_reaches_the_sink() {
    let server = MockServer::start().await;
    serve(&server, json_reply(text_completion("All hosts are up."))).await;
    let deltas = Deltas::default();

    let response = model(&server, Transport::Buffered)
        .complete(&request("status?"), &|d| deltas.push(d))
        .await
        .unwrap();

    assert_eq!(response.content.as_deref(), Some("All hosts are up."));
    assert_eq!(response.finish_reason, FinishReason::Stop);
    assert!(response.tool_calls.is_empty());
    assert_eq!(
        response.usage,
        Usage {
            prompt_tokens: 12,
            completion_tokens: 5,
            cost_usd: None
        }
    );
    assert_eq!(deltas.texts(), ["All hosts are up."]);
}

#[tokio::test]
async fn openrouter_cost_is_read_from_usage() {
    let server = MockServer::start().await;
    let mut body = text_completion("ok");
    body["usage"]["cost"] = json!(0.00042);
    serve(&server, json_reply(body)).await;

    let response = model(&server, Transport::Buffered)
        .complete(&request("hi"), &|_| {})
        .await
        .unwrap();

    assert_eq!(response.usage.cost_usd, Some(0.00042));
}

#[tokio::test]
async fn request_names_the_model_messages_tools_and_tool_results() {
    let server = MockServer::start().await;
    serve(&server, json_reply(text_completion("done"))).await;
    let mut conversation = request("check uptime on web-1");
    conversation.messages.push(ChatMessage::Assistant {
        content: Some("Checking.".into()),
        tool_calls: vec![ToolCall {
            id: "call_7".into(),
            name: "run".into(),
            arguments: r#"{"host":"web-1","command":"uptime"}"#.into(),
        }]
        .into(),
    });
    conversation.messages.push(ChatMessage::Tool {
        call_id: "call_7".into(),
        content: "up 12 days".into(),
    });

    model(&server, Transport::Buffered)
        .complete(&conversation, &|_| {})
        .await
        .unwrap();

    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies.len(), 1);
    let body = &bodies[0];
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["stream"], false);
    assert!(body.get("stream_options").is_none(), "{body}");
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are Nomos."},
            {"role": "user", "content": "check uptime on web-1"},
            {"role": "assistant", "content": "Checking.", "tool_calls": [{
                "id": "call_7", "type": "function",
                "function": {"name": "run", "arguments": "{\"host\":\"web-1\",\"command\":\"uptime\"}"}
            }]},
            {"role": "tool", "tool_call_id": "call_7", "content": "up 12 days"}
        ])
    );
    let tool = run_tool();
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "run", "description": tool.description, "parameters": tool.parameters
        }}])
    );
    // llama.cpp's Python server reads the tools only when `tool_choice` is sent.
    assert_eq!(body["tool_choice"], "auto");
}

// rule: EVAL-7
#[tokio::test]
async fn a_request_without_tools_names_no_tool_choice() {
    let server = MockServer::start().await;
    serve(&server, json_reply(text_completion("ok"))).await;
    let mut conversation = request("hi");
    conversation.tools = Vec::new().into();

    model(&server, Transport::Buffered)
        .complete(&conversation, &|_| {})
        .await
        .unwrap();

    let body = &sent_bodies(&server).await[0];
    assert!(body.get("tools").is_none(), "{body}");
    assert!(body.get("tool_choice").is_none(), "{body}");
}

#[tokio::test]
async fn bearer_key_extra_headers_and_limits_are_sent() {
    let server = MockServer::start().await;
    serve(&server, json_reply(text_completion("ok"))).await;
    let config = builder(&server.uri(), Transport::Buffered)
        .header("HTTP-Referer", "https://nomos.example")
        .unwrap()
        .header("X-Title", "Nomos")
        .unwrap()
        .max_tokens(512)
        .temperature(0.25)
        .build()
        .unwrap();

    OpenAiModel::new(config)
        .unwrap()
        .complete(&request("hi"), &|_| {})
        .await
        .unwrap();

    let received = server.received_requests().await.unwrap();
    let headers = &received[0].headers;
    assert_eq!(headers.get("authorization").unwrap(), "Bearer sk-test-key");
    assert_eq!(
        headers.get("http-referer").unwrap(),
        "https://nomos.example"
    );
    assert_eq!(headers.get("x-title").unwrap(), "Nomos");
    assert_eq!(headers.get("content-type").unwrap(), "application/json");
    let body: serde_json::Value = serde_json::from_slice(&received[0].body).unwrap();
    assert_eq!(body["max_tokens"], 512);
    assert_eq!(body["temperature"], 0.25);
}

#[tokio::test]
async fn no_authorization_header_is_sent_without_a_key() {
    let server = MockServer::start().await;
    serve(&server, json_reply(text_completion("ok"))).await;
    let config = OpenAiConfig::builder(format!("{}/v1", server.uri()), "llama3")
        .transport(Transport::Buffered)
        .build()
        .unwrap();

    OpenAiModel::new(config)
        .unwrap()
        .complete(&request("hi"), &|_| {})
        .await
        .unwrap();

    let received = server.received_requests().await.unwrap();
    assert!(received[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn one_tool_call_is_returned_with_its_id_name_and_arguments() {
    let server = MockServer::start().await;
    let message = json!({"role": "assistant", "content": null, "tool_calls": [{
        "id": "call_abc", "type": "function",
        "function": {"name": "run", "arguments": "{\"host\":\"local\",\"command\":\"uptime\"}"}
    }]});
    serve(&server, json_reply(completion(message, "tool_calls"))).await;
    let deltas = Deltas::default();

    let response = model(&server, Transport::Buffered)
        .complete(&request("uptime?"), &|d| deltas.push(d))
        .await
        .unwrap();

    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.content, None);
    assert_eq!(
        response.tool_calls,
        [ToolCall {
            id: "call_abc".into(),
            name: "run".into(),
            arguments: r#"{"host":"local","command":"uptime"}"#.into()
        }]
    );
    assert_eq!(
        deltas.all(),
        [ChatDelta::ToolCallStarted {
            index: 0,
            name: "run".into()
        }]
    );
}

#[tokio::test]
async fn several_tool_calls_keep_their_order() {
    let server = MockServer::start().await;
    let message = json!({"role": "assistant", "content": "Setting up.", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "set_goal", "arguments": "{\"goal\":\"audit\"}"}},
        {"id": "b", "type": "function", "function": {"name": "list_hosts", "arguments": ""}}
    ]});
    serve(&server, json_reply(completion(message, "tool_calls"))).await;

    let response = model(&server, Transport::Buffered)
        .complete(&request("audit"), &|_| {})
        .await
        .unwrap();

    let names: Vec<&str> = response
        .tool_calls
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["set_goal", "list_hosts"]);
    assert_eq!(response.content.as_deref(), Some("Setting up."));
    // A call without arguments gets the empty object.
    assert_eq!(response.tool_calls[1].arguments, "{}");
}

// rule: TURN-5
#[tokio::test]
async fn malformed_tool_arguments_are_passed_through_raw_for_turn_5() {
    let server = MockServer::start().await;
    let message = json!({"role": "assistant", "content": null, "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": "run", "arguments": "{\"host\": \"local\", \"command\": "}
    }]});
    serve(&server, json_reply(completion(message, "tool_calls"))).await;

    let response = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap();

    assert_eq!(
        response.tool_calls[0].arguments,
        r#"{"host": "local", "command": "#
    );
}

// rule: TURN-10
#[tokio::test]
async fn missing_tool_call_ids_are_filled_in() {
    let server = MockServer::start().await;
    let message = json!({"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "run", "arguments": {"host": "local", "command": "df -h"}}}
    ]});
    serve(&server, json_reply(completion(message, "tool_calls"))).await;

    let response = model(&server, Transport::Buffered)
        .complete(&request("x"), &|_| {})
        .await
        .unwrap();

    assert_eq!(response.tool_calls[0].id, "call_nomos_1");
    // An arguments object (some local servers send one) is turned into JSON text.
    let arguments: serde_json::Value =
        serde_json::from_str(&response.tool_calls[0].arguments).unwrap();
    assert_eq!(arguments, json!({"host": "local", "command": "df -h"}));
}

#[tokio::test]
async fn the_api_key_is_not_in_the_models_debug_output() {
    let server = MockServer::start().await;
    let model = model(&server, Transport::Buffered);

    let debug = format!("{model:?}");

    assert!(!debug.contains("sk-test-key"), "{debug}");
    assert!(debug.contains("ApiKey(redacted)"), "{debug}");
}
