//! SAFE-1, SAFE-2 in the runtime: the safety nets the core decides around a change (a
//! snapshot of its Proxmox guest, the prune of older ones, a backup of the files it
//! writes) are run just before the change, on the host the core names, with the command
//! the core built; the core records each end and says whether the change may go on.
//! Restore and Rollback are operator requests: the preview runs first (read-only,
//! GATE-10), then the core files the request, which an operator approves like any other.

use nomos_core::id::{ApprovalId, ExecutionId, SessionId};
use nomos_core::ports::exec::ExecLimits;
use nomos_core::preview::{PreviewPlan, PreviewRan, PreviewResult};
use nomos_core::safety::NetsConfig;
use nomos_core::session::{MAX_NETS, RestoreError, RollbackError, SafetyRun, SafetyVerdict};

use crate::agent::Agent;
use crate::cancel::{RunEnd, TurnControl};
use crate::error::AgentError;

/// Why a Rollback request was not filed.
#[derive(Debug, thiserror::Error)]
pub enum RollbackRequestError {
    /// The core refused it.
    #[error(transparent)]
    Refused(#[from] RollbackError),
    /// The store or the session could not be reached.
    #[error(transparent)]
    Agent(#[from] AgentError),
}

/// Why a Restore request was not filed.
#[derive(Debug, thiserror::Error)]
pub enum RestoreRequestError {
    /// The core refused it.
    #[error(transparent)]
    Refused(#[from] RestoreError),
    /// The store or the session could not be reached.
    #[error(transparent)]
    Agent(#[from] AgentError),
}

impl Agent {
    /// SAFE-2: runs the nets the core asks for before the change `change`, in order.
    /// Returns the reason when a net failed, in which case the core ended the change
    /// `failed` and it must not run.
    pub(crate) async fn run_safety_nets(
        &self,
        control: Option<&TurnControl>,
        id: SessionId,
        change: ExecutionId,
        host: &str,
        limits: ExecLimits,
    ) -> Option<String> {
        let config = NetsConfig {
            backup: self.inner.config.backup.clone(),
            snapshot: self.inner.config.snapshot,
            // SAFE-3: the runtime does not yet carry out the check, Confirm and settle
            // steps, so it arms nothing.
            revert: nomos_core::revert::RevertConfig {
                mode: nomos_core::revert::RevertMode::Off,
                ..nomos_core::revert::RevertConfig::spec_defaults()
            },
        };
        // SAFE-1: what the executor knows of the host; the core decides from it.
        let facts = self.inner.executor.host_safety(host);
        for n_done in 0..MAX_NETS {
            let next = self
                .mutate(id, |session, now| {
                    session.handle_safety_next(now, change, n_done, &config, &facts)
                })
                .await;
            let run: SafetyRun = match next {
                Ok(Some(run)) => run,
                Ok(None) => return None,
                Err(error) => {
                    tracing::error!(%change, %error, "could not ask for the change's safety nets");
                    return None;
                }
            };
            let result = match self
                .run_stoppable(
                    control,
                    &run.host,
                    &run.command,
                    limits,
                    run.execution_id,
                    id,
                )
                .await
            {
                RunEnd::Finished(result) => result.map_err(|e| e.to_string()),
                RunEnd::Stopped => Err("stopped by the operator".to_owned()),
            };
            let verdict = self
                .mutate(id, |session, now| {
                    session.handle_safety_finished(now, change, run.execution_id, result.clone())
                })
                .await;
            match verdict {
                Ok(Ok(SafetyVerdict::Proceed)) => {}
                Ok(Ok(SafetyVerdict::Stop { reason })) => return Some(reason),
                Ok(Err(refused)) => {
                    tracing::warn!(%change, error = %refused, "a safety net's end was refused by the core");
                    return Some(refused.to_string());
                }
                Err(error) => {
                    tracing::error!(%change, %error, "could not record a safety net's end");
                    return Some(format!("could not record a safety net's end: {error}"));
                }
            }
        }
        None
    }

    /// SAFE-2: files the operator's Restore of the backup `backup` (an execution of kind
    /// `safety`): the diff of each current file against its copy runs first, then the core
    /// records the request, which waits for an operator's approval like any other.
    pub async fn request_restore(
        &self,
        id: SessionId,
        backup: ExecutionId,
    ) -> Result<ApprovalId, RestoreRequestError> {
        let snapshot = self.session(id).await?;
        let session =
            nomos_core::session::Session::from_snapshot(snapshot, self.inner.config.session);
        let manifest = session
            .backup_manifest(backup)
            .ok_or(RestoreError::NotABackup(backup))?;
        let host = session
            .execution(backup)
            .map(|e| e.host.clone())
            .unwrap_or_default();
        // GATE-10: the diffs run only when the classifier finds them read-only.
        let preview = self
            .run_preview_form(
                &host,
                &nomos_core::safety::restore_script(&manifest),
                nomos_core::safety::restore_preview_form(&manifest),
            )
            .await;
        let decided = self
            .mutate(id, |session, now| {
                session.handle_restore_request(now, backup, Some(preview.clone()))
            })
            .await?;
        Ok(decided?)
    }

    /// SAFE-1: files the operator's Rollback to the snapshot the net `net` took: the
    /// guest's snapshot listing runs first on its node (read-only, GATE-10), then the core
    /// records the request, which waits for an operator's approval like any other.
    pub async fn request_rollback(
        &self,
        id: SessionId,
        net: ExecutionId,
    ) -> Result<ApprovalId, RollbackRequestError> {
        let snapshot = self.session(id).await?;
        let session =
            nomos_core::session::Session::from_snapshot(snapshot, self.inner.config.session);
        let taken = session
            .taken_snapshot(net)
            .ok_or(RollbackError::NotASnapshot(net))?;
        let node = session
            .execution(net)
            .map(|e| e.host.clone())
            .unwrap_or_default();
        let form = nomos_core::snapshot::rollback_preview_form(&taken);
        let preview = self
            .run_preview_form(&node, &nomos_core::snapshot::rollback_command(&taken), form)
            .await;
        let decided = self
            .mutate(id, |session, now| {
                session.handle_rollback_request(now, net, Some(preview.clone()))
            })
            .await?;
        Ok(decided?)
    }

    /// GATE-10: a net request's preview, each command run only when it classifies
    /// read-only on `host`.
    async fn run_preview_form(
        &self,
        host: &str,
        command: &str,
        form: nomos_core::classify::preview::PreviewForm,
    ) -> PreviewResult {
        let config = &self.inner.config;
        let plan = PreviewPlan::new(command, form, |c| {
            crate::shells::classify_for(
                &config.classifier,
                self.inner.executor.as_ref(),
                &[host],
                c,
            )
        });
        let mut runs = Vec::new();
        for command in plan.runnable() {
            let started_at = self.now();
            let result = self
                .inner
                .executor
                .run(host, command, config.preview_limits)
                .await
                .map_err(|e| e.to_string());
            runs.push(PreviewRan {
                command: command.to_owned(),
                started_at,
                result,
                execution_id: None,
            });
        }
        PreviewResult { plan, runs }
    }
}
