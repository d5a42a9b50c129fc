//! The tour: the demo model's scripted walk through what Nomos is for, on a sandbox under the
//! data directory ([`DemoSandbox`]).
//!
//! An operator message that says [`TOUR_MESSAGE`] starts it. The tour sets a goal and
//! proposes a plan whose steps declare their commands (a `sed -i` on the demo config, a
//! restart of the demo service, an `rm` of the demo's old logs), then stops: the plan waits
//! for the operator, with the preview of the `sed -i`. Once the operator approves (the Approve
//! button or an approval word), it runs the two declared changes, asks to delete the old logs
//! (destructive, so the gate gives it its own card), and once that card is decided writes
//! back what changed and completes the task.
//!
//! The tour reads where it is from the conversation alone: the newest tour message, the tour
//! replies since (each one's text starts with its own words), and the notes the runtime
//! writes after the operator's decisions (RESUME-4, EXEC-4). It never waits on anything but
//! those decisions; a message while it waits gets a reminder of what it waits for. Until
//! the tour message, and after the tour ends, the demo model plays the read-only health check
//! instead.

mod sandbox;

use serde_json::json;

use nomos_core::ports::chat::{ChatMessage, ChatRequest};

use crate::scripted::{ScriptedReply, ScriptedToolCall};

pub use sandbox::{DEMO_DIR, DemoSandbox};

/// The operator message that starts the tour (the board's "Take the tour" sends it).
pub const TOUR_MESSAGE: &str = "Take the tour";

/// The host the tour's commands run on.
const HOST: &str = "local";

/// The entity the tour writes back.
const APP: &str = "demo-app";

/// One reply of the tour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Goal and plan.
    Propose,
    /// The plan waits for the operator (ends the turn).
    WaitPlan,
    /// Step 1: the declared `sed -i`.
    EditConfig,
    /// Step 2: the declared restart.
    Restart,
    /// Step 3: the `rm`, which gets its own approval.
    DeleteLogs,
    /// The deletion waits for the operator (ends the turn).
    WaitDelete,
    /// Step 4 after the deletion ran.
    WriteBackDeleted,
    /// Step 4 after the deletion was denied.
    WriteBackKept,
    /// `complete_task`.
    Complete,
    /// The closing words (ends the tour).
    Closing,
    /// The operator rejected the plan: `complete_task` as a failure.
    Rejected,
    /// The closing words after a rejection (ends the tour).
    RejectedClosing,
}

const STAGES: [Stage; 12] = [
    Stage::Propose,
    Stage::WaitPlan,
    Stage::EditConfig,
    Stage::Restart,
    Stage::DeleteLogs,
    Stage::WaitDelete,
    Stage::WriteBackDeleted,
    Stage::WriteBackKept,
    Stage::Complete,
    Stage::Closing,
    Stage::Rejected,
    Stage::RejectedClosing,
];

/// What the demo model answers next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// A reply of the tour.
    Stage(Stage),
    /// The tour waits on the plan's decision.
    RemindPlan,
    /// The tour waits on the deletion's decision.
    RemindDelete,
    /// Not in a tour: the health check answers.
    Outside,
}

/// What a runtime note says the operator decided.
const PLAN_APPROVED: &str = "approved plan generation";
const PLAN_REJECTED: &str = "rejected plan generation";
const COMMAND_APPROVED: &str = "approved; `rm ";
const COMMAND_NOT_RUN: &str = "did not run";

const REMIND_PLAN: &str = "The tour waits for your decision on its plan: press Approve on the plan (or write \"approve\") to go on, or Reject to stop here.";
const REMIND_DELETE: &str = "The tour waits for your decision on deleting the old logs: approve or deny its card in the activity panel or on the Operations page.";

