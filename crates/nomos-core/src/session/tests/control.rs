//! Example tests of the operator's controls: stop (CONTROL-1) and revoke (CONTROL-2), each
//! recording who decided (AUDIT-1).

use crate::event::{AssentCloseReason, DomainEvent};
use crate::record::Decider;
use crate::status::{ApprovalStatus, CommandClass, Decision, ExecutionStatus};

use super::super::{
    Action, CANCELLED_BY_OPERATOR, DecisionError, RevokeError, STOPPED_BY_OPERATOR,
};
use super::{Harness, assert_refused};

fn alice() -> Decider {
    Decider {
        name: "alice".to_owned(),
        username: None,
        request_id: Some("req-1".to_owned()),
    }
}

fn assented() -> Harness {
    let mut h = Harness::windowed();
    h.goal();
    h.plan(&["restart the service"]);
    assert_eq!(h.say("yes, go ahead").assented_generation, Some(1));
    h
}

// rule: CONTROL-1
#[test]
fn a_stop_closes_the_window_names_who_and_lists_what_runs() {
    let mut h = assented();
    let reply = h.run("systemctl restart nginx", CommandClass::ConfigMutation);
    let Some(Action::Dispatch { execution_id }) = reply.action else {
        panic!("inside the window a config mutation runs: {reply:?}");
    };
    let effect = h.session.handle_stop(h.now, Some(&alice()));
    assert_eq!(effect.running, vec![execution_id]);
    assert_eq!(effect.closed_generation, Some(1));
    assert!(!h.session.assent_open(h.now));
    let events = h.events();
    assert!(events.contains(&&DomainEvent::TurnStopped {
        stopped_by: Some("alice".into()),
        username: None,
        request_id: Some("req-1".into()),
    }));
    assert!(events.contains(&&DomainEvent::AssentClosed {
        generation: 1,
        reason: AssentCloseReason::Stopped,
    }));

    h.session
        .handle_execution_stopped(h.now, execution_id)
        .unwrap();
    let execution = h.session.execution(execution_id).unwrap();
    assert_eq!(execution.status, ExecutionStatus::Cancelled);
    assert_eq!(execution.error.as_deref(), Some(STOPPED_BY_OPERATOR));
    // The next change needs a fresh assent.
    assert_refused(
        &h.run("systemctl restart nginx", CommandClass::ConfigMutation),
        "STOP and wait for approval",
    );
}

// rule: CONTROL-1
#[test]
fn a_command_that_ended_before_the_stop_keeps_its_end() {
    let mut h = assented();
    let reply = h.run("uptime", CommandClass::ReadOnly);
    h.finish_dispatch(&reply);
    let Some(Action::Dispatch { execution_id }) = reply.action else {
        panic!("{reply:?}");
    };
    let effect = h.session.handle_stop(h.now, None);
    assert!(effect.running.is_empty());
    h.session
        .handle_execution_stopped(h.now, execution_id)
        .unwrap();
    assert_eq!(
        h.session.execution(execution_id).unwrap().status,
        ExecutionStatus::Completed
    );
}

// rule: CONTROL-2
#[test]
fn a_revoked_window_refuses_the_next_change_and_says_who_revoked_it() {
    let mut h = assented();
    assert_eq!(h.session.handle_revoke_assent(h.now, Some(&alice())), Ok(1));
    assert_refused(
        &h.run("systemctl restart nginx", CommandClass::ConfigMutation),
        "STOP and wait for approval",
    );
    let events = h.events();
    let revoked = events
        .iter()
        .position(|e| matches!(e, DomainEvent::AssentRevoked { revoked_by: Some(who), .. } if who == "alice"))
        .expect("an assent.revoked naming alice");
    assert_eq!(
        events[revoked + 1],
        &DomainEvent::AssentClosed {
            generation: 1,
            reason: AssentCloseReason::Revoked
        }
    );
    assert_eq!(
        h.session.handle_revoke_assent(h.now, None),
        Err(RevokeError::NoOpenWindow)
    );
}

