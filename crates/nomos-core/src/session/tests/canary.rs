//! Tests of a fan-out's canary (FLEET-5): the first hosts run alone, the rest wait for an
//! approval of their own bound to the same command and the remaining host set, and a
//! canary that does not pass skips the rest.

use crate::classification::Classification;
use crate::declared::RequestOrigin;
use crate::fanout::{
    CanaryVerdict, FanoutLimits, GroupError, HostState, canary_size, canary_verdict,
    host_set_binding, summary_table,
};
use crate::status::{ApprovalStatus, CommandClass, Decision, ExecutionStatus, StepStatus};

use super::super::{Action, GroupRun, ToolInput};
use super::Harness;
use super::fanout::{finish, hosts, states};

fn canary_run(
    h: &mut Harness,
    n: usize,
    command: &str,
    class: CommandClass,
    canary: u32,
) -> super::ToolReply {
    h.tool(ToolInput::RunGroup(GroupRun {
        group: "tag:web".to_owned(),
        hosts: hosts(n),
        command: command.to_owned(),
        classification: Classification::new(class, "test"),
        limits: FanoutLimits::spec_defaults(),
        canary,
        previews: Vec::new(),
    }))
}

/// A careless model's `run` of `command` on one host.
fn run_on(h: &mut Harness, host: &str, command: &str, class: CommandClass) -> super::ToolReply {
    h.tool(ToolInput::Run {
        host: host.to_owned(),
        command: command.to_owned(),
        classification: Classification::new(class, "test"),
        preview: None,
    })
}

/// A session whose approved plan is running its first step, so a `config_mutation`
/// runs inside the window.
fn executing(h: &mut Harness) {
    h.goal();
    h.plan(&["upgrade", "write back"]);
    h.say("go ahead");
    h.step(1, StepStatus::Running);
}

// rule: FLEET-5
#[test]
fn a_canary_of_one_runs_alone_then_the_other_21_wait_for_one_approval_of_the_rest() {
    let mut h = Harness::windowed();
    executing(&mut h);
    let reply = canary_run(
        &mut h,
        22,
        "apt-get upgrade -y",
        CommandClass::ConfigMutation,
        1,
    );
    let Some(Action::StartFanout { fanout_id }) = reply.action else {
        panic!("{reply:?}");
    };
    assert!(
        h.session.approvals().is_empty(),
        "the canary needs no request of its own"
    );
    let started = h.session.advance_fanout(h.now, fanout_id);
    assert_eq!(started.len(), 1, "only the canary starts");
    assert!(h.session.advance_fanout(h.now, fanout_id).is_empty());
    assert_eq!(
        states(&h)[1..]
            .iter()
            .filter(|s| **s == HostState::PendingApproval)
            .count(),
        21
    );
    finish(&mut h, started[0], 0);
    assert!(
        h.session.advance_fanout(h.now, fanout_id).is_empty(),
        "the rest wait"
    );
    let approvals = h.session.approvals().to_vec();
    assert_eq!(approvals.len(), 1, "one request for the rest");
    let rest = &approvals[0];
    assert_eq!(rest.binding.origin, RequestOrigin::AfterCanary { hosts: 1 });
    assert_eq!(rest.binding.command, "apt-get upgrade -y");
    assert_eq!(rest.binding.host, host_set_binding(&hosts(22)[1..]));
    let queued: Vec<Action> = std::iter::from_fn(|| h.session.poll_action()).collect();
    assert!(
        queued.contains(&Action::AwaitApproval {
            approval_id: rest.id,
            execution_id: rest.execution_id
        }),
        "{queued:?}"
    );
    // Asked once, however often the window is advanced.
    h.session.advance_fanout(h.now, fanout_id);
    assert_eq!(h.session.approvals().len(), 1);
    let table = summary_table(&h.session.fanouts()[0], h.session.executions(), 64 * 1024);
    assert!(
        table.contains("canary passed on lxc:h01; the other 21 host(s) have not run"),
        "{table}"
    );
    let rest_id = rest.id;
    let action = h
        .session
        .handle_decision(h.now, rest_id, Decision::Approve, Some("ops"))
        .unwrap();
    assert_eq!(action, Some(Action::StartFanout { fanout_id }));
    let mut ran = 0;
    loop {
        let started = h.session.advance_fanout(h.now, fanout_id);
        if started.is_empty() {
            break;
        }
        ran += started.len();
        for id in started {
            finish(&mut h, id, 0);
        }
    }
    assert_eq!(ran, 21, "one approval ran the other 21 hosts");
    assert!(states(&h).iter().all(|s| *s == HostState::Ok));
    assert_eq!(h.session.approvals().len(), 1, "no third request");
}

