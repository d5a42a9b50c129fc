//! Tests of `run` on a group: one classification, one approval for the exact host set,
//! one execution per host, a rolling window that stops after `max_failures`.

use crate::classification::Classification;
use crate::fanout::{FanoutLimits, HostState, host_set_binding, host_state, summary_table};
use crate::id::ExecutionId;
use crate::record::ExecOutput;
use crate::status::{ApprovalStatus, CommandClass, Decision, ExecutionStatus, StepStatus};

use super::super::{Action, GroupRun, ToolInput};
use super::Harness;

pub(super) fn hosts(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("lxc:h{i:02}")).collect()
}

fn group(
    h: &mut Harness,
    n: usize,
    command: &str,
    class: CommandClass,
    limits: FanoutLimits,
) -> super::ToolReply {
    h.tool(ToolInput::RunGroup(GroupRun {
        group: "tag:docker".to_owned(),
        hosts: hosts(n),
        command: command.to_owned(),
        classification: Classification::new(class, "test"),
        limits,
        canary: 0,
        previews: Vec::new(),
    }))
}

pub(super) fn finish(h: &mut Harness, id: ExecutionId, exit: i32) {
    let output = ExecOutput {
        exit_code: Some(exit),
        stdout: format!("line one\nexit {exit}"),
        duration_ms: 7,
        ..ExecOutput::default()
    };
    h.session
        .handle_execution_finished(h.now, id, Ok(output))
        .unwrap();
}

pub(super) fn states(h: &Harness) -> Vec<HostState> {
    let fanout = &h.session.fanouts()[0];
    fanout
        .hosts
        .iter()
        .map(|m| host_state(h.session.execution(m.execution_id).unwrap()))
        .collect()
}

// rule: FLEET-1
#[test]
fn read_only_group_run_is_one_fanout_with_one_execution_per_host_and_no_approval() {
    let mut h = Harness::new();
    let reply = group(
        &mut h,
        12,
        "docker ps",
        CommandClass::ReadOnly,
        FanoutLimits::spec_defaults(),
    );
    let Some(Action::StartFanout { fanout_id }) = reply.action else {
        panic!("{reply:?}");
    };
    assert_eq!(h.session.executions().len(), 12);
    assert!(h.session.approvals().is_empty());
    let commit = h.commit();
    assert_eq!(
        commit.fanouts.len(),
        1,
        "the fan-out is written with its executions"
    );
    assert_eq!(commit.executions.len(), 12);
    let fanout = &h.session.fanouts()[0];
    assert_eq!(fanout.id, fanout_id);
    assert_eq!(fanout.host_slugs(), hosts(12));
    assert!(
        h.session
            .executions()
            .iter()
            .all(|e| e.command == "docker ps")
    );
    // Written once: a later commit does not carry it again.
    h.session.advance_fanout(h.now, fanout_id);
    assert!(h.commit().fanouts.is_empty());
}

// rule: FLEET-1
#[test]
fn destructive_group_run_asks_once_bound_to_the_exact_host_set() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["prune", "write back"]);
    h.say("yes, go ahead");
    h.step(1, StepStatus::Running);
    let reply = group(
        &mut h,
        5,
        "docker system prune -af",
        CommandClass::Destructive,
        FanoutLimits::spec_defaults(),
    );
    let Some(Action::AwaitApproval { approval_id, .. }) = reply.action else {
        panic!("{reply:?}");
    };
    assert!(reply.text.contains("all 5 hosts"), "{}", reply.text);
    assert_eq!(
        h.session.approvals().len(),
        1,
        "one request for the whole group"
    );
    let approval = &h.session.approvals()[0];
    assert_eq!(approval.binding.host, host_set_binding(&hosts(5)));
    assert_eq!(approval.binding.host.lines().count(), 5);
    assert!(
        h.session
            .executions()
            .iter()
            .all(|e| e.status == ExecutionStatus::PendingApproval)
    );
    // The set is part of the hash: another set binds differently.
    let mut other = approval.binding.clone();
    other.host = host_set_binding(&hosts(4));
    assert_ne!(crate::session::binding_hash(&other), approval.binding_hash);
    let action = h
        .session
        .handle_decision(h.now, approval_id, Decision::Approve, Some("ops"))
        .unwrap();
    let Some(Action::StartFanout { fanout_id }) = action else {
        panic!("{action:?}");
    };
    assert!(
        h.session
            .executions()
            .iter()
            .all(|e| e.status == ExecutionStatus::Approved)
    );
    let started = h.session.advance_fanout(h.now, fanout_id);
    assert_eq!(started.len(), 5);
}

