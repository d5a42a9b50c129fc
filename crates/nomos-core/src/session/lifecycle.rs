//! The task lifecycle: goal, completion, questions, the transcript, assent and turn ends
//! (SESSION-1..7, GATE-4, WRITEBACK-2, TURN-3/4).

use crate::assent::{AssentVerdict, detect_assent};
use crate::event::{AssentCloseReason, DomainEvent};
use crate::id::{ApprovalId, MessageId};
use crate::record::{
    AssentWindow, Decider, KnowledgeLoop, Message, ToolCallRecord, ToolCallRequest,
};
use crate::status::{ApprovalStatus, Outcome, Role, SessionStatus};
use crate::sweep::{
    LastMessage, SessionFacts, SessionVerdict, SweepMode, SweepThresholds, classify_session,
};
use crate::time::Timestamp;

use super::tool::ToolReply;
use super::turn::TurnEnd;
use super::{Session, text};

/// What [`Session::handle_sweep`] did to one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepOutcome {
    /// The approvals that expired (GATE-7).
    pub expired: Vec<ApprovalId>,
    /// The verdict, already applied.
    pub verdict: SessionVerdict,
}

/// What an operator message did to the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorMessageEffect {
    /// The persisted message.
    pub message_id: MessageId,
    /// GATE-4: whether it opened an assent window, and for which generation.
    pub assented_generation: Option<u32>,
    /// AUTHZ-2: the assent it would have been, refused because its author drives the
    /// session that proposed the plan.
    pub refused: Option<crate::authz::DeciderRefusal>,
}

impl Session {
    pub(crate) fn set_goal(&mut self, now: Timestamp, goal: String) -> ToolReply {
        let goal = goal.trim().to_owned();
        if goal.is_empty() {
            return ToolReply::error("set_goal needs a non-empty goal");
        }
        // SESSION-7: a goal on a terminal session reopens it as a new task.
        let reopened = self.record.status.is_terminal();
        if reopened {
            self.record.summary = None;
            self.record.board_outcome = None;
            self.record.knowledge = KnowledgeLoop::Untouched;
            if self.record.plan_generation > 0 {
                // The next proposal starts a fresh generation.
                self.record.plan_generation += 1;
            }
        }
        self.record.goal = Some(goal.clone());
        self.record.nudged_at = None;
        self.emit(now, DomainEvent::GoalSet { goal });
        if matches!(self.record.status, SessionStatus::Active) || reopened {
            self.set_status(now, SessionStatus::Planning, Some("goal set".to_owned()));
        }
        ToolReply::ok(text::goal_set(reopened))
    }

    pub(crate) fn complete_task(
        &mut self,
        now: Timestamp,
        outcome: Outcome,
        summary: String,
    ) -> ToolReply {
        // SESSION-3: a terminal session is never completed twice.
        if let Some(refusal) = self.refuse_if_terminal("complete_task") {
            return refusal;
        }
        // WRITEBACK-2: success needs the knowledge loop closed.
        if outcome == Outcome::Success && self.record.knowledge == KnowledgeLoop::Discovered {
            if self.record.board_outcome != Some(Outcome::Partial) {
                self.record.board_outcome = Some(Outcome::Partial);
                self.emit(
                    now,
                    DomainEvent::BoardOutcome {
                        outcome: Outcome::Partial,
                    },
                );
            }
            return ToolReply::refused(text::WRITEBACK_REQUIRED);
        }
        // SAFE-4: success would close a step as done whose check has not passed.
        if outcome == Outcome::Success
            && let Some(seq) = self.unverified_step()
        {
            return ToolReply::refused(super::verify::check_not_passed(seq));
        }
        let (n_closed, n_cancelled) = self.finish(now, outcome, summary);
        ToolReply::ok(text::task_completed(
            self.record.status,
            n_closed,
            n_cancelled,
        ))
    }

