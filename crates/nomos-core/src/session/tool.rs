//! The model's lifecycle tools and `run`, as typed inputs, and what the core answers.

use crate::classification::Classification;
use crate::fanout::FanoutId;
use crate::id::{ApprovalId, ExecutionId};
use crate::preview::PreviewResult;
use crate::record::{KnowledgeLoop, ToolCallOutcome};
use crate::status::{Outcome, StepStatus};
use crate::time::Timestamp;

use super::fanout::GroupRun;
use super::plan::StepDraft;
use super::{Session, text};

/// Whether a `propose_plan` call asks to revise a plan already in flight (PLAN-3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Revision {
    /// A first proposal, or a revision before any step started.
    No,
    /// `revise: true`, with the reason the model gave (required to revise).
    Yes {
        /// Why the plan must change.
        reason: Option<String>,
    },
}

/// A tool call the core decides, with arguments already parsed by the shell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolInput {
    /// `set_goal(goal)`.
    SetGoal {
        /// The goal.
        goal: String,
    },
    /// `propose_plan(steps, revise, reason)`.
    ProposePlan {
        /// The steps in order.
        steps: Vec<StepDraft>,
        /// Whether this revises a plan in flight.
        revision: Revision,
    },
    /// `update_plan_step(seq, status, note)`.
    UpdatePlanStep {
        /// Seq within the current generation.
        seq: u32,
        /// New status.
        status: StepStatus,
        /// Optional note.
        note: Option<String>,
    },
    /// `complete_task(outcome, summary)`.
    CompleteTask {
        /// The outcome.
        outcome: Outcome,
        /// What was achieved.
        summary: String,
    },
    /// `ask_operator(question)`.
    AskOperator {
        /// The question.
        question: String,
    },
    /// `run(host, command)`, with the classifier's verdict on exactly that command.
    Run {
        /// Host slug.
        host: String,
        /// The exact command.
        command: String,
        /// Its class and reason.
        classification: Classification,
        /// GATE-10: its preview, when the shell ran one because the command would wait
        /// for its own approval ([`Session::run_would_wait`]).
        preview: Option<PreviewResult>,
    },
    /// `run(host: "tag:NAME" | hosts: [...], command)` (FLEET-1), resolved by the shell.
    RunGroup(GroupRun),
}

/// What the shell must do after a tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Run this execution once, after committing the decision (which marked it
    /// `running`), then report its end with `handle_execution_finished`.
    Dispatch {
        /// The execution to run.
        execution_id: ExecutionId,
    },
    /// Tell the operator an approval is waiting (it is already persisted in the commit).
    AwaitApproval {
        /// The approval request.
        approval_id: ApprovalId,
        /// The execution it guards (the first host's, for a fan-out).
        execution_id: ExecutionId,
    },
    /// FLEET-2: drive this fan-out: call [`Session::advance_fanout`], dispatch the
    /// executions it marked `running` after the commit, report each end, and advance
    /// again until nothing is left to start or running.
    StartFanout {
        /// The fan-out.
        fanout_id: FanoutId,
    },
}

/// The core's answer to one tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolReply {
    /// How the call ended.
    pub outcome: ToolCallOutcome,
    /// The tool result the model reads (directive when refused).
    pub text: String,
    /// What the shell must do next, if anything.
    pub action: Option<Action>,
}

impl ToolReply {
    pub(crate) fn ok(text: impl Into<String>) -> ToolReply {
        ToolReply {
            outcome: ToolCallOutcome::Ok,
            text: text.into(),
            action: None,
        }
    }

    pub(crate) fn refused(text: impl Into<String>) -> ToolReply {
        ToolReply {
            outcome: ToolCallOutcome::Refused,
            text: text.into(),
            action: None,
        }
    }

    pub(crate) fn error(text: impl Into<String>) -> ToolReply {
        ToolReply {
            outcome: ToolCallOutcome::Error,
            text: text.into(),
            action: None,
        }
    }

    pub(crate) fn with_action(mut self, action: Action) -> ToolReply {
        self.action = Some(action);
        self
    }
}

/// How an embedder's extra tool is gated (GATE-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtraToolKind {
    /// Reads only; runs at any time (and counts as discovery for WRITEBACK-2).
    ReadOnly,
    /// Changes state; runs only after the operator approved the plan.
    Gated,
}

/// A knowledge tool the shell ran itself (WRITEBACK-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnowledgeUse {
    /// `get_entity`, `get_relations`, `list_hosts`, `list_entities`.
    Discovery,
    /// `update_entity_attributes`, `create_relationship`.
    WriteBack,
}

impl Session {
    /// Decides one tool call. `call_id` is the model's id for the call.
    pub fn handle_tool(&mut self, now: Timestamp, call_id: &str, input: ToolInput) -> ToolReply {
        match input {
            ToolInput::SetGoal { goal } => self.set_goal(now, goal),
            ToolInput::ProposePlan { steps, revision } => self.propose_plan(now, steps, revision),
            ToolInput::UpdatePlanStep { seq, status, note } => {
                self.update_plan_step(now, call_id, seq, status, note)
            }
            ToolInput::CompleteTask { outcome, summary } => {
                self.complete_task(now, outcome, summary)
            }
            ToolInput::AskOperator { question } => self.ask_operator(now, question),
            ToolInput::Run {
                host,
                command,
                classification,
                preview,
            } => self.run(now, call_id, host, command, classification, preview),
            ToolInput::RunGroup(run) => self.run_group(now, call_id, run),
        }
    }

    /// GATE-3: whether an extra tool the shell runs itself may run now. A read-only one
    /// always may; a gated one only inside the operator's assent window (an expired window
    /// is closed first, recorded). `Some` is the refusal to record instead of calling it.
    pub fn handle_extra_tool(
        &mut self,
        now: Timestamp,
        name: &str,
        kind: ExtraToolKind,
    ) -> Option<ToolReply> {
        match kind {
            ExtraToolKind::ReadOnly => None,
            ExtraToolKind::Gated if self.handle_gate_check(now) => None,
            ExtraToolKind::Gated => Some(ToolReply::refused(text::extra_tool_needs_assent(name))),
        }
    }

    /// WRITEBACK-1: accounts for a discovery or write-back tool the shell ran.
    pub fn handle_knowledge_use(&mut self, now: Timestamp, used: KnowledgeUse) {
        self.touch(now);
        self.record.knowledge = match (self.record.knowledge, used) {
            (_, KnowledgeUse::WriteBack) => KnowledgeLoop::WrittenBack,
            (KnowledgeLoop::Untouched, KnowledgeUse::Discovery) => KnowledgeLoop::Discovered,
            (current, KnowledgeUse::Discovery) => current,
        };
    }

    /// The refusal for a tool that needs an open task, or `None` when it may proceed.
    pub(crate) fn refuse_if_terminal(&self, tool: &str) -> Option<ToolReply> {
        if !self.record.status.is_terminal() {
            return None;
        }
        Some(ToolReply::refused(text::task_complete_refusal(
            tool,
            self.record.status,
        )))
    }
}
