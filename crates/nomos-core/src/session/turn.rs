//! Turn boundaries (TURN-1): a start event, and exactly one `turn.done` per turn; the
//! step limit of one turn (TURN-6).

use crate::event::{DomainEvent, TurnCause};
use crate::time::Timestamp;

use super::{Session, text};

/// TURN-6: how many tool calls one turn may make, and how many it made. The shell asks it
/// before every call of the model's reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepBudget {
    limit: u32,
    used: u32,
}

/// What [`StepBudget::admit`] decided for one tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepVerdict {
    /// Make the call; it is counted.
    Proceed,
    /// The turn reached its limit: answer this call and every later call of the reply
    /// with `result` (refused, never left dangling), and end the turn with
    /// [`StepBudget::summary`].
    Limit {
        /// The tool result of each call not made.
        result: String,
    },
}

impl StepBudget {
    /// A budget of `limit` calls, `used` already made in this turn.
    pub fn new(limit: u32, used: u32) -> StepBudget {
        StepBudget { limit, used }
    }

    /// The calls made so far.
    pub fn used(&self) -> u32 {
        self.used
    }

    /// Decides the next call: counted and made, or the limit reached.
    pub fn admit(&mut self) -> StepVerdict {
        if self.used >= self.limit {
            return StepVerdict::Limit {
                result: text::step_limit_result(self.limit),
            };
        }
        self.used += 1;
        StepVerdict::Proceed
    }

    /// The final text of a turn stopped at its limit, from the reply's own `text`.
    pub fn summary(&self, text: &str) -> String {
        text::step_limit_summary(self.limit, text)
    }
}

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
