//! Turn boundaries (TURN-1): a start event, and exactly one `turn.done` per turn.

use crate::event::{DomainEvent, TurnCause};
use crate::time::Timestamp;

use super::Session;

/// How a turn ended, as the shell reports it to [`Session::handle_turn_end`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnEnd<'a> {
    /// It ended in this text: the model's answer, or the step-limit summary (TURN-6).
    Answer(&'a str),
    /// It failed with this error (TURN-2). A failed turn is never an answer (SWEEP-2).
    Failed(&'a str),
}

impl Session {
    /// Records that a turn started.
    pub fn handle_turn_started(&mut self, now: Timestamp, cause: TurnCause) {
        self.emit(now, DomainEvent::TurnStarted { cause });
    }

    /// TURN-1: records that the turn ended, with the real error when it failed. The shell
    /// calls this exactly once per turn, after any error was reported.
    pub fn handle_turn_done(&mut self, now: Timestamp, error: Option<String>, n_tool_calls: u32) {
        self.emit(
            now,
            DomainEvent::TurnDone {
                error,
                n_tool_calls,
            },
        );
    }
}
