//! Example tests of the operator's explicit plan decision (GATE-4 rev. 2): exact, naming
//! the generation it decides, recorded with who decided (AUDIT-1), and told to the model
//! (RESUME-4).

use crate::event::{AssentCloseReason, DomainEvent};
use crate::plan_digest::PlanDigest;
use crate::record::Decider;
use crate::status::{CommandClass, Role, SessionStatus, StepStatus};

use super::super::{Action, PlanDecision, PlanDecisionError, STEP_REJECTED};
use super::{Harness, assert_ok, assert_refused};

fn alice() -> Decider {
    Decider {
        name: "alice".to_owned(),
        username: Some("alice.a".to_owned()),
        request_id: Some("req-7".to_owned()),
    }
}

/// A proposed plan that declares `systemctl restart nginx` on step 1 and waits.
fn waiting() -> Harness {
    let mut h = Harness::new();
    h.goal();
    assert_ok(&h.plan_declaring(&[
        ("restart nginx", &["systemctl restart nginx"]),
        ("check it", &[]),
    ]));
    assert!(h.session.plan_waits(h.now));
    h
}

fn decide(
    h: &mut Harness,
    generation: u32,
    decision: PlanDecision,
    reason: Option<&str>,
) -> Result<u32, PlanDecisionError> {
    let shown = h
        .session
        .plan_digest()
        .unwrap_or_else(|| PlanDigest::from_client(""));
    decide_shown(h, generation, &shown, decision, reason)
}

/// A decision on the plan whose digest the operator was shown.
fn decide_shown(
    h: &mut Harness,
    generation: u32,
    shown: &PlanDigest,
    decision: PlanDecision,
    reason: Option<&str>,
) -> Result<u32, PlanDecisionError> {
    h.now = h.now + crate::time::Span::from_millis(10);
    h.session
        .handle_plan_decision(h.now, generation, shown, decision, reason, Some(&alice()))
        .map(|decided| decided.generation())
}

/// The notes the model will read, in order.
fn notes(h: &Harness) -> Vec<String> {
    h.commits
        .iter()
        .flat_map(|c| c.messages.iter())
        .filter(|m| m.role == Role::Note)
        .map(|m| m.content.clone())
        .collect()
}

// rule: GATE-4
// rule: RESUME-4
// rule: AUDIT-1
#[test]
fn an_explicit_approval_opens_the_window_names_who_and_tells_the_model_the_declared_commands() {
    let mut h = waiting();
    assert_eq!(decide(&mut h, 1, PlanDecision::Approve, None), Ok(1));
    assert!(h.session.assent_open(h.now));
    assert!(!h.session.plan_waits(h.now));
    assert_eq!(h.session.status(), SessionStatus::Executing);
    assert!(h.events().iter().any(|e| matches!(e,
        DomainEvent::AssentOpened { generation: 1, granted_by: Some(who), username: Some(user), request_id: Some(req), .. }
            if who == "alice" && user == "alice.a" && req == "req-7")));
    h.commit();
    let notes = notes(&h);
    let note = notes.last().expect("the model is told");
    assert!(
        note.contains("approved plan generation 1 with an explicit decision"),
        "{note}"
    );
    assert!(
        note.contains("step 1 [config_mutation] local: systemctl restart nginx"),
        "{note}"
    );

    // GATE-9: the declared command runs without a card of its own.
    h.step(1, StepStatus::Running);
    let reply = h.run("systemctl restart nginx", CommandClass::ConfigMutation);
    assert!(
        matches!(reply.action, Some(Action::Dispatch { .. })),
        "{reply:?}"
    );
    assert!(h.session.approvals().is_empty());
}

