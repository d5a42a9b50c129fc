//! Talks to any OpenAI-compatible endpoint once, streaming the reply to stdout.
//!
//! ```text
//! NOMOS_LLM_BASE_URL=https://openrouter.ai/api/v1 NOMOS_LLM_MODEL=openai/gpt-4o-mini \
//! NOMOS_LLM_API_KEY=... cargo run -p nomos-llm --example chat -- "What does uptime show?"
//! ```
//!
//! The `run` tool is offered, so a model may answer with a tool call; it is printed, not run.

use std::io::Write;

use anyhow::Context;
use nomos_core::ports::chat::{ChatDelta, ChatMessage, ChatModel, ChatRequest, ToolSpec};
use nomos_llm::{OpenAiConfig, OpenAiModel};
use serde_json::json;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let question = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let question = if question.is_empty() {
        "Say hello in five words.".to_owned()
    } else {
        question
    };
    let config = OpenAiConfig::from_env().context("reading the NOMOS_LLM_* settings")?;
    let model = OpenAiModel::new(config).context("building the model client")?;
    let request = ChatRequest {
        messages: vec![
            ChatMessage::System {
                content: "You are Nomos, an operations agent. Answer briefly.".into(),
            },
            ChatMessage::User {
                content: question.into(),
            },
        ],
        tools: vec![ToolSpec {
            name: "run".into(),
            description: "Run a read-only shell command on a host.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"host": {"type": "string"}, "command": {"type": "string"}},
                "required": ["host", "command"]
            }),
        }]
        .into(),
    };
    let sink = |delta: ChatDelta| match delta {
        ChatDelta::Text { text } => {
            print!("{text}");
            // A failed flush only delays the text; the reply is printed in full below anyway.
            let _ = std::io::stdout().flush();
        }
        ChatDelta::ToolCallStarted { index, name } => println!("\n[tool call {index}: {name}]"),
    };
    let response = model
        .complete(&request, &sink)
        .await
        .with_context(|| format!("asking {}", model.name()))?;
    println!();
    for call in &response.tool_calls {
        println!("tool call {} {}({})", call.id, call.name, call.arguments);
    }
    let usage = response.usage;
    let cost = usage
        .cost_usd
        .map(|c| format!(", ${c:.6}"))
        .unwrap_or_default();
    println!(
        "[{} | finish_reason={:?} | {} prompt + {} completion tokens{cost}]",
        model.name(),
        response.finish_reason,
        usage.prompt_tokens,
        usage.completion_tokens
    );
    Ok(())
}
