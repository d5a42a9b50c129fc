//! The execution lifecycle (EXEC-1, EXEC-2, EXEC-3, EXEC-6): forward-only transitions,
//! dispatched at most once, every start has an end.

use crate::event::DomainEvent;
use crate::id::ExecutionId;
use crate::record::{ExecOutput, Execution};
use crate::status::ExecutionStatus;
use crate::sweep::ExecutionVerdict;
use crate::time::Timestamp;

use super::Session;
use super::tool::Action;

/// Why an execution input was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecutionError {
    /// No execution with that id in this session.
    #[error("execution {0} not found")]
    NotFound(ExecutionId),
    /// EXEC-1/EXEC-6: the transition would go backwards or repeat a dispatch.
    #[error("execution {id} cannot move from {from} to {to}")]
    Transition {
        /// The execution.
        id: ExecutionId,
        /// Its status.
        from: ExecutionStatus,
        /// The refused target.
        to: ExecutionStatus,
    },
}

impl Session {
    /// One execution.
    pub fn execution(&self, id: ExecutionId) -> Option<&Execution> {
        self.executions.iter().find(|e| e.id == id)
    }

    /// EXEC-1, EXEC-6: the one way an execution starts. Marks an `approved` execution
    /// `running` and returns the [`Action::Dispatch`] that tells the shell to run it, so the
    /// shell cannot run a command the core did not mark (the action is also queued for
    /// [`Session::poll_action`]). Anything else (already running,
    /// finished, still waiting for its approval, cancelled) is refused: an execution is
    /// dispatched at most once.
    pub(crate) fn start_execution(
        &mut self,
        now: Timestamp,
        id: ExecutionId,
    ) -> Result<Action, ExecutionError> {
        let execution = self.execution(id).ok_or(ExecutionError::NotFound(id))?;
        if execution.status != ExecutionStatus::Approved {
            return Err(ExecutionError::Transition {
                id,
                from: execution.status,
                to: ExecutionStatus::Running,
            });
        }
        self.move_execution(now, id, ExecutionStatus::Running, None);
        let action = Action::Dispatch { execution_id: id };
        self.queue(action);
        Ok(action)
    }

    /// EXEC-2/EXEC-5: records how a running execution ended: its output, or the error
    /// that stopped it (marked `failed` with the error text).
    pub fn handle_execution_finished(
        &mut self,
        now: Timestamp,
        id: ExecutionId,
        result: Result<ExecOutput, String>,
    ) -> Result<(), ExecutionError> {
        // SAFE-3: a change that ran with its revert armed waits for Confirm, whatever its end.
        let to = if self.ends_armed(id) {
            ExecutionStatus::Armed
        } else if result.is_ok() {
            ExecutionStatus::Completed
        } else {
            ExecutionStatus::Failed
        };
        let execution = self.execution(id).ok_or(ExecutionError::NotFound(id))?;
        if !execution.status.can_move_to(to) {
            return Err(ExecutionError::Transition {
                id,
                from: execution.status,
                to,
            });
        }
        let judged = if execution.kind == crate::record::ExecutionKind::Check {
            Some(result.clone())
        } else {
            None
        };
        match result {
            Ok(output) => {
                if let Some(e) = self.executions.find_edit(|e| e.id == id) {
                    e.output = Some(output);
                }
                self.move_execution(now, id, to, None);
            }
            Err(error) => self.move_execution(now, id, to, Some(error)),
        }
        // SAFE-4: a check's end decides its step.
        if let Some(result) = judged {
            self.judge_check(now, id, &result);
        }
        Ok(())
    }

    /// Applies a sweep verdict (EXEC-3, EXEC-6) to one execution.
    pub fn apply_execution_verdict(
        &mut self,
        now: Timestamp,
        id: ExecutionId,
        verdict: &ExecutionVerdict,
    ) -> Result<(), ExecutionError> {
        let execution = self.execution(id).ok_or(ExecutionError::NotFound(id))?;
        let (to, reason) = match verdict {
            ExecutionVerdict::Keep => return Ok(()),
            ExecutionVerdict::Fail { reason } => (ExecutionStatus::Failed, reason.clone()),
            ExecutionVerdict::Cancel { reason } => (ExecutionStatus::Cancelled, reason.clone()),
        };
        if !execution.status.can_move_to(to) {
            return Err(ExecutionError::Transition {
                id,
                from: execution.status,
                to,
            });
        }
        // An execution cancelled while its approval waits takes the approval with it.
        if let Some(idx) = self.approvals.iter().position(|a| {
            a.execution_id == id && a.status == crate::status::ApprovalStatus::Pending
        }) {
            let approval = self.approvals.edit(idx);
            approval.status = crate::status::ApprovalStatus::Cancelled;
            approval.decided_at = Some(now);
            let approval_id = approval.id;
            self.emit(
                now,
                DomainEvent::ApprovalResolved {
                    approval_id,
                    status: crate::status::ApprovalStatus::Cancelled,
                    reason: Some(reason.clone()),
                    decided_by: None,
                    username: None,
                    request_id: None,
                },
            );
        }
        self.move_execution(now, id, to, Some(reason));
        Ok(())
    }

    /// The one place an execution's status changes, always with its event. Callers have
    /// checked the transition.
    pub(crate) fn move_execution(
        &mut self,
        now: Timestamp,
        id: ExecutionId,
        to: ExecutionStatus,
        error: Option<String>,
    ) {
        let Some(execution) = self.executions.find_edit(|e| e.id == id) else {
            return;
        };
        if !execution.status.can_move_to(to) {
            return;
        }
        execution.status = to;
        match to {
            ExecutionStatus::Running => execution.started_at = Some(now),
            _ if to.is_terminal() => execution.finished_at = Some(now),
            _ => {}
        }
        if error.is_some() {
            execution.error = error.clone();
        }
        let exit_code = execution.output.as_ref().and_then(|o| o.exit_code);
        self.emit(
            now,
            DomainEvent::ExecutionStatusChanged {
                execution_id: id,
                status: to,
                exit_code,
                error,
            },
        );
    }
}
