//! Replies a real server sent, byte for byte: llama.cpp's Python server on Gemma 3 270M, as
//! `scripts/real-model.sh --record` kept them in the wire log (EVAL-7). Each is served again
//! from `tests/fixtures/gemma-3-270m/` with the status and content type it came with.

use nomos_core::ports::chat::{ChatModel, ModelError};
use nomos_llm::Transport;
use serde_json::Value;
use wiremock::{MockServer, ResponseTemplate};

use crate::support::{Deltas, model, request, serve};

/// The recorded reply `name` (`.response` and `.meta.json`) as the server sent it.
fn recorded(name: &str) -> ResponseTemplate {
    let dir = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("tests/fixtures/gemma-3-270m");
    let body = std::fs::read(dir.join(format!("{name}.response"))).unwrap();
    let meta: Value =
        serde_json::from_slice(&std::fs::read(dir.join(format!("{name}.meta.json"))).unwrap())
            .unwrap();
    let status = u16::try_from(meta["status"].as_u64().unwrap()).unwrap();
    let content_type = meta["content_type"].as_str().unwrap();
    ResponseTemplate::new(status)
        .insert_header("content-type", content_type)
        .set_body_raw(body, content_type)
}

// rule: EVAL-7
#[tokio::test]
async fn a_reply_cut_at_the_token_limit_between_pings_is_a_length_error_after_its_text() {
    let server = MockServer::start().await;
    // `: ping` comments every 15 s while the prompt is read, lines ended by `\n` alone, and
    // `finish_reason: length` in the last chunk before `[DONE]`.
    serve(&server, recorded("text-cut-by-length")).await;
    let deltas = Deltas::default();

    let err = model(&server, Transport::Streaming)
        .complete(&request("how long has host:hubris been up?"), &|d| {
            deltas.push(d)
        })
        .await
        .unwrap_err();

    assert_eq!(err, ModelError::Length);
    let text = deltas.texts().concat();
    assert!(
        text.starts_with("You are Nomos, an operations agent"),
        "{text}"
    );
    // Every text chunk arrived, none was taken for a call.
    assert_eq!(deltas.all().len(), deltas.texts().len());
}
