//! Example tests of who may decide: no principal decides its own session's request
//! (AUTHZ-2), and a request a two-person rule covers runs only after the Nth distinct
//! operator approved it (AUTHZ-3).

use std::collections::BTreeMap;
use std::sync::Arc;

use uuid::Uuid;

use crate::authz::{ApproverPolicy, ApproverRule, DeciderRefusal, DecisionKind};
use crate::event::DomainEvent;
use crate::id::ApprovalId;
use crate::record::Decider;
use crate::status::{ApprovalStatus, CommandClass, Decision, ExecutionStatus, StepStatus};
use crate::time::Span;

use super::super::{Action, DecisionError, PlanDecided, PlanDecision, PlanDecisionError, Session};
use super::{Harness, assert_ok};

fn by(name: &str) -> Decider {
    Decider {
        name: name.to_owned(),
        username: None,
        request_id: Some(format!("req-{name}")),
    }
}

/// A session an MCP client drives under the principal `claude-code`.
fn client_session() -> Harness {
    let mut h = Harness::new();
    h.session = Session::create_for_client(
        Uuid::from_u128(7).into(),
        h.now,
        super::super::SessionConfig::spec_defaults(),
        "claude-code 1.0",
    )
    .owned_by("claude-code");
    h
}

/// A destructive request waiting for its approval, in `h`'s session.
fn waiting_request(h: &mut Harness) -> ApprovalId {
    h.goal();
    h.plan(&["wipe the old volume"]);
    h.session
        .handle_operator_message_by(h.now, "yes", Some(&by("alice")));
    h.step(1, StepStatus::Running);
    let reply = h.run("zfs destroy tank/old", CommandClass::Destructive);
    assert!(reply.text.contains("Approval requested"), "{}", reply.text);
    h.session.approvals()[0].id
}

