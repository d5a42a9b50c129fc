//! SAFE-3 in the session: the dead man's switch around a change that can cut the operator
//! off. The core decides each step; the shell carries it out.
//!
//! 1. [`Session::handle_safety_next`] hands, after the change's backup, the arm net
//!    ([`crate::revert::arm_script`]); a failed arm stops the change like a failed backup.
//! 2. The change's end moves it `armed` (not `completed`), whatever its exit.
//! 3. The shell runs the check over a **new** SSH connection and reports it
//!    ([`Session::handle_revert_checked`]).
//! 4. The operator's Confirm within the window ([`Session::handle_confirm`], then
//!    [`Session::handle_disarm_finished`]) disarms the revert over a new connection and ends
//!    the change `completed`; after the window the Confirm is refused.
//! 5. Without a Confirm, the revert fires on the host by itself; after the window the shell
//!    reads its log over a new connection ([`Session::handle_revert_log`]) and the change ends
//!    `reverted` with what it restored, or `failed` when no log is found.

use crate::classify::cuts_off;
use crate::event::{DomainEvent, SafetyAction};
use crate::id::ExecutionId;
use crate::record::{ExecOutput, ExecutionKind};
use crate::revert::{
    ARM_REASON, Armed, RevertConfig, RevertLog, RevertMode, arm_script, disarm_found_fired,
    disarm_script,
};
use crate::safety::{BACKUP_REASON, BackupManifest};
use crate::status::ExecutionStatus;
use crate::time::{Span, Timestamp};

use super::Session;
use super::execution::ExecutionError;
use super::safety::{SafetyRun, SafetyVerdict, first_words};

/// Why a Confirm was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfirmError {
    /// The execution is not a change of this session waiting for Confirm.
    #[error("execution {0} is not armed: there is nothing to confirm")]
    NotArmed(ExecutionId),
    /// The window passed: the revert fired (or is firing) on the host.
    #[error("the window to confirm execution {id} closed at {until}; its revert already fired")]
    WindowPassed {
        /// The change.
        id: ExecutionId,
        /// When the window closed (RFC 3339).
        until: String,
    },
    /// The disarm did not run or failed; the revert stays armed.
    #[error("the revert of execution {id} could not be disarmed: {reason}")]
    DisarmFailed {
        /// The change.
        id: ExecutionId,
        /// Why.
        reason: String,
    },
}

/// How long after the window Nomos waits before it reads the revert's log (the revert
/// itself needs a moment: a restore, a reload).
pub const SETTLE_GRACE: Span = Span::from_secs(3);

impl Session {
    /// SAFE-3: the arm net for `change` when its command can cut the operator off, with the
    /// copies its backup made (if any) for the revert to put back.
    pub(super) fn start_arm(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        config: &RevertConfig,
    ) -> Option<SafetyRun> {
        if config.mode == RevertMode::Off {
            return None;
        }
        let execution = self.execution(change)?;
        let kinds = cuts_off(&execution.command);
        if kinds.is_empty() {
            return None;
        }
        let host = execution.host.clone();
        let manifest = self
            .nets_of(change)
            .iter()
            .find(|e| e.reason.starts_with(BACKUP_REASON) && e.status == ExecutionStatus::Completed)
            .and_then(|e| e.output.as_ref())
            .map(|o| BackupManifest::parse(&o.stdout))
            .unwrap_or_default();
        let script = arm_script(config, change, &kinds, &manifest);
        let names: Vec<String> = kinds
            .iter()
            .map(|k| format!("{k:?}").to_lowercase())
            .collect();
        let reason = format!(
            "{ARM_REASON} for {} s ({}) before execution {change}",
            config.window_secs(),
            names.join(", ")
        );
        let id = self.net_execution(now, change, host.clone(), script.clone(), reason);
        Some(SafetyRun {
            execution_id: id,
            host,
            command: script,
        })
    }

