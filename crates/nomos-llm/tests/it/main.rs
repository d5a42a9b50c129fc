//! Integration tests of nomos-llm: the OpenAI-compatible model against a real HTTP server on
//! loopback, the scripted stub, and record/replay.

// Test helpers outside #[test] functions may unwrap too: a failure there is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod openai_buffered;
mod openai_errors;
mod openai_stream;
mod real_server;
mod record_replay;
mod scripted;
mod server_shapes;
mod support;
mod wire_log;
