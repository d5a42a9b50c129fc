//! Approval requests and decisions (GATE-7): persisted before anyone hears of them,
//! bound to exactly what they show, expiring, decided once by id.

use sha2::{Digest, Sha256};

use crate::authz::{DeciderRefusal, DecisionKind, check_not_requester};
use crate::declared::RequestOrigin;
use crate::event::DomainEvent;
use crate::id::{ApprovalId, ExecutionId};
use crate::record::{Approval, ApprovalBinding, Decider};
use crate::status::{ApprovalStatus, CommandClass, Decision, ExecutionStatus};
use crate::sweep::approval_expired;
use crate::time::Timestamp;

use super::Session;
use super::execution::ExecutionError;
use super::tool::Action;

/// Why a decision was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecisionError {
    /// No approval with that id in this session.
    #[error("approval {0} not found")]
    NotFound(ApprovalId),
    /// It was already decided, expired or cancelled.
    #[error("approval {id} is not pending (status={status})")]
    NotPending {
        /// The approval.
        id: ApprovalId,
        /// Its status.
        status: ApprovalStatus,
    },
    /// It expired before the decision arrived; expiry is a denial.
    #[error("approval {0} expired before the decision arrived; expiry means deny")]
    Expired(ApprovalId),
    /// What it bound to changed since it was requested; it is void.
    #[error(
        "approval {0} is void: the command, host, class or plan generation it showed has changed"
    )]
    Stale(ApprovalId),
    /// EXEC-6: the execution it guards cannot start (it is no longer waiting).
    #[error(transparent)]
    Execution(#[from] ExecutionError),
    /// CONTROL-4: a reason goes with a denial only.
    #[error("a reason goes with a denial only; approve takes none")]
    ReasonWithApproval,
    /// AUTHZ-2, AUTHZ-3: refused because of who decided (its own request, a second
    /// approval by the same operator, an unsigned approval where several are needed).
    #[error(transparent)]
    Decider(#[from] DeciderRefusal),
    /// CONTROL-4: the denial's reason is longer than the model is shown.
    #[error("the reason is {0} characters long; at most {DENY_REASON_MAX_CHARS} are allowed")]
    ReasonTooLong(usize),
}

/// CONTROL-4: the longest reason a denial may carry, in characters.
pub const DENY_REASON_MAX_CHARS: usize = 1000;

/// CONTROL-4: what a denial says, on its event and on the execution the model reads:
/// "denied by the operator", with the operator's reason when one was given.
pub fn denial_text(reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("denied by the operator, who said: {reason}"),
        None => "denied by the operator".to_owned(),
    }
}