// rule: FLEET-5
#[test]
fn a_failing_canary_skips_the_rest_and_asks_for_nothing() {
    let mut h = Harness::windowed();
    executing(&mut h);
    let reply = canary_run(
        &mut h,
        5,
        "apt-get upgrade -y",
        CommandClass::ConfigMutation,
        2,
    );
    let Some(Action::StartFanout { fanout_id }) = reply.action else {
        panic!("{reply:?}");
    };
    let started = h.session.advance_fanout(h.now, fanout_id);
    assert_eq!(started.len(), 2);
    finish(&mut h, started[0], 0);
    finish(&mut h, started[1], 100);
    assert!(h.session.advance_fanout(h.now, fanout_id).is_empty());
    assert!(
        h.session.approvals().is_empty(),
        "nothing to approve after a failed canary"
    );
    assert_eq!(
        states(&h),
        [
            HostState::Ok,
            HostState::Failed,
            HostState::Skipped,
            HostState::Skipped,
            HostState::Skipped
        ]
    );
    assert!(!h.session.fanout_open(fanout_id));
    let table = summary_table(&h.session.fanouts()[0], h.session.executions(), 64 * 1024);
    assert!(
        table.contains("not started (the canary did not pass): lxc:h03, lxc:h04, lxc:h05"),
        "{table}"
    );
    let skipped = h
        .session
        .execution(h.session.fanouts()[0].hosts[4].execution_id)
        .unwrap();
    assert!(
        skipped
            .error
            .as_deref()
            .unwrap()
            .contains("the canary did not pass on lxc:h02")
    );
}

// rule: FLEET-5
#[test]
fn a_destructive_canary_is_approved_for_its_hosts_only_and_a_denial_cancels_every_host() {
    let mut h = Harness::new();
    executing(&mut h);
    let reply = canary_run(
        &mut h,
        4,
        "systemctl restart nginx && rm -rf /var/cache/nginx",
        CommandClass::Destructive,
        1,
    );
    let Some(Action::AwaitApproval { approval_id, .. }) = reply.action else {
        panic!("{reply:?}");
    };
    assert!(
        reply.text.contains("covers the canary (1 host(s))"),
        "{}",
        reply.text
    );
    let first = &h.session.approvals()[0];
    assert_eq!(
        first.binding.host,
        host_set_binding(&hosts(1)),
        "bound to the canary alone"
    );
    let action = h
        .session
        .handle_decision(h.now, approval_id, Decision::Approve, Some("ops"))
        .unwrap();
    let Some(Action::StartFanout { fanout_id }) = action else {
        panic!("{action:?}");
    };
    assert_eq!(
        states(&h),
        [
            HostState::Queued,
            HostState::PendingApproval,
            HostState::PendingApproval,
            HostState::PendingApproval
        ],
        "approving the canary approves only the canary"
    );
    let started = h.session.advance_fanout(h.now, fanout_id);
    assert_eq!(started.len(), 1);
    finish(&mut h, started[0], 0);
    h.session.advance_fanout(h.now, fanout_id);
    let rest = h.session.approvals()[1].id;
    h.session
        .handle_decision(h.now, rest, Decision::Deny, Some("ops"))
        .unwrap();
    assert_eq!(h.session.approvals()[1].status, ApprovalStatus::Denied);
    assert_eq!(
        states(&h),
        [
            HostState::Ok,
            HostState::Cancelled,
            HostState::Cancelled,
            HostState::Cancelled
        ]
    );

    // A denied canary denies the rest with it.
    let mut h = Harness::new();
    executing(&mut h);
    let reply = canary_run(
        &mut h,
        3,
        "rm -rf /var/cache/app",
        CommandClass::Destructive,
        1,
    );
    let Some(Action::AwaitApproval { approval_id, .. }) = reply.action else {
        panic!("{reply:?}");
    };
    h.session
        .handle_decision(h.now, approval_id, Decision::Deny, Some("ops"))
        .unwrap();
    assert!(
        h.session
            .executions()
            .iter()
            .all(|e| e.status == ExecutionStatus::Cancelled),
        "no host of a denied canary's fan-out waits on"
    );
}

