//! Example tests of the gate, approvals and executions.

use uuid::Uuid;

use crate::classification::Classification;
use crate::record::ExecOutput;
use crate::session::ToolInput;
use crate::status::{ApprovalStatus, CommandClass, Decision, ExecutionStatus, StepStatus};
use crate::sweep::ExecutionVerdict;
use crate::time::Span;

use super::super::{Action, DecisionError, ExecutionError};
use super::{Harness, assert_ok, assert_refused};

fn approval_of(reply: &super::ToolReply) -> (crate::id::ApprovalId, crate::id::ExecutionId) {
    match reply.action {
        Some(Action::AwaitApproval {
            approval_id,
            execution_id,
        }) => (approval_id, execution_id),
        other => panic!(
            "expected an approval request, got {other:?} ({})",
            reply.text
        ),
    }
}

fn in_assent_window() -> Harness {
    let mut h = Harness::new();
    h.goal();
    h.plan_declaring(&[
        (
            "restart the service",
            &["systemctl restart nginx", "docker compose restart bridge"],
        ),
        ("write back", &[]),
    ]);
    h.say("yes, go ahead");
    h.step(1, StepStatus::Running);
    h
}

// rule: GATE-1
#[test]
fn read_only_command_runs_at_once_without_a_plan() {
    let mut h = Harness::new();
    let reply = h.run("docker compose logs --tail 50", CommandClass::ReadOnly);
    assert!(
        matches!(reply.action, Some(Action::Dispatch { .. })),
        "{reply:?}"
    );
    assert_eq!(h.session.executions()[0].status, ExecutionStatus::Running);
}

// rule: GATE-2
#[test]
fn state_changing_command_before_a_plan_is_refused() {
    let mut h = Harness::new();
    h.goal();
    for class in [CommandClass::ConfigMutation, CommandClass::Destructive] {
        assert_refused(
            &h.run("systemctl restart nginx", class),
            "Propose a plan first",
        );
    }
    assert!(h.session.executions().is_empty());
}

// rule: GATE-2
#[test]
fn the_refusal_before_a_plan_names_the_classifiers_reason() {
    let mut h = Harness::new();
    h.goal();
    let reply = h.tool(ToolInput::Run {
        host: "local".to_owned(),
        command: "apt-get -s install nginx".to_owned(),
        classification: Classification::new(
            CommandClass::ConfigMutation,
            "add `-o Dir::Log::Planner=` to simulate without writing",
        ),
        preview: None,
    });
    assert_refused(&reply, "Propose a plan first");
    assert_refused(&reply, "add `-o Dir::Log::Planner=`");
}

// rule: GATE-3
#[test]
fn state_changing_command_without_assent_is_refused() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["restart"]);
    assert_refused(
        &h.run("systemctl restart nginx", CommandClass::ConfigMutation),
        "STOP and wait for approval",
    );
    h.say("no, wait - not yet");
    assert_refused(
        &h.run("systemctl restart nginx", CommandClass::ConfigMutation),
        "STOP and wait for approval",
    );
}

// rule: GATE-4
#[test]
fn the_window_is_open_until_the_instant_it_expires_and_not_at_it() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["restart"]);
    h.say("yes");
    let expires_at = h.session.record().assent.unwrap().expires_at;
    assert!(h.session.assent_open(expires_at - Span::from_millis(1)));
    assert!(!h.session.assent_open(expires_at));
    assert!(
        h.session
            .handle_gate_check(expires_at - Span::from_millis(1))
    );
    assert!(!h.session.handle_gate_check(expires_at));
    assert_eq!(h.session.record().assent, None, "closed, recorded");
}

// rule: GATE-4
#[test]
fn approval_word_in_reply_to_a_plan_opens_a_window_that_expires() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["restart"]);
    let effect = h.say("Procceed with the rest please");
    assert_eq!(effect.assented_generation, Some(1));
    assert!(h.session.assent_open(h.now));
    h.advance(Span::from_mins(31));
    assert!(!h.session.assent_open(h.now));
    assert_refused(
        &h.run("systemctl restart nginx", CommandClass::ConfigMutation),
        "STOP and wait",
    );
    h.session.handle_timeout(h.now);
    assert_eq!(h.session.record().assent, None);
}