// rule: FLEET-1
#[test]
fn denying_a_group_run_cancels_every_host() {
    let mut h = Harness::new();
    h.goal();
    h.plan(&["prune", "write back"]);
    h.say("yes");
    h.step(1, StepStatus::Running);
    let reply = group(
        &mut h,
        3,
        "rm -rf /var/cache/app",
        CommandClass::Destructive,
        FanoutLimits::spec_defaults(),
    );
    let Some(Action::AwaitApproval { approval_id, .. }) = reply.action else {
        panic!("{reply:?}");
    };
    let action = h
        .session
        .handle_decision(h.now, approval_id, Decision::Deny, Some("ops"))
        .unwrap();
    assert_eq!(action, None);
    assert_eq!(h.session.approvals()[0].status, ApprovalStatus::Denied);
    assert!(
        h.session
            .executions()
            .iter()
            .all(|e| e.status == ExecutionStatus::Cancelled)
    );
}

// rule: FLEET-1
#[test]
fn state_changing_group_run_before_a_plan_is_refused_without_executions() {
    let mut h = Harness::new();
    let reply = group(
        &mut h,
        3,
        "apt-get upgrade -y",
        CommandClass::ConfigMutation,
        FanoutLimits::spec_defaults(),
    );
    assert_eq!(reply.action, None);
    assert!(h.session.executions().is_empty());
    assert!(h.session.fanouts().is_empty());
}

// rule: FLEET-2
#[test]
fn rolling_window_keeps_max_parallel_running() {
    let mut h = Harness::new();
    let limits = FanoutLimits {
        max_parallel: 3,
        max_failures: 1,
    };
    let reply = group(&mut h, 7, "uname -a", CommandClass::ReadOnly, limits);
    let Some(Action::StartFanout { fanout_id }) = reply.action else {
        panic!("{reply:?}");
    };
    let first = h.session.advance_fanout(h.now, fanout_id);
    assert_eq!(first.len(), 3);
    assert!(
        h.session.advance_fanout(h.now, fanout_id).is_empty(),
        "the window is full"
    );
    finish(&mut h, first[0], 0);
    let next = h.session.advance_fanout(h.now, fanout_id);
    assert_eq!(next.len(), 1, "one slot freed, one host starts");
    let running = states(&h)
        .iter()
        .filter(|s| **s == HostState::Running)
        .count();
    assert_eq!(running, 3);
}

// rule: FLEET-2
#[test]
fn after_max_failures_no_host_starts_and_the_rest_are_skipped() {
    let mut h = Harness::windowed();
    h.goal();
    h.plan(&["upgrade", "write back"]);
    h.say("go ahead");
    h.step(1, StepStatus::Running);
    let limits = FanoutLimits {
        max_parallel: 1,
        max_failures: 1,
    };
    let reply = group(
        &mut h,
        5,
        "apt-get upgrade -y",
        CommandClass::ConfigMutation,
        limits,
    );
    let Some(Action::StartFanout { fanout_id }) = reply.action else {
        panic!("{reply:?}");
    };
    for exit in [0, 0, 100] {
        let started = h.session.advance_fanout(h.now, fanout_id);
        assert_eq!(started.len(), 1);
        finish(&mut h, started[0], exit);
    }
    assert!(h.session.advance_fanout(h.now, fanout_id).is_empty());
    assert!(!h.session.fanout_open(fanout_id));
    assert_eq!(
        states(&h),
        [
            HostState::Ok,
            HostState::Ok,
            HostState::Failed,
            HostState::Skipped,
            HostState::Skipped
        ]
    );
    let table = summary_table(&h.session.fanouts()[0], h.session.executions(), 8 * 1024);
    assert!(table.contains("2 ok, 1 failed, 2 skipped"), "{table}");
    assert!(
        table.contains("not started (max_failures = 1 reached): lxc:h04, lxc:h05"),
        "{table}"
    );
    assert!(table.contains("lxc:h03 | failed | 100 |"), "{table}");
}

