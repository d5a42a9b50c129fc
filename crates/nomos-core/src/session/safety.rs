//! SAFE-1, SAFE-2, SAFE-3 in the session: the safety nets the core decides around a change,
//! recorded as executions of kind `safety`, and the Restore request (the Rollback is in
//! `session/snapshot.rs`).
//!
//! Protocol, for the shell that is about to run a change it was handed (`Action::Dispatch`):
//! ask [`Session::handle_safety_next`] with the number of nets already run for that change
//! (0 first); run the [`SafetyRun`] it returns, if any, on its host; report its end through
//! [`Session::handle_safety_finished`]; repeat until `None`, or until the verdict is
//! [`SafetyVerdict::Stop`], in which case the change was ended `failed` with the reason and
//! must not run. Each net is decided from the change and the nets recorded for it (its class,
//! its host's snapshot policy, the files the classifier names), so asking again after a
//! reload gives the same answer.

use crate::classification::Classification;
use crate::classify::write_targets;
use crate::event::{DomainEvent, SafetyAction};
use crate::id::{ApprovalId, ExecutionId};
use crate::preview::PreviewResult;
use crate::record::{ExecOutput, Execution, ExecutionKind};
use crate::revert::ARM_REASON;
use crate::safety::{
    BACKUP_REASON, BackupManifest, BackupMode, NetsConfig, backup_candidates, backup_script,
    restore_script,
};
use crate::snapshot::{
    ApprovedBy, HostSafety, PRUNE_REASON, SNAPSHOT_REASON, parse_snapshot_command, snapshot_due,
};
use crate::status::{ApprovalStatus, CommandClass, ExecutionStatus};
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

/// A net's longest run of nets before one change (snapshot, prune, backup, and room for
/// what SAFE-3 arms); the shell's loop stops there whatever the core says.
pub const MAX_NETS: usize = 8;