// rule: CONTROL-2
#[test]
fn a_cancelled_approval_never_runs_and_a_late_decision_is_refused() {
    let mut h = assented();
    let reply = h.run("rm -rf /srv/cache", CommandClass::Destructive);
    let Some(Action::AwaitApproval {
        approval_id,
        execution_id,
    }) = reply.action
    else {
        panic!("a destructive command waits: {reply:?}");
    };
    assert_eq!(
        h.session
            .handle_cancel_approval(h.now, approval_id, Some(&alice())),
        Ok(execution_id)
    );
    let approval = &h.session.approvals()[0];
    assert_eq!(approval.status, ApprovalStatus::Cancelled);
    assert_eq!(approval.decided_by.as_deref(), Some("alice"));
    let execution = h.session.execution(execution_id).unwrap();
    assert_eq!(execution.status, ExecutionStatus::Cancelled);
    assert_eq!(execution.error.as_deref(), Some(CANCELLED_BY_OPERATOR));
    assert!(matches!(
        h.session
            .handle_decision(h.now, approval_id, Decision::Approve, Some("bob")),
        Err(DecisionError::NotPending { .. })
    ));
    // And a cancel after a decision is refused the same way.
    let reply = h.run("rm -rf /srv/tmp", CommandClass::Destructive);
    let Some(Action::AwaitApproval { approval_id, .. }) = reply.action else {
        panic!("{reply:?}");
    };
    h.session
        .handle_decision(h.now, approval_id, Decision::Deny, Some("bob"))
        .unwrap();
    assert!(matches!(
        h.session.handle_cancel_approval(h.now, approval_id, None),
        Err(DecisionError::NotPending { .. })
    ));
}

// rule: CONTROL-4
#[test]
fn a_denial_carries_the_operators_reason_to_the_event_and_the_model() {
    let mut h = assented();
    h.commit();
    let reply = h.run("rm -rf /srv/cache", CommandClass::Destructive);
    let Some(Action::AwaitApproval {
        approval_id,
        execution_id,
    }) = reply.action
    else {
        panic!("a destructive command waits: {reply:?}");
    };
    h.commit();
    h.session
        .handle_decision_with(
            h.now,
            approval_id,
            Decision::Deny,
            Some(&alice()),
            Some("  take a backup first  "),
        )
        .unwrap();
    let commit = h.commit();
    let reason = commit.events.iter().find_map(|e| match &e.event {
        DomainEvent::ApprovalResolved { reason, .. } => Some(reason.clone()),
        _ => None,
    });
    assert_eq!(
        reason,
        Some(Some(
            "denied by the operator, who said: take a backup first".to_owned()
        ))
    );
    let execution = h.session.execution(execution_id).unwrap().clone();
    assert_eq!(execution.status, ExecutionStatus::Cancelled);
    let approval = h
        .session
        .approvals()
        .iter()
        .find(|a| a.id == approval_id)
        .cloned();
    let told = crate::resume::continuation_outcome(&execution, approval.as_ref());
    assert_eq!(
        told,
        "denied by the operator, who said: take a backup first; `rm -rf /srv/cache` on \
         local did not run"
    );
}

// rule: CONTROL-4
#[test]
fn a_reason_with_an_approval_or_too_long_is_refused_and_changes_nothing() {
    let mut h = assented();
    let reply = h.run("rm -rf /srv/cache", CommandClass::Destructive);
    let Some(Action::AwaitApproval { approval_id, .. }) = reply.action else {
        panic!("{reply:?}");
    };
    h.commit();
    assert_eq!(
        h.session
            .handle_decision_with(h.now, approval_id, Decision::Approve, None, Some("fine")),
        Err(DecisionError::ReasonWithApproval)
    );
    let long = "x".repeat(super::super::DENY_REASON_MAX_CHARS + 1);
    assert_eq!(
        h.session
            .handle_decision_with(h.now, approval_id, Decision::Deny, None, Some(&long)),
        Err(DecisionError::ReasonTooLong(
            super::super::DENY_REASON_MAX_CHARS + 1
        ))
    );
    assert!(h.commit().events.is_empty());
    assert_eq!(
        h.session.approvals()[0].status,
        ApprovalStatus::Pending,
        "a refused decision leaves the approval pending"
    );
}

