//! SAFE-2 in the session: the safety nets the core decides around a change, recorded as
//! executions of kind `safety`, and the Restore request.
//!
//! Protocol, for the shell that is about to run a change it was handed (`Action::Dispatch`):
//! ask [`Session::handle_safety_next`] with the number of nets already run for that change
//! (0 first); run the [`SafetyRun`] it returns, if any, on its host; report its end through
//! [`Session::handle_safety_finished`]; repeat until `None`, or until the verdict is
//! [`SafetyVerdict::Stop`], in which case the change was ended `failed` with the reason and
//! must not run. Each net is decided from the change alone (its class and the files the
//! classifier names), so asking again after a reload gives the same answer.

use crate::classification::Classification;
use crate::classify::write_targets;
use crate::event::{DomainEvent, SafetyAction};
use crate::id::{ApprovalId, ExecutionId};
use crate::preview::PreviewResult;
use crate::record::{ExecOutput, Execution, ExecutionKind};
use crate::safety::{
    BackupConfig, BackupManifest, BackupMode, backup_candidates, backup_script, restore_script,
};
use crate::status::{CommandClass, ExecutionStatus};
use crate::time::Timestamp;

use super::Session;
use super::execution::ExecutionError;

/// A safety net the shell runs before a change: an execution of kind `safety`, already
/// `running`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SafetyRun {
    /// The net's execution.
    pub execution_id: ExecutionId,
    /// The host it runs on.
    pub host: String,
    /// The exact script.
    pub command: String,
}

/// What a net's end means for its change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SafetyVerdict {
    /// The net is in place: go on (with the next net, then the change).
    Proceed,
    /// The net failed: the change was ended `failed` with this reason and must not run.
    Stop {
        /// Why, for the model and the operator.
        reason: String,
    },
}

/// Why a Restore request was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RestoreError {
    /// No completed backup with that id in this session.
    #[error("execution {0} is not a completed backup of this session")]
    NotABackup(ExecutionId),
    /// The backup copied no file.
    #[error("backup {0} holds no file to restore")]
    Empty(ExecutionId),
}

impl Session {
    /// SAFE-2: the next safety net for the running change `change`, after `n_done` of its
    /// nets ran, created `running`; `None` when the change needs no more. A change that is
    /// not `running`, only reads, or names no file it writes gets none.
    pub fn handle_safety_next(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        n_done: usize,
        config: &BackupConfig,
    ) -> Option<SafetyRun> {
        let execution = self.execution(change)?;
        if execution.kind != ExecutionKind::Command
            || execution.status != ExecutionStatus::Running
            || execution.class == CommandClass::ReadOnly
            || n_done > 0
            || config.mode == BackupMode::Off
        {
            return None;
        }
        let paths = backup_candidates(&write_targets(&execution.command));
        if paths.is_empty() {
            return None;
        }
        let (host, generation, step_seq, call) = (
            execution.host.clone(),
            execution.generation,
            execution.step_seq,
            execution.tool_call_id.clone(),
        );
        let command = backup_script(config, change, &paths);
        let reason = format!(
            "SAFE-2: backup of {} before execution {change}",
            paths.join(", ")
        );
        let id = self.safety_execution(
            now,
            call,
            host.clone(),
            command.clone(),
            Classification::new(CommandClass::ConfigMutation, reason),
            generation,
            step_seq,
            ExecutionStatus::Running,
        );
        self.emit(
            now,
            DomainEvent::SafetyNet {
                execution_id: change,
                safety_execution_id: id,
                action: SafetyAction::BackupStarted { paths },
            },
        );
        Some(SafetyRun {
            execution_id: id,
            host,
            command,
        })
    }

