//! Example tests of the two-person rule on plans (AUTHZ-3): a plan whose declared commands
//! include one a rule covers opens its window only at the Nth distinct operator's approve
//! decision on the plan as shown.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::authz::{ApproverPolicy, ApproverRule, DeciderRefusal, DecisionKind};
use crate::event::DomainEvent;
use crate::record::Decider;
use crate::status::CommandClass;

use super::super::{PlanDecided, PlanDecision, PlanDecisionError};
use super::{Harness, assert_ok};

fn by(name: &str) -> Decider {
    Decider {
        name: name.to_owned(),
        username: None,
        request_id: Some(format!("req-{name}")),
    }
}

/// A session whose host `local` is tagged `prod`, where destructive commands need two
/// operators, with a plan declaring `rm -rf /srv/old` on it.
fn two_person_plan() -> Harness {
    let mut h = Harness::new();
    let policy = ApproverPolicy::new(
        vec![ApproverRule {
            class: Some(CommandClass::Destructive),
            tag: Some("prod".to_owned()),
            rule: None,
            approvers: 2,
        }],
        BTreeMap::from([("local".to_owned(), vec!["prod".to_owned()])]),
    )
    .unwrap();
    h.session.set_approver_policy(Arc::new(policy));
    h.goal();
    assert_ok(&h.plan_declaring(&[("remove the old release", &["rm -rf /srv/old"])]));
    h
}

fn decide(
    h: &mut Harness,
    decision: PlanDecision,
    who: Option<&str>,
) -> Result<PlanDecided, PlanDecisionError> {
    h.now = h.now + crate::time::Span::from_millis(10);
    let shown = h.session.plan_digest().unwrap();
    let generation = h.session.record().plan_generation;
    let decider = who.map(by);
    h.session
        .handle_plan_decision(h.now, generation, &shown, decision, None, decider.as_ref())
}

fn approved_by(h: &Harness) -> Vec<&str> {
    h.session
        .plan_approved_by()
        .iter()
        .map(|d| d.name.as_str())
        .collect()
}

fn refusals(h: &Harness) -> Vec<(DecisionKind, Option<String>)> {
    h.events()
        .into_iter()
        .filter_map(|e| match e {
            DomainEvent::DecisionRefused {
                decision,
                principal,
                ..
            } => Some((*decision, principal.clone())),
            _ => None,
        })
        .collect()
}

// rule: AUTHZ-3
#[test]
fn a_plan_with_a_two_person_command_opens_only_at_the_second_distinct_operator() {
    let mut h = two_person_plan();
    assert_eq!(h.session.plan_approvers(), 2);

    // One approval opens nothing.
    assert_eq!(
        decide(&mut h, PlanDecision::Approve, Some("alice")),
        Ok(PlanDecided::Awaiting {
            generation: 1,
            approvals: 1,
            required: 2
        })
    );
    assert!(!h.session.assent_open(h.now));
    assert!(h.session.plan_waits(h.now));
    assert_eq!(approved_by(&h), ["alice"]);
    assert!(h.events().iter().any(|e| matches!(e,
        DomainEvent::PlanProgress { approved_by, approvals: 1, required: 2, generation: 1, .. }
            if approved_by == "alice")));

    // The same operator again is refused and recorded.
    let err = decide(&mut h, PlanDecision::Approve, Some("alice")).unwrap_err();
    assert!(
        matches!(
            err,
            PlanDecisionError::Decider(DeciderRefusal::AlreadyApproved { required: 2, .. })
        ),
        "{err:?}"
    );
    assert_eq!(
        refusals(&h),
        vec![(DecisionKind::PlanDecision, Some("alice".to_owned()))]
    );
    assert_eq!(approved_by(&h), ["alice"]);

    // Chat assent cannot count as the second operator.
    h.now = h.now + crate::time::Span::from_millis(10);
    let effect = h
        .session
        .handle_operator_message_by(h.now, "yes, go ahead", Some(&by("bob")));
    assert_eq!(effect.assented_generation, None);
    assert!(
        matches!(
            effect.refused,
            Some(DeciderRefusal::ChatAssent { required: 2, .. })
        ),
        "{:?}",
        effect.refused
    );
    assert!(!h.session.assent_open(h.now));

    // A second operator opens the window.
    assert_eq!(
        decide(&mut h, PlanDecision::Approve, Some("bob")),
        Ok(PlanDecided::Decided { generation: 1 })
    );
    assert!(h.session.assent_open(h.now));
    assert_eq!(approved_by(&h), ["alice", "bob"]);
}

// rule: AUTHZ-3
#[test]
fn one_reject_ends_a_two_person_plan() {
    let mut h = two_person_plan();
    decide(&mut h, PlanDecision::Approve, Some("alice")).unwrap();
    assert_eq!(
        decide(&mut h, PlanDecision::Reject, Some("bob")),
        Ok(PlanDecided::Decided { generation: 1 })
    );
    assert!(h.session.plan_rejected());
    assert_eq!(
        decide(&mut h, PlanDecision::Approve, Some("carol")),
        Err(PlanDecisionError::Rejected(1))
    );
    assert!(!h.session.assent_open(h.now));
}

// rule: AUTHZ-3
#[test]
fn a_plan_proposed_again_counts_its_approvals_again() {
    let mut h = two_person_plan();
    decide(&mut h, PlanDecision::Approve, Some("alice")).unwrap();
    assert_ok(&h.plan_declaring(&[("remove the old release", &["rm -rf /srv/old"])]));
    assert!(approved_by(&h).is_empty());
    assert_eq!(
        decide(&mut h, PlanDecision::Approve, Some("bob")),
        Ok(PlanDecided::Awaiting {
            generation: 1,
            approvals: 1,
            required: 2
        })
    );
    assert!(!h.session.assent_open(h.now));
}

// rule: AUTHZ-3
#[test]
fn an_unsigned_plan_approval_cannot_count_and_a_read_only_plan_needs_one_operator() {
    let mut h = two_person_plan();
    let err = decide(&mut h, PlanDecision::Approve, None).unwrap_err();
    assert!(
        matches!(
            err,
            PlanDecisionError::Decider(DeciderRefusal::Anonymous { required: 2 })
        ),
        "{err:?}"
    );
    assert_eq!(refusals(&h), vec![(DecisionKind::PlanDecision, None)]);

    // Read-only declared commands never wait, so no rule makes their plan need two.
    let mut h = two_person_plan();
    assert_ok(&h.plan_declaring(&[("look at the disks", &["df -h"])]));
    assert_eq!(h.session.plan_approvers(), 1);
    assert_eq!(
        decide(&mut h, PlanDecision::Approve, Some("alice")),
        Ok(PlanDecided::Decided { generation: 1 })
    );
}