// rule: FLEET-2
#[test]
fn an_unreachable_host_counts_as_failed_with_its_reason() {
    let mut h = Harness::new();
    let limits = FanoutLimits {
        max_parallel: 1,
        max_failures: 1,
    };
    let reply = group(&mut h, 2, "uptime", CommandClass::ReadOnly, limits);
    let Some(Action::StartFanout { fanout_id }) = reply.action else {
        panic!("{reply:?}");
    };
    let started = h.session.advance_fanout(h.now, fanout_id);
    h.session
        .handle_execution_finished(
            h.now,
            started[0],
            Err("could not connect to lxc:h01: refused".into()),
        )
        .unwrap();
    assert!(h.session.advance_fanout(h.now, fanout_id).is_empty());
    assert_eq!(states(&h), [HostState::Failed, HostState::Skipped]);
    let table = summary_table(&h.session.fanouts()[0], h.session.executions(), 8 * 1024);
    assert!(
        table.contains("could not connect to lxc:h01: refused"),
        "{table}"
    );
}

// rule: FLEET-2
#[test]
fn the_table_fits_the_output_cap_however_many_hosts() {
    for n in [1usize, 20, 100, 500] {
        let mut h = Harness::new();
        let limits = FanoutLimits {
            max_parallel: 1000,
            max_failures: 1000,
        };
        let reply = group(&mut h, n, "uname -a", CommandClass::ReadOnly, limits);
        let Some(Action::StartFanout { fanout_id }) = reply.action else {
            panic!("{reply:?}");
        };
        let started = h.session.advance_fanout(h.now, fanout_id);
        for (i, id) in started.into_iter().enumerate() {
            finish(&mut h, id, i32::from(i % 17 == 3));
        }
        let cap = 8 * 1024;
        let table = summary_table(&h.session.fanouts()[0], h.session.executions(), cap);
        assert!(table.len() <= cap, "{n} hosts: {} bytes", table.len());
        assert!(table.contains(&format!("({n} hosts)")), "{table}");
        if n <= 20 {
            assert_eq!(table.lines().count(), 2 + n, "one row per host: {table}");
        }
    }
}

// rule: FLEET-2
#[test]
fn call_limits_stay_within_the_configured_maximum() {
    let defaults = FanoutLimits::spec_defaults();
    assert_eq!(
        FanoutLimits::for_call(defaults, 50, None, None).unwrap(),
        defaults
    );
    assert_eq!(
        FanoutLimits::for_call(defaults, 50, Some(50), Some(3))
            .unwrap()
            .max_parallel,
        50
    );
    let err = FanoutLimits::for_call(defaults, 50, Some(51), None).unwrap_err();
    assert!(
        err.to_string().contains("between 1 and 50, got 51"),
        "{err}"
    );
    assert!(FanoutLimits::for_call(defaults, 50, None, Some(0)).is_err());
}

// rule: SECRET-2
#[test]
fn fan_out_rows_hold_no_part_of_a_secret_and_the_stored_result_says_so() {
    let mut h = Harness::new();
    let limits = FanoutLimits {
        max_parallel: 10,
        max_failures: 10,
    };
    let reply = group(
        &mut h,
        2,
        "tail -1 /srv/app/log",
        CommandClass::ReadOnly,
        limits,
    );
    let Some(Action::StartFanout { fanout_id }) = reply.action else {
        panic!("{reply:?}");
    };
    let started = h.session.advance_fanout(h.now, fanout_id);
    let hash = "root:$6$Zq3v9XkLp0aB1cDe$0123456789abcdefghijABCDEFGHIJ0123456789abcdefghijABCDEFGHIJ0123456789abcdefghijKLMNOP:19700:0:99999:7:::";
    let jwt = "Authorization: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    for (id, stdout) in started.into_iter().zip([hash, jwt]) {
        let output = ExecOutput {
            exit_code: Some(0),
            stdout: format!("{stdout}\n"),
            duration_ms: 3,
            ..ExecOutput::default()
        };
        h.session
            .handle_execution_finished(h.now, id, Ok(output))
            .unwrap();
    }
    // The widest and the narrowest rows alike.
    for cap in [8 * 1024, 600] {
        let table = summary_table(&h.session.fanouts()[0], h.session.executions(), cap);
        for fragment in [
            "Zq3v9XkLp0aB1cDe",
            "0123456789abcdefghij",
            "eyJzdWIiOiIx",
            "SflKxwRJ",
        ] {
            assert!(!table.contains(fragment), "{fragment} in {table}");
        }
        let stored = crate::redaction::for_model(&table).expect("the rows held secrets");
        assert!(stored.text.contains("redacted"), "{}", stored.text);
        assert!(
            stored.kinds.iter().map(|k| k.count).sum::<u32>() >= 2,
            "{:?}",
            stored.kinds
        );
    }
}
