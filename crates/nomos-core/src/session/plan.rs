//! Plans: generations, generation-relative seq, ordered advancement and close-out (PLAN-1..9).

use crate::check::{StepCheck, check_refusal};
use crate::declared::DeclaredCommand;
use crate::event::{AssentCloseReason, DomainEvent};
use crate::record::PlanStep;
use crate::status::{ApprovalStatus, SessionStatus, StepStatus};
use crate::time::Timestamp;

use super::tool::{Revision, ToolReply};
use super::{Session, text};

/// One step as the model proposes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepDraft {
    /// What the step does.
    pub title: String,
    /// Optional detail.
    pub detail: Option<String>,
    /// GATE-9: the commands the step declares it will run, classified at proposal.
    pub commands: Vec<DeclaredCommand>,
    /// SAFE-4: the read-only check that proves the step worked, classified at proposal.
    pub check: Option<StepCheck>,
}

/// The words that make a step a write-back step (PLAN-6).
const WRITEBACK_MARKERS: [&str; 5] = [
    "write back",
    "writeback",
    "upsert_knowledge",
    "update_entity_attributes",
    "create_relationship",
];

/// PLAN-6: whether a step counts as write-back (title or detail, case-insensitive).
pub fn is_writeback_step(title: &str, detail: Option<&str>) -> bool {
    let text = format!("{} {}", title, detail.unwrap_or_default()).to_lowercase();
    WRITEBACK_MARKERS.iter().any(|marker| text.contains(marker))
}

impl Session {
    pub(crate) fn propose_plan(
        &mut self,
        now: Timestamp,
        drafts: Vec<StepDraft>,
        revision: Revision,
    ) -> ToolReply {
        if let Some(refusal) = self.refuse_if_terminal("propose_plan") {
            return refusal;
        }
        if self.record.goal.is_none() {
            return ToolReply::refused(text::SET_GOAL_FIRST);
        }
        let drafts: Vec<StepDraft> = drafts
            .into_iter()
            .filter(|d| !d.title.trim().is_empty())
            .collect();
        if drafts.is_empty() {
            return ToolReply::error("a plan needs at least one step with a title");
        }
        // SAFE-4: a check may only read.
        if let Some(refusal) = check_refusal(drafts.iter().map(|d| d.check.as_ref()).enumerate()) {
            return ToolReply::refused(refusal);
        }
        let generation = self.record.plan_generation;
        let mut stamp = now;
        let in_flight = self
            .current_steps()
            .any(|s| s.status != StepStatus::Pending);
        let (target, reason) = if generation == 0 {
            (1, None)
        } else if self.plan_rejected() {
            // GATE-4: a rejected plan stays as it was; the new proposal is a new generation,
            // so a decision that names the rejected one is stale.
            (generation + 1, None)
        } else if !in_flight {
            // PLAN-2: a revision before execution replaces this generation's steps. GATE-4:
            // the new proposal's stamp is later than the one it replaces, so its digest is
            // new even when its text is not.
            if let Some(old) = crate::plan_digest::proposal_stamp(self.current_steps()) {
                stamp = stamp.max(Timestamp::from_millis(old.as_millis() + 1));
            }
            self.steps.edit().retain(|s| s.generation != generation);
            (generation, None)
        } else {
            match revision {
                Revision::No => {
                    return ToolReply::refused(text::plan_in_flight(self.current_steps().count()));
                }
                Revision::Yes { reason } => match reason.filter(|r| !r.trim().is_empty()) {
                    None => return ToolReply::refused(text::REVISION_NEEDS_REASON),
                    Some(reason) => {
                        // PLAN-3: the old generation's pending steps become `replaced`;
                        // SESSION-5: a step it left running is closed, never left running.
                        self.replace_pending_steps(now, generation);
                        self.close_running_steps(now, text::STEP_CLOSED_BY_REVISION);
                        (generation + 1, Some(reason))
                    }
                },
            }
        };
        // GATE-4, GATE-7: assent and approvals were given to the plan the operator saw;
        // a replaced or revised plan is not that plan.
        let (close, why) = if reason.is_some() {
            (AssentCloseReason::PlanRevised, text::APPROVAL_VOID_REVISED)
        } else {
            (
                AssentCloseReason::PlanReplaced,
                text::APPROVAL_VOID_REPLACED,
            )
        };
        // Before the first plan there is neither (GATE-2 refuses every request).
        self.close_assent(now, close);
        self.cancel_pending_approvals(now, ApprovalStatus::Cancelled, why);
        self.record.plan_generation = target;
        let drafts = with_writeback_step(drafts);
        let titles: Vec<String> = drafts.iter().map(|d| d.title.clone()).collect();
        for (idx, draft) in drafts.into_iter().enumerate() {
            let seq = idx as u32 + 1;
            self.steps.edit().push(PlanStep {
                id: self.record.id.step_id(target, seq),
                session_id: self.record.id,
                generation: target,
                seq,
                title: draft.title,
                detail: draft.detail,
                commands: draft.commands,
                check: draft.check,
                status: StepStatus::Pending,
                note: None,
                started_at: None,
                finished_at: None,
                updated_at: stamp,
            });
        }
        self.steps.edit().sort_by_key(|s| (s.generation, s.seq));
        // AUTHZ-3: how many operators this plan needs is fixed when it is proposed.
        self.fix_plan_approvers(target);
        let revised = reason.is_some();
        self.emit(
            now,
            DomainEvent::PlanProposed {
                generation: target,
                steps: titles,
                revision_reason: reason,
            },
        );
        // SESSION-2: a question to the operator stays open until the operator answers.
        if !matches!(
            self.record.status,
            SessionStatus::Planning | SessionStatus::AwaitingInput
        ) {
            self.set_status(
                now,
                SessionStatus::Planning,
                Some("plan proposed".to_owned()),
            );
        }
        let current: Vec<&PlanStep> = self.current_steps().collect();
        let mut reply = text::plan_set(&current, target, revised);
        reply.push_str(&text::declared_commands(&current, self.config.assent_scope));
        ToolReply::ok(reply)
    }

