//! GATE-11 in the session: the operator approves an edited form of a pending request.
//!
//! The rule chosen: an edit never runs on the decision that made it. The judge
//! ([`crate::edit::edit_is_narrower`]) refuses a broadening edit and the request stays
//! pending; a narrower (or equal) edit closes the original request `cancelled` (its reason
//! and the new request's [`EditedFrom`] record the edit) and files a new pending request for
//! the edited form, with its own classification, its own preview (GATE-10) and its own
//! binding hash, which waits for its own approval: the operator sees the new preview and
//! the word diff before anything runs. What then runs is the edited form, and the
//! continuation tells the model what ran instead of what it asked.

use crate::authz::{DecisionKind, check_not_requester};
use crate::classification::Classification;
use crate::edit::{Broadening, Requested, edit_is_narrower};
use crate::fanout::{Fanout, FanoutHost, FanoutId};
use crate::id::{ApprovalId, ExecutionId};
use crate::preview::{Preview, PreviewResult, group_previews};
use crate::record::{Decider, EditedFrom};
use crate::status::{ApprovalStatus, ExecutionStatus};
use crate::sweep::approval_expired;
use crate::time::Timestamp;

use super::Session;
use super::approval::DecisionError;
use super::tool::Action;

/// The operator's edit of a pending request, classified by the shell for the edited hosts'
/// pinned shells (CLASSIFY-8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalEdit {
    /// The edited command (the original's when only hosts were dropped).
    pub command: String,
    /// The edited hosts (the original's when only the command was edited).
    pub hosts: Vec<String>,
    /// The edited command's classification for those hosts.
    pub classification: Classification,
    /// The original command's classification, read again the same way: the judge compares
    /// like with like (its class is never below the one the request showed).
    pub original: Classification,
}

/// Why an edit was refused; the request stays as it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The request cannot be decided (not found, not pending, expired, void, its own).
    #[error(transparent)]
    Decision(#[from] DecisionError),
    /// The edit broadens the request (GATE-11).
    #[error("edit refused: {0}")]
    Broadening(#[from] Broadening),
    /// A fan-out with a canary (FLEET-5) is edited by denying it and asking again.
    #[error(
        "edit refused: this request is part of a fan-out with a canary; deny it and ask the model to run the edited command"
    )]
    Canary,
}

/// What an accepted edit filed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EditFiled {
    /// The request the edit closed.
    pub original: ApprovalId,
    /// The new pending request for the edited form.
    pub approval_id: ApprovalId,
    /// Its execution (a fan-out's first host).
    pub execution_id: ExecutionId,
}

impl Session {
    /// GATE-11: the hosts pending request `approval_id` covers (a fan-out's host set, or
    /// its one host), for the shell to classify an edit against.
    pub fn request_hosts(&self, approval_id: ApprovalId) -> Option<Vec<String>> {
        let approval = self.approvals.iter().find(|a| a.id == approval_id)?;
        Some(self.hosts_of(approval.execution_id))
    }

    /// GATE-11: whether `edit` of pending request `approval_id` would be filed, decided
    /// before the shell runs the edited form's preview. Changes nothing.
    pub fn check_edit(
        &self,
        now: Timestamp,
        approval_id: ApprovalId,
        edit: &ApprovalEdit,
        decided_by: Option<&Decider>,
    ) -> Result<(), EditError> {
        let approval = self
            .approvals
            .iter()
            .find(|a| a.id == approval_id)
            .ok_or(DecisionError::NotFound(approval_id))?;
        if approval.status != ApprovalStatus::Pending {
            return Err(DecisionError::NotPending {
                id: approval_id,
                status: approval.status,
            }
            .into());
        }
        if approval_expired(approval, now) {
            return Err(DecisionError::Expired(approval_id).into());
        }
        if let Some(fanout) = self.fanout_of(approval.execution_id)
            && fanout.canary > 0
        {
            return Err(EditError::Canary);
        }
        if let Err(refusal) =
            check_not_requester(self.record.requester(), decided_by, DecisionKind::Approval)
        {
            return Err(DecisionError::Decider(refusal).into());
        }
        let hosts = self.hosts_of(approval.execution_id);
        let mut original = edit.original.clone();
        original.class = original.class.max(approval.binding.class);
        edit_is_narrower(
            Requested {
                command: &approval.binding.command,
                hosts: &hosts,
                classification: &original,
            },
            Requested {
                command: &edit.command,
                hosts: &edit.hosts,
                classification: &edit.classification,
            },
        )?;
        Ok(())
    }

