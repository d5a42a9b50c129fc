//! Tests of the session aggregate: one harness, many behaviour-named examples, and
//! property tests of its invariants.

mod authz;
mod canary;
mod control;
mod decision;
mod examples;
mod fanout;
mod gate;
mod properties;
mod reference;
mod two_person_plan;
mod window;

use uuid::Uuid;

use crate::classification::Classification;
use crate::event::DomainEvent;
use crate::ports::store::Commit;
use crate::record::{ExecOutput, ToolCallOutcome};
use crate::status::{CommandClass, StepStatus};
use crate::time::{Span, Timestamp};

use super::{Revision, Session, SessionConfig, StepDraft, ToolInput, ToolReply};

/// Drives one session with a virtual clock and commits like a store would.
pub(super) struct Harness {
    pub session: Session,
    pub now: Timestamp,
    n_calls: u32,
    pub commits: Vec<Commit>,
}

impl Harness {
    pub fn new() -> Harness {
        Harness::with_config(SessionConfig::spec_defaults())
    }

    /// A session whose assent covers the whole window (`assent_scope = "window"`), for
    /// cases about something other than which commands a plan declared.
    pub fn windowed() -> Harness {
        Harness::with_config(SessionConfig {
            assent_scope: crate::declared::AssentScope::Window,
            ..SessionConfig::spec_defaults()
        })
    }

    pub fn with_config(config: SessionConfig) -> Harness {
        let now = Timestamp::from_millis(1_800_000_000_000);
        let session = Session::create(Uuid::from_u128(42).into(), now, config);
        Harness {
            session,
            now,
            n_calls: 0,
            commits: Vec::new(),
        }
    }

    pub fn advance(&mut self, span: Span) {
        self.now = self.now + span;
    }

    pub fn tool(&mut self, input: ToolInput) -> ToolReply {
        self.n_calls += 1;
        self.now = self.now + Span::from_millis(10);
        let call_id = format!("call_{}", self.n_calls);
        self.session.handle_tool(self.now, &call_id, input)
    }

    pub fn goal(&mut self) -> ToolReply {
        self.tool(ToolInput::SetGoal {
            goal: "check the disks".to_owned(),
        })
    }

    pub fn plan(&mut self, titles: &[&str]) -> ToolReply {
        self.tool(ToolInput::ProposePlan {
            steps: drafts(titles),
            revision: Revision::No,
        })
    }

    /// GATE-9: a plan whose steps declare commands on `local`, classified as they are.
    pub fn plan_declaring(&mut self, steps: &[(&str, &[&str])]) -> ToolReply {
        let steps = steps
            .iter()
            .map(|(title, commands)| StepDraft {
                check: None,
                title: (*title).to_owned(),
                detail: None,
                commands: commands
                    .iter()
                    .map(|c| {
                        crate::declared::DeclaredCommand::new(
                            "local",
                            Vec::new(),
                            *c,
                            crate::classify::classify(c),
                        )
                    })
                    .collect(),
            })
            .collect();
        self.tool(ToolInput::ProposePlan {
            steps,
            revision: Revision::No,
        })
    }

    pub fn revise(&mut self, titles: &[&str], reason: &str) -> ToolReply {
        self.tool(ToolInput::ProposePlan {
            steps: drafts(titles),
            revision: Revision::Yes {
                reason: Some(reason.to_owned()),
            },
        })
    }

    pub fn step(&mut self, seq: u32, status: StepStatus) -> ToolReply {
        self.tool(ToolInput::UpdatePlanStep {
            seq,
            status,
            note: None,
        })
    }

    pub fn say(&mut self, text: &str) -> super::OperatorMessageEffect {
        self.now = self.now + Span::from_millis(10);
        self.session.handle_operator_message(self.now, text)
    }

    pub fn run(&mut self, command: &str, class: CommandClass) -> ToolReply {
        self.tool(ToolInput::Run {
            host: "local".to_owned(),
            command: command.to_owned(),
            classification: Classification::new(class, "test"),
            preview: None,
        })
    }

    pub fn complete(&mut self, outcome: crate::status::Outcome) -> ToolReply {
        self.tool(ToolInput::CompleteTask {
            outcome,
            summary: "finished".to_owned(),
        })
    }

    /// Runs a dispatched execution to completion with exit code 0.
    pub fn finish_dispatch(&mut self, reply: &ToolReply) {
        let Some(super::Action::Dispatch { execution_id }) = reply.action else {
            panic!("expected a dispatch, got {reply:?}");
        };
        assert_eq!(
            self.session.execution(execution_id).unwrap().status,
            crate::status::ExecutionStatus::Running,
            "a dispatched execution is already running"
        );
        let output = ExecOutput {
            exit_code: Some(0),
            ..ExecOutput::default()
        };
        self.session
            .handle_execution_finished(self.now, execution_id, Ok(output))
            .unwrap();
    }

    pub fn commit(&mut self) -> Commit {
        let commit = self.session.take_commit();
        let version = commit.expected_version.unwrap_or(0) + 1;
        self.session.committed(version);
        self.commits.push(commit.clone());
        commit
    }

    pub fn events(&self) -> Vec<&DomainEvent> {
        self.commits
            .iter()
            .flat_map(|c| c.events.iter())
            .chain(self.session.pending_events().iter())
            .map(|e| &e.event)
            .collect()
    }

    pub fn step_status(&self, generation: u32, seq: u32) -> StepStatus {
        self.session
            .all_steps()
            .iter()
            .find(|s| s.generation == generation && s.seq == seq)
            .map(|s| s.status)
            .unwrap_or_else(|| panic!("no step {generation}/{seq}"))
    }
}

pub(super) fn drafts(titles: &[&str]) -> Vec<StepDraft> {
    titles
        .iter()
        .map(|t| StepDraft {
            check: None,
            title: (*t).to_owned(),
            detail: None,
            commands: Vec::new(),
        })
        .collect()
}

pub(super) fn assert_refused(reply: &ToolReply, needle: &str) {
    assert_eq!(reply.outcome, ToolCallOutcome::Refused, "{reply:?}");
    assert!(
        reply.text.contains(needle),
        "expected {needle:?} in {:?}",
        reply.text
    );
    assert_eq!(reply.action, None);
}

pub(super) fn assert_ok(reply: &ToolReply) {
    assert_eq!(reply.outcome, ToolCallOutcome::Ok, "{reply:?}");
}
