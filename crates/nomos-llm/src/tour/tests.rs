//! The tour's reading of a conversation, stage by stage, with the runtime's notes as the
//! core writes them.

use std::path::Path;

use nomos_core::ports::chat::{ChatMessage, ChatRequest, ToolCall};

use super::*;
use crate::scripted::ScriptedAnswer;

fn sandbox() -> DemoSandbox {
    DemoSandbox::in_data_dir(Path::new("/var/lib/nomos"))
}

/// A conversation the tests grow the way the runtime does.
struct Talk {
    messages: Vec<ChatMessage>,
}

impl Talk {
    fn new() -> Talk {
        Talk {
            messages: vec![ChatMessage::System {
                content: "system".into(),
            }],
        }
    }

    fn user(&mut self, text: &str) -> &mut Talk {
        self.messages.push(ChatMessage::User {
            content: text.into(),
        });
        self
    }

    fn note(&mut self, text: &str) -> &mut Talk {
        self.user(&format!("[Nomos] {text}"))
    }

    /// Plays what the tour says next, with a result for each call.
    fn play(&mut self) -> Next {
        let next = self.next();
        let reply = reply(next, &sandbox()).expect("a tour reply");
        let ScriptedAnswer::Reply {
            text, tool_calls, ..
        } = reply.answer
        else {
            panic!("the tour never faults");
        };
        let calls: Vec<ToolCall> = tool_calls
            .iter()
            .enumerate()
            .map(|(idx, call)| ToolCall {
                id: format!("c{}_{idx}", self.messages.len()),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            })
            .collect();
        self.messages.push(ChatMessage::Assistant {
            content: text.map(Into::into),
            tool_calls: calls.clone().into(),
        });
        for call in calls {
            self.messages.push(ChatMessage::Tool {
                call_id: call.id.into(),
                content: "ok".into(),
            });
        }
        next
    }

    fn next(&self) -> Next {
        next(&ChatRequest {
            messages: self.messages.clone(),
            tools: Vec::new().into(),
        })
    }
}

fn approved_plan() -> String {
    nomos_core::resume::plan_decided_approved_note(1, 4, &[], None)
}

const DELETE_APPROVED: &str = "The operator decided on the command you asked to run: approved; `rm /var/lib/nomos/demo/logs/app.log.1 /var/lib/nomos/demo/logs/app.log.2` on local exited 0: (no output).";
const DELETE_DENIED: &str = "The operator decided on the command you asked to run: denied by the operator; `rm /var/lib/nomos/demo/logs/app.log.1` on local did not run.";

#[test]
fn the_tour_plays_goal_plan_wait_run_card_and_write_back_in_order() {
    let mut talk = Talk::new();
    talk.user(TOUR_MESSAGE);
    assert_eq!(talk.play(), Next::Stage(Stage::Propose));
    assert_eq!(talk.play(), Next::Stage(Stage::WaitPlan));
    talk.note(&approved_plan());
    assert_eq!(talk.play(), Next::Stage(Stage::EditConfig));
    assert_eq!(talk.play(), Next::Stage(Stage::Restart));
    assert_eq!(talk.play(), Next::Stage(Stage::DeleteLogs));
    assert_eq!(talk.play(), Next::Stage(Stage::WaitDelete));
    talk.note(DELETE_APPROVED);
    assert_eq!(talk.play(), Next::Stage(Stage::WriteBackDeleted));
    assert_eq!(talk.play(), Next::Stage(Stage::Complete));
    assert_eq!(talk.play(), Next::Stage(Stage::Closing));
    assert_eq!(talk.next(), Next::Outside);
}

#[test]
fn a_message_while_the_plan_waits_gets_a_reminder_and_chat_assent_goes_on() {
    let mut talk = Talk::new();
    talk.user("take the tour.");
    talk.play();
    talk.play();
    talk.user("what is this?")
        .note(&nomos_core::resume::plan_waits_note("what is this?", 1));
    assert_eq!(talk.play(), Next::RemindPlan);
    talk.user("approve")
        .note(&nomos_core::resume::plan_approved_note(
            "approve",
            1,
            4,
            &[],
        ));
    assert_eq!(talk.play(), Next::Stage(Stage::EditConfig));
}

#[test]
fn a_denied_deletion_keeps_the_logs_and_still_writes_back() {
    let mut talk = Talk::new();
    talk.user(TOUR_MESSAGE);
    for _ in 0..2 {
        talk.play();
    }
    talk.note(&approved_plan());
    for _ in 0..4 {
        talk.play();
    }
    talk.user("hm")
        .note("The operator's message “hm” was not read as approval");
    assert_eq!(talk.play(), Next::RemindDelete);
    talk.note(DELETE_DENIED);
    assert_eq!(talk.play(), Next::Stage(Stage::WriteBackKept));
    assert_eq!(talk.play(), Next::Stage(Stage::Complete));
}

#[test]
fn a_rejected_plan_ends_the_tour_as_a_failure() {
    let mut talk = Talk::new();
    talk.user(TOUR_MESSAGE);
    talk.play();
    talk.play();
    talk.note(&nomos_core::resume::plan_rejected_note(1, None));
    assert_eq!(talk.play(), Next::Stage(Stage::Rejected));
    assert_eq!(talk.play(), Next::Stage(Stage::RejectedClosing));
    assert_eq!(talk.next(), Next::Outside);
    // The tour message starts it again.
    talk.user(TOUR_MESSAGE);
    assert_eq!(talk.next(), Next::Stage(Stage::Propose));
}

#[test]
fn a_conversation_without_the_tour_message_is_outside_the_tour() {
    let mut talk = Talk::new();
    talk.user("how are the disks?");
    assert_eq!(talk.next(), Next::Outside);
    talk.user("take the tour later");
    assert_eq!(talk.next(), Next::Outside);
}

#[test]
fn every_stage_reads_back_as_itself_and_calls_with_json_objects() {
    for stage in STAGES {
        let reply = stage_reply(stage, &sandbox());
        let ScriptedAnswer::Reply {
            text, tool_calls, ..
        } = reply.answer
        else {
            panic!("{stage:?} faults");
        };
        let message = ChatMessage::Assistant {
            content: text.map(Into::into),
            tool_calls: Vec::new().into(),
        };
        assert_eq!(stage_of(&message), Some(stage));
        for call in tool_calls {
            let parsed: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
            assert!(parsed.is_object(), "{}: {}", call.name, call.arguments);
        }
    }
}

#[test]
fn the_plan_declares_the_three_commands_on_the_sandbox() {
    let reply = stage_reply(Stage::Propose, &sandbox());
    let ScriptedAnswer::Reply { tool_calls, .. } = reply.answer else {
        panic!("faults");
    };
    let plan: serde_json::Value = serde_json::from_str(&tool_calls[1].arguments).unwrap();
    let declared: Vec<&str> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["commands"].as_array().into_iter().flatten())
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        declared,
        vec![
            "sed -i 's/^workers = 2$/workers = 4/' /var/lib/nomos/demo/app.conf",
            "/var/lib/nomos/demo/service.sh restart",
            "rm /var/lib/nomos/demo/logs/app.log.1 /var/lib/nomos/demo/logs/app.log.2",
        ]
    );
}