    pub(crate) fn update_plan_step(
        &mut self,
        now: Timestamp,
        call_id: &str,
        seq: u32,
        status: StepStatus,
        note: Option<String>,
    ) -> ToolReply {
        if matches!(status, StepStatus::Pending | StepStatus::Replaced) {
            return ToolReply::refused(text::step_status_not_settable(status));
        }
        let generation = self.record.plan_generation;
        let n_steps = self.current_steps().count();
        let Some(idx) = self
            .steps
            .iter()
            .position(|s| s.generation == generation && s.seq == seq)
        else {
            return ToolReply::refused(text::step_not_found(seq, generation, n_steps));
        };
        let current = self.steps[idx].status;
        if current == StepStatus::Replaced {
            return ToolReply::refused(text::step_replaced(seq));
        }
        if current == status {
            return ToolReply::ok(text::step_updated(seq, status));
        }
        if current.is_closed() {
            return ToolReply::refused(text::step_closed(seq, current));
        }
        // PLAN-5: a step cannot start (or finish) while an earlier one is still pending;
        // skipping a step needs no order.
        if status != StepStatus::Skipped
            && let Some(earlier) = self
                .current_steps()
                .find(|s| s.seq < seq && s.status == StepStatus::Pending)
                .map(|s| s.seq)
        {
            return ToolReply::refused(text::earlier_step_pending(seq, earlier));
        }
        // SAFE-4: a step with a check is done only when its check passes.
        if status == StepStatus::Done
            && let Some(reply) = self.verify_step(now, call_id, idx, note.clone())
        {
            return reply;
        }
        self.set_step_status(now, idx, status, note);
        self.close_assent_if_plan_finished(now);
        ToolReply::ok(text::step_updated(seq, status))
    }