/// The first line of a failed net's error output (else of its output), for the reason.
pub(super) fn first_words(stderr: &str, stdout: &str) -> String {
    let text = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    text.trim().chars().take(400).collect()
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
    /// SAFE-1, SAFE-2: the next safety net for the running change `change`, after `n_done`
    /// of its nets ran, created `running`; `None` when the change needs no more. In order: a
    /// snapshot of its Proxmox guest when [`crate::snapshot::snapshot_due`] says so (`host`
    /// is what the shell knows of the change's host), the prune of older Nomos snapshots the
    /// snapshot's listing shows, then the backup of the files it writes. A change that is
    /// not `running` or only reads gets none. Each net is decided from the change and the
    /// nets already recorded for it, so asking again after a reload gives the same answer.
    pub fn handle_safety_next(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        n_done: usize,
        config: &NetsConfig,
        host: &HostSafety,
    ) -> Option<SafetyRun> {
        let execution = self.execution(change)?;
        if execution.kind != ExecutionKind::Command
            || execution.status != ExecutionStatus::Running
            || execution.class == CommandClass::ReadOnly
            || n_done >= MAX_NETS
        {
            return None;
        }
        let approved_by = if self
            .approvals
            .iter()
            .any(|a| a.execution_id == change && a.status == ApprovalStatus::Approved)
        {
            ApprovedBy::OwnRequest
        } else {
            ApprovedBy::PlanAssent
        };
        let due = snapshot_due(host, execution, approved_by, &self.executions);
        let command = execution.command.clone();
        let has = |session: &Session, prefix: &str| {
            session
                .nets_of(change)
                .iter()
                .any(|e| e.reason.starts_with(prefix))
        };
        if due && !has(self, SNAPSHOT_REASON) {
            return self.start_snapshot(now, change, host);
        }
        if !has(self, PRUNE_REASON)
            && let Some(run) = self.start_prune(now, change, config.snapshot)
        {
            return Some(run);
        }
        let paths = backup_candidates(&write_targets(&command));
        if has(self, BACKUP_REASON) || config.backup.mode == BackupMode::Off || paths.is_empty() {
            // SAFE-3: after the backup (when there is one), the revert is armed.
            if has(self, ARM_REASON) {
                return None;
            }
            return self.start_arm(now, change, &config.revert);
        }
        let script = backup_script(&config.backup, change, &paths);
        let reason = format!(
            "{BACKUP_REASON} of {} before execution {change}",
            paths.join(", ")
        );
        let host = self.execution(change)?.host.clone();
        let id = self.net_execution(now, change, host.clone(), script.clone(), reason);
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
            command: script,
        })
    }

    /// The nets recorded for `change` (executions of kind `safety` whose reason names it).
    pub(crate) fn nets_of(&self, change: ExecutionId) -> Vec<&Execution> {
        let suffix = format!("before execution {change}");
        self.executions
            .iter()
            .filter(|e| e.kind == ExecutionKind::Safety && e.reason.ends_with(&suffix))
            .collect()
    }

    /// A net of `change` on `host`, created `running` in the change's generation and step.
    pub(crate) fn net_execution(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        host: String,
        command: String,
        reason: String,
    ) -> ExecutionId {
        let (generation, step_seq, call) = match self.execution(change) {
            Some(e) => (e.generation, e.step_seq, e.tool_call_id.clone()),
            None => (0, None, None),
        };
        self.safety_execution(
            now,
            call,
            host,
            command,
            Classification::new(CommandClass::ConfigMutation, reason),
            generation,
            step_seq,
            ExecutionStatus::Running,
        )
    }

    /// SAFE-1, SAFE-2: records how the net `safety` of `change` ended, with its events (the
    /// snapshot taken, each snapshot pruned, each file copied, each old backup pruned). A
    /// snapshot or backup that failed ends the change `failed`; a prune that failed does
    /// not (the change keeps its snapshot).
    pub fn handle_safety_finished(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        safety: ExecutionId,
        result: Result<ExecOutput, String>,
    ) -> Result<SafetyVerdict, ExecutionError> {
        let Some(net) = self.execution(safety) else {
            return Err(ExecutionError::NotFound(safety));
        };
        let (command, reason) = (net.command.clone(), net.reason.clone());
        if reason.starts_with(ARM_REASON) {
            return self.arm_finished(now, change, safety, result);
        }
        let what = if reason.starts_with(SNAPSHOT_REASON) {
            "the snapshot"
        } else if reason.starts_with(PRUNE_REASON) {
            "the prune of old snapshots"
        } else {
            "the backup"
        };
        let failure = match &result {
            Ok(output) if output.exit_code == Some(0) => None,
            Ok(output) => Some(format!(
                "{what} exited {}: {}",
                output
                    .exit_code
                    .map_or_else(|| "without a status".to_owned(), |c| c.to_string()),
                first_words(&output.stderr, &output.stdout)
            )),
            Err(error) => Some(format!("{what} did not run: {error}")),
        };
        let stdout = match &result {
            Ok(output) => output.stdout.clone(),
            Err(_) => String::new(),
        };
        self.handle_execution_finished(now, safety, result)?;
        let net_event = |action| DomainEvent::SafetyNet {
            execution_id: change,
            safety_execution_id: safety,
            action,
        };
        if reason.starts_with(SNAPSHOT_REASON) {
            let rule = "SAFE-1: a change whose guest cannot be snapshotted is not made";
            if failure.is_none()
                && let Some(taken) = parse_snapshot_command(&command)
            {
                let host = self.execution(change).map(|e| e.host.clone());
                let node = self.execution(safety).map(|e| e.host.clone());
                self.emit(
                    now,
                    net_event(SafetyAction::SnapshotTaken {
                        guest: host.unwrap_or_default(),
                        node: node.unwrap_or_default(),
                        vmid: taken.vmid,
                        name: taken.name,
                    }),
                );
            }
            return Ok(self.stop_on(now, change, safety, failure, rule));
        }
        if reason.starts_with(PRUNE_REASON) {
            if failure.is_none() {
                for name in command
                    .split(" && ")
                    .filter_map(|c| c.split_whitespace().nth(3))
                {
                    self.emit(
                        now,
                        net_event(SafetyAction::SnapshotPruned {
                            name: name.to_owned(),
                        }),
                    );
                }
            }
            return Ok(SafetyVerdict::Proceed);
        }
        let manifest = BackupManifest::parse(&stdout);
        for file in manifest.files {
            self.emit(now, net_event(SafetyAction::BackedUp { file }));
        }
        for name in manifest.pruned {
            self.emit(now, net_event(SafetyAction::Pruned { backup: name }));
        }
        let rule = "SAFE-2: a change whose files cannot be backed up is not made";
        Ok(self.stop_on(now, change, safety, failure, rule))
    }

    /// A net's verdict: go on, or (it failed) end the change `failed` saying why.
    pub(super) fn stop_on(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        safety: ExecutionId,
        failure: Option<String>,
        rule: &str,
    ) -> SafetyVerdict {
        let Some(failure) = failure else {
            return SafetyVerdict::Proceed;
        };
        let reason = format!("stopped before it ran: {failure}; the change did not run ({rule})");
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
        SafetyVerdict::Stop { reason }
    }

    /// SAFE-2: what a completed backup holds, or `None` for another execution.
    pub fn backup_manifest(&self, backup: ExecutionId) -> Option<BackupManifest> {
        let execution = self.execution(backup)?;
        if execution.kind != ExecutionKind::Safety
            || execution.status != ExecutionStatus::Completed
            || !execution.reason.starts_with(BACKUP_REASON)
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
        if self.execution(backup).is_none() {
            return Err(RestoreError::NotABackup(backup));
        }
        let paths: Vec<&str> = manifest.files.iter().map(|f| f.path.as_str()).collect();
        let reason = format!(
            "SAFE-2: restore of {} from backup {backup} (puts back the bytes, owner and mode of each file)",
            paths.join(", ")
        );
        Ok(self.request_undo(
            now,
            backup,
            preview,
            restore_script(&manifest),
            reason,
            |approval_id| SafetyAction::RestoreRequested { approval_id },
        ))
    }

    /// SAFE-1, SAFE-2: the operator's undo of what the net `net` kept: an execution of
    /// kind `safety` (`destructive`, on the net's host, in the net's generation and step)
    /// waiting for its own approval, with its preview (run by the shell) on the request,
    /// and a `safety.net` event naming the request.
    pub(super) fn request_undo(
        &mut self,
        now: Timestamp,
        net: ExecutionId,
        preview: Option<PreviewResult>,
        command: String,
        reason: String,
        action: impl FnOnce(ApprovalId) -> SafetyAction,
    ) -> ApprovalId {
        let (host, generation, step_seq) = self
            .execution(net)
            .map(|e| (e.host.clone(), e.generation, e.step_seq))
            .unwrap_or_default();
        if let Some(result) = &preview {
            self.finish_previews(now, result);
        }
        let preview = preview.map(|result| self.record_preview(now, &host, &result));
        let id = self.safety_execution(
            now,
            None,
            host,
            command,
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
                safety_execution_id: net,
                action: action(approval.id),
            },
        );
        approval.id
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn safety_execution(
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
