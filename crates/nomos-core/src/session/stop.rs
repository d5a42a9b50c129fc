//! CONTROL-1: the operator stops the running turn. The core decides what a stop does to
//! the session (who stopped it, the assent window closes, which commands must stop and how
//! they end, the note the model reads next); the shell aborts the model request and stops
//! the processes.

use crate::event::{AssentCloseReason, DomainEvent};
use crate::id::{ExecutionId, MessageId};
use crate::record::Decider;
use crate::status::ExecutionStatus;
use crate::time::Timestamp;

use super::Session;
use super::execution::ExecutionError;

/// The error of a stopped turn and the end of every command it stopped (CONTROL-1).
pub const STOPPED_BY_OPERATOR: &str = "stopped by the operator";

/// The note the model's next request carries after a stop (CONTROL-1).
pub const OPERATOR_STOPPED_NOTE: &str = "The operator stopped your previous turn: the model request was aborted and every command it started was stopped (those executions are cancelled, \"stopped by the operator\"), and any approval of the plan was withdrawn. Do not repeat what was stopped. Wait for the operator's next message, and ask before you change anything again.";

/// What a stop asks of the shell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopEffect {
    /// The executions running when the stop was recorded: the shell stops their
    /// processes and reports each with [`Session::handle_execution_stopped`].
    pub running: Vec<ExecutionId>,
    /// The generation whose assent window the stop closed, if one was open.
    pub closed_generation: Option<u32>,
}

impl Session {
    /// CONTROL-1, AUDIT-1: records that the operator stopped the running turn (a
    /// `turn.stopped` event naming who and the request) and closes the assent window
    /// (`assent.closed`, reason `stopped`), so no gate decision after this commit lets a
    /// change through on the old assent. Whether a turn runs is the shell's knowledge; it
    /// calls this only for a turn it is running.
    pub fn handle_stop(&mut self, now: Timestamp, by: Option<&Decider>) -> StopEffect {
        self.touch(now);
        self.emit(
            now,
            DomainEvent::TurnStopped {
                stopped_by: by.map(|d| d.name.clone()),
                username: by.and_then(|d| d.username.clone()),
                request_id: by.and_then(|d| d.request_id.clone()),
            },
        );
        let closed_generation = self.record.assent.map(|w| w.generation);
        self.close_assent(now, AssentCloseReason::Stopped);
        let running = self
            .executions
            .iter()
            .filter(|e| e.status == ExecutionStatus::Running)
            .map(|e| e.id)
            .collect();
        StopEffect {
            running,
            closed_generation,
        }
    }

    /// CONTROL-1: a command the shell stopped for the operator ends `cancelled`, "stopped
    /// by the operator". An execution that already ended is left as it ended (`Ok`); one
    /// that was never dispatched is refused.
    pub fn handle_execution_stopped(
        &mut self,
        now: Timestamp,
        id: ExecutionId,
    ) -> Result<(), ExecutionError> {
        let execution = self.execution(id).ok_or(ExecutionError::NotFound(id))?;
        match execution.status {
            ExecutionStatus::Running => {
                self.move_execution(
                    now,
                    id,
                    ExecutionStatus::Cancelled,
                    Some(STOPPED_BY_OPERATOR.to_owned()),
                );
                Ok(())
            }
            // SAFE-3: an armed change has ended; its revert decides the rest.
            status if status.is_terminal() || status == ExecutionStatus::Armed => Ok(()),
            from => Err(ExecutionError::Transition {
                id,
                from,
                to: ExecutionStatus::Cancelled,
            }),
        }
    }

    /// CONTROL-1: the note that tells the model, in its next request, that the operator
    /// stopped it. The shell adds it once the stopped turn's commands have ended, before
    /// the turn's `turn.done`.
    pub fn append_stopped_note(&mut self, now: Timestamp) -> MessageId {
        self.append_note(now, OPERATOR_STOPPED_NOTE)
    }
}

/// CONTROL-1, REPLICA-3: where a session's turn stands, read from its event log, for a
/// stop that reaches a process that does not run the turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnState {
    /// No turn is open: the last `turn.started` has its `turn.done` (or none started).
    Idle,
    /// A turn is open and nobody asked to stop it.
    Running,
    /// A turn is open and a `turn.stopped` was recorded after its start.
    Stopping,
}

impl TurnState {
    /// The state after a session's events, oldest first.
    pub fn after<'a>(events: impl IntoIterator<Item = &'a DomainEvent>) -> TurnState {
        events
            .into_iter()
            .fold(TurnState::Idle, |state, event| match event {
                DomainEvent::TurnStarted { .. } => TurnState::Running,
                DomainEvent::TurnDone { .. } => TurnState::Idle,
                DomainEvent::TurnStopped { .. } if state == TurnState::Running => {
                    TurnState::Stopping
                }
                _ => state,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::TurnCause;

    fn started() -> DomainEvent {
        DomainEvent::TurnStarted {
            cause: TurnCause::Operator,
        }
    }

    fn stopped() -> DomainEvent {
        DomainEvent::TurnStopped {
            stopped_by: Some("ops".into()),
            username: None,
            request_id: None,
        }
    }

    fn done() -> DomainEvent {
        DomainEvent::TurnDone {
            error: None,
            n_tool_calls: 0,
        }
    }

    // rule: CONTROL-1
    #[test]
    fn a_turn_is_running_only_between_its_start_and_its_done() {
        assert_eq!(TurnState::after(&[]), TurnState::Idle);
        assert_eq!(TurnState::after(&[started()]), TurnState::Running);
        assert_eq!(TurnState::after(&[started(), done()]), TurnState::Idle);
        assert_eq!(
            TurnState::after(&[started(), done(), started()]),
            TurnState::Running
        );
    }

    // rule: CONTROL-1
    #[test]
    fn a_stop_recorded_in_an_open_turn_makes_it_stopping_until_its_done() {
        assert_eq!(
            TurnState::after(&[started(), stopped()]),
            TurnState::Stopping
        );
        assert_eq!(
            TurnState::after(&[started(), stopped(), done()]),
            TurnState::Idle
        );
        // A stop recorded after its turn ended does not reach the next turn.
        assert_eq!(
            TurnState::after(&[started(), done(), stopped(), started()]),
            TurnState::Running
        );
        assert_eq!(TurnState::after(&[stopped()]), TurnState::Idle);
    }
}