/// Where the conversation of `request` is in the tour.
pub(crate) fn next(request: &ChatRequest) -> Next {
    let messages = &request.messages;
    let Some(start) = messages.iter().rposition(is_tour_message) else {
        return Next::Outside;
    };
    let after = &messages[start + 1..];
    let last = after
        .iter()
        .enumerate()
        .rev()
        .find_map(|(idx, message)| stage_of(message).map(|stage| (idx, stage)));
    let Some((idx, stage)) = last else {
        return Next::Stage(Stage::Propose);
    };
    let since = &after[idx + 1..];
    let plan_decision = || {
        if heard(since, PLAN_APPROVED) {
            Some(Stage::EditConfig)
        } else if heard(since, PLAN_REJECTED) {
            Some(Stage::Rejected)
        } else {
            None
        }
    };
    let delete_decision = || {
        if heard(since, COMMAND_NOT_RUN) {
            Some(Stage::WriteBackKept)
        } else if heard(since, COMMAND_APPROVED) {
            Some(Stage::WriteBackDeleted)
        } else {
            None
        }
    };
    match stage {
        Stage::Propose => Next::Stage(plan_decision().unwrap_or(Stage::WaitPlan)),
        Stage::WaitPlan => plan_decision().map_or(Next::RemindPlan, Next::Stage),
        Stage::EditConfig => Next::Stage(Stage::Restart),
        Stage::Restart => Next::Stage(Stage::DeleteLogs),
        Stage::DeleteLogs => Next::Stage(delete_decision().unwrap_or(Stage::WaitDelete)),
        Stage::WaitDelete => delete_decision().map_or(Next::RemindDelete, Next::Stage),
        Stage::WriteBackDeleted | Stage::WriteBackKept => Next::Stage(Stage::Complete),
        Stage::Complete => Next::Stage(Stage::Closing),
        Stage::Rejected => Next::Stage(Stage::RejectedClosing),
        Stage::Closing | Stage::RejectedClosing => Next::Outside,
    }
}

/// The reply for `next` (`None` outside the tour).
pub(crate) fn reply(next: Next, sandbox: &DemoSandbox) -> Option<ScriptedReply> {
    match next {
        Next::Stage(stage) => Some(stage_reply(stage, sandbox)),
        Next::RemindPlan => Some(ScriptedReply::text(REMIND_PLAN)),
        Next::RemindDelete => Some(ScriptedReply::text(REMIND_DELETE)),
        Next::Outside => None,
    }
}

fn is_tour_message(message: &ChatMessage) -> bool {
    let ChatMessage::User { content } = message else {
        return false;
    };
    content
        .trim()
        .trim_end_matches(['.', '!'])
        .eq_ignore_ascii_case(TOUR_MESSAGE)
}

fn heard(messages: &[ChatMessage], words: &str) -> bool {
    messages
        .iter()
        .any(|m| matches!(m, ChatMessage::User { content } if content.contains(words)))
}

fn stage_of(message: &ChatMessage) -> Option<Stage> {
    let ChatMessage::Assistant {
        content: Some(text),
        ..
    } = message
    else {
        return None;
    };
    STAGES
        .into_iter()
        .find(|stage| text.starts_with(opening(*stage)))
}

/// The words each reply's text starts with, which name the reply in the conversation.
fn opening(stage: Stage) -> &'static str {
    match stage {
        Stage::Propose => "Welcome to the Nomos tour.",
        Stage::WaitPlan => "The plan waits for you.",
        Stage::EditConfig => "Approved. Step 1:",
        Stage::Restart => "Step 2:",
        Stage::DeleteLogs => "Step 3:",
        Stage::WaitDelete => "The deletion waits on its own card.",
        Stage::WriteBackDeleted => "The old logs are deleted. Step 4:",
        Stage::WriteBackKept => "You denied the deletion, so the old logs stay. Step 4:",
        Stage::Complete => "Completing the task.",
        Stage::Closing => "That was the tour:",
        Stage::Rejected => "You rejected the plan, so nothing ran and nothing changed.",
        Stage::RejectedClosing => "The tour ended at the plan.",
    }
}

fn say(stage: Stage, rest: &str) -> Option<String> {
    if rest.is_empty() {
        return Some(opening(stage).to_owned());
    }
    Some(format!("{} {rest}", opening(stage)))
}

fn call(name: &str, arguments: serde_json::Value) -> ScriptedToolCall {
    ScriptedToolCall::new(name, arguments)
}

fn step(seq: u32, status: &str) -> ScriptedToolCall {
    call("update_plan_step", json!({"seq": seq, "status": status}))
}

fn run(command: String) -> ScriptedToolCall {
    call("run", json!({"host": HOST, "command": command}))
}

fn write_back(sandbox: &DemoSandbox) -> Vec<ScriptedToolCall> {
    vec![
        step(4, "running"),
        call(
            "update_entity_attributes",
            json!({
                "slug": APP,
                "kind": "service",
                "attributes": {
                    "workers": 4,
                    "config": sandbox.config().display().to_string(),
                    "service": sandbox.service().display().to_string()
                }
            }),
        ),
        call(
            "create_relationship",
            json!({"from": APP, "kind": "runs_on", "to": HOST}),
        ),
        step(4, "done"),
    ]
}