/// GATE-7: hex SHA-256 over the canonical binding.
pub fn binding_hash(binding: &ApprovalBinding) -> String {
    let mut hasher = Sha256::new();
    for part in [
        binding.command.as_bytes(),
        binding.host.as_bytes(),
        binding.class.as_str().as_bytes(),
        binding.generation.to_string().as_bytes(),
    ] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part);
    }
    // GATE-9, GATE-10: why it was asked and the preview shown are part of what the
    // operator decides on; a request with neither hashes as it always did.
    let origin = binding.origin.binding_text();
    if !origin.is_empty() || binding.preview.is_some() {
        for part in [
            origin.as_bytes(),
            binding
                .preview
                .as_ref()
                .map(|p| p.binding_text())
                .unwrap_or_default()
                .as_bytes(),
        ] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part);
        }
    }
    // GATE-11: an edited request binds to what it replaced too.
    if let Some(from) = &binding.edited_from {
        let part = from.binding_text();
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Session {
    /// Persists an approval request for a pending execution (in the next commit).
    pub(crate) fn request_approval(
        &mut self,
        now: Timestamp,
        execution_id: ExecutionId,
        origin: RequestOrigin,
        preview: Option<crate::preview::Preview>,
    ) -> Approval {
        let mut binding = self.binding_of(execution_id);
        binding.origin = origin;
        binding.preview = preview;
        // AUTHZ-3: how many distinct operators this request needs, fixed when it is made.
        let approvers_required = {
            let hosts = self.hosts_of(execution_id);
            let hosts: Vec<&str> = hosts.iter().map(String::as_str).collect();
            self.approvers
                .required_for(binding.class, &hosts, &binding.command)
        };
        let approval = Approval {
            id: self.record.id.approval_id(execution_id),
            session_id: self.record.id,
            execution_id,
            binding_hash: binding_hash(&binding),
            binding,
            status: ApprovalStatus::Pending,
            requested_at: now,
            expires_at: now + self.config.approval_ttl,
            decided_at: None,
            decided_by: None,
            approvers_required,
            approved_by: Vec::new(),
        };
        self.approvals.push(approval.clone());
        self.emit(
            now,
            DomainEvent::ApprovalRequested {
                approval_id: approval.id,
                execution_id,
                expires_at: approval.expires_at,
            },
        );
        approval
    }

    /// What an execution binds to now, given the current plan generation.
    fn binding_of(&self, execution_id: ExecutionId) -> ApprovalBinding {
        let execution = self.executions.iter().find(|e| e.id == execution_id);
        // FLEET-1: a fan-out's approval binds to the exact host set.
        let host = match self.fanout_of(execution_id) {
            Some(fanout) => crate::fanout::host_set_binding(
                &fanout
                    .phase_of(execution_id)
                    .iter()
                    .map(|h| h.host.clone())
                    .collect::<Vec<_>>(),
            ),
            None => execution.map(|e| e.host.clone()).unwrap_or_default(),
        };
        ApprovalBinding {
            command: execution.map(|e| e.command.clone()).unwrap_or_default(),
            host,
            class: execution.map_or(CommandClass::Destructive, |e| e.class),
            generation: self.record.plan_generation,
            origin: RequestOrigin::OwnClass,
            preview: None,
            edited_from: None,
        }
    }

    /// The hosts an execution's request covers: a fan-out's host set, or its one host.
    pub(super) fn hosts_of(&self, execution_id: ExecutionId) -> Vec<String> {
        match self.fanout_of(execution_id) {
            Some(fanout) => fanout
                .phase_of(execution_id)
                .iter()
                .map(|h| h.host.clone())
                .collect(),
            None => self
                .executions
                .iter()
                .find(|e| e.id == execution_id)
                .map(|e| vec![e.host.clone()])
                .unwrap_or_default(),
        }
    }

    /// AUTHZ-2, AUTHZ-3: records a decision refused because of who made it, and returns
    /// the refusal.
    pub(super) fn refuse_decider(
        &mut self,
        now: Timestamp,
        kind: DecisionKind,
        by: Option<&Decider>,
        approval_id: Option<ApprovalId>,
        refusal: DeciderRefusal,
    ) -> DeciderRefusal {
        self.emit(
            now,
            DomainEvent::DecisionRefused {
                decision: kind,
                principal: by.map(|d| d.name.clone()),
                request_id: by.and_then(|d| d.request_id.clone()),
                approval_id,
                reason: refusal.to_string(),
            },
        );
        refusal
    }

    /// What an approval binds to now: its execution and the current generation, with the
    /// origin and preview it was shown with.
    fn binding_now(&self, approval: &Approval) -> ApprovalBinding {
        let mut binding = self.binding_of(approval.execution_id);
        binding.origin = approval.binding.origin;
        binding.preview = approval.binding.preview.clone();
        binding.edited_from = approval.binding.edited_from.clone();
        binding
    }

    pub(crate) fn pending_approval_for(
        &self,
        host: &str,
        command: &str,
        class: CommandClass,
    ) -> Option<ApprovalId> {
        let generation = self.record.plan_generation;
        self.approvals
            .iter()
            .find(|a| {
                a.status == ApprovalStatus::Pending
                    && a.binding.command == command
                    && a.binding.host == host
                    && a.binding.class == class
                    && a.binding.generation == generation
            })
            .map(|a| a.id)
    }

    /// GATE-7: the operator's decision on one approval, by its id. Approve returns the
    /// execution to dispatch; deny cancels it. A second, late or stale decision is refused.
    pub fn handle_decision(
        &mut self,
        now: Timestamp,
        approval_id: ApprovalId,
        decision: Decision,
        decided_by: Option<&str>,
    ) -> Result<Option<Action>, DecisionError> {
        let decider = decided_by.map(Decider::named);
        self.handle_decision_by(now, approval_id, decision, decider.as_ref())
    }

    /// [`Session::handle_decision`] recording who decided and through which request
    /// (AUDIT-1): on the approval row and on its `approval.resolved` event.
    pub fn handle_decision_by(
        &mut self,
        now: Timestamp,
        approval_id: ApprovalId,
        decision: Decision,
        decided_by: Option<&Decider>,
    ) -> Result<Option<Action>, DecisionError> {
        self.handle_decision_with(now, approval_id, decision, decided_by, None)
    }

    /// [`Session::handle_decision_by`] with the operator's reason for a denial
    /// (CONTROL-4): it goes on the `approval.resolved` event and the cancelled
    /// execution's error, which the continuation tells the model. A reason with an
    /// approval, or one over [`DENY_REASON_MAX_CHARS`], is refused and changes nothing.
    pub fn handle_decision_with(
        &mut self,
        now: Timestamp,
        approval_id: ApprovalId,
        decision: Decision,
        decided_by: Option<&Decider>,
        reason: Option<&str>,
    ) -> Result<Option<Action>, DecisionError> {
        let reason = reason.map(str::trim).filter(|r| !r.is_empty());
        if let Some(reason) = reason {
            if decision == Decision::Approve {
                return Err(DecisionError::ReasonWithApproval);
            }
            let chars = reason.chars().count();
            if chars > DENY_REASON_MAX_CHARS {
                return Err(DecisionError::ReasonTooLong(chars));
            }
        }
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
        if approval_expired(approval, now) {
            self.resolve_approval(now, idx, ApprovalStatus::Expired, "approval expired");
            return Err(DecisionError::Expired(approval_id));
        }
        let execution_id = approval.execution_id;
        if binding_hash(&self.binding_now(approval)) != approval.binding_hash {
            self.resolve_approval(
                now,
                idx,
                ApprovalStatus::Cancelled,
                "approval void: the plan changed",
            );
            return Err(DecisionError::Stale(approval_id));
        }
        // EXEC-6: only an execution still waiting for this approval may start.
        let waiting = self
            .execution(execution_id)
            .ok_or(ExecutionError::NotFound(execution_id))?
            .status;
        if waiting != ExecutionStatus::PendingApproval {
            return Err(DecisionError::Execution(ExecutionError::Transition {
                id: execution_id,
                from: waiting,
                to: ExecutionStatus::Approved,
            }));
        }
        // AUTHZ-2: nobody decides the request its own session made, whatever its role.
        if let Err(refusal) =
            check_not_requester(self.record.requester(), decided_by, DecisionKind::Approval)
        {
            let refusal = self.refuse_decider(
                now,
                DecisionKind::Approval,
                decided_by,
                Some(approval_id),
                refusal,
            );
            return Err(DecisionError::Decider(refusal));
        }
        // AUTHZ-3: an approval counts once per operator; the Nth distinct one decides.
        let required = approval.approvers_required.max(1);
        if decision == Decision::Approve && required > 1 {
            let refusal = match decided_by {
                None => Some(DeciderRefusal::Anonymous { required }),
                Some(by) if approval.approved_by.iter().any(|d| d.name == by.name) => {
                    Some(DeciderRefusal::AlreadyApproved {
                        principal: by.name.clone(),
                        required,
                    })
                }
                Some(_) => None,
            };
            if let Some(refusal) = refusal {
                let refusal = self.refuse_decider(
                    now,
                    DecisionKind::Approval,
                    decided_by,
                    Some(approval_id),
                    refusal,
                );
                return Err(DecisionError::Decider(refusal));
            }
        }
        // GATE-7: the operator's decision is an operator's act (SWEEP-1).
        self.touch(now);
        if decision == Decision::Approve
            && let Some(by) = decided_by
        {
            let approval = self.approvals.edit(idx);
            approval.approved_by.push(by.clone());
            let approvals = approval.approved_by.len() as u32;
            if approvals < required {
                self.emit(
                    now,
                    DomainEvent::ApprovalProgress {
                        approval_id,
                        approved_by: by.name.clone(),
                        username: by.username.clone(),
                        request_id: by.request_id.clone(),
                        approvals,
                        required,
                    },
                );
                return Ok(None);
            }
        }
        self.approvals.edit(idx).decided_by = decided_by.map(|d| d.name.clone());
        match decision {
            Decision::Approve => {
                self.resolve_approval_by(now, idx, ApprovalStatus::Approved, "", decided_by);
                // FLEET-2: an approved fan-out starts through its rolling window.
                if let Some(fanout) = self.fanout_of(execution_id) {
                    let action = Action::StartFanout {
                        fanout_id: fanout.id,
                    };
                    self.queue(action);
                    return Ok(Some(action));
                }
                Ok(Some(self.start_execution(now, execution_id)?))
            }
            Decision::Deny => {
                self.resolve_approval_by(
                    now,
                    idx,
                    ApprovalStatus::Denied,
                    &denial_text(reason),
                    decided_by,
                );
                Ok(None)
            }
        }
    }

    /// Ends a pending approval and moves its execution accordingly.
    fn resolve_approval(&mut self, now: Timestamp, idx: usize, status: ApprovalStatus, why: &str) {
        self.resolve_approval_by(now, idx, status, why, None);
    }

    pub(super) fn resolve_approval_by(
        &mut self,
        now: Timestamp,
        idx: usize,
        status: ApprovalStatus,
        why: &str,
        decided_by: Option<&Decider>,
    ) {
        let approval = self.approvals.edit(idx);
        approval.status = status;
        approval.decided_at = Some(now);
        let (approval_id, execution_id) = (approval.id, approval.execution_id);
        // A request resolved before the shell heard of it waits for nobody.
        self.actions.retain(|action| {
            !matches!(action, Action::AwaitApproval { approval_id: queued, .. } if *queued == approval_id)
        });
        let reason = if status == ApprovalStatus::Approved || why.is_empty() {
            None
        } else {
            Some(why.to_owned())
        };
        self.emit(
            now,
            DomainEvent::ApprovalResolved {
                approval_id,
                status,
                reason,
                decided_by: decided_by.map(|d| d.name.clone()),
                username: decided_by.and_then(|d| d.username.clone()),
                request_id: decided_by.and_then(|d| d.request_id.clone()),
            },
        );
        let next = if status == ApprovalStatus::Approved {
            ExecutionStatus::Approved
        } else {
            ExecutionStatus::Cancelled
        };
        let error = match next {
            ExecutionStatus::Cancelled => Some(why.to_owned()),
            _ => None,
        };
        let approved = next == ExecutionStatus::Approved;
        for id in self.covered_by_approval(execution_id, approved) {
            self.move_execution(now, id, next, error.clone());
        }
    }

    /// Cancels (or expires) every pending approval; returns how many.
    pub(crate) fn cancel_pending_approvals(
        &mut self,
        now: Timestamp,
        status: ApprovalStatus,
        why: &str,
    ) -> usize {
        let pending: Vec<usize> = (0..self.approvals.len())
            .filter(|&i| self.approvals[i].status == ApprovalStatus::Pending)
            .collect();
        for &idx in &pending {
            self.resolve_approval(now, idx, status, why);
        }
        pending.len()
    }

    /// Expires overdue approvals (expiry means deny) and closes an overdue assent window.
    /// Returns the approvals that expired.
    pub fn handle_timeout(&mut self, now: Timestamp) -> Vec<ApprovalId> {
        let overdue: Vec<usize> = (0..self.approvals.len())
            .filter(|&i| approval_expired(&self.approvals[i], now))
            .collect();
        let mut expired = Vec::with_capacity(overdue.len());
        for idx in overdue {
            expired.push(self.approvals[idx].id);
            self.resolve_approval(
                now,
                idx,
                ApprovalStatus::Expired,
                "approval expired: no answer means deny",
            );
        }
        self.expire_assent(now);
        expired
    }
}