// rule: GATE-4
// rule: RESUME-4
#[test]
fn a_rejection_closes_the_generation_so_nothing_of_it_runs_and_a_later_yes_does_not_approve_it() {
    let mut h = waiting();
    assert_eq!(
        decide(
            &mut h,
            1,
            PlanDecision::Reject,
            Some("not during business hours")
        ),
        Ok(1)
    );
    assert!(!h.session.plan_waits(h.now));
    assert!(!h.session.assent_open(h.now));
    assert_eq!(h.session.status(), SessionStatus::Active);
    for seq in 1..=3 {
        assert_eq!(h.step_status(1, seq), StepStatus::Replaced);
    }
    let step = &h.session.all_steps()[0];
    assert_eq!(step.note.as_deref(), Some(STEP_REJECTED));
    assert!(h.events().contains(&&DomainEvent::PlanRejected {
        generation: 1,
        rejected_by: Some("alice".into()),
        username: Some("alice.a".into()),
        request_id: Some("req-7".into()),
        reason: Some("not during business hours".into()),
    }));
    h.commit();
    let note = notes(&h).pop().expect("the model is told");
    assert!(note.contains("rejected plan generation 1"), "{note}");
    assert!(note.contains("not during business hours"), "{note}");

    // A chat word cannot bring the rejected plan back.
    assert_eq!(h.say("ok, go ahead").assented_generation, None);
    assert_refused(
        &h.run("systemctl restart nginx", CommandClass::ConfigMutation),
        "not approved",
    );
    assert_eq!(
        decide(&mut h, 1, PlanDecision::Approve, None),
        Err(PlanDecisionError::Rejected(1))
    );

    // The next proposal is a new generation: no revise needed, and it waits again.
    assert_ok(&h.plan(&["restart nginx tonight"]));
    assert_eq!(h.session.record().plan_generation, 2);
    assert_eq!(h.session.status(), SessionStatus::Planning);
    assert!(h.session.plan_waits(h.now));
    assert_eq!(
        decide(&mut h, 1, PlanDecision::Approve, None),
        Err(PlanDecisionError::Stale {
            asked: 1,
            current: 2
        })
    );
}

// rule: GATE-4
#[test]
fn a_decision_naming_a_replaced_generation_is_refused_and_changes_nothing() {
    let mut h = waiting();
    decide(&mut h, 1, PlanDecision::Approve, None).unwrap();
    h.step(1, StepStatus::Running);
    assert_ok(&h.revise(&["restart nginx and php-fpm"], "php-fpm too"));
    assert_eq!(h.session.record().plan_generation, 2);
    h.commit();
    let err = decide(&mut h, 1, PlanDecision::Approve, None).unwrap_err();
    assert_eq!(
        err,
        PlanDecisionError::Stale {
            asked: 1,
            current: 2
        }
    );
    assert!(err.to_string().contains("current plan is generation 2"));
    assert!(
        h.session.take_commit().is_empty(),
        "a refusal decides nothing"
    );
    assert!(!h.session.assent_open(h.now));
    assert_eq!(decide(&mut h, 2, PlanDecision::Approve, None), Ok(2));
}

// rule: GATE-4
#[test]
fn a_plan_that_does_not_wait_refuses_a_decision_saying_why() {
    let mut h = Harness::new();
    h.goal();
    assert_eq!(
        decide(&mut h, 1, PlanDecision::Approve, None),
        Err(PlanDecisionError::NoPlan)
    );

    let mut h = waiting();
    decide(&mut h, 1, PlanDecision::Approve, None).unwrap();
    let err = decide(&mut h, 1, PlanDecision::Reject, None).unwrap_err();
    assert_eq!(err, PlanDecisionError::AlreadyApproved(1));
    assert!(err.to_string().contains("already approved"));
    // After a revoke the same generation waits again and can be decided.
    h.session.handle_revoke_assent(h.now, None).unwrap();
    assert!(h.session.plan_waits(h.now));
    assert_eq!(decide(&mut h, 1, PlanDecision::Reject, None), Ok(1));

    let mut h = waiting();
    for seq in 1..=3 {
        h.step(seq, StepStatus::Skipped);
    }
    assert_eq!(
        decide(&mut h, 1, PlanDecision::Approve, None),
        Err(PlanDecisionError::Finished(1))
    );

    let mut h = waiting();
    h.complete(crate::status::Outcome::Failure);
    assert!(matches!(
        decide(&mut h, 1, PlanDecision::Approve, None),
        Err(PlanDecisionError::Terminal(_))
    ));
}