    /// SAFE-2: records how the net `safety` of `change` ended, with an event for each file
    /// it copied and each old backup it pruned. A net that failed ends the change `failed`.
    pub fn handle_safety_finished(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        safety: ExecutionId,
        result: Result<ExecOutput, String>,
    ) -> Result<SafetyVerdict, ExecutionError> {
        let failure = match &result {
            Ok(output) if output.exit_code == Some(0) => None,
            Ok(output) => Some(format!(
                "the backup exited {}: {}",
                output
                    .exit_code
                    .map_or_else(|| "without a status".to_owned(), |c| c.to_string()),
                output.stderr.trim()
            )),
            Err(error) => Some(format!("the backup did not run: {error}")),
        };
        let manifest = match &result {
            Ok(output) => BackupManifest::parse(&output.stdout),
            Err(_) => BackupManifest::default(),
        };
        self.handle_execution_finished(now, safety, result)?;
        for file in manifest.files {
            self.emit(
                now,
                DomainEvent::SafetyNet {
                    execution_id: change,
                    safety_execution_id: safety,
                    action: SafetyAction::BackedUp { file },
                },
            );
        }
        for name in manifest.pruned {
            self.emit(
                now,
                DomainEvent::SafetyNet {
                    execution_id: change,
                    safety_execution_id: safety,
                    action: SafetyAction::Pruned { backup: name },
                },
            );
        }
        let Some(failure) = failure else {
            return Ok(SafetyVerdict::Proceed);
        };
        let reason = format!(
            "stopped before it ran: {failure}; the change did not run (SAFE-2: a change whose files cannot be backed up is not made)"
        );
        self.emit(
            now,
            DomainEvent::SafetyNet {
                execution_id: change,
                safety_execution_id: safety,
                action: SafetyAction::Stopped {
                    reason: reason.clone(),
                },
            },
        );
        self.move_execution(now, change, ExecutionStatus::Failed, Some(reason.clone()));
        Ok(SafetyVerdict::Stop { reason })
    }

    /// SAFE-2: what a completed backup holds, or `None` for another execution.
    pub fn backup_manifest(&self, backup: ExecutionId) -> Option<BackupManifest> {
        let execution = self.execution(backup)?;
        if execution.kind != ExecutionKind::Safety
            || execution.status != ExecutionStatus::Completed
            || !execution.reason.starts_with("SAFE-2: backup")
        {
            return None;
        }
        Some(BackupManifest::parse(&execution.output.as_ref()?.stdout))
    }

    /// SAFE-2: the operator's Restore of one backup: an execution of kind `safety`
    /// (`destructive`) waiting for its own approval, with the diff of each current file
    /// against its copy (`preview`, run by the shell) on the request.
    pub fn handle_restore_request(
        &mut self,
        now: Timestamp,
        backup: ExecutionId,
        preview: Option<PreviewResult>,
    ) -> Result<ApprovalId, RestoreError> {
        let manifest = self
            .backup_manifest(backup)
            .ok_or(RestoreError::NotABackup(backup))?;
        if manifest.files.is_empty() {
            return Err(RestoreError::Empty(backup));
        }
        let Some(source) = self.execution(backup) else {
            return Err(RestoreError::NotABackup(backup));
        };
        let (host, generation, step_seq) =
            (source.host.clone(), source.generation, source.step_seq);
        if let Some(result) = &preview {
            self.finish_previews(now, result);
        }
        let preview = preview.map(|result| self.record_preview(now, &host, &result));
        let paths: Vec<&str> = manifest.files.iter().map(|f| f.path.as_str()).collect();
        let reason = format!(
            "SAFE-2: restore of {} from backup {backup} (puts back the bytes, owner and mode of each file)",
            paths.join(", ")
        );
        let id = self.safety_execution(
            now,
            None,
            host,
            restore_script(&manifest),
            Classification::new(CommandClass::Destructive, reason),
            generation,
            step_seq,
            ExecutionStatus::PendingApproval,
        );
        let approval =
            self.request_approval(now, id, crate::declared::RequestOrigin::OwnClass, preview);
        self.emit(
            now,
            DomainEvent::SafetyNet {
                execution_id: id,
                safety_execution_id: backup,
                action: SafetyAction::RestoreRequested {
                    approval_id: approval.id,
                },
            },
        );
        Ok(approval.id)
    }

    #[allow(clippy::too_many_arguments)]
    fn safety_execution(
        &mut self,
        now: Timestamp,
        call: Option<String>,
        host: String,
        command: String,
        classification: Classification,
        generation: u32,
        step_seq: Option<u32>,
        status: ExecutionStatus,
    ) -> ExecutionId {
        let id = self.record.id.execution_id(self.executions.len() + 1);
        self.executions.push(Execution {
            id,
            session_id: self.record.id,
            tool_call_id: call,
            kind: ExecutionKind::Safety,
            host: host.clone(),
            command: command.clone(),
            class: classification.class,
            reason: classification.reason,
            generation,
            step_seq,
            status: if status == ExecutionStatus::Running {
                ExecutionStatus::Approved
            } else {
                status
            },
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
                host,
                command,
                class: classification.class,
                status: if status == ExecutionStatus::Running {
                    ExecutionStatus::Approved
                } else {
                    status
                },
            },
        );
        if status == ExecutionStatus::Running {
            self.move_execution(now, id, ExecutionStatus::Running, None);
        }
        id
    }
}
