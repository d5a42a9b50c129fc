//! The demo: what the server's demo mode answers without a model. [`DemoModel`] plays the
//! tour (see the `tour` module) in conversations that asked for it, and the read-only health
//! check below in every other.
//!
//! The health check is a canned, cycling conversation. Whatever the operator writes, one turn
//! of it does the same six model calls, using the built-in tools of the agent:
//!
//! 1. `set_goal` (check the load and disk space of host `local`) and `propose_plan` with three
//!    steps: `uptime`, `df -h`, and the write-back step (PLAN-6);
//! 2. `update_plan_step(1, running)` and `run(local, uptime)`;
//! 3. `update_plan_step(1, done)`, `update_plan_step(2, running)` and `run(local, df -h)`;
//! 4. `update_plan_step(2, done)`, `update_plan_step(3, running)`,
//!    `update_entity_attributes(local, ...)` and `update_plan_step(3, done)` (WRITEBACK-2);
//! 5. `complete_task(success, summary)`;
//! 6. a short closing text, which ends the turn.
//!
//! Both commands are read-only, so they run at once (GATE-1) and no approval is asked. The
//! script then starts over, so the demo never runs out; a new turn's `set_goal` reopens the
//! session as a new task (SESSION-7). The script does not read tool results: it shows the flow,
//! not reasoning.

use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use nomos_core::ports::chat::{ChatModel, ChatRequest, ChatResponse, DeltaSink, ModelError};
use serde_json::json;

use crate::scripted::{ScriptedModel, ScriptedReply, ScriptedToolCall, play};
use crate::tour::{self, DemoSandbox, Next, Stage};

/// The host the demo inspects.
pub const DEMO_HOST: &str = "local";

impl ScriptedModel {
    /// The demo script (see the `demo` module docs): goal, a read-only plan of `uptime` and
    /// `df -h` on host `local`, the write-back, `complete_task`, a summary; then again.
    pub fn demo() -> Self {
        ScriptedModel::cycling(demo_replies())
    }
}

/// The server's demo model: the tour in a conversation whose newest tour message
/// ([`tour::TOUR_MESSAGE`]) started a tour that has not ended, the health check
/// ([`ScriptedModel::demo`], played per conversation) otherwise.
///
/// The tour's first reply resets the sandbox ([`DemoSandbox::reset`]): it is created on
/// first use, and every tour starts from the same files.
#[derive(Debug)]
pub struct DemoModel {
    sandbox: DemoSandbox,
    health: ScriptedModel,
    n_played: AtomicUsize,
}

impl DemoModel {
    /// The demo on the sandbox `sandbox`.
    pub fn new(sandbox: DemoSandbox) -> DemoModel {
        DemoModel {
            sandbox,
            health: ScriptedModel::demo().per_conversation(),
            n_played: AtomicUsize::new(0),
        }
    }

    /// The sandbox the tour works in.
    pub fn sandbox(&self) -> &DemoSandbox {
        &self.sandbox
    }
}

#[async_trait]
impl ChatModel for DemoModel {
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        let next = tour::next(request);
        let Some(reply) = tour::reply(next, &self.sandbox) else {
            return self.health.complete(request, sink).await;
        };
        if next == Next::Stage(Stage::Propose) {
            let sandbox = self.sandbox.clone();
            let reset = tokio::task::spawn_blocking(move || sandbox.reset()).await;
            match reset {
                Ok(Ok(())) => {}
                Ok(Err(err)) => {
                    return Err(ModelError::Script(format!(
                        "the tour's sandbox {} could not be written: {err}",
                        self.sandbox.dir().display()
                    )));
                }
                Err(err) => {
                    return Err(ModelError::Script(format!(
                        "the tour's sandbox could not be written: {err}"
                    )));
                }
            }
        }
        // Call ids `call_tour<n>_<i>`: unique over the process, whatever the session.
        let n_played = self.n_played.fetch_add(1, Ordering::Relaxed) + 1;
        let mut reply = reply;
        if let crate::scripted::ScriptedAnswer::Reply { tool_calls, .. } = &mut reply.answer {
            for (idx, call) in tool_calls.iter_mut().enumerate() {
                call.id = Some(format!("call_tour{n_played}_{idx}"));
            }
        }
        play(n_played, reply, sink)
    }

    fn name(&self) -> String {
        self.health.name()
    }
}

fn call(name: &str, arguments: serde_json::Value) -> ScriptedToolCall {
    ScriptedToolCall::new(name, arguments)
}

fn step(seq: u32, status: &str) -> ScriptedToolCall {
    call("update_plan_step", json!({"seq": seq, "status": status}))
}