    /// SAFE-3: records the arm net's end: armed (with its event), or the change stopped.
    pub(super) fn arm_finished(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        safety: ExecutionId,
        result: Result<ExecOutput, String>,
    ) -> Result<SafetyVerdict, ExecutionError> {
        let armed = match &result {
            Ok(output) if output.exit_code == Some(0) => Armed::parse(&output.stdout),
            _ => None,
        };
        let failure = match (&result, &armed) {
            (_, Some(_)) => None,
            (Ok(output), None) => Some(format!(
                "the revert could not be armed (exit {}): {}",
                output
                    .exit_code
                    .map_or_else(|| "without a status".to_owned(), |c| c.to_string()),
                first_words(&output.stderr, &output.stdout)
            )),
            (Err(error), None) => Some(format!("the revert could not be armed: {error}")),
        };
        self.handle_execution_finished(now, safety, result)?;
        if let Some(armed) = armed {
            let started = self
                .execution(safety)
                .and_then(|e| e.started_at)
                .unwrap_or(now);
            let until = started_plus(started, armed.window_secs);
            self.emit(
                now,
                DomainEvent::SafetyNet {
                    execution_id: change,
                    safety_execution_id: safety,
                    action: SafetyAction::Armed { armed, until },
                },
            );
        }
        let rule = "SAFE-3: a change whose revert cannot be armed is not made";
        Ok(self.stop_on(now, change, safety, failure, rule))
    }

    /// SAFE-3: the completed arm net of `change` and what it armed.
    pub fn armed_net(&self, change: ExecutionId) -> Option<(ExecutionId, Armed)> {
        self.nets_of(change).iter().find_map(|e| {
            if !e.reason.starts_with(ARM_REASON) || e.status != ExecutionStatus::Completed {
                return None;
            }
            Some((e.id, Armed::parse(&e.output.as_ref()?.stdout)?))
        })
    }

    /// SAFE-3: when the revert of `change` fires unless the operator confirms (counted from
    /// the start of its arm net, so never later than the host's timer).
    pub fn armed_until(&self, change: ExecutionId) -> Option<Timestamp> {
        let (net, armed) = self.armed_net(change)?;
        let started = self.execution(net)?.started_at?;
        Some(started_plus(started, armed.window_secs))
    }

    /// SAFE-3: the changes of this session waiting for Confirm, with their hosts and the
    /// end of their windows.
    pub fn armed_changes(&self) -> Vec<(ExecutionId, String, Timestamp)> {
        self.executions
            .iter()
            .filter(|e| e.kind == ExecutionKind::Command && e.status == ExecutionStatus::Armed)
            .filter_map(|e| Some((e.id, e.host.clone(), self.armed_until(e.id)?)))
            .collect()
    }

    /// SAFE-3: the change `id` ran with its revert armed, so its end moves it `armed`.
    pub(super) fn ends_armed(&self, id: ExecutionId) -> bool {
        self.execution(id).is_some_and(|e| {
            e.kind == ExecutionKind::Command && e.status == ExecutionStatus::Running
        }) && self.armed_net(id).is_some()
    }

    /// SAFE-3: records the check the shell ran over a new SSH connection after the change.
    /// A failed check leaves the revert armed: it fires at the window's end.
    pub fn handle_revert_checked(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        result: Result<ExecOutput, String>,
    ) -> bool {
        let (ok, detail) = match &result {
            Ok(output) if output.exit_code == Some(0) => (true, "the check passed".to_owned()),
            Ok(output) => (
                false,
                format!(
                    "the check exited {}: {}",
                    output
                        .exit_code
                        .map_or_else(|| "without a status".to_owned(), |c| c.to_string()),
                    first_words(&output.stderr, &output.stdout)
                ),
            ),
            Err(error) => (false, format!("a new SSH connection failed: {error}")),
        };
        let Some((net, _)) = self.armed_net(change) else {
            return false;
        };
        self.emit(
            now,
            DomainEvent::SafetyNet {
                execution_id: change,
                safety_execution_id: net,
                action: SafetyAction::Checked { ok, detail },
            },
        );
        ok
    }

