//! CONTROL-2: the operator revokes an assent window before it expires, or cancels a
//! pending approval. Both are events, committed like every decision, so the next gate
//! decision already sees them.

use crate::event::{AssentCloseReason, DomainEvent};
use crate::id::{ApprovalId, ExecutionId};
use crate::record::Decider;
use crate::status::ApprovalStatus;
use crate::time::Timestamp;

use super::Session;
use super::approval::DecisionError;

/// The reason a cancelled approval and its execution carry (CONTROL-2).
pub const CANCELLED_BY_OPERATOR: &str = "cancelled by the operator";

/// Why a revoke was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RevokeError {
    /// No assent window is open (it expired, closed, or was never opened).
    #[error("no assent window is open in this session; there is nothing to revoke")]
    NoOpenWindow,
}

impl Session {
    /// CONTROL-2, AUDIT-1: closes the open assent window now: an `assent.revoked` event
    /// naming who and the request, then its `assent.closed` (reason `revoked`). Returns the
    /// generation whose window closed. A window whose time already ran out is closed as
    /// expired and the revoke is refused, since there was nothing left to revoke.
    pub fn handle_revoke_assent(
        &mut self,
        now: Timestamp,
        by: Option<&Decider>,
    ) -> Result<u32, RevokeError> {
        self.expire_assent(now);
        let Some(window) = self.record.assent else {
            return Err(RevokeError::NoOpenWindow);
        };
        self.touch(now);
        self.emit(
            now,
            DomainEvent::AssentRevoked {
                generation: window.generation,
                revoked_by: by.map(|d| d.name.clone()),
                username: by.and_then(|d| d.username.clone()),
                request_id: by.and_then(|d| d.request_id.clone()),
            },
        );
        self.close_assent(now, AssentCloseReason::Revoked);
        Ok(window.generation)
    }

    /// CONTROL-2, AUDIT-1: cancels a pending approval before it expires; its execution is
    /// cancelled with it and never runs. Refused like a decision when the approval is not
    /// pending (decided, expired, voided): a cancel racing a decision loses or wins whole.
    pub fn handle_cancel_approval(
        &mut self,
        now: Timestamp,
        approval_id: ApprovalId,
        by: Option<&Decider>,
    ) -> Result<ExecutionId, DecisionError> {
        let idx = self
            .approvals
            .iter()
            .position(|a| a.id == approval_id)
            .ok_or(DecisionError::NotFound(approval_id))?;
        let approval = &self.approvals[idx];
        if approval.status != ApprovalStatus::Pending {
            return Err(DecisionError::NotPending {
                id: approval_id,
                status: approval.status,
            });
        }
        let execution_id = approval.execution_id;
        self.touch(now);
        self.approvals.edit(idx).decided_by = by.map(|d| d.name.clone());
        self.resolve_approval_by(
            now,
            idx,
            ApprovalStatus::Cancelled,
            CANCELLED_BY_OPERATOR,
            by,
        );
        Ok(execution_id)
    }
}