// rule: GATE-4
#[test]
fn approval_word_without_a_proposed_plan_opens_nothing() {
    let mut h = Harness::new();
    h.goal();
    assert_eq!(h.say("yes").assented_generation, None);
    assert!(!h.session.assent_open(h.now));
}

// rule: GATE-5, GATE-9
#[test]
fn declared_config_mutation_runs_inside_the_assent_window() {
    let mut h = in_assent_window();
    let reply = h.run("systemctl restart nginx", CommandClass::ConfigMutation);
    assert!(
        matches!(reply.action, Some(Action::Dispatch { .. })),
        "{reply:?}"
    );
    assert_eq!(h.session.executions()[0].step_seq, Some(1));
}

// rule: GATE-5
#[test]
fn destructive_command_inside_the_window_needs_its_own_approval() {
    let mut h = in_assent_window();
    let reply = h.run("docker compose down -v", CommandClass::Destructive);
    let (approval_id, execution_id) = approval_of(&reply);
    assert_eq!(
        h.session.execution(execution_id).unwrap().status,
        ExecutionStatus::PendingApproval
    );
    // GATE-7: the request is in the very commit that reports it.
    let commit = h.commit();
    assert!(commit.approvals.iter().any(|a| a.id == approval_id));
    assert!(
        commit
            .events
            .iter()
            .any(|e| e.event.kind() == "approval.requested")
    );
    // The same command again does not ask twice.
    let again = h.run("docker compose down -v", CommandClass::Destructive);
    assert!(
        again.text.contains("Approval already requested"),
        "{}",
        again.text
    );
    assert_eq!(again.action, None);
    assert_eq!(h.session.approvals().len(), 1);
}

// rule: GATE-6
#[test]
fn plan_of_read_only_and_config_steps_needs_one_assent_and_no_cards() {
    let mut h = in_assent_window();
    for (cmd, class) in [
        ("docker compose logs", CommandClass::ReadOnly),
        ("docker compose ps", CommandClass::ReadOnly),
        (
            "docker compose restart bridge",
            CommandClass::ConfigMutation,
        ),
    ] {
        let reply = h.run(cmd, class);
        h.finish_dispatch(&reply);
    }
    assert!(h.session.approvals().is_empty());
    assert!(
        h.session
            .executions()
            .iter()
            .all(|e| e.status == ExecutionStatus::Completed)
    );
}

// rule: GATE-7
#[test]
fn decision_by_id_runs_once_and_a_second_decision_is_refused() {
    let mut h = in_assent_window();
    let (approval_id, execution_id) =
        approval_of(&h.run("rm -rf /srv/old", CommandClass::Destructive));
    let action = h
        .session
        .handle_decision(h.now, approval_id, Decision::Approve, Some("alice"))
        .unwrap();
    assert_eq!(action, Some(Action::Dispatch { execution_id }));
    // rule: EXEC-6 — the core marked it running with the dispatch.
    assert_eq!(
        h.session.execution(execution_id).unwrap().status,
        ExecutionStatus::Running
    );
    let second = h
        .session
        .handle_decision(h.now, approval_id, Decision::Deny, None);
    assert_eq!(
        second,
        Err(DecisionError::NotPending {
            id: approval_id,
            status: ApprovalStatus::Approved
        })
    );
    let unknown = crate::id::ApprovalId(Uuid::from_u128(9));
    assert_eq!(
        h.session
            .handle_decision(h.now, unknown, Decision::Approve, None),
        Err(DecisionError::NotFound(unknown))
    );
}

// rule: GATE-7
#[test]
fn the_shell_is_told_of_a_request_only_while_it_waits() {
    let mut h = in_assent_window();
    let reply = h.run("rm -rf /srv/old", CommandClass::Destructive);
    let (approval_id, execution_id) = approval_of(&reply);
    // Queued with the decision, polled once.
    assert_eq!(
        h.session.poll_action(),
        Some(Action::AwaitApproval {
            approval_id,
            execution_id
        })
    );
    assert_eq!(h.session.poll_action(), None);
    // A request denied in the decision that made it (nobody can approve it) never
    // reaches the shell.
    let reply = h.run("rm -rf /srv/other", CommandClass::Destructive);
    let (denied, _) = approval_of(&reply);
    h.session
        .handle_decision(h.now, denied, Decision::Deny, None)
        .unwrap();
    assert_eq!(h.session.poll_action(), None);
    // The one timer to arm: the earlier of the window's end and the waiting request's
    // expiry; the denied request no longer counts.
    let window = h.session.record().assent.unwrap().expires_at;
    let waiting = h.session.approvals()[0].expires_at;
    assert_eq!(h.session.poll_timeout(), Some(window.min(waiting)));
}

