//! SAFE-3 in the core: which changes are armed, the order backup -> arm -> change -> check
//! -> wait, Confirm disarms, the window's end without Confirm gives `reverted`, and a failed
//! arm stops the change. The commands go through the real classifier; the shell's runs are
//! handed in as outputs.

#![allow(clippy::unwrap_used)]

mod support;

use support::{Chat, ok};

use nomos_core::classify::{CutOff, cuts_off};
use nomos_core::event::SafetyAction;
use nomos_core::record::{ExecOutput, ExecutionKind};
use nomos_core::revert::ARM_REASON;
use nomos_core::safety::NetsConfig;
use nomos_core::session::{ConfirmError, SETTLE_GRACE, SafetyVerdict};
use nomos_core::snapshot::HostSafety;
use nomos_core::{ExecutionId, ExecutionStatus, Span};

fn config() -> NetsConfig {
    let mut config = NetsConfig::spec_defaults();
    config.backup.root = "/srv/backup".to_owned();
    config.revert.root = "/srv/revert".to_owned();
    config.revert.window = Span::from_secs(30);
    config
}

fn host() -> HostSafety {
    HostSafety::default()
}

/// Runs the nets the core asks for before `change`, each answered by `answer`; returns the
/// reasons of the nets in order and the last verdict.
fn run_nets(
    chat: &mut Chat,
    change: ExecutionId,
    answer: impl Fn(&str, &str) -> Result<ExecOutput, String>,
) -> (Vec<String>, SafetyVerdict) {
    let mut reasons = Vec::new();
    let mut verdict = SafetyVerdict::Proceed;
    for n in 0..8 {
        let Some(net) = chat
            .session
            .handle_safety_next(chat.now, change, n, &config(), &host())
        else {
            break;
        };
        let reason = chat
            .session
            .execution(net.execution_id)
            .unwrap()
            .reason
            .clone();
        chat.now = chat.now + Span::from_millis(10);
        let result = answer(&reason, &net.command);
        reasons.push(reason);
        verdict = chat
            .session
            .handle_safety_finished(chat.now, change, net.execution_id, result)
            .unwrap();
        if verdict != SafetyVerdict::Proceed {
            break;
        }
    }
    (reasons, verdict)
}

fn shell(change: ExecutionId) -> impl Fn(&str, &str) -> Result<ExecOutput, String> {
    move |reason: &str, _command: &str| {
        if reason.starts_with(ARM_REASON) {
            ok("armed\tnohup\t4242\t30\n")
        } else {
            ok(&format!(
                "file\t/etc/ssh/sshd_config\t/srv/backup/{change}/1\t0\t0\t644\t5\t{}\n",
                "a".repeat(64)
            ))
        }
    }
}

const SSHD_CHANGE: &str = "sed -i 's/^PubkeyAuthentication yes/PubkeyAuthentication no/' /etc/ssh/sshd_config && systemctl reload ssh";

/// An armed change that ran: backup, arm, the change, its end.
fn armed_change(chat: &mut Chat) -> ExecutionId {
    let change = chat.run(SSHD_CHANGE);
    let (reasons, verdict) = run_nets(chat, change, shell(change));
    assert_eq!(verdict, SafetyVerdict::Proceed);
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    chat.now = chat.now + Span::from_millis(10);
    chat.session
        .handle_execution_finished(chat.now, change, ok(""))
        .unwrap();
    change
}

// rule: SAFE-3
#[test]
fn every_cut_off_kind_is_armed_and_an_app_config_edit_is_not() {
    let cases = [
        (SSHD_CHANGE, CutOff::Sshd),
        (
            "iptables -A INPUT -p tcp --dport 22 -j DROP",
            CutOff::Firewall,
        ),
        ("ip link set eth0 down", CutOff::Interfaces),
        ("ip route del default", CutOff::Routes),
        ("echo nameserver 10.0.0.1 > /etc/resolv.conf", CutOff::Dns),
    ];
    for (command, kind) in cases {
        assert!(cuts_off(command).contains(&kind), "{command}");
        let mut chat = Chat::assented(31, "change the host", "web");
        let change = chat.run(command);
        let (reasons, _) = run_nets(&mut chat, change, shell(change));
        assert!(
            reasons.iter().any(|r| r.starts_with(ARM_REASON)),
            "{command}: {reasons:?}"
        );
    }
    let mut chat = Chat::assented(32, "switch the mode", "web");
    let change = chat.run("sed -i s/mode=old/mode=new/ /etc/app.conf");
    let (reasons, _) = run_nets(&mut chat, change, shell(change));
    assert_eq!(reasons.len(), 1, "only the backup: {reasons:?}");
    assert!(!reasons[0].starts_with(ARM_REASON));
}