    /// Moves the session to the outcome's terminal status, closing the plan (PLAN-8),
    /// the assent window and pending approvals (SESSION-5).
    pub(crate) fn finish(
        &mut self,
        now: Timestamp,
        outcome: Outcome,
        summary: String,
    ) -> (usize, usize) {
        let n_closed = self.close_plan(now, outcome == Outcome::Success);
        self.close_assent(now, AssentCloseReason::SessionEnded);
        let n_cancelled =
            self.cancel_pending_approvals(now, ApprovalStatus::Cancelled, "the task completed");
        let summary = summary.trim().to_owned();
        self.record.summary = Some(summary.clone());
        if self.record.board_outcome != Some(outcome) {
            self.record.board_outcome = Some(outcome);
            self.emit(now, DomainEvent::BoardOutcome { outcome });
        }
        self.set_status(now, outcome.status(), Some(summary));
        (n_closed, n_cancelled)
    }

    pub(crate) fn ask_operator(&mut self, now: Timestamp, question: String) -> ToolReply {
        if let Some(refusal) = self.refuse_if_terminal("ask_operator") {
            return refusal;
        }
        if question.trim().is_empty() {
            return ToolReply::error("ask_operator needs a non-empty question");
        }
        self.set_status(now, SessionStatus::AwaitingInput, Some(question));
        ToolReply::ok(text::QUESTION_ASKED)
    }

    /// An operator message: appended to the transcript; it answers a question
    /// (`awaiting_input` ends) or, in reply to a proposed plan, may assent (GATE-4). An
    /// answer to `ask_operator` goes to the model and never assents, whatever its words.
    pub fn handle_operator_message(
        &mut self,
        now: Timestamp,
        content: &str,
    ) -> OperatorMessageEffect {
        self.handle_operator_message_by(now, content, None)
    }

    /// [`Session::handle_operator_message`] from a known principal: an assent it opens
    /// records who granted it and through which request (AUDIT-1).
    pub fn handle_operator_message_by(
        &mut self,
        now: Timestamp,
        content: &str,
        by: Option<&Decider>,
    ) -> OperatorMessageEffect {
        let message_id = self.push_message(now, Role::Operator, content.to_owned(), Vec::new());
        self.touch(now);
        self.record.nudged_at = None;
        self.expire_assent(now);
        let answers_question = self.record.status == SessionStatus::AwaitingInput;
        if answers_question {
            let back = self.working_status();
            self.set_status(now, back, Some("operator answered".to_owned()));
        }
        let mut assented_generation = None;
        let mut refused = None;
        if !answers_question
            && !self.record.status.is_terminal()
            && self.plan_open()
            && let AssentVerdict::Assent { .. } = detect_assent(content)
        {
            // AUTHZ-2: an assent by the session's own driver is no assent.
            let kind = crate::authz::DecisionKind::Assent;
            match crate::authz::check_not_requester(self.record.requester(), by, kind) {
                // AUTHZ-3: a plan several operators must approve is approved by their
                // explicit plan decisions only.
                Ok(()) => match self.refuse_chat_assent(now, by) {
                    None => assented_generation = Some(self.open_assent(now, by)),
                    Some(refusal) => refused = Some(refusal),
                },
                Err(refusal) => refused = Some(self.refuse_decider(now, kind, by, None, refusal)),
            }
        }
        // RESUME-4: the model is told what the message meant for the plan.
        self.note_plan_meaning(now, content, assented_generation);
        OperatorMessageEffect {
            message_id,
            assented_generation,
            refused,
        }
    }

    /// GATE-4: opens the assent window for the current generation, bound to its declared
    /// commands (GATE-9), and moves the session to `executing` (SESSION-2). Returns the
    /// generation.
    pub(crate) fn open_assent(&mut self, now: Timestamp, by: Option<&Decider>) -> u32 {
        let generation = self.record.plan_generation;
        let expires_at = now + self.config.assent_window;
        self.close_assent(now, AssentCloseReason::Renewed);
        self.record.assent = Some(AssentWindow {
            generation,
            opened_at: now,
            expires_at,
            declared: Some(self.declared_digest()),
        });
        self.emit(
            now,
            DomainEvent::AssentOpened {
                generation,
                expires_at,
                granted_by: by.map(|d| d.name.clone()),
                username: by.and_then(|d| d.username.clone()),
                request_id: by.and_then(|d| d.request_id.clone()),
            },
        );
        // SESSION-2: an approved plan moves the session to `executing`.
        self.set_status(
            now,
            SessionStatus::Executing,
            Some("operator approved the plan".to_owned()),
        );
        generation
    }