// rule: GATE-7
#[test]
fn expired_approval_is_a_denial() {
    let mut h = in_assent_window();
    let (approval_id, execution_id) =
        approval_of(&h.run("rm -rf /srv/old", CommandClass::Destructive));
    h.advance(Span::from_mins(30));
    assert_eq!(h.session.poll_timeout().map(|t| t <= h.now), Some(true));
    let late = h
        .session
        .handle_decision(h.now, approval_id, Decision::Approve, None);
    assert_eq!(late, Err(DecisionError::Expired(approval_id)));
    assert_eq!(h.session.approvals()[0].status, ApprovalStatus::Expired);
    assert_eq!(
        h.session.execution(execution_id).unwrap().status,
        ExecutionStatus::Cancelled
    );
}

// rule: GATE-7
#[test]
fn handle_timeout_expires_unanswered_approvals() {
    let mut h = in_assent_window();
    let (approval_id, _) = approval_of(&h.run("rm -rf /srv/old", CommandClass::Destructive));
    h.advance(Span::from_mins(29));
    assert!(h.session.handle_timeout(h.now).is_empty());
    h.advance(Span::from_mins(2));
    assert_eq!(h.session.handle_timeout(h.now), [approval_id]);
}

// rule: GATE-7
#[test]
fn approval_is_void_when_the_plan_generation_changes() {
    let mut h = in_assent_window();
    let (approval_id, execution_id) =
        approval_of(&h.run("rm -rf /srv/old", CommandClass::Destructive));
    h.revise(&["another approach"], "the operator changed their mind");
    // A revision before the decision cancels the pending approval with its plan.
    let res = h
        .session
        .handle_decision(h.now, approval_id, Decision::Approve, None);
    assert_eq!(
        res,
        Err(DecisionError::NotPending {
            id: approval_id,
            status: ApprovalStatus::Cancelled
        })
    );
    assert_eq!(
        h.session.execution(execution_id).unwrap().status,
        ExecutionStatus::Cancelled
    );
}

// rule: GATE-7
#[test]
fn binding_hash_changes_with_every_bound_field() {
    use super::super::binding_hash;
    use crate::record::ApprovalBinding;
    let base = ApprovalBinding {
        command: "rm -rf /x".into(),
        host: "local".into(),
        class: CommandClass::Destructive,
        generation: 1,
        origin: Default::default(),
        preview: None,
        edited_from: None,
    };
    let variants = [
        ApprovalBinding {
            command: "rm -rf /y".into(),
            ..base.clone()
        },
        ApprovalBinding {
            host: "nas".into(),
            ..base.clone()
        },
        ApprovalBinding {
            class: CommandClass::ConfigMutation,
            ..base.clone()
        },
        ApprovalBinding {
            generation: 2,
            ..base.clone()
        },
    ];
    for variant in variants {
        assert_ne!(binding_hash(&base), binding_hash(&variant));
    }
    assert_eq!(binding_hash(&base), binding_hash(&base.clone()));
}