    /// SAFE-3: the operator's Confirm of the armed change `change`: the disarm script for
    /// the shell to run on the change's host over a new connection, or why not.
    pub fn handle_confirm(
        &self,
        now: Timestamp,
        change: ExecutionId,
        config: &RevertConfig,
    ) -> Result<SafetyRun, ConfirmError> {
        let execution = self
            .execution(change)
            .filter(|e| e.status == ExecutionStatus::Armed)
            .ok_or(ConfirmError::NotArmed(change))?;
        let (net, armed) = self
            .armed_net(change)
            .ok_or(ConfirmError::NotArmed(change))?;
        let until = self
            .armed_until(change)
            .ok_or(ConfirmError::NotArmed(change))?;
        if now >= until {
            return Err(ConfirmError::WindowPassed {
                id: change,
                until: until.to_rfc3339(),
            });
        }
        Ok(SafetyRun {
            execution_id: net,
            host: execution.host.clone(),
            command: disarm_script(config, change, &armed),
        })
    }

    /// SAFE-3: records the disarm's end: the change ends `completed` (`failed` when its
    /// command had failed), or stays armed and says why.
    pub fn handle_disarm_finished(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        by: Option<String>,
        result: Result<ExecOutput, String>,
    ) -> Result<(), ConfirmError> {
        let Some((net, _)) = self.armed_net(change) else {
            return Err(ConfirmError::NotArmed(change));
        };
        match &result {
            Ok(output) if output.exit_code == Some(0) => {}
            Ok(output) if disarm_found_fired(&output.stdout) => {
                return Err(ConfirmError::WindowPassed {
                    id: change,
                    until: self
                        .armed_until(change)
                        .map(|t| t.to_rfc3339())
                        .unwrap_or_default(),
                });
            }
            Ok(output) => {
                return Err(ConfirmError::DisarmFailed {
                    id: change,
                    reason: first_words(&output.stderr, &output.stdout),
                });
            }
            Err(error) => {
                return Err(ConfirmError::DisarmFailed {
                    id: change,
                    reason: error.clone(),
                });
            }
        }
        self.emit(
            now,
            DomainEvent::SafetyNet {
                execution_id: change,
                safety_execution_id: net,
                action: SafetyAction::Disarmed { by },
            },
        );
        let ran_ok = self.execution(change).is_some_and(|e| e.error.is_none());
        let to = if ran_ok {
            ExecutionStatus::Completed
        } else {
            ExecutionStatus::Failed
        };
        self.move_execution(now, change, to, None);
        Ok(())
    }

    /// SAFE-3: whether the window of the armed change `change` has passed (with
    /// [`SETTLE_GRACE`]), so its revert's log is to be read.
    pub fn revert_due(&self, now: Timestamp, change: ExecutionId) -> bool {
        self.execution(change)
            .is_some_and(|e| e.status == ExecutionStatus::Armed)
            && self
                .armed_until(change)
                .is_some_and(|until| now.since(until) >= SETTLE_GRACE)
    }

    /// SAFE-3: records the read of the revert's log after the window: `reverted` with what
    /// it restored, or `failed` when no log was found. A change no longer armed (confirmed
    /// meanwhile) is left alone.
    pub fn handle_revert_log(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        result: Result<ExecOutput, String>,
    ) {
        let Some((net, _)) = self.armed_net(change) else {
            return;
        };
        if self.execution(change).map(|e| e.status) != Some(ExecutionStatus::Armed) {
            return;
        }
        let log = match &result {
            Ok(output) if output.exit_code == Some(0) => Some(RevertLog::parse(&output.stdout)),
            _ => None,
        };
        match log {
            Some(log) => {
                let summary = log.summary();
                self.emit(
                    now,
                    DomainEvent::SafetyNet {
                        execution_id: change,
                        safety_execution_id: net,
                        action: SafetyAction::Reverted { log },
                    },
                );
                self.move_execution(now, change, ExecutionStatus::Reverted, Some(summary));
            }
            None => {
                let why = match &result {
                    Ok(output) => first_words(&output.stderr, &output.stdout),
                    Err(error) => error.clone(),
                };
                self.move_execution(
                    now,
                    change,
                    ExecutionStatus::Failed,
                    Some(format!(
                        "SAFE-3: the window passed without a Confirm, and no revert log was found on the host ({why}); check the host by hand"
                    )),
                );
            }
        }
    }
}

fn started_plus(started: Timestamp, secs: i64) -> Timestamp {
    Timestamp::from_millis(started.as_millis() + secs * 1000)
}
