//! A scripted chat for the safety-net tests (SAFE-1, SAFE-2): a session whose plan the
//! operator assented to, so a config mutation is dispatched at once; numbered calls and a
//! clock that moves 10 ms a call.

use nomos_core::classify::classify;
use nomos_core::event::{DomainEvent, SafetyAction};
use nomos_core::record::ExecOutput;
use nomos_core::session::{Action, Revision, Session, SessionConfig, StepDraft, ToolInput};
use nomos_core::{ExecutionId, SessionId, Span, Timestamp};

pub struct Chat {
    pub session: Session,
    pub now: Timestamp,
    calls: u32,
    host: String,
}

/// A shell run that exited 0 with `stdout`.
pub fn ok(stdout: &str) -> Result<ExecOutput, String> {
    Ok(ExecOutput {
        exit_code: Some(0),
        stdout: stdout.to_owned(),
        ..ExecOutput::default()
    })
}

impl Chat {
    /// Session `id` with goal `goal` and an assented two-step plan; `run` runs on `host`.
    pub fn assented(id: u128, goal: &str, host: &str) -> Chat {
        let now = Timestamp::from_millis(1_800_000_000_000);
        let mut chat = Chat {
            session: Session::create(
                SessionId::from(uuid::Uuid::from_u128(id)),
                now,
                SessionConfig {
                    assent_scope: nomos_core::declared::AssentScope::Window,
                    ..SessionConfig::spec_defaults()
                },
            ),
            now,
            calls: 0,
            host: host.to_owned(),
        };
        chat.tool(ToolInput::SetGoal {
            goal: goal.to_owned(),
        });
        let steps = ["change", "write back"]
            .iter()
            .map(|title| StepDraft {
                title: (*title).to_owned(),
                detail: None,
                commands: Vec::new(),
                check: None,
            })
            .collect();
        chat.tool(ToolInput::ProposePlan {
            steps,
            revision: Revision::No,
        });
        chat.now = chat.now + Span::from_millis(10);
        chat.session
            .handle_operator_message(chat.now, "yes, go ahead");
        chat
    }

    pub fn tool(&mut self, input: ToolInput) -> nomos_core::session::ToolReply {
        self.calls += 1;
        self.now = self.now + Span::from_millis(10);
        let call_id = format!("call_{}", self.calls);
        self.session.handle_tool(self.now, &call_id, input)
    }

    /// Runs `command` on the chat's host; returns the dispatched execution.
    pub fn run(&mut self, command: &str) -> ExecutionId {
        let reply = self.tool(ToolInput::Run {
            host: self.host.clone(),
            command: command.to_owned(),
            classification: classify(command),
            preview: None,
        });
        let Some(Action::Dispatch { execution_id }) = reply.action else {
            panic!("{command} was not dispatched: {reply:?}");
        };
        execution_id
    }

    /// The safety-net actions of the events not yet committed.
    pub fn safety_events(&self) -> Vec<SafetyAction> {
        self.session
            .pending_events()
            .iter()
            .filter_map(|e| match &e.event {
                DomainEvent::SafetyNet { action, .. } => Some(action.clone()),
                _ => None,
            })
            .collect()
    }
}
