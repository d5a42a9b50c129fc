//! The scripted stub model: plays replies in order, streams them, and fails loudly.

use nomos_core::ports::chat::{
    ChatDelta, ChatMessage, ChatModel, ChatRequest, FinishReason, ModelError, ToolCall, Usage,
};
use nomos_llm::{
    Expectation, ScriptError, ScriptedFault, ScriptedModel, ScriptedReply, ScriptedToolCall,
};
use serde_json::json;

use crate::support::{Deltas, request};

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("tests/fixtures")
    .join(name)
}

fn with_tool_result(mut request: ChatRequest, call_id: &str, result: &str) -> ChatRequest {
    request.messages.push(ChatMessage::Assistant {
        content: None,
        tool_calls: vec![ToolCall {
            id: call_id.into(),
            name: "run".into(),
            arguments: "{}".into(),
        }]
        .into(),
    });
    request.messages.push(ChatMessage::Tool {
        call_id: call_id.into(),
        content: result.into(),
    });
    request
}

#[tokio::test]
async fn a_yaml_script_plays_text_and_tool_calls_in_order() {
    let model = ScriptedModel::from_yaml_file(fixture("disk_check.yaml")).unwrap();
    let deltas = Deltas::default();

    let first = model
        .complete(&request("how full is the disk?"), &|d| deltas.push(d))
        .await
        .unwrap();

    assert_eq!(first.content.as_deref(), Some("Let me look."));
    assert_eq!(first.finish_reason, FinishReason::ToolCalls);
    assert_eq!(first.tool_calls.len(), 1);
    assert_eq!(first.tool_calls[0].name, "run");
    assert_eq!(first.tool_calls[0].id, "call_1_0");
    let arguments: serde_json::Value =
        serde_json::from_str(&first.tool_calls[0].arguments).unwrap();
    assert_eq!(arguments, json!({"host": "local", "command": "df -h"}));
    assert_eq!(
        first.usage,
        Usage {
            prompt_tokens: 120,
            completion_tokens: 9,
            cost_usd: Some(0.001)
        }
    );
    assert_eq!(
        deltas.all(),
        [
            ChatDelta::Text {
                text: "Let ".into()
            },
            ChatDelta::Text { text: "me ".into() },
            ChatDelta::Text {
                text: "look.".into()
            },
            ChatDelta::ToolCallStarted {
                index: 0,
                name: "run".into()
            },
        ]
    );
    assert_eq!(model.remaining(), 1);

    let second_request = with_tool_result(
        request("how full is the disk?"),
        "call_1_0",
        "Filesystem Size Used\n/dev/sda1 40G 16G",
    );
    let second = model.complete(&second_request, &|_| {}).await.unwrap();

    assert_eq!(
        second.content.as_deref(),
        Some("The root filesystem is 41% full.")
    );
    assert_eq!(second.finish_reason, FinishReason::Stop);
    assert_eq!(model.remaining(), 0);
    assert_eq!(model.played(), 2);
}

#[tokio::test]
async fn asking_for_more_replies_than_the_script_has_is_an_error() {
    let model = ScriptedModel::new(vec![ScriptedReply::text("only one")]);
    model.complete(&request("first"), &|_| {}).await.unwrap();

    let err = model
        .complete(&request("second"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Script(
            "no reply left: all 1 scripted replies were used, and another request came \
             (last user message: \"second\"; 2 messages; tools: [run])"
                .into()
        )
    );
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn a_conversation_that_does_not_match_the_expectation_fails_loudly() {
    let expect = Expectation {
        last_user_contains: Some("disk".into()),
        ..Expectation::default()
    };
    let model = ScriptedModel::new(vec![ScriptedReply::text("ok").expecting(expect)]);

    let err = model
        .complete(&request("restart nginx"), &|_| {})
        .await
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::Script(
            "reply 1 of 1: expected the last user message to contain \"disk\", got \"restart nginx\"".into()
        )
    );
    // The reply was not used up by the mismatch.
    assert_eq!(model.remaining(), 1);
}

#[tokio::test]
async fn tool_and_tool_result_expectations_are_checked() {
    let tools = Expectation {
        tools_include: vec!["complete_task".into()],
        ..Expectation::default()
    };
    let model = ScriptedModel::new(vec![ScriptedReply::text("ok").expecting(tools)]);
    let err = model.complete(&request("x"), &|_| {}).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "scripted model: reply 1 of 1: expected the tools on offer to include \"complete_task\", got [run]"
    );

    let result = Expectation {
        last_tool_result_contains: Some("active".into()),
        ..Expectation::default()
    };
    let model = ScriptedModel::new(vec![ScriptedReply::text("ok").expecting(result)]);
    let err = model.complete(&request("x"), &|_| {}).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "scripted model: reply 1 of 1: expected a tool result containing \"active\", but the conversation has none"
    );
    let answered = with_tool_result(request("x"), "c1", "nginx: active (running)");
    assert_eq!(
        model
            .complete(&answered, &|_| {})
            .await
            .unwrap()
            .content
            .as_deref(),
        Some("ok")
    );
}