// rule: FLEET-5
#[test]
fn the_canary_size_follows_the_call_then_the_policy_and_leaves_hosts_for_the_rest() {
    assert_eq!(canary_size(None, None, 22), Ok(0));
    assert_eq!(
        canary_size(None, Some("prod"), 22),
        Ok(1),
        "the policy's default"
    );
    assert_eq!(canary_size(Some(3), Some("prod"), 22), Ok(3));
    assert_eq!(canary_size(Some(2), None, 22), Ok(2));
    assert_eq!(
        canary_size(None, Some("prod"), 1),
        Ok(0),
        "one host is its own canary"
    );
    let Err(GroupError::Limit(text)) = canary_size(Some(0), Some("prod"), 5) else {
        panic!("a call may not drop a canary the policy requires");
    };
    assert!(text.contains("`prod`"), "{text}");
    let Err(GroupError::Limit(text)) = canary_size(Some(5), None, 5) else {
        panic!("a canary as large as the group leaves no rest");
    };
    assert!(text.contains("less than the group's 5"), "{text}");
}

// rule: FLEET-5
#[test]
fn the_canary_passes_only_when_every_canary_host_exited_zero() {
    use HostState::*;
    assert_eq!(canary_verdict(&[Ok, Running]), CanaryVerdict::Running);
    assert_eq!(canary_verdict(&[Ok, Ok]), CanaryVerdict::Passed);
    assert_eq!(
        canary_verdict(&[Ok, Failed]),
        CanaryVerdict::Failed(vec![1])
    );
    assert_eq!(canary_verdict(&[Cancelled]), CanaryVerdict::Failed(vec![0]));
    assert_eq!(canary_verdict(&[Queued]), CanaryVerdict::Running);
}

// rule: FLEET-5
#[test]
fn while_the_rest_wait_the_same_command_on_one_of_them_is_refused_alone_or_in_a_group() {
    let mut h = Harness::windowed();
    executing(&mut h);
    let reply = canary_run(
        &mut h,
        4,
        "apt-get upgrade -y",
        CommandClass::ConfigMutation,
        1,
    );
    let Some(Action::StartFanout { fanout_id }) = reply.action else {
        panic!("{reply:?}");
    };
    let started = h.session.advance_fanout(h.now, fanout_id);
    finish(&mut h, started[0], 0);
    h.session.advance_fanout(h.now, fanout_id);
    let rest = h.session.approvals()[0].id;
    let executions = h.session.executions().len();
    // A careless model that was told to wait runs the rest itself, one host at a time.
    let alone = run_on(
        &mut h,
        "lxc:h03",
        "apt-get upgrade -y",
        CommandClass::ConfigMutation,
    );
    assert_eq!(alone.action, None, "{alone:?}");
    assert!(alone.text.contains(&rest.to_string()), "{}", alone.text);
    assert!(alone.text.contains("lxc:h03"), "{}", alone.text);
    // ... or as a group of its own, without a canary.
    let mut regroup = canary_run(
        &mut h,
        4,
        "apt-get upgrade -y",
        CommandClass::ConfigMutation,
        0,
    );
    assert_eq!(regroup.action, None, "{regroup:?}");
    assert!(regroup.text.starts_with("Refused"), "{}", regroup.text);
    assert_eq!(
        h.session.executions().len(),
        executions,
        "nothing new was made"
    );
    // Another command on those hosts is not held.
    regroup = run_on(&mut h, "lxc:h03", "uptime", CommandClass::ReadOnly);
    assert!(
        matches!(regroup.action, Some(Action::Dispatch { .. })),
        "{regroup:?}"
    );
    // Once the rest is decided, nothing is held any more.
    h.session
        .handle_decision(h.now, rest, Decision::Deny, Some("ops"))
        .unwrap();
    let again = run_on(
        &mut h,
        "lxc:h03",
        "apt-get upgrade -y",
        CommandClass::ConfigMutation,
    );
    assert!(!again.text.contains("after the canary"), "{}", again.text);
}
