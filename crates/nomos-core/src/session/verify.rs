//! SAFE-4 in the session: a step with a check is done only when its check passes. Marking
//! it done dispatches the check (an execution of kind `check`); the check's end marks the
//! step `done` or `failed` with what the check gave, and success is refused while a step
//! of the plan has a check that has not passed.

use crate::check::{CheckResult, CheckVerdict};
use crate::event::DomainEvent;
use crate::id::ExecutionId;
use crate::record::{ExecOutput, Execution, ExecutionKind};
use crate::status::{ExecutionStatus, StepStatus};
use crate::time::Timestamp;

use super::Session;
use super::tool::ToolReply;

impl Session {
    /// SAFE-4: what marking the step at `idx` done does when it has a check that has not
    /// passed: its check runs (once; a check already running is not run again) and the step
    /// stays `running` until it ends. `None` when the step may close at once.
    pub(crate) fn verify_step(
        &mut self,
        now: Timestamp,
        call_id: &str,
        idx: usize,
        note: Option<String>,
    ) -> Option<ToolReply> {
        let step = &self.steps[idx];
        let check = step.check.as_ref()?;
        if check.passed() {
            return None;
        }
        let (generation, seq) = (step.generation, step.seq);
        let (host, command) = (check.host.clone(), check.command.clone());
        let classification = check.classification.clone();
        if let Some(running) = self.running_check(generation, seq) {
            return Some(ToolReply::ok(check_already_running(seq, running)));
        }
        if step.status == StepStatus::Pending {
            self.set_step_status(now, idx, StepStatus::Running, None);
        }
        if note.is_some() {
            self.steps.edit()[idx].note = note;
        }
        let id = self.record.id.execution_id(self.executions.len() + 1);
        self.executions.push(Execution {
            id,
            session_id: self.record.id,
            tool_call_id: Some(call_id.to_owned()),
            kind: ExecutionKind::Check,
            host: host.clone(),
            command: command.clone(),
            class: classification.class,
            reason: format!("check of step {seq} (SAFE-4): {}", classification.reason),
            generation,
            step_seq: Some(seq),
            status: ExecutionStatus::Approved,
            created_at: now,
            started_at: None,
            finished_at: None,
            output: None,
            error: None,
        });
        self.emit(
            now,
            DomainEvent::ExecutionCreated {
                execution_id: id,
                host: host.clone(),
                command: command.clone(),
                class: classification.class,
                status: ExecutionStatus::Approved,
            },
        );
        // A check is read-only by construction (refused at proposal otherwise); it starts
        // here, with its dispatch (EXEC-6).
        match self.start_execution(now, id) {
            Ok(action) => {
                Some(ToolReply::ok(check_started(seq, &host, &command)).with_action(action))
            }
            // Unreachable: the execution was created `approved` just above.
            Err(refused) => Some(ToolReply::error(refused.to_string())),
        }
    }

    /// SAFE-4: the end of a check decides its step: `done` when it passed, `failed` with
    /// the verdict's reason when not. A check whose step is no longer open (replaced,
    /// closed at completion) decides nothing.
    pub(crate) fn judge_check(
        &mut self,
        now: Timestamp,
        id: ExecutionId,
        result: &Result<ExecOutput, String>,
    ) {
        let Some(execution) = self.execution(id) else {
            return;
        };
        let (generation, Some(seq)) = (execution.generation, execution.step_seq) else {
            return;
        };
        let Some(idx) = self
            .steps
            .iter()
            .position(|s| s.generation == generation && s.seq == seq)
        else {
            return;
        };
        let Some(check) = self.steps[idx].check.as_ref() else {
            return;
        };
        let verdict = check.judge(result);
        let open = self.steps[idx].status == StepStatus::Running;
        let step = &mut self.steps.edit()[idx];
        if let Some(check) = step.check.as_mut() {
            check.result = Some(CheckResult {
                execution_id: id,
                verdict: verdict.clone(),
            });
        }
        step.updated_at = now;
        self.emit(
            now,
            DomainEvent::StepChecked {
                generation,
                seq,
                execution_id: id,
                verdict: verdict.clone(),
            },
        );
        if !open {
            return;
        }
        match verdict {
            CheckVerdict::Passed => {
                let note = self.steps[idx].note.clone();
                self.set_step_status(now, idx, StepStatus::Done, note);
            }
            CheckVerdict::Failed { reason } => {
                self.set_step_status(now, idx, StepStatus::Failed, Some(reason));
            }
        }
        self.close_assent_if_plan_finished(now);
    }

    /// SAFE-4: what the model reads when a check ended: the step's verdict, or `None` for
    /// an execution that is not a finished check.
    pub fn check_reply(&self, id: ExecutionId) -> Option<String> {
        let execution = self.execution(id)?;
        if execution.kind != ExecutionKind::Check || !execution.status.is_terminal() {
            return None;
        }
        let seq = execution.step_seq?;
        let step = self
            .steps
            .iter()
            .find(|s| s.generation == execution.generation && s.seq == seq)?;
        let result = step.check.as_ref()?.result.as_ref()?;
        if result.execution_id != id {
            return None;
        }
        Some(match &result.verdict {
            CheckVerdict::Passed => check_passed(seq, step.status),
            CheckVerdict::Failed { reason } => check_failed(seq, step.status, reason),
        })
    }

    /// SAFE-4: the first step of the current generation with a check that has not passed
    /// (still open, or failed by its check), so `complete_task(success)` is refused; a step
    /// the model skipped explicitly does not count.
    pub(crate) fn unverified_step(&self) -> Option<u32> {
        self.current_steps()
            .find(|s| {
                !matches!(s.status, StepStatus::Skipped | StepStatus::Replaced)
                    && s.check.as_ref().is_some_and(|c| !c.passed())
            })
            .map(|s| s.seq)
    }

    fn running_check(&self, generation: u32, seq: u32) -> Option<ExecutionId> {
        self.executions
            .iter()
            .find(|e| {
                e.kind == ExecutionKind::Check
                    && e.generation == generation
                    && e.step_seq == Some(seq)
                    && !e.status.is_terminal()
            })
            .map(|e| e.id)
    }
}

/// SAFE-4: the result of marking a step done while its check runs.
fn check_started(seq: u32, host: &str, command: &str) -> String {
    format!(
        "Step {seq} has a check: `{command}` on {host} is running now, and the step is done only if it passes. Do not run the step's commands again; the check's verdict is the result of this call."
    )
}

/// SAFE-4: marking a step done again while its check still runs.
fn check_already_running(seq: u32, execution_id: ExecutionId) -> String {
    format!(
        "Step {seq}'s check is already running (execution {execution_id}); it was not started again. Wait for its verdict."
    )
}

/// SAFE-4: a check passed.
fn check_passed(seq: u32, status: StepStatus) -> String {
    format!("Check passed: step {seq} is {status}. Advance the plan with update_plan_step and run.")
}

/// SAFE-4: a check failed.
fn check_failed(seq: u32, status: StepStatus, reason: &str) -> String {
    format!(
        "Check failed: step {seq} is {status}. {reason}\nThe step did not do what it had to. Do not mark it done and do not complete the task as a success: find the cause with read-only commands, then revise the plan (propose_plan with revise: true and a reason) or report the failure to the operator."
    )
}

/// SAFE-4: `complete_task(success)` while a step's check has not passed.
pub(crate) fn check_not_passed(seq: u32) -> String {
    format!(
        "Refused: step {seq} has a check that has not passed, so the task is not a success. If the step is still open, mark it done with update_plan_step (its check then runs); if its check failed, revise the plan to fix the cause, or complete the task as partial or failure and say why."
    )
}
