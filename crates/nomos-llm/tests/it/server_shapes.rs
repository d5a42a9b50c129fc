//! TURN-10 against the chunk shapes of local servers: Ollama's OpenAI-compatible endpoint
//! sends a whole call in one chunk with no id and no index, llama.cpp's server style opens a
//! call with an empty id, some servers number every reply's calls from `call_0`, and some send
//! the arguments as a JSON object. Each reply's ids come out unique against the conversation.

use nomos_core::ports::chat::{ChatMessage, ChatModel, ChatRequest, ChatResponse};
use nomos_llm::Transport;
use serde_json::{Value, json};
use wiremock::MockServer;

use crate::support::{
    chunk, completion, finish_chunk, json_reply, model, request, sent_bodies, serve, serve_first,
    sse,
};

/// Ollama (`/v1/chat/completions`, stream): one chunk carries the whole call, without `id`
/// or `index`, then a chunk with `finish_reason: "stop"`.
fn ollama_stream(command: &str) -> Vec<Value> {
    let arguments = json!({"host": "local", "command": command}).to_string();
    vec![
        json!({"id": "chatcmpl-431", "object": "chat.completion.chunk", "created": 1733000000,
               "model": "llama3.1", "system_fingerprint": "fp_ollama",
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": "",
                 "tool_calls": [{"type": "function",
                   "function": {"name": "run", "arguments": arguments}}]},
                 "finish_reason": null}]}),
        json!({"id": "chatcmpl-431", "object": "chat.completion.chunk", "created": 1733000000,
               "model": "llama3.1", "system_fingerprint": "fp_ollama",
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                 "finish_reason": "stop"}]}),
    ]
}

/// llama.cpp's server style: the call opens with `index` and an empty `id`, the arguments
/// follow in pieces.
fn llama_cpp_stream(command: &str) -> Vec<Value> {
    let arguments = json!({"host": "local", "command": command}).to_string();
    let (head, tail) = arguments.split_at(arguments.len() / 2);
    vec![
        chunk(json!({"role": "assistant", "content": null, "tool_calls": [
            {"index": 0, "id": "", "type": "function", "function": {"name": "run", "arguments": ""}}
        ]})),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": head}}]})),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": tail}}]})),
        finish_chunk("tool_calls"),
    ]
}

/// The conversation after `first`'s calls ran, as the runtime sends it back.
fn follow_up(first: &ChatResponse) -> ChatRequest {
    let mut next = request("check the disk and the load");
    next.messages.push(ChatMessage::Assistant {
        content: None,
        tool_calls: first.tool_calls.clone().into(),
    });
    for call in &first.tool_calls {
        next.messages.push(ChatMessage::Tool {
            call_id: call.id.as_str().into(),
            content: "ok".into(),
        });
    }
    next
}

/// Plays `first` then `second` and returns both replies; checks the history sent back the
/// first reply's ids as the runtime saw them.
async fn two_replies(
    transport: Transport,
    first: wiremock::ResponseTemplate,
    second: wiremock::ResponseTemplate,
) -> (ChatResponse, ChatResponse) {
    let server = MockServer::start().await;
    serve_first(&server, 1, first).await;
    serve(&server, second).await;
    let model = model(&server, transport);
    let one = model
        .complete(&request("check the disk and the load"), &|_| {})
        .await
        .unwrap();
    let two = model.complete(&follow_up(&one), &|_| {}).await.unwrap();
    let bodies = sent_bodies(&server).await;
    let sent_back = &bodies[1]["messages"][2]["tool_calls"][0]["id"];
    assert_eq!(sent_back, &json!(one.tool_calls[0].id));
    assert_eq!(bodies[1]["messages"][3]["tool_call_id"], *sent_back);
    (one, two)
}

fn ids(response: &ChatResponse) -> Vec<String> {
    response.tool_calls.iter().map(|c| c.id.clone()).collect()
}

fn assert_distinct(one: &ChatResponse, two: &ChatResponse) {
    let mut all = ids(one);
    all.extend(ids(two));
    assert!(all.iter().all(|id| !id.trim().is_empty()), "{all:?}");
    let distinct: std::collections::HashSet<&String> = all.iter().collect();
    assert_eq!(distinct.len(), all.len(), "ids repeat: {all:?}");
}

// rule: TURN-10
#[tokio::test]
async fn ollama_calls_without_ids_get_distinct_ids_across_two_replies() {
    let (one, two) = two_replies(
        Transport::Streaming,
        sse(&ollama_stream("df -h")),
        sse(&ollama_stream("uptime")),
    )
    .await;
    assert_distinct(&one, &two);
    assert_eq!(one.tool_calls[0].name, "run");
    assert!(two.tool_calls[0].arguments.contains("uptime"));
}

// rule: TURN-10
#[tokio::test]
async fn llama_cpp_calls_with_empty_ids_get_distinct_ids_across_two_replies() {
    let (one, two) = two_replies(
        Transport::Streaming,
        sse(&llama_cpp_stream("df -h")),
        sse(&llama_cpp_stream("uptime")),
    )
    .await;
    assert_distinct(&one, &two);
    let arguments: Value = serde_json::from_str(&two.tool_calls[0].arguments).unwrap();
    assert_eq!(arguments, json!({"host": "local", "command": "uptime"}));
}

// rule: TURN-10
#[tokio::test]
async fn ids_a_server_repeats_within_and_across_replies_are_replaced() {
    let reply = |command: &str| {
        let call = json!({"id": "call_0", "type": "function",
            "function": {"name": "run", "arguments": {"host": "local", "command": command}}});
        json_reply(completion(
            json!({"role": "assistant", "content": null, "tool_calls": [call.clone(), call]}),
            "tool_calls",
        ))
    };
    let (one, two) = two_replies(Transport::Buffered, reply("df -h"), reply("uptime")).await;
    assert_eq!(one.tool_calls[0].id, "call_0", "a fresh id is kept as sent");
    assert_distinct(&one, &two);
    // Arguments sent as a JSON object arrive as JSON text.
    let arguments: Value = serde_json::from_str(&two.tool_calls[1].arguments).unwrap();
    assert_eq!(arguments, json!({"host": "local", "command": "uptime"}));
}
