//! GATE-4 (rev. 2): the operator's explicit decision on the waiting plan. It names the
//! generation it decides, so it is exact where a chat word is a guess: approve opens the
//! same window chat assent opens, reject closes the generation so nothing of it runs; both
//! record who decided and the request, and the model is told on its next request
//! (RESUME-4).

use crate::event::DomainEvent;
use crate::plan_digest::PlanDigest;
use crate::record::Decider;
use crate::resume::{plan_decided_approved_note, plan_rejected_note};
use crate::status::{SessionStatus, StepStatus};
use crate::time::Timestamp;

use super::Session;
use super::plan_approvers::PlanCount;

/// The note on each step of a rejected plan.
pub const STEP_REJECTED: &str = "rejected by the operator";

/// GATE-7: why a pending approval died with its rejected plan.
pub const APPROVAL_VOID_REJECTED: &str =
    "approval void: the operator rejected the plan it belonged to";

/// What the operator decided about the waiting plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlanDecision {
    /// Approve the plan: the assent window opens for its generation.
    Approve,
    /// Reject the plan: nothing of its generation runs.
    Reject,
}

impl PlanDecision {
    /// The wire spelling (`approve`, `reject`).
    pub fn as_str(&self) -> &'static str {
        match self {
            PlanDecision::Approve => "approve",
            PlanDecision::Reject => "reject",
        }
    }
}

/// What an accepted plan decision did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanDecided {
    /// It took effect: approve opened the window, reject closed the generation.
    Decided {
        /// The generation decided.
        generation: u32,
    },
    /// AUTHZ-3: an approval that counted, short of the distinct operators the plan needs;
    /// the plan still waits and nothing of it runs.
    Awaiting {
        /// The generation approved.
        generation: u32,
        /// Distinct operators who approved it so far.
        approvals: u32,
        /// How many it needs.
        required: u32,
    },
}

impl PlanDecided {
    /// The generation the decision named.
    pub fn generation(&self) -> u32 {
        match self {
            PlanDecided::Decided { generation } | PlanDecided::Awaiting { generation, .. } => {
                *generation
            }
        }
    }
}

/// Why a plan decision was refused: the plan it names does not wait for one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanDecisionError {
    /// The session ended; nothing waits in it.
    #[error("the session is {0}: its plan no longer waits for a decision")]
    Terminal(SessionStatus),
    /// No plan was proposed (or the current generation has no steps yet).
    #[error("there is no plan to decide: no plan has been proposed in this session")]
    NoPlan,
    /// The decision names a generation that is not the current one.
    #[error(
        "plan generation {asked} is stale: the current plan is generation {current}; reload the plan and decide the one you see"
    )]
    Stale {
        /// The generation the decision named.
        asked: u32,
        /// The current generation.
        current: u32,
    },
    /// GATE-4 (rev. 3): the decision names the current generation, but the plan the
    /// operator was shown (its digest) is not the current plan: it was proposed again.
    #[error(
        "the plan of generation {generation} changed since it was shown (it was proposed again): reload the plan and decide the one you see"
    )]
    Changed {
        /// The generation the decision named (the current one).
        generation: u32,
        /// The digest the decision carried.
        asked: PlanDigest,
        /// The current plan's digest.
        current: PlanDigest,
    },
    /// The current generation was already rejected.
    #[error("plan generation {0} does not wait for a decision: it was rejected")]
    Rejected(u32),
    /// Every step of the current generation is finished.
    #[error("plan generation {0} does not wait for a decision: every step of it is finished")]
    Finished(u32),
    /// The current generation is already approved and its window is open.
    #[error(
        "plan generation {0} does not wait for a decision: it is already approved and its window is open"
    )]
    AlreadyApproved(u32),
    /// AUTHZ-2: the decider drives the session that proposed the plan.
    #[error(transparent)]
    Decider(#[from] crate::authz::DeciderRefusal),
}