    /// GATE-11: files `edit` of pending request `approval_id`: a broadening edit is refused
    /// (the request stays pending); otherwise the original is closed `cancelled`, naming
    /// the edit, and a new pending request for the edited form is filed with `previews`
    /// (each host's, run for this edit), its own binding and what it replaced. The new
    /// request waits for its own approval; an [`Action::AwaitApproval`] is queued for it.
    pub fn handle_edit(
        &mut self,
        now: Timestamp,
        approval_id: ApprovalId,
        edit: ApprovalEdit,
        previews: Vec<(String, PreviewResult)>,
        decided_by: Option<&Decider>,
    ) -> Result<EditFiled, EditError> {
        for (_, result) in &previews {
            self.finish_previews(now, result);
        }
        if let Err(refused) = self.check_edit(now, approval_id, &edit, decided_by) {
            if let EditError::Decision(DecisionError::Expired(_)) = refused
                && let Some(idx) = self.approvals.iter().position(|a| a.id == approval_id)
            {
                self.resolve_approval_by(
                    now,
                    idx,
                    ApprovalStatus::Expired,
                    "approval expired",
                    None,
                );
            }
            return Err(refused);
        }
        let idx = self
            .approvals
            .iter()
            .position(|a| a.id == approval_id)
            .ok_or(DecisionError::NotFound(approval_id))?;
        let original = self.approvals[idx].clone();
        let call_id = self
            .execution(original.execution_id)
            .and_then(|e| e.tool_call_id.clone())
            .unwrap_or_default();
        let fanout = self.fanout_of(original.execution_id).cloned();
        self.touch(now);
        let shown_hosts = if fanout.is_some() {
            crate::fanout::host_set_binding(&edit.hosts)
        } else {
            edit.hosts.first().cloned().unwrap_or_default()
        };
        let why = format!(
            "edited by the operator: `{}` on {} became `{}` on {}",
            original.binding.command, original.binding.host, edit.command, shown_hosts
        );
        self.approvals.edit(idx).decided_by = decided_by.map(|d| d.name.clone());
        self.resolve_approval_by(now, idx, ApprovalStatus::Cancelled, &why, decided_by);
        let per_host: Vec<(String, Preview)> = previews
            .iter()
            .filter(|(host, _)| edit.hosts.contains(host))
            .map(|(host, result)| (host.clone(), self.record_preview(now, host, result)))
            .collect();
        let execution_id = match &fanout {
            Some(fanout) => self.edited_fanout(now, &call_id, fanout, &edit),
            None => self.new_execution(
                now,
                &call_id,
                edit.hosts[0].clone(),
                edit.command.clone(),
                edit.classification.clone(),
                ExecutionStatus::PendingApproval,
            ),
        };
        let preview = if fanout.is_some() {
            group_previews(per_host)
        } else {
            per_host.into_iter().next().map(|(_, p)| p)
        };
        let mut approval =
            self.request_approval(now, execution_id, original.binding.origin, preview);
        // What the edit replaced is part of what the operator decides on (GATE-11).
        let new_idx = self.approvals.len() - 1;
        let stored = self.approvals.edit(new_idx);
        stored.binding.edited_from = Some(EditedFrom {
            approval_id,
            command: original.binding.command.clone(),
            host: original.binding.host.clone(),
            class: original.binding.class,
        });
        stored.binding_hash = super::approval::binding_hash(&stored.binding);
        approval.binding = stored.binding.clone();
        self.queue(Action::AwaitApproval {
            approval_id: approval.id,
            execution_id,
        });
        Ok(EditFiled {
            original: approval_id,
            approval_id: approval.id,
            execution_id,
        })
    }

    /// A new fan-out for an edited group request: the same group and limits, the edited
    /// command and hosts, no canary, every host waiting for the one new request.
    fn edited_fanout(
        &mut self,
        now: Timestamp,
        call_id: &str,
        original: &Fanout,
        edit: &ApprovalEdit,
    ) -> ExecutionId {
        let id = FanoutId(
            self.record
                .id
                .derive(&format!("fanout/{}", self.fanouts.len() + 1)),
        );
        let mut hosts = Vec::with_capacity(edit.hosts.len());
        for host in &edit.hosts {
            let execution_id = self.new_execution(
                now,
                call_id,
                host.clone(),
                edit.command.clone(),
                edit.classification.clone(),
                ExecutionStatus::PendingApproval,
            );
            hosts.push(FanoutHost {
                host: host.clone(),
                execution_id,
            });
        }
        let first = hosts[0].execution_id;
        self.fanouts.push(Fanout {
            id,
            session_id: self.record.id,
            tool_call_id: original.tool_call_id.clone(),
            group: original.group.clone(),
            command: edit.command.clone(),
            class: edit.classification.class,
            hosts,
            limits: original.limits,
            created_at: now,
            canary: 0,
        });
        first
    }
}