/// GATE-7's canonical binding, written from the rule: SHA-256 over each part as its
/// length (8 bytes, big-endian) then its bytes.
fn reference_hash(parts: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

// rule: GATE-7, GATE-9
#[test]
fn binding_hash_covers_why_it_was_asked_and_the_preview_and_a_plain_request_hashes_as_before() {
    use super::super::binding_hash;
    use crate::declared::RequestOrigin;
    use crate::record::ApprovalBinding;
    let plain = ApprovalBinding {
        command: "rm -rf /x".into(),
        host: "local".into(),
        class: CommandClass::Destructive,
        generation: 1,
        origin: RequestOrigin::OwnClass,
        preview: None,
        edited_from: None,
    };
    let base = ["rm -rf /x", "local", "destructive", "1"];
    // An approval stored before origins and previews existed still verifies.
    assert_eq!(binding_hash(&plain), reference_hash(&base));
    let not_in_plan = ApprovalBinding {
        origin: RequestOrigin::NotInPlan { step_seq: Some(2) },
        ..plain.clone()
    };
    assert_eq!(
        binding_hash(&not_in_plan),
        reference_hash(&[base[0], base[1], base[2], base[3], "not_in_plan:2", ""])
    );
    let preview = crate::preview::Preview {
        parser: crate::classify::preview::PreviewParser::Raw,
        outcome: crate::preview::PreviewOutcome::Shown,
        runs: Vec::new(),
        packages: Vec::new(),
        diff: Some("+Inst x".into()),
        file: None,
        groups: Vec::new(),
    };
    let previewed = ApprovalBinding {
        preview: Some(preview.clone()),
        ..plain.clone()
    };
    let preview_text = preview.binding_text();
    assert!(preview_text.contains("+Inst x"));
    assert_eq!(
        binding_hash(&previewed),
        reference_hash(&[base[0], base[1], base[2], base[3], "", &preview_text])
    );
    // rule: GATE-11: what the edit replaced is part of what the operator decides on.
    let edited = ApprovalBinding {
        edited_from: Some(crate::record::EditedFrom {
            approval_id: crate::id::ApprovalId::from(uuid::Uuid::from_u128(7)),
            command: "rm -rf /".into(),
            host: "local".into(),
            class: CommandClass::Destructive,
        }),
        ..plain.clone()
    };
    assert_ne!(binding_hash(&edited), binding_hash(&plain));
    let hashes = [&plain, &not_in_plan, &previewed].map(binding_hash);
    assert_ne!(hashes[0], hashes[1]);
    assert_ne!(hashes[0], hashes[2]);
    assert_ne!(hashes[1], hashes[2]);
}

// rule: SWEEP-3
#[test]
fn the_sweep_leaves_a_session_waiting_for_an_approval_and_nudges_it_once_decided() {
    let mut h = in_assent_window();
    let (approval_id, _) = approval_of(&h.run("zfs destroy tank/old", CommandClass::Destructive));
    let thresholds = crate::sweep::SweepThresholds::spec_defaults();
    h.advance(thresholds.idle_after);
    let outcome = h.session.handle_sweep(h.now, &thresholds, None);
    assert_eq!(
        outcome.verdict,
        crate::sweep::SessionVerdict::Leave {
            reason: crate::sweep::LeaveReason::AwaitingApproval
        }
    );
    h.session
        .handle_decision(h.now, approval_id, Decision::Deny, None)
        .unwrap();
    h.advance(thresholds.idle_after);
    let outcome = h.session.handle_sweep(h.now, &thresholds, None);
    assert_eq!(outcome.verdict, crate::sweep::SessionVerdict::Nudge);
}

#[test]
fn executions_are_numbered_from_one_in_the_order_they_were_asked() {
    let mut h = Harness::new();
    h.run("df -h", CommandClass::ReadOnly);
    h.run("uptime", CommandClass::ReadOnly);
    let id = h.session.id();
    let ids: Vec<_> = h.session.executions().iter().map(|e| e.id).collect();
    assert_eq!(ids, [id.execution_id(1), id.execution_id(2)]);
}

// rule: GATE-9
#[test]
fn an_execution_belongs_to_the_step_running_when_it_was_asked() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["look", "change"]);
    h.say("yes");
    h.run("df -h", CommandClass::ReadOnly);
    assert_ok(&h.step(1, StepStatus::Done));
    assert_ok(&h.step(2, StepStatus::Running));
    let reply = h.run("systemctl restart nginx", CommandClass::ConfigMutation);
    assert!(
        reply.text.contains("not in the approved plan"),
        "{}",
        reply.text
    );
    let steps: Vec<Option<u32>> = h.session.executions().iter().map(|e| e.step_seq).collect();
    assert_eq!(steps, [None, Some(2)]);
    assert_eq!(
        h.session.approvals()[0].binding.origin,
        crate::declared::RequestOrigin::NotInPlan { step_seq: Some(2) }
    );
}