    /// PLAN-9: the one place a step's status changes, always with its event.
    pub(crate) fn set_step_status(
        &mut self,
        now: Timestamp,
        idx: usize,
        status: StepStatus,
        note: Option<String>,
    ) {
        let step = &mut self.steps.edit()[idx];
        step.status = status;
        step.updated_at = now;
        if note.is_some() {
            step.note = note;
        }
        let (generation, seq) = (step.generation, step.seq);
        let event = if status == StepStatus::Running {
            step.started_at.get_or_insert(now);
            DomainEvent::StepStarted { generation, seq }
        } else {
            // PLAN-8: never invent a start earlier than the close.
            if status != StepStatus::Replaced && status != StepStatus::Skipped {
                step.started_at.get_or_insert(now);
            }
            step.finished_at = Some(now);
            DomainEvent::StepFinished {
                generation,
                seq,
                status,
            }
        };
        self.emit(now, event);
    }

    fn replace_pending_steps(&mut self, now: Timestamp, generation: u32) {
        let pending: Vec<usize> = (0..self.steps.len())
            .filter(|&i| {
                self.steps[i].generation == generation
                    && self.steps[i].status == StepStatus::Pending
            })
            .collect();
        for idx in pending {
            self.set_step_status(now, idx, StepStatus::Replaced, None);
        }
    }

    /// SESSION-5: closes every running step as `failed`, with `note` saying why (called
    /// when the generation they belong to is being replaced).
    fn close_running_steps(&mut self, now: Timestamp, note: &str) {
        let running: Vec<usize> = (0..self.steps.len())
            .filter(|&i| self.steps[i].status == StepStatus::Running)
            .collect();
        for idx in running {
            self.set_step_status(now, idx, StepStatus::Failed, Some(note.to_owned()));
        }
    }

    /// PLAN-8, SESSION-5: closes every open step at completion. In the current generation,
    /// running steps end as `done` on success and `failed` otherwise, and pending steps as
    /// `done` on success and `skipped` otherwise. A step an older generation left open
    /// (a plan replaced while it ran) never counts as done: running ends `failed`, pending
    /// `skipped`. Returns how many steps it closed.
    pub(crate) fn close_plan(&mut self, now: Timestamp, success: bool) -> usize {
        let generation = self.record.plan_generation;
        let open: Vec<usize> = (0..self.steps.len())
            .filter(|&i| !self.steps[i].status.is_closed())
            .collect();
        for &idx in &open {
            let current = self.steps[idx].generation == generation;
            let (status, note) = match (self.steps[idx].status, success && current) {
                (_, true) => (StepStatus::Done, text::STEP_CLOSED_AT_COMPLETION),
                (StepStatus::Running, false) => {
                    (StepStatus::Failed, text::STEP_CLOSED_AT_COMPLETION)
                }
                (_, false) => (StepStatus::Skipped, text::STEP_CLOSED_AT_COMPLETION),
            };
            let note = if current {
                note.to_owned()
            } else {
                format!("{note}; its plan generation had been replaced")
            };
            self.steps.edit()[idx].started_at.get_or_insert(now);
            self.set_step_status(now, idx, status, Some(note));
        }
        open.len()
    }

    /// The seq of the running step of the current generation, if any.
    pub(crate) fn running_step(&self) -> Option<u32> {
        self.current_steps()
            .find(|s| s.status == StepStatus::Running)
            .map(|s| s.seq)
    }

    /// Whether the current generation has steps that are not closed yet.
    pub(crate) fn plan_open(&self) -> bool {
        self.current_steps().any(|s| !s.status.is_closed())
    }
}

/// PLAN-6: appends a write-back step when none of the drafts is one.
fn with_writeback_step(mut drafts: Vec<StepDraft>) -> Vec<StepDraft> {
    if !drafts
        .iter()
        .any(|d| is_writeback_step(&d.title, d.detail.as_deref()))
    {
        drafts.push(StepDraft {
            title: text::WRITEBACK_STEP_TITLE.to_owned(),
            detail: Some(text::WRITEBACK_STEP_DETAIL.to_owned()),
            commands: Vec::new(),
            check: None,
        });
    }
    drafts
}