fn stage_reply(stage: Stage, sandbox: &DemoSandbox) -> ScriptedReply {
    let dir = sandbox.dir().display();
    match stage {
        Stage::Propose => ScriptedReply::answer(
            say(
                stage,
                &format!(
                    "I am the scripted demo model, and I work only in a sandbox under the data directory, `{dir}`: a fake app with a config file and a service script. I set a goal and propose a plan that declares every command it will run."
                ),
            ),
            vec![
                call(
                    "set_goal",
                    json!({"goal": "Tour: give demo-app 4 workers, restart it and delete its old logs"}),
                ),
                call(
                    "propose_plan",
                    json!({"steps": [
                        {
                            "title": "Set workers = 4 in the demo config",
                            "detail": "sed -i on demo/app.conf; the preview shows its diff",
                            "commands": [{"host": HOST, "command": sandbox.edit_command()}]
                        },
                        {
                            "title": "Restart the demo service",
                            "detail": "demo/service.sh restart",
                            "commands": [{"host": HOST, "command": sandbox.restart_command()}]
                        },
                        {
                            "title": "Delete the demo's old logs",
                            "detail": "rm is destructive: it gets its own approval card",
                            "commands": [{"host": HOST, "command": sandbox.delete_logs_command()}]
                        },
                        {
                            "title": "Write back: update_entity_attributes",
                            "detail": "record demo-app's workers and that it runs on local"
                        }
                    ]}),
                ),
            ],
        ),
        Stage::WaitPlan => ScriptedReply::answer(
            say(
                stage,
                "It lists each declared command with its class, and the config change with its preview: the diff the `sed -i` would make. Nothing changes until you press Approve on the plan (or write \"approve\"); Reject ends the tour here.",
            ),
            Vec::new(),
        ),
        Stage::EditConfig => ScriptedReply::answer(
            say(
                stage,
                "the declared `sed -i` runs at once, inside the window your approval opened.",
            ),
            vec![step(1, "running"), run(sandbox.edit_command())],
        ),
        Stage::Restart => ScriptedReply::answer(
            say(
                stage,
                "restarting the demo service, which the plan declared too.",
            ),
            vec![
                step(1, "done"),
                step(2, "running"),
                run(sandbox.restart_command()),
            ],
        ),
        Stage::DeleteLogs => ScriptedReply::answer(
            say(
                stage,
                "deleting the old logs. `rm` is destructive, so although the plan declared it, it waits for its own approval.",
            ),
            vec![
                step(2, "done"),
                step(3, "running"),
                run(sandbox.delete_logs_command()),
            ],
        ),
        Stage::WaitDelete => ScriptedReply::answer(
            say(
                stage,
                "Approve it to delete logs/app.log.1 and logs/app.log.2, or deny it to keep them.",
            ),
            Vec::new(),
        ),
        Stage::WriteBackDeleted => {
            let mut calls = vec![step(3, "done")];
            calls.extend(write_back(sandbox));
            ScriptedReply::answer(
                say(
                    stage,
                    "writing back what changed, so the knowledge base knows demo-app's settings.",
                ),
                calls,
            )
        }
        Stage::WriteBackKept => {
            let mut calls = vec![step(3, "skipped")];
            calls.extend(write_back(sandbox));
            ScriptedReply::answer(say(stage, "writing back what changed."), calls)
        }
        Stage::Complete => ScriptedReply::answer(
            say(stage, ""),
            vec![call(
                "complete_task",
                json!({
                    "outcome": "success",
                    "summary": "demo-app has 4 workers (sed -i, approved with the plan) and was restarted; deleting its old logs went through its own card; demo-app is written back."
                }),
            )],
        ),
        Stage::Closing => ScriptedReply::text(format!(
            "{} a goal, a plan that declares its commands with their classes, a preview diff, your approval, the run, a destructive command on its own card, and the write-back. The sandbox is `{dir}`. Send \"{TOUR_MESSAGE}\" to run it again; any other message runs the read-only health check.",
            opening(stage)
        )),
        Stage::Rejected => ScriptedReply::answer(
            say(stage, ""),
            vec![call(
                "complete_task",
                json!({
                    "outcome": "failure",
                    "summary": "The operator rejected the tour's plan; nothing ran."
                }),
            )],
        ),
        Stage::RejectedClosing => ScriptedReply::text(format!(
            "{} Send \"{TOUR_MESSAGE}\" to start it again; any other message runs the read-only health check.",
            opening(stage)
        )),
    }
}

#[cfg(test)]
mod tests;