// rule: EXEC-1
#[test]
fn execution_status_never_goes_backwards() {
    let mut h = Harness::new();
    let reply = h.run("uptime", CommandClass::ReadOnly);
    h.finish_dispatch(&reply);
    let Some(Action::Dispatch { execution_id }) = reply.action else {
        unreachable!()
    };
    let err = h
        .session
        .handle_execution_finished(h.now, execution_id, Err("late".into()));
    assert!(
        matches!(
            err,
            Err(ExecutionError::Transition {
                from: ExecutionStatus::Completed,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(
        h.session.execution(execution_id).unwrap().status,
        ExecutionStatus::Completed
    );
}

// rule: EXEC-2
#[test]
fn transport_error_marks_the_execution_failed_with_its_text() {
    let mut h = Harness::new();
    let Some(Action::Dispatch { execution_id }) = h.run("uptime", CommandClass::ReadOnly).action
    else {
        unreachable!()
    };
    h.session
        .handle_execution_finished(
            h.now,
            execution_id,
            Err("connection to nas was lost".into()),
        )
        .unwrap();
    let execution = h.session.execution(execution_id).unwrap();
    assert_eq!(execution.status, ExecutionStatus::Failed);
    assert_eq!(
        execution.error.as_deref(),
        Some("connection to nas was lost")
    );
    assert!(execution.finished_at.is_some());
}

// rule: EXEC-6
#[test]
fn an_execution_is_dispatched_at_most_once() {
    let mut h = Harness::new();
    let Some(Action::Dispatch { execution_id }) = h.run("uptime", CommandClass::ReadOnly).action
    else {
        unreachable!()
    };
    // rule: EXEC-1 — the core marked it running with its dispatch; a second start is refused.
    assert_eq!(
        h.session.execution(execution_id).unwrap().status,
        ExecutionStatus::Running
    );
    let again = h.session.start_execution(h.now, execution_id);
    assert!(matches!(
        again,
        Err(ExecutionError::Transition {
            from: ExecutionStatus::Running,
            ..
        })
    ));
    // After a restart the sweep reconciles it as interrupted; it can never start again.
    let verdict = ExecutionVerdict::Fail {
        reason: "interrupted".into(),
    };
    h.session
        .apply_execution_verdict(h.now, execution_id, &verdict)
        .unwrap();
    assert_eq!(
        h.session.execution(execution_id).unwrap().status,
        ExecutionStatus::Failed
    );
    assert!(h.session.start_execution(h.now, execution_id).is_err());
}

// rule: EXEC-5
#[test]
fn completed_execution_keeps_its_output() {
    let mut h = Harness::new();
    let Some(Action::Dispatch { execution_id }) = h.run("uptime", CommandClass::ReadOnly).action
    else {
        unreachable!()
    };
    let output = ExecOutput {
        exit_code: Some(3),
        stdout: "x".into(),
        stdout_cut: 10,
        ..ExecOutput::default()
    };
    h.session
        .handle_execution_finished(h.now, execution_id, Ok(output.clone()))
        .unwrap();
    assert_eq!(
        h.session.execution(execution_id).unwrap().output.as_ref(),
        Some(&output)
    );
    assert_ok(&super::super::ToolReply::ok("x"));
}

// rule: EXEC-7
#[test]
fn the_execution_holds_exactly_the_classified_command() {
    let mut h = Harness::new();
    let command = "  docker  ps --format '{{.Names}}' ";
    h.run(command, CommandClass::ReadOnly);
    assert_eq!(h.session.executions()[0].command, command);
}

// rule: AUDIT-1
#[test]
fn a_decision_records_who_made_it_and_the_request_on_the_row_and_its_event() {
    let mut h = in_assent_window();
    let (approval_id, _) = approval_of(&h.run("rm -rf /srv/old", CommandClass::Destructive));
    h.commit();
    let decider = crate::record::Decider {
        name: "alice".into(),
        username: None,
        request_id: Some("req-42".into()),
    };
    h.session
        .handle_decision_by(h.now, approval_id, Decision::Deny, Some(&decider))
        .unwrap();
    let commit = h.commit();
    let row = commit
        .approvals
        .iter()
        .find(|a| a.id == approval_id)
        .unwrap();
    assert_eq!(row.decided_by.as_deref(), Some("alice"));
    let resolved = commit
        .events
        .iter()
        .find_map(|e| match &e.event {
            crate::event::DomainEvent::ApprovalResolved {
                decided_by,
                request_id,
                ..
            } => Some((decided_by.clone(), request_id.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        resolved,
        (Some("alice".to_owned()), Some("req-42".to_owned()))
    );
}