// rule: GATE-4
#[test]
fn an_expired_window_lets_the_plan_wait_for_a_new_decision() {
    let mut h = waiting();
    decide(&mut h, 1, PlanDecision::Approve, None).unwrap();
    h.advance(crate::time::Span::from_mins(31));
    assert!(h.session.plan_waits(h.now));
    assert_eq!(decide(&mut h, 1, PlanDecision::Approve, None), Ok(1));
    let closes: Vec<_> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            DomainEvent::AssentClosed { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(closes, vec![AssentCloseReason::Expired]);
}

// rule: GATE-4
// rule: GATE-7
#[test]
fn a_rejection_cancels_the_requests_asked_under_the_plan_so_none_of_them_runs() {
    let mut h = waiting();
    decide(&mut h, 1, PlanDecision::Approve, None).unwrap();
    h.step(1, StepStatus::Running);
    let reply = h.run("rm -rf /srv/cache", CommandClass::Destructive);
    assert!(
        matches!(reply.action, Some(Action::AwaitApproval { .. })),
        "{reply:?}"
    );
    let approval = h.session.approvals()[0].id;
    // The operator revokes the window with the request still waiting; the plan waits again.
    h.session.handle_revoke_assent(h.now, None).unwrap();
    assert!(h.session.plan_waits(h.now));
    decide(&mut h, 1, PlanDecision::Reject, None).unwrap();
    let stored = &h.session.approvals()[0];
    assert_eq!(stored.status, crate::status::ApprovalStatus::Cancelled);
    assert!(
        h.session
            .handle_decision(h.now, approval, crate::status::Decision::Approve, None)
            .is_err(),
        "a request of a rejected plan can no longer be approved"
    );
    assert_eq!(
        h.session.executions()[0].status,
        crate::status::ExecutionStatus::Cancelled
    );
}

// rule: GATE-4
#[test]
fn a_re_proposal_of_the_same_text_voids_a_decision_on_the_digest_shown_before() {
    let mut h = waiting();
    let shown = h.session.plan_digest().unwrap();
    // The model proposes the same plan again before any step ran (PLAN-2), in the same
    // millisecond: the operator's click still names what was shown before.
    assert_ok(&h.plan_declaring(&[
        ("restart nginx", &["systemctl restart nginx"]),
        ("check it", &[]),
    ]));
    let current = h.session.plan_digest().unwrap();
    assert_ne!(current, shown);
    for decision in [PlanDecision::Approve, PlanDecision::Reject] {
        let refused = decide_shown(&mut h, 1, &shown, decision, None).unwrap_err();
        assert!(
            matches!(&refused, PlanDecisionError::Changed { generation: 1, current: c, .. } if *c == current),
            "{refused:?}"
        );
        assert!(
            refused.to_string().contains("changed since it was shown"),
            "{refused}"
        );
    }
    assert!(!h.session.assent_open(h.now));
    assert!(h.session.plan_waits(h.now));
    // The digest of what is shown now decides it.
    assert_eq!(
        decide_shown(&mut h, 1, &current, PlanDecision::Approve, None),
        Ok(1)
    );
    assert!(h.session.assent_open(h.now));
}

// rule: GATE-4
#[test]
fn a_decision_with_a_made_up_or_empty_digest_is_refused() {
    let mut h = waiting();
    for made_up in ["", "00", &"a".repeat(64)] {
        let refused = decide_shown(
            &mut h,
            1,
            &PlanDigest::from_client(made_up),
            PlanDecision::Approve,
            None,
        );
        assert!(
            matches!(refused, Err(PlanDecisionError::Changed { .. })),
            "{refused:?}"
        );
    }
    assert!(!h.session.assent_open(h.now));
}

// rule: GATE-4
#[test]
fn the_digest_covers_the_steps_and_declared_commands_and_is_stable_while_the_plan_waits() {
    let mut h = waiting();
    let shown = h.session.plan_digest().unwrap();
    assert_eq!(shown.as_str().len(), 64);
    h.now = h.now + crate::time::Span::from_millis(10);
    // A read-only command while the plan waits changes nothing of the plan.
    assert_ok(&h.run("uptime", CommandClass::ReadOnly));
    assert_eq!(h.session.plan_digest(), Some(shown.clone()));
    // Another declared command is another plan.
    assert_ok(&h.plan_declaring(&[
        ("restart nginx", &["systemctl restart nginx2"]),
        ("check it", &[]),
    ]));
    assert_ne!(h.session.plan_digest(), Some(shown));
}
