//! SAFE-1 in the session: the snapshot net before a change on a Proxmox guest, the prune
//! of older Nomos snapshots its listing shows, and the operator's Rollback, a `destructive`
//! request previewed by the guest's snapshot listing.

use crate::event::SafetyAction;
use crate::id::{ApprovalId, ExecutionId};
use crate::preview::PreviewResult;
use crate::record::ExecutionKind;
use crate::snapshot::{
    HostSafety, SNAPSHOT_REASON, SnapshotConfig, TakenSnapshot, parse_snapshot_command,
    prune_command, rollback_command, snapshot_command, snapshot_name, snapshot_reason,
    snapshots_to_prune, succeeded,
};
use crate::time::Timestamp;

use super::Session;
use super::safety::SafetyRun;

/// Why a Rollback request was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RollbackError {
    /// No completed snapshot with that id in this session.
    #[error("execution {0} is not a completed snapshot of this session")]
    NotASnapshot(ExecutionId),
}

impl Session {
    /// The snapshot net of `change` on its guest, created `running` on the guest's node.
    pub(crate) fn start_snapshot(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        host: &HostSafety,
    ) -> Option<SafetyRun> {
        let guest = host.guest.as_ref()?;
        let slug = self.execution(change)?.host.clone();
        let name = snapshot_name(change);
        let command = snapshot_command(guest, &name);
        let reason = snapshot_reason(&name, &slug, guest, change);
        let id = self.net_execution(now, change, guest.node.clone(), command.clone(), reason);
        Some(SafetyRun {
            execution_id: id,
            host: guest.node.clone(),
            command,
        })
    }

    /// The prune net after `change`'s completed snapshot, when its listing shows more Nomos
    /// snapshots than the guest keeps.
    pub(crate) fn start_prune(
        &mut self,
        now: Timestamp,
        change: ExecutionId,
        config: SnapshotConfig,
    ) -> Option<SafetyRun> {
        let net = self
            .nets_of(change)
            .into_iter()
            .find(|e| e.reason.starts_with(SNAPSHOT_REASON) && succeeded(e))?
            .clone();
        let taken = parse_snapshot_command(&net.command)?;
        let listing = &net.output.as_ref()?.stdout;
        let names = snapshots_to_prune(listing, config.keep, &taken.name);
        if names.is_empty() {
            return None;
        }
        let command = prune_command(&taken, &names);
        let reason = format!(
            "{} of {} (vmid {}; the newest {} Nomos snapshots are kept, no other is touched) before execution {change}",
            crate::snapshot::PRUNE_REASON,
            names.join(", "),
            taken.vmid,
            config.keep.max(1),
        );
        let id = self.net_execution(now, change, net.host.clone(), command.clone(), reason);
        Some(SafetyRun {
            execution_id: id,
            host: net.host,
            command,
        })
    }

    /// SAFE-1: the snapshot a completed snapshot net took, or `None` for another execution.
    pub fn taken_snapshot(&self, net: ExecutionId) -> Option<TakenSnapshot> {
        let execution = self.execution(net)?;
        if execution.kind != ExecutionKind::Safety
            || !succeeded(execution)
            || !execution.reason.starts_with(SNAPSHOT_REASON)
        {
            return None;
        }
        parse_snapshot_command(&execution.command)
    }

    /// SAFE-1: the operator's Rollback to the snapshot the net `net` took: an execution of
    /// kind `safety` (`destructive`, on the guest's node) waiting for its own approval, with
    /// the guest's snapshot listing (`preview`, run by the shell) on the request.
    pub fn handle_rollback_request(
        &mut self,
        now: Timestamp,
        net: ExecutionId,
        preview: Option<PreviewResult>,
    ) -> Result<ApprovalId, RollbackError> {
        let taken = self
            .taken_snapshot(net)
            .ok_or(RollbackError::NotASnapshot(net))?;
        let Some(source) = self.execution(net) else {
            return Err(RollbackError::NotASnapshot(net));
        };
        let reason = format!(
            "SAFE-1: rollback of guest {} on {} to snapshot {} (everything after it on the guest is lost)",
            taken.vmid, source.host, taken.name
        );
        Ok(self.request_undo(
            now,
            net,
            preview,
            rollback_command(&taken),
            reason,
            |approval_id| SafetyAction::RollbackRequested { approval_id },
        ))
    }
}
