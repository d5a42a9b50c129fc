//! The operator's hygiene controls: closing a denied or stuck task with an outcome and a
//! note (CONTROL-5), and archiving a session off the board (CONTROL-6). The core decides
//! which states allow them and what they change; the shell refuses a close while a turn
//! runs, since only it knows.

use crate::event::DomainEvent;
use crate::record::Decider;
use crate::status::{ApprovalStatus, ExecutionStatus, Outcome, SessionStatus};
use crate::time::Timestamp;

use super::Session;

/// CONTROL-5: the longest note a close may carry, in characters.
pub const CLOSE_NOTE_MAX_CHARS: usize = 2000;

/// What an operator's close cancels a pending approval with (CONTROL-5).
pub const CLOSED_BY_OPERATOR: &str = "the operator closed the task";

/// Why a close was refused (CONTROL-5).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CloseError {
    /// The session already ended.
    #[error("the session is already {0}; only an open task can be closed")]
    Terminal(SessionStatus),
    /// The operator closes with `failure` or `partial`; success is the model's to claim.
    #[error("an operator closes a task as failure or partial, not {0}")]
    Outcome(Outcome),
    /// A command still runs; it must end (or be stopped) first.
    #[error("a command of this session is still running; stop it before closing the task")]
    CommandRunning,
    /// The note is longer than allowed.
    #[error("the note is {0} characters long; at most {CLOSE_NOTE_MAX_CHARS} are allowed")]
    NoteTooLong(usize),
}

/// What a close did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloseEffect {
    /// The terminal status the session ended in.
    pub status: SessionStatus,
    /// How many pending approvals it cancelled (SESSION-5).
    pub n_cancelled: usize,
    /// How many open plan steps it closed (PLAN-8).
    pub n_closed_steps: usize,
}

impl Session {
    /// CONTROL-5, AUDIT-1: the operator closes an open task as `failure` or `partial`
    /// with a note: a `task.closed` event naming who, then what `complete_task` does
    /// (SESSION-5: pending approvals cancelled, open steps closed, the assent window
    /// closed, one `task.status`), and a note the model reads if the chat goes on.
    pub fn handle_operator_close(
        &mut self,
        now: Timestamp,
        outcome: Outcome,
        note: Option<&str>,
        by: Option<&Decider>,
    ) -> Result<CloseEffect, CloseError> {
        if self.record.status.is_terminal() {
            return Err(CloseError::Terminal(self.record.status));
        }
        if outcome == Outcome::Success {
            return Err(CloseError::Outcome(outcome));
        }
        let note = note.map(str::trim).filter(|n| !n.is_empty());
        if let Some(note) = note {
            let chars = note.chars().count();
            if chars > CLOSE_NOTE_MAX_CHARS {
                return Err(CloseError::NoteTooLong(chars));
            }
        }
        if self
            .executions
            .iter()
            .any(|e| e.status == ExecutionStatus::Running)
        {
            return Err(CloseError::CommandRunning);
        }
        self.touch(now);
        self.emit(
            now,
            DomainEvent::TaskClosed {
                outcome,
                note: note.map(str::to_owned),
                closed_by: by.map(|d| d.name.clone()),
                username: by.and_then(|d| d.username.clone()),
                request_id: by.and_then(|d| d.request_id.clone()),
            },
        );
        let n_cancelled =
            self.cancel_pending_approvals(now, ApprovalStatus::Cancelled, CLOSED_BY_OPERATOR);
        let summary = match note {
            Some(note) => format!("closed by the operator: {note}"),
            None => "closed by the operator".to_owned(),
        };
        let (n_closed_steps, _) = self.finish(now, outcome, summary.clone());
        self.append_note(
            now,
            &format!(
                "The operator closed this task as {} ({summary}). Do not continue it; wait for the operator's next message.",
                outcome.as_str()
            ),
        );
        Ok(CloseEffect {
            status: self.record.status,
            n_cancelled,
            n_closed_steps,
        })
    }

    /// CONTROL-6: archives the session (it leaves the board; History lists it under its
    /// filter) or brings it back. Returns whether anything changed: archiving an archived
    /// session (or restoring a listed one) is no change and no event.
    pub fn handle_archive(&mut self, now: Timestamp, archived: bool, by: Option<&Decider>) -> bool {
        if self.record.archived_at.is_some() == archived {
            return false;
        }
        self.record.archived_at = archived.then_some(now);
        self.emit(
            now,
            DomainEvent::SessionArchived {
                archived,
                by: by.map(|d| d.name.clone()),
            },
        );
        true
    }
}