// rule: CONTROL-5
#[test]
fn an_operator_close_ends_a_denied_task_cancels_what_waits_and_names_who() {
    let mut h = assented();
    let reply = h.run("rm -rf /srv/cache", CommandClass::Destructive);
    let Some(Action::AwaitApproval { approval_id, .. }) = reply.action else {
        panic!("{reply:?}");
    };
    h.commit();
    let effect = h
        .session
        .handle_operator_close(
            h.now,
            crate::status::Outcome::Failure,
            Some("the disk is gone"),
            Some(&alice()),
        )
        .unwrap();
    assert_eq!(effect.status, crate::status::SessionStatus::Failed);
    assert_eq!(effect.n_cancelled, 1);
    let commit = h.commit();
    let kinds: Vec<&str> = commit.events.iter().map(|e| e.event.kind()).collect();
    assert_eq!(kinds.first(), Some(&"task.closed"), "{kinds:?}");
    assert!(kinds.contains(&"task.status"), "{kinds:?}");
    assert!(kinds.contains(&"assent.closed"), "{kinds:?}");
    let DomainEvent::TaskClosed {
        note, closed_by, ..
    } = &commit.events[0].event
    else {
        unreachable!()
    };
    assert_eq!(note.as_deref(), Some("the disk is gone"));
    assert_eq!(closed_by.as_deref(), Some("alice"));
    let approval = h
        .session
        .approvals()
        .iter()
        .find(|a| a.id == approval_id)
        .unwrap();
    assert_eq!(approval.status, ApprovalStatus::Cancelled);
    assert_eq!(
        h.session.record().summary.as_deref(),
        Some("closed by the operator: the disk is gone")
    );
    assert!(!h.session.assent_open(h.now));
    // A terminal session is closed once.
    assert_eq!(
        h.session
            .handle_operator_close(h.now, crate::status::Outcome::Partial, None, None),
        Err(super::super::CloseError::Terminal(
            crate::status::SessionStatus::Failed
        ))
    );
}

// rule: CONTROL-5
#[test]
fn a_close_is_refused_for_success_a_running_command_or_a_long_note() {
    let mut h = assented();
    assert_eq!(
        h.session
            .handle_operator_close(h.now, crate::status::Outcome::Success, None, None),
        Err(super::super::CloseError::Outcome(
            crate::status::Outcome::Success
        ))
    );
    let long = "n".repeat(super::super::CLOSE_NOTE_MAX_CHARS + 1);
    assert!(matches!(
        h.session
            .handle_operator_close(h.now, crate::status::Outcome::Partial, Some(&long), None),
        Err(super::super::CloseError::NoteTooLong(_))
    ));
    let reply = h.run("systemctl restart nginx", CommandClass::ConfigMutation);
    assert!(matches!(reply.action, Some(Action::Dispatch { .. })));
    h.commit();
    assert_eq!(
        h.session
            .handle_operator_close(h.now, crate::status::Outcome::Partial, None, None),
        Err(super::super::CloseError::CommandRunning)
    );
    assert!(
        h.commit().events.is_empty(),
        "a refused close changes nothing"
    );
}

// rule: CONTROL-6
#[test]
fn archiving_sets_the_time_once_and_unarchiving_clears_it() {
    let mut h = assented();
    h.commit();
    assert!(h.session.handle_archive(h.now, true, Some(&alice())));
    assert_eq!(h.session.record().archived_at, Some(h.now));
    assert!(!h.session.handle_archive(h.now, true, None), "no change");
    let commit = h.commit();
    let archived: Vec<&DomainEvent> = commit
        .events
        .iter()
        .map(|e| &e.event)
        .filter(|e| matches!(e, DomainEvent::SessionArchived { .. }))
        .collect();
    assert_eq!(
        archived,
        vec![&DomainEvent::SessionArchived {
            archived: true,
            by: Some("alice".into())
        }]
    );
    assert!(h.session.handle_archive(h.now, false, None));
    assert_eq!(h.session.record().archived_at, None);
}
