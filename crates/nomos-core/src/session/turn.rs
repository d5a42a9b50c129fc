//! Turn boundaries (TURN-1): a start event, and exactly one `turn.done` per turn.

use crate::event::{DomainEvent, TurnCause};
use crate::time::Timestamp;

use super::Session;

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