#[tokio::test]
async fn scripted_faults_become_the_port_errors_they_stand_for() {
    let model = ScriptedModel::from_yaml_str(
        r#"
- error: empty
- error: {status: 500, message: "upstream overloaded"}
- error: {status: 429, retry_after_ms: 2000, message: slow down}
- error: {refusal: "I won't do that."}
- error: length
- error: timeout
- error: stream_cut
- error: connect
"#,
    )
    .unwrap();
    let mut errors = Vec::new();
    for _ in 0..8 {
        errors.push(model.complete(&request("x"), &|_| {}).await.unwrap_err());
    }

    assert_eq!(
        errors[0],
        ModelError::Empty {
            finish_reason: "stop".into()
        }
    );
    assert_eq!(
        errors[1],
        ModelError::Status {
            status: 500,
            message: "upstream overloaded".into()
        }
    );
    assert_eq!(
        errors[2],
        ModelError::RateLimited {
            retry_after_ms: Some(2000),
            message: "slow down".into()
        }
    );
    assert_eq!(errors[3], ModelError::Refusal("I won't do that.".into()));
    assert_eq!(errors[4], ModelError::Length);
    assert_eq!(errors[5], ModelError::Timeout { after_ms: 0 });
    assert!(matches!(errors[6], ModelError::StreamCut(_)));
    assert!(matches!(errors[7], ModelError::Connect(_)));
    assert_eq!(model.remaining(), 0);
}

// rule: TURN-5
#[tokio::test]
async fn a_string_argument_is_passed_raw_so_malformed_json_can_be_scripted() {
    let model = ScriptedModel::from_yaml_str(
        r#"
- tool_calls:
    - {name: run, arguments: '{"host": "local", "command": '}
"#,
    )
    .unwrap();

    let response = model.complete(&request("x"), &|_| {}).await.unwrap();

    assert_eq!(
        response.tool_calls[0].arguments,
        r#"{"host": "local", "command": "#
    );
}

#[tokio::test]
async fn clones_share_the_script_position() {
    let model = ScriptedModel::new(vec![
        ScriptedReply::text("one"),
        ScriptedReply::tool_calls(vec![ScriptedToolCall::new("list_hosts", json!({}))]),
    ]);
    let handed_to_runtime = model.clone();

    handed_to_runtime
        .complete(&request("x"), &|_| {})
        .await
        .unwrap();

    assert_eq!(model.remaining(), 1);
    let second = model.complete(&request("x"), &|_| {}).await.unwrap();
    assert_eq!(second.tool_calls[0].name, "list_hosts");
    assert_eq!(handed_to_runtime.remaining(), 0);
}

#[tokio::test]
async fn a_script_built_in_rust_can_simulate_a_fault_then_recover() {
    let model = ScriptedModel::new(vec![
        ScriptedReply::fault(ScriptedFault::Status {
            status: 503,
            message: "down".into(),
        }),
        ScriptedReply::text("back"),
    ]);

    let err = model.complete(&request("x"), &|_| {}).await.unwrap_err();
    assert!(err.is_retryable());
    let response = model.complete(&request("x"), &|_| {}).await.unwrap();
    assert_eq!(response.content.as_deref(), Some("back"));
}

fn yaml_error(yaml: &str) -> String {
    match ScriptedModel::from_yaml_str(yaml) {
        Err(ScriptError::Yaml { message, .. }) => message,
        other => panic!("expected a YAML error, got {other:?}"),
    }
}

#[test]
fn malformed_scripts_are_refused_with_what_and_where() {
    let cases = [
        ("- text: hi\n  tool_call: []\n", "unknown field `tool_call`"),
        (
            "- text: hi\n- {}\n",
            "a scripted reply needs text, tool_calls or error",
        ),
        (
            "- text: hi\n  error: empty\n",
            "either an error or text/tool_calls/usage",
        ),
        ("- error: explode\n", "unknown error \"explode\""),
        (
            "- error: {status: 200}\n",
            "error status must be an HTTP error code",
        ),
        (
            "- text: hi\n  expect: {last_user: x}\n",
            "unknown field `last_user`",
        ),
        (
            "- error: {status: 500, retry_after_ms: 5}\n",
            "retry_after_ms goes with status 429 only",
        ),
    ];
    for (yaml, expected) in cases {
        let message = yaml_error(yaml);
        assert!(message.contains(expected), "{yaml:?} gave {message:?}");
    }
    // The bad reply is named by its position.
    assert_eq!(
        yaml_error("- text: hi\n- {}\n"),
        "reply 2: a scripted reply needs text, tool_calls or error"
    );
    assert_eq!(
        yaml_error("text: hi\n"),
        "a script is a sequence of replies (`- text: ...`)"
    );
    // YAML that does not parse names its line.
    assert!(
        yaml_error("- text: [unclosed\n").contains("line"),
        "parse errors carry a position"
    );
}

#[test]
fn a_missing_script_file_names_the_path() {
    let err = ScriptedModel::from_yaml_file("/nonexistent/script.yaml").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("could not read script /nonexistent/script.yaml:"),
        "{err}"
    );
}

#[test]
fn a_script_embedded_in_a_larger_document_is_read_from_its_value() {
    let manifest: yaml_serde::Value =
        yaml_serde::from_str("name: case\nreplies:\n  - text: hello\n  - error: empty\n").unwrap();
    let replies = manifest.get("replies").cloned().unwrap();

    let model = ScriptedModel::from_yaml_value(replies).unwrap();

    assert_eq!(model.remaining(), 2);
}