// rule: SAFE-3
#[test]
fn the_backup_comes_first_then_the_arm_with_its_copies_then_the_change_waits_armed() {
    let mut chat = Chat::assented(33, "harden sshd", "web");
    let change = chat.run(SSHD_CHANGE);
    let (reasons, verdict) = run_nets(&mut chat, change, shell(change));
    assert_eq!(verdict, SafetyVerdict::Proceed);
    assert!(reasons[0].starts_with("SAFE-2: backup"), "{reasons:?}");
    assert!(reasons[1].starts_with(ARM_REASON), "{reasons:?}");
    let arm = chat
        .session
        .executions()
        .iter()
        .find(|e| e.kind == ExecutionKind::Safety && e.reason.starts_with(ARM_REASON))
        .unwrap()
        .clone();
    assert!(
        arm.command.contains(&format!("/srv/backup/{change}/1")),
        "the revert restores the backup's copy: {}",
        arm.command
    );
    assert!(arm.command.contains("--on-active=30s"), "{}", arm.command);
    let events = chat.safety_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, SafetyAction::Armed { armed, .. } if armed.handle == "4242")),
        "{events:?}"
    );
    assert_eq!(
        chat.session.execution(change).unwrap().status,
        ExecutionStatus::Running
    );
    chat.session
        .handle_execution_finished(chat.now, change, ok(""))
        .unwrap();
    assert_eq!(
        chat.session.execution(change).unwrap().status,
        ExecutionStatus::Armed,
        "the change waits for Confirm"
    );
    assert!(!chat.session.handle_revert_checked(
        chat.now,
        change,
        Err("authentication to web was refused".to_owned())
    ));
    assert!(chat.safety_events().iter().any(
        |e| matches!(e, SafetyAction::Checked { ok: false, detail } if detail.contains("refused"))
    ));
    assert_eq!(
        chat.session.armed_changes().len(),
        1,
        "a failed check leaves it armed"
    );
}

// rule: SAFE-3
#[test]
fn confirm_within_the_window_disarms_and_completes() {
    let mut chat = Chat::assented(34, "harden sshd", "web");
    let change = armed_change(&mut chat);
    assert!(chat.session.handle_revert_checked(chat.now, change, ok("")));
    let disarm = chat
        .session
        .handle_confirm(chat.now, change, &config().revert)
        .unwrap();
    assert!(disarm.command.contains("kill '4242'"), "{}", disarm.command);
    assert!(disarm.command.contains(".claim"), "{}", disarm.command);
    chat.session
        .handle_disarm_finished(chat.now, change, Some("alice".to_owned()), ok("disarmed\n"))
        .unwrap();
    assert_eq!(
        chat.session.execution(change).unwrap().status,
        ExecutionStatus::Completed
    );
    assert!(
        chat.safety_events()
            .iter()
            .any(|e| matches!(e, SafetyAction::Disarmed { by } if by.as_deref() == Some("alice")))
    );
    // Nothing is left to confirm.
    assert!(matches!(
        chat.session
            .handle_confirm(chat.now, change, &config().revert),
        Err(ConfirmError::NotArmed(_))
    ));
}

// rule: SAFE-3
#[test]
fn without_confirm_the_window_ends_reverted_with_what_was_restored() {
    let mut chat = Chat::assented(35, "harden sshd", "web");
    let change = armed_change(&mut chat);
    let until = chat.session.armed_until(change).unwrap();
    assert!(!chat.session.revert_due(chat.now, change));
    let after = until + SETTLE_GRACE;
    assert!(chat.session.revert_due(after, change));
    assert!(
        matches!(
            chat.session.handle_confirm(until, change, &config().revert),
            Err(ConfirmError::WindowPassed { .. })
        ),
        "a Confirm after the window is refused"
    );
    chat.session.handle_revert_log(
        after,
        change,
        ok("started\tx\nrestored\t/etc/ssh/sshd_config\nreloaded\tsshd\ndone\n"),
    );
    let ended = chat.session.execution(change).unwrap();
    assert_eq!(ended.status, ExecutionStatus::Reverted);
    assert!(
        ended
            .error
            .as_deref()
            .unwrap()
            .contains("restored /etc/ssh/sshd_config"),
        "{ended:?}"
    );
}

// rule: SAFE-3
#[test]
fn no_revert_log_after_the_window_fails_with_a_clear_text() {
    let mut chat = Chat::assented(36, "harden sshd", "web");
    let change = armed_change(&mut chat);
    let after = chat.session.armed_until(change).unwrap() + SETTLE_GRACE;
    chat.session.handle_revert_log(
        after,
        change,
        Ok(ExecOutput {
            exit_code: Some(1),
            stderr: "cat: /srv/revert/x.log: No such file or directory".to_owned(),
            ..ExecOutput::default()
        }),
    );
    let ended = chat.session.execution(change).unwrap();
    assert_eq!(ended.status, ExecutionStatus::Failed);
    assert!(
        ended.error.as_deref().unwrap().contains("no revert log"),
        "{ended:?}"
    );
}

// rule: SAFE-3
#[test]
fn a_failed_arm_stops_the_change_and_says_why() {
    let mut chat = Chat::assented(37, "harden sshd", "web");
    let change = chat.run("iptables -A INPUT -p tcp --dport 22 -j DROP");
    let (reasons, verdict) = run_nets(&mut chat, change, |_, _| {
        Ok(ExecOutput {
            exit_code: Some(1),
            stderr: "mkdir: cannot create directory '/srv/revert': Read-only file system"
                .to_owned(),
            ..ExecOutput::default()
        })
    });
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    let SafetyVerdict::Stop { reason } = verdict else {
        panic!("{verdict:?}");
    };
    assert!(reason.contains("Read-only file system"), "{reason}");
    assert!(reason.contains("SAFE-3"), "{reason}");
    assert_eq!(
        chat.session.execution(change).unwrap().status,
        ExecutionStatus::Failed
    );
}