    /// Appends the model's reply. TURN-3: a reply with no text and no tool calls is not
    /// persisted (returns `None`).
    pub fn append_assistant_message(
        &mut self,
        now: Timestamp,
        content: &str,
        tool_calls: Vec<ToolCallRequest>,
    ) -> Option<MessageId> {
        if content.trim().is_empty() && tool_calls.is_empty() {
            return None;
        }
        Some(self.push_message(now, Role::Assistant, content.to_owned(), tool_calls))
    }

    /// The id the next message appended to this session gets (the model's reply while it
    /// streams, until something else is appended first).
    pub fn next_message_id(&self) -> MessageId {
        self.record.id.message_id(self.record.n_messages + 1)
    }

    /// Appends a note from Nomos itself (nudges, resume notes, terminal notes).
    pub fn append_note(&mut self, now: Timestamp, content: &str) -> MessageId {
        self.push_message(now, Role::Note, content.to_owned(), Vec::new())
    }

    /// TURN-4: persists one tool call with its result (once; the store refuses a second).
    /// SECRET-2: the result is stored as the model may read it, secrets redacted (an
    /// `output.redacted` event says which kinds); returns that stored result.
    pub fn record_tool_call(&mut self, mut record: ToolCallRecord) -> String {
        let at = record.started_at;
        // SECRET-2: the model reads the stored result, so secrets leave it here; the
        // execution's own output keeps them for the operator.
        let redacted = crate::redaction::for_model(&record.result);
        // SWEEP-1: a tool call is activity, as of its end.
        self.touch(at + crate::time::Span::from_millis(record.duration_ms as i64));
        self.emit(
            at,
            DomainEvent::ToolCalled {
                call_id: record.call_id.clone(),
                name: record.name.clone(),
                outcome: record.outcome,
            },
        );
        if let Some(found) = redacted {
            record.result = found.text;
            self.emit(
                at,
                DomainEvent::OutputRedacted {
                    call_id: record.call_id.clone(),
                    tool: record.name.clone(),
                    kinds: found.kinds,
                },
            );
        }
        let result = record.result.clone();
        self.tool_calls.push(record);
        result
    }

    /// SESSION-4 / TURN-6: the turn ended, as `end` says. A session that never set a goal
    /// and whose turn ended in text completes as `success`; a failed turn is never an
    /// answer (SWEEP-2). Returns whether the session was completed.
    pub fn handle_turn_end(
        &mut self,
        now: Timestamp,
        end: TurnEnd<'_>,
        thresholds: &SweepThresholds,
    ) -> bool {
        // Whether the text is an answer is the sweep's to say (`LastMessage::is_answer`).
        let TurnEnd::Answer(answer) = end else {
            return false;
        };
        let facts = SessionFacts {
            record: &self.record,
            n_pending_approvals: self.n_pending_approvals(),
            last_message: Some(LastMessage {
                role: Role::Assistant,
                text: answer,
                n_tool_calls: 0,
            }),
        };
        let verdict = classify_session(&facts, now, thresholds, SweepMode::TurnEnd);
        match verdict {
            SessionVerdict::CompleteTrivial { summary } => {
                self.finish(now, Outcome::Success, summary);
                true
            }
            _ => false,
        }
    }

    /// SWEEP-1..4 (GATE-4, GATE-7 first): the periodic sweep of one session, decided on the
    /// session as it is now, so a retried decision never applies a stale verdict. Expires
    /// what is due, classifies the session with the configured `thresholds` and its
    /// `last_message` (the newest message that is not a note, [`crate::sweep::last_message`]),
    /// and applies the verdict. A [`SessionVerdict::Nudge`] is recorded here; the shell
    /// resumes the model with it, whose note the resume writes.
    pub fn handle_sweep(
        &mut self,
        now: Timestamp,
        thresholds: &SweepThresholds,
        last_message: Option<LastMessage<'_>>,
    ) -> SweepOutcome {
        let expired = self.handle_timeout(now);
        let facts = SessionFacts {
            record: &self.record,
            n_pending_approvals: self.n_pending_approvals(),
            last_message,
        };
        let verdict = classify_session(&facts, now, thresholds, SweepMode::Periodic);
        self.apply_session_verdict(now, &verdict, None);
        SweepOutcome { expired, verdict }
    }