fn decide(
    h: &mut Harness,
    id: ApprovalId,
    decision: Decision,
    who: &str,
) -> Result<Option<Action>, DecisionError> {
    h.now = h.now + Span::from_millis(10);
    h.session
        .handle_decision_by(h.now, id, decision, Some(&by(who)))
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

// rule: AUTHZ-2
#[test]
fn the_principal_driving_a_session_may_not_approve_its_request_and_the_refusal_is_recorded() {
    let mut h = client_session();
    let id = waiting_request(&mut h);
    let err = decide(&mut h, id, Decision::Approve, "claude-code").unwrap_err();
    assert!(
        matches!(&err, DecisionError::Decider(DeciderRefusal::OwnRequest { principal, kind: DecisionKind::Approval }) if principal == "claude-code"),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("another operator must decide"),
        "{err}"
    );
    assert_eq!(h.session.approvals()[0].status, ApprovalStatus::Pending);
    assert_eq!(
        h.session.executions()[0].status,
        ExecutionStatus::PendingApproval
    );
    assert_eq!(
        refusals(&h),
        vec![(DecisionKind::Approval, Some("claude-code".to_owned()))]
    );
    // Denying its own request is a decision too.
    assert!(decide(&mut h, id, Decision::Deny, "claude-code").is_err());
    // Another operator decides it.
    let action = decide(&mut h, id, Decision::Approve, "alice").unwrap();
    assert!(
        matches!(action, Some(Action::Dispatch { .. })),
        "{action:?}"
    );
}

// rule: AUTHZ-2
#[test]
fn the_driving_principal_may_neither_assent_by_message_nor_decide_the_plan() {
    let mut h = client_session();
    h.goal();
    assert_ok(&h.plan(&["restart nginx"]));
    h.now = h.now + Span::from_millis(10);
    let effect =
        h.session
            .handle_operator_message_by(h.now, "yes, go ahead", Some(&by("claude-code")));
    assert_eq!(effect.assented_generation, None);
    assert!(effect.refused.is_some());
    assert!(!h.session.assent_open(h.now));
    let err = h
        .session
        .handle_plan_decision(
            h.now,
            1,
            &h.session.plan_digest().unwrap(),
            PlanDecision::Approve,
            None,
            Some(&by("claude-code")),
        )
        .unwrap_err();
    assert!(matches!(err, PlanDecisionError::Decider(_)), "{err:?}");
    assert!(h.session.plan_waits(h.now));
    assert_eq!(
        refusals(&h),
        vec![
            (DecisionKind::Assent, Some("claude-code".to_owned())),
            (DecisionKind::PlanDecision, Some("claude-code".to_owned())),
        ]
    );
    // An operator who is not the driver approves.
    let shown = h.session.plan_digest().unwrap();
    assert_eq!(
        h.session.handle_plan_decision(
            h.now,
            1,
            &shown,
            PlanDecision::Approve,
            None,
            Some(&by("alice"))
        ),
        Ok(PlanDecided::Decided { generation: 1 })
    );
}

// rule: AUTHZ-2
#[test]
fn in_a_session_nomos_model_drives_the_operator_who_created_it_decides() {
    let mut h = Harness::new();
    h.session = Session::create(
        Uuid::from_u128(8).into(),
        h.now,
        super::super::SessionConfig::spec_defaults(),
    )
    .owned_by("alice");
    let id = waiting_request(&mut h);
    assert_eq!(h.session.record().owner.as_deref(), Some("alice"));
    assert_eq!(h.session.record().requester(), None);
    assert!(
        decide(&mut h, id, Decision::Approve, "alice")
            .unwrap()
            .is_some()
    );
    assert!(refusals(&h).is_empty());
}

fn two_person(h: &mut Harness) {
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
}

// rule: AUTHZ-3
#[test]
fn a_two_person_request_runs_only_after_a_second_distinct_operator_approves() {
    let mut h = Harness::new();
    two_person(&mut h);
    let id = waiting_request(&mut h);
    assert_eq!(h.session.approvals()[0].approvers_required, 2);

    // One approval does not run it.
    assert_eq!(decide(&mut h, id, Decision::Approve, "alice"), Ok(None));
    let approval = &h.session.approvals()[0];
    assert_eq!(approval.status, ApprovalStatus::Pending);
    assert_eq!(
        approval
            .approved_by
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        ["alice"]
    );
    assert_eq!(
        h.session.executions()[0].status,
        ExecutionStatus::PendingApproval
    );
    assert!(h.events().iter().any(|e| matches!(e,
        DomainEvent::ApprovalProgress { approved_by, approvals: 1, required: 2, .. } if approved_by == "alice")));

    // The same operator again is refused, and recorded.
    let err = decide(&mut h, id, Decision::Approve, "alice").unwrap_err();
    assert!(
        matches!(
            err,
            DecisionError::Decider(DeciderRefusal::AlreadyApproved { .. })
        ),
        "{err:?}"
    );
    assert_eq!(refusals(&h).len(), 1);
    assert_eq!(h.session.approvals()[0].approved_by.len(), 1);

    // A second operator runs it.
    let action = decide(&mut h, id, Decision::Approve, "bob").unwrap();
    assert!(
        matches!(action, Some(Action::Dispatch { .. })),
        "{action:?}"
    );
    let approval = &h.session.approvals()[0];
    assert_eq!(approval.status, ApprovalStatus::Approved);
    assert_eq!(approval.decided_by.as_deref(), Some("bob"));
    assert_eq!(approval.approved_by.len(), 2);
}

// rule: AUTHZ-3
#[test]
fn one_denial_ends_a_two_person_request_and_expiry_still_means_deny() {
    let mut h = Harness::new();
    two_person(&mut h);
    let id = waiting_request(&mut h);
    decide(&mut h, id, Decision::Approve, "alice").unwrap();
    assert_eq!(decide(&mut h, id, Decision::Deny, "bob"), Ok(None));
    assert_eq!(h.session.approvals()[0].status, ApprovalStatus::Denied);
    assert_eq!(h.session.executions()[0].status, ExecutionStatus::Cancelled);
    assert!(decide(&mut h, id, Decision::Approve, "carol").is_err());

    let mut h = Harness::new();
    two_person(&mut h);
    let id = waiting_request(&mut h);
    decide(&mut h, id, Decision::Approve, "alice").unwrap();
    h.advance(Span::from_mins(31));
    assert_eq!(h.session.handle_timeout(h.now), vec![id]);
    assert_eq!(h.session.approvals()[0].status, ApprovalStatus::Expired);
    assert!(decide(&mut h, id, Decision::Approve, "bob").is_err());
    assert_eq!(h.session.executions()[0].status, ExecutionStatus::Cancelled);
}

// rule: AUTHZ-3
#[test]
fn an_unsigned_approval_cannot_count_toward_a_two_person_rule() {
    let mut h = Harness::new();
    two_person(&mut h);
    let id = waiting_request(&mut h);
    let err = h
        .session
        .handle_decision_by(h.now, id, Decision::Approve, None)
        .unwrap_err();
    assert!(
        matches!(
            err,
            DecisionError::Decider(DeciderRefusal::Anonymous { required: 2 })
        ),
        "{err:?}"
    );
    // A request no rule covers needs one operator, as before.
    let mut h = Harness::new();
    let id = waiting_request(&mut h);
    assert_eq!(h.session.approvals()[0].approvers_required, 1);
    assert!(
        decide(&mut h, id, Decision::Approve, "alice")
            .unwrap()
            .is_some()
    );
}