fn run(command: &str) -> ScriptedToolCall {
    call("run", json!({"host": DEMO_HOST, "command": command}))
}

fn demo_replies() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::answer(
            Some(format!(
                "This is the demo model. I will check the load and disk space of host `{DEMO_HOST}`."
            )),
            vec![
                call(
                    "set_goal",
                    json!({"goal": format!("Check the load and disk space of host {DEMO_HOST}")}),
                ),
                call(
                    "propose_plan",
                    json!({"steps": [
                        {"title": "Check the load", "detail": format!("uptime on {DEMO_HOST}")},
                        {"title": "Check disk space", "detail": format!("df -h on {DEMO_HOST}")},
                        {"title": "Write back: update_entity_attributes", "detail": format!("record the check on {DEMO_HOST}")}
                    ]}),
                ),
            ],
        ),
        ScriptedReply::tool_calls(vec![step(1, "running"), run("uptime")]),
        ScriptedReply::tool_calls(vec![step(1, "done"), step(2, "running"), run("df -h")]),
        ScriptedReply::tool_calls(vec![
            step(2, "done"),
            step(3, "running"),
            call(
                "update_entity_attributes",
                json!({
                    "slug": DEMO_HOST,
                    "kind": "host",
                    "attributes": {"last_demo_check": "uptime and df -h"}
                }),
            ),
            step(3, "done"),
        ]),
        ScriptedReply::tool_calls(vec![call(
            "complete_task",
            json!({
                "outcome": "success",
                "summary": format!("Checked the load (uptime) and disk space (df -h) of host {DEMO_HOST} and wrote the check back.")
            }),
        )]),
        ScriptedReply::text(format!(
            "Done. I ran `uptime` and `df -h` on host `{DEMO_HOST}`; their output is in the activity log. Send any message to run the demo again."
        )),
    ]
}

#[cfg(test)]
mod tests {
    use nomos_core::ports::chat::{ChatMessage, ChatModel, ChatRequest};

    use super::*;

    fn request() -> ChatRequest {
        ChatRequest {
            messages: vec![ChatMessage::User {
                content: "anything at all".into(),
            }],
            tools: Vec::new().into(),
        }
    }

    #[tokio::test]
    async fn the_demo_plays_a_whole_task_and_starts_over() {
        let model = ScriptedModel::demo();
        let mut names = Vec::new();
        for _ in 0..6 {
            let response = model.complete(&request(), &|_| {}).await.unwrap();
            names.extend(response.tool_calls.into_iter().map(|c| c.name));
        }
        assert_eq!(model.remaining(), 0);
        assert!(names.first().is_some_and(|n| n == "set_goal"), "{names:?}");
        assert_eq!(names.iter().filter(|n| *n == "run").count(), 2);
        assert!(names.iter().any(|n| n == "update_entity_attributes"));
        assert_eq!(names.last().map(String::as_str), Some("complete_task"));

        // The seventh call starts the next cycle instead of failing.
        let again = model.complete(&request(), &|_| {}).await.unwrap();
        assert_eq!(again.tool_calls[0].name, "set_goal");
        assert_eq!(model.played(), 7);
    }

    #[tokio::test]
    async fn a_per_conversation_demo_plays_each_conversation_from_its_own_position() {
        let model = ScriptedModel::demo().per_conversation();
        let mut first = request();
        let reply = model.complete(&first, &|_| {}).await.unwrap();
        assert_eq!(reply.tool_calls[0].name, "set_goal");
        first.messages.push(ChatMessage::Assistant {
            content: None,
            tool_calls: reply.tool_calls.into(),
        });
        // Another session starts at the top while the first one goes on.
        let other = model.complete(&request(), &|_| {}).await.unwrap();
        assert_eq!(other.tool_calls[0].name, "set_goal");
        let next = model.complete(&first, &|_| {}).await.unwrap();
        assert_eq!(next.tool_calls[0].name, "update_plan_step");
        // A new user message starts the script again.
        first.messages.push(ChatMessage::User {
            content: "again".into(),
        });
        let again = model.complete(&first, &|_| {}).await.unwrap();
        assert_eq!(again.tool_calls[0].name, "set_goal");
    }

    #[test]
    fn every_demo_tool_call_has_valid_json_arguments() {
        for reply in demo_replies() {
            if let crate::scripted::ScriptedAnswer::Reply { tool_calls, .. } = reply.answer {
                for call in tool_calls {
                    let parsed: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
                    assert!(parsed.is_object(), "{}: {}", call.name, call.arguments);
                }
            }
        }
    }
}