    /// Applies a sweep or backfill verdict (SWEEP-1/2, SESSION-4, BACKFILL-2). `note` is
    /// the transcript note to leave for a nudge.
    pub fn apply_session_verdict(
        &mut self,
        now: Timestamp,
        verdict: &SessionVerdict,
        note: Option<&str>,
    ) {
        match verdict {
            SessionVerdict::Leave { .. } => {}
            SessionVerdict::Nudge => {
                if let Some(note) = note {
                    self.append_note(now, note);
                }
                self.record.nudged_at = Some(now);
                self.emit(now, DomainEvent::Nudged);
            }
            SessionVerdict::CompleteTrivial { summary } => {
                self.finish(now, Outcome::Success, summary.clone());
            }
            SessionVerdict::ClosePartial { summary } => {
                self.finish(now, Outcome::Partial, summary.clone());
            }
        }
    }

    /// GATE-4: closes the assent window, if one is open, with one `assent.closed` event.
    pub(crate) fn close_assent(&mut self, now: Timestamp, reason: AssentCloseReason) {
        if let Some(window) = self.record.assent.take() {
            self.emit(
                now,
                DomainEvent::AssentClosed {
                    generation: window.generation,
                    reason,
                },
            );
        }
    }

    /// GATE-4: closes a window whose time ran out. Every gate decision calls it first, so
    /// an expired window is recorded as closed the first time anything asks about it.
    pub(crate) fn expire_assent(&mut self, now: Timestamp) {
        if self.record.assent.is_some_and(|w| now >= w.expires_at) {
            self.close_assent(now, AssentCloseReason::Expired);
        }
    }

    /// GATE-4: closes the window once every step of the generation it approved is finished.
    pub(crate) fn close_assent_if_plan_finished(&mut self, now: Timestamp) {
        let Some(window) = self.record.assent else {
            return;
        };
        let finished = self
            .steps
            .iter()
            .filter(|s| s.generation == window.generation)
            .all(|s| s.status.is_closed());
        if finished {
            self.close_assent(now, AssentCloseReason::PlanFinished);
        }
    }

    /// Whether an assent window for the current generation is open at `now` (a query: it
    /// changes nothing; gate decisions use [`Session::handle_gate_check`]).
    pub fn assent_open(&self, now: Timestamp) -> bool {
        self.record
            .assent
            .is_some_and(|w| w.generation == self.record.plan_generation && now < w.expires_at)
    }

    /// GATE-3: the gate decision for a state-changing tool the shell runs itself (a gated
    /// extra tool). Closes an expired window first (recorded), then says whether the
    /// operator's assent is in force.
    pub fn handle_gate_check(&mut self, now: Timestamp) -> bool {
        self.expire_assent(now);
        self.assent_open(now)
    }

    /// The status a non-terminal session works in: `executing` with an open assent,
    /// `planning` with a goal, `active` otherwise.
    fn working_status(&self) -> SessionStatus {
        if self.record.assent.is_some() {
            SessionStatus::Executing
        } else if self.record.goal.is_some() {
            SessionStatus::Planning
        } else {
            SessionStatus::Active
        }
    }

    pub(crate) fn n_pending_approvals(&self) -> usize {
        self.approvals
            .iter()
            .filter(|a| a.status == ApprovalStatus::Pending)
            .count()
    }

    fn push_message(
        &mut self,
        now: Timestamp,
        role: Role,
        content: String,
        tool_calls: Vec<ToolCallRequest>,
    ) -> MessageId {
        let message_id = self.next_message_id();
        self.record.n_messages += 1;
        self.messages.push(Message {
            id: message_id,
            session_id: self.record.id,
            role,
            content,
            tool_calls,
            created_at: now,
        });
        self.emit(now, DomainEvent::MessageAppended { message_id, role });
        message_id
    }
}