impl Session {
    /// GATE-4 (rev. 2), AUDIT-1, RESUME-4: the operator's explicit decision on plan
    /// `generation`, whose digest as shown was `digest` ([`Session::plan_digest`]). Refused
    /// unless that generation is the current one and waits (see [`Session::plan_waits`]),
    /// and (rev. 3) unless `digest` is the current plan's: a re-proposal, even of the same
    /// text, voids a decision made on what was shown before. Approve opens the assent window exactly as chat assent does
    /// (bound to the declared commands, GATE-9; `plan.assent` naming who and the request);
    /// reject marks every step of the generation `replaced` ("rejected by the operator"),
    /// cancels the approvals that wait (GATE-7), records a `plan.rejected` event with who, the request and the reason, and leaves the
    /// session `active`, so the next proposal starts a new generation. Either way a note
    /// tells the model what was decided. AUTHZ-3: a plan whose declared commands need
    /// several distinct operators opens its window only at the Nth distinct approval of the
    /// plan as shown; each one before it is a `plan.progress` event
    /// ([`PlanDecided::Awaiting`]), the same operator twice is refused, and one reject ends
    /// it.
    pub fn handle_plan_decision(
        &mut self,
        now: Timestamp,
        generation: u32,
        digest: &PlanDigest,
        decision: PlanDecision,
        reason: Option<&str>,
        by: Option<&Decider>,
    ) -> Result<PlanDecided, PlanDecisionError> {
        self.expire_assent(now);
        self.check_plan_waits(now, generation)?;
        // AUTHZ-2: nobody decides the plan its own session proposed, whatever it names.
        let kind = crate::authz::DecisionKind::PlanDecision;
        if let Err(refusal) = crate::authz::check_not_requester(self.record.requester(), by, kind) {
            return Err(self.refuse_decider(now, kind, by, None, refusal).into());
        }
        match self.plan_digest() {
            Some(current) if current == *digest => {}
            current => {
                return Err(PlanDecisionError::Changed {
                    generation,
                    asked: digest.clone(),
                    current: current.unwrap_or_else(|| PlanDigest::from_client("")),
                });
            }
        }
        // AUTHZ-3: an approval counts once per operator; the Nth distinct one decides.
        if decision == PlanDecision::Approve
            && let PlanCount::Short {
                approvals,
                required,
            } = self.count_plan_approval(now, digest, by)?
        {
            self.touch(now);
            self.record.nudged_at = None;
            return Ok(PlanDecided::Awaiting {
                generation,
                approvals,
                required,
            });
        }
        self.touch(now);
        self.record.nudged_at = None;
        let reason = reason.map(str::trim).filter(|r| !r.is_empty());
        match decision {
            PlanDecision::Approve => {
                self.open_assent(now, by);
                let n_steps = self.current_steps().count() as u32;
                let note = self.with_declared(|declared| {
                    plan_decided_approved_note(generation, n_steps, declared, reason)
                });
                self.append_note(now, &note);
            }
            PlanDecision::Reject => {
                self.emit(
                    now,
                    DomainEvent::PlanRejected {
                        generation,
                        rejected_by: by.map(|d| d.name.clone()),
                        username: by.and_then(|d| d.username.clone()),
                        request_id: by.and_then(|d| d.request_id.clone()),
                        reason: reason.map(str::to_owned),
                    },
                );
                let open: Vec<usize> = (0..self.steps.len())
                    .filter(|&i| {
                        self.steps[i].generation == generation && !self.steps[i].status.is_closed()
                    })
                    .collect();
                for idx in open {
                    self.set_step_status(
                        now,
                        idx,
                        StepStatus::Replaced,
                        Some(STEP_REJECTED.to_owned()),
                    );
                }
                // GATE-7: a request asked under the rejected plan dies with it.
                self.cancel_pending_approvals(
                    now,
                    crate::status::ApprovalStatus::Cancelled,
                    APPROVAL_VOID_REJECTED,
                );
                if self.record.status != SessionStatus::AwaitingInput {
                    self.set_status(
                        now,
                        SessionStatus::Active,
                        Some("operator rejected the plan".to_owned()),
                    );
                }
                self.append_note(now, &plan_rejected_note(generation, reason));
            }
        }
        Ok(PlanDecided::Decided { generation })
    }

    /// GATE-4 (rev. 3): the digest of the current generation's plan as it is shown
    /// ([`PlanDigest`]); `None` before any plan.
    pub fn plan_digest(&self) -> Option<PlanDigest> {
        PlanDigest::of(self.record.plan_generation, self.current_steps())
    }

    /// Why plan `generation` does not wait for a decision now, if it does not.
    fn check_plan_waits(&self, now: Timestamp, generation: u32) -> Result<(), PlanDecisionError> {
        let current = self.record.plan_generation;
        if self.record.status.is_terminal() {
            return Err(PlanDecisionError::Terminal(self.record.status));
        }
        if current == 0 || self.current_steps().next().is_none() {
            return Err(PlanDecisionError::NoPlan);
        }
        if generation != current {
            return Err(PlanDecisionError::Stale {
                asked: generation,
                current,
            });
        }
        if self.plan_rejected() {
            return Err(PlanDecisionError::Rejected(current));
        }
        if !self.plan_open() {
            return Err(PlanDecisionError::Finished(current));
        }
        if self.assent_open(now) {
            return Err(PlanDecisionError::AlreadyApproved(current));
        }
        debug_assert!(self.plan_waits(now));
        Ok(())
    }

    /// Whether the current generation was rejected: it has steps and every one of them is
    /// `replaced` (a revision replaces steps only of a generation it leaves behind).
    pub(crate) fn plan_rejected(&self) -> bool {
        let mut steps = self.current_steps().peekable();
        steps.peek().is_some() && steps.all(|s| s.status == StepStatus::Replaced)
    }
}
