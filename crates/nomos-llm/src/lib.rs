//! OpenAI-compatible chat models, a scripted stub and record/replay for Nomos.
//!
//! Every type here implements the chat-model port, [`nomos_core::ports::chat::ChatModel`]:
//!
//! - [`OpenAiModel`] speaks the OpenAI chat-completions wire format (OpenRouter, OpenAI, Ollama,
//!   vLLM, llama.cpp, LiteLLM) over HTTP, streaming or not, with tool calls, bounded retries
//!   ([`RetryPolicy`]) and errors that carry the real cause (TURN-2). It is configured by
//!   [`OpenAiConfig`], built by hand or read from `NOMOS_LLM_*` environment variables.
//! - [`ScriptedModel`] plays a list of [`ScriptedReply`] values (from Rust or YAML) and fails
//!   loudly when the script runs out or the conversation does not match an [`Expectation`].
//!   [`ScriptedModel::demo`] is the canned, cycling health check of the server's demo mode.
//! - [`DemoModel`] is the server's demo mode: the tour on a [`DemoSandbox`] under the data
//!   directory when the operator asks for it ([`TOUR_MESSAGE`]), the health check otherwise.
//! - [`RecordingModel`] records real exchanges to a directory, keyed by a hash of the normalized
//!   request; [`ReplayModel`] plays them back.
//! - [`TurnUsage`] sums token usage and cost over the calls of one turn.
//!
//! Wire types (the OpenAI JSON format) live only in this crate and never leave it.

#![deny(missing_docs)]

mod config;
mod demo;
mod error;
mod openai;
mod record;
mod reply;
mod retry;
mod scripted;
mod stream;
pub mod tls;
mod tour;
mod usage;
mod wire;
mod wire_log;

pub use config::{ApiKey, OpenAiConfig, OpenAiConfigBuilder, Transport};
pub use demo::DemoModel;
pub use error::{ConfigError, RecordError, ScriptError};
pub use openai::OpenAiModel;
pub use record::{CiEnvironment, RecordingModel, ReplayModel, RequestKey};
pub use retry::RetryPolicy;
pub use scripted::{
    Expectation, ScriptedAnswer, ScriptedFault, ScriptedModel, ScriptedReply, ScriptedToolCall,
};
pub use tour::{DEMO_DIR, DemoSandbox, TOUR_MESSAGE};
pub use usage::TurnUsage;
