//! AUTHZ-3 on plans: a plan whose declared commands include one a two-person rule covers
//! needs that many distinct operators' explicit approve decisions on the plan as shown
//! (its digest) before its window opens; each approval short of the Nth is a
//! `plan.progress` event and opens nothing.

use crate::authz::{DeciderRefusal, DecisionKind};
use crate::event::DomainEvent;
use crate::plan_digest::PlanDigest;
use crate::record::{Decider, PlanApprovals};
use crate::status::CommandClass;
use crate::time::Timestamp;

use super::Session;

/// What one approve decision on a plan that needs several operators did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlanCount {
    /// The plan needs one operator, or this was the Nth distinct one: the window opens.
    Complete,
    /// This approval counted; the plan still waits for others.
    Short {
        /// Distinct operators who approved it so far.
        approvals: u32,
        /// How many it needs.
        required: u32,
    },
}

impl Session {
    /// AUTHZ-3: how many distinct operators the current plan needs: the most any of its
    /// declared commands that would wait for an operator (not `read_only`) needs, on the
    /// hosts it names; 1 when none does.
    pub(crate) fn plan_approvers_required(&self) -> u32 {
        self.declared_commands()
            .filter(|(_, c)| c.class() != CommandClass::ReadOnly)
            .map(|(_, c)| {
                let hosts: Vec<&str> = if c.members.is_empty() {
                    vec![c.host.as_str()]
                } else {
                    c.members.iter().map(String::as_str).collect()
                };
                self.approvers.required_for(c.class(), &hosts, &c.command)
            })
            .max()
            .unwrap_or(1)
    }

    /// AUTHZ-3: fixes the number of operators the plan of `generation`, just proposed,
    /// needs (`None` when it needs one), like an approval's when it is requested.
    pub(crate) fn fix_plan_approvers(&mut self, generation: u32) {
        let required = self.plan_approvers_required();
        self.record.plan_approvals = if required > 1 {
            Some(PlanApprovals {
                generation,
                required,
                digest: None,
                approved_by: Vec::new(),
            })
        } else {
            None
        };
    }

    /// AUTHZ-3: how many distinct operators the current plan needs (1 unless a two-person
    /// rule covers one of its declared commands).
    pub fn plan_approvers(&self) -> u32 {
        match &self.record.plan_approvals {
            Some(approvals) if approvals.generation == self.record.plan_generation => {
                approvals.required
            }
            _ => 1,
        }
    }

    /// AUTHZ-3: who approved the current plan as shown now (its digest) so far.
    pub fn plan_approved_by(&self) -> &[Decider] {
        match &self.record.plan_approvals {
            Some(approvals) => {
                approvals.approved_by_for(self.record.plan_generation, self.plan_digest().as_ref())
            }
            None => &[],
        }
    }

    /// AUTHZ-3: counts an approve decision by `by` on the current plan as shown (`digest`,
    /// already checked to be the current one). Refused (and recorded) when the plan needs
    /// several operators and the decision names nobody or an operator who already approved
    /// this plan.
    pub(crate) fn count_plan_approval(
        &mut self,
        now: Timestamp,
        digest: &PlanDigest,
        by: Option<&Decider>,
    ) -> Result<PlanCount, DeciderRefusal> {
        let required = self.plan_approvers();
        if required <= 1 {
            return Ok(PlanCount::Complete);
        }
        let kind = DecisionKind::PlanDecision;
        let Some(by) = by else {
            return Err(self.refuse_decider(
                now,
                kind,
                None,
                None,
                DeciderRefusal::Anonymous { required },
            ));
        };
        if self.plan_approved_by().iter().any(|d| d.name == by.name) {
            let refusal = DeciderRefusal::AlreadyApproved {
                principal: by.name.clone(),
                required,
            };
            return Err(self.refuse_decider(now, kind, Some(by), None, refusal));
        }
        let generation = self.record.plan_generation;
        let counted = self.plan_approved_by().to_vec();
        // A plan shown with another digest than the approvals so far starts again.
        let mut approved_by = counted;
        approved_by.push(by.clone());
        let approvals = approved_by.len() as u32;
        self.record.plan_approvals = Some(PlanApprovals {
            generation,
            required,
            digest: Some(digest.clone()),
            approved_by,
        });
        if approvals >= required {
            return Ok(PlanCount::Complete);
        }
        self.emit(
            now,
            DomainEvent::PlanProgress {
                generation,
                approved_by: by.name.clone(),
                username: by.username.clone(),
                request_id: by.request_id.clone(),
                approvals,
                required,
            },
        );
        Ok(PlanCount::Short {
            approvals,
            required,
        })
    }

    /// AUTHZ-3: refuses (and records) chat assent to a plan that needs several operators;
    /// `None` when the plan needs one.
    pub(crate) fn refuse_chat_assent(
        &mut self,
        now: Timestamp,
        by: Option<&Decider>,
    ) -> Option<DeciderRefusal> {
        let required = self.plan_approvers();
        if required <= 1 {
            return None;
        }
        let refusal = DeciderRefusal::ChatAssent {
            principal: by.map(|d| d.name.clone()),
            required,
        };
        Some(self.refuse_decider(now, DecisionKind::Assent, by, None, refusal))
    }
}
