//! SAFE-1 in the core: a change on a Proxmox guest that asks for snapshots is preceded by
//! `pct snapshot` on its node (once per plan generation), older Nomos snapshots are pruned
//! from the listing the snapshot printed, a failed snapshot stops the change, and Rollback
//! waits for its own destructive approval. The shell's runs are handed in as outputs.

#![allow(clippy::unwrap_used)]

mod support;

use support::{Chat, ok};

use nomos_core::event::SafetyAction;
use nomos_core::proxmox::GuestKind;
use nomos_core::record::{ExecOutput, ExecutionKind};
use nomos_core::safety::{BackupMode, NetsConfig};
use nomos_core::session::SafetyVerdict;
use nomos_core::snapshot::{GuestRef, HostSafety, SnapshotPolicy, snapshot_name};
use nomos_core::{CommandClass, ExecutionStatus};

fn config() -> NetsConfig {
    let mut config = NetsConfig::spec_defaults();
    config.backup.mode = BackupMode::Off;
    config.snapshot.keep = 2;
    config
}

fn guest() -> HostSafety {
    HostSafety {
        snapshot: SnapshotPolicy::BeforeChange,
        guest: Some(GuestRef {
            node: "host:pve".to_owned(),
            vmid: 100,
            kind: GuestKind::Lxc,
        }),
    }
}

// rule: SAFE-1
#[test]
fn the_first_change_of_the_generation_is_snapshotted_on_its_node_and_the_second_is_not() {
    let mut chat = Chat::assented(11, "restart the proxy", "lxc:nextcloud");
    let change = chat.run("systemctl restart nginx");
    let net = chat
        .session
        .handle_safety_next(chat.now, change, 0, &config(), &guest())
        .expect("a snapshot before the change");
    let name = snapshot_name(change);
    assert_eq!(net.host, "host:pve", "the snapshot runs on the node");
    assert_eq!(
        net.command,
        format!("pct snapshot 100 {name} && pct listsnapshot 100")
    );
    let row = chat.session.execution(net.execution_id).unwrap();
    assert_eq!(
        (row.kind, row.status),
        (ExecutionKind::Safety, ExecutionStatus::Running)
    );
    let listing = format!(
        "`-> by-hand 2026-11-01 10:00:00 mine\n `-> nomos-000000000001 2026-11-02 10:00:00 x\n  `-> nomos-000000000002 2026-11-03 10:00:00 x\n   `-> {name} 2026-12-01 10:00:00 x\n    `-> current You are here!\n"
    );
    let verdict = chat
        .session
        .handle_safety_finished(chat.now, change, net.execution_id, ok(&listing))
        .unwrap();
    assert_eq!(verdict, SafetyVerdict::Proceed);
    // Two are kept: the new one and the newest before it; `by-hand` is never touched.
    let prune = chat
        .session
        .handle_safety_next(chat.now, change, 1, &config(), &guest())
        .expect("a prune");
    assert_eq!(prune.command, "pct delsnapshot 100 nomos-000000000001");
    assert_eq!(prune.host, "host:pve");
    chat.session
        .handle_safety_finished(chat.now, change, prune.execution_id, ok(""))
        .unwrap();
    assert_eq!(
        chat.session
            .handle_safety_next(chat.now, change, 2, &config(), &guest()),
        None
    );
    let events = chat.safety_events();
    assert!(
        events.iter().any(|e| matches!(e,
            SafetyAction::SnapshotTaken { guest, node, vmid: 100, name: taken }
                if guest == "lxc:nextcloud" && node == "host:pve" && *taken == name)),
        "{events:?}"
    );
    assert!(events.iter().any(|e| matches!(e,
        SafetyAction::SnapshotPruned { name } if name == "nomos-000000000001")));
    chat.session
        .handle_execution_finished(chat.now, change, ok("restarted"))
        .unwrap();

    // The model runs the change again in the same generation: no second snapshot.
    let again = chat.run("systemctl restart nginx");
    assert_eq!(
        chat.session
            .handle_safety_next(chat.now, again, 0, &config(), &guest()),
        None
    );
}

// rule: SAFE-1
#[test]
fn a_failed_snapshot_stops_the_change_and_says_why() {
    let mut chat = Chat::assented(11, "restart the proxy", "lxc:nextcloud");
    let change = chat.run("systemctl restart nginx");
    let net = chat
        .session
        .handle_safety_next(chat.now, change, 0, &config(), &guest())
        .unwrap();
    let failed = Ok(ExecOutput {
        exit_code: Some(255),
        stderr: "snapshot feature is not available".to_owned(),
        ..ExecOutput::default()
    });
    let SafetyVerdict::Stop { reason } = chat
        .session
        .handle_safety_finished(chat.now, change, net.execution_id, failed)
        .unwrap()
    else {
        panic!("the change must stop");
    };
    assert!(
        reason.contains("the snapshot exited 255: snapshot feature is not available"),
        "{reason}"
    );
    let change = chat.session.execution(change).unwrap();
    assert_eq!(change.status, ExecutionStatus::Failed);
    assert!(change.error.as_deref().unwrap().contains("SAFE-1"));
    // The next change of the generation tries again: the failed one did not count.
    let next = chat.run("systemctl restart nginx");
    assert!(
        chat.session
            .handle_safety_next(chat.now, next, 0, &config(), &guest())
            .is_some()
    );
}

// rule: SAFE-1
#[test]
fn rollback_is_a_destructive_request_on_the_node_that_waits_for_its_own_approval() {
    let mut chat = Chat::assented(11, "restart the proxy", "lxc:nextcloud");
    let change = chat.run("systemctl restart nginx");
    let net = chat
        .session
        .handle_safety_next(chat.now, change, 0, &config(), &guest())
        .unwrap();
    // Only a completed snapshot can be rolled back to.
    assert!(
        chat.session
            .handle_rollback_request(chat.now, net.execution_id, None)
            .is_err()
    );
    chat.session
        .handle_safety_finished(chat.now, change, net.execution_id, ok(""))
        .unwrap();
    assert!(
        chat.session
            .handle_rollback_request(chat.now, change, None)
            .is_err()
    );
    let approval_id = chat
        .session
        .handle_rollback_request(chat.now, net.execution_id, None)
        .unwrap();
    let approval = chat
        .session
        .approvals()
        .iter()
        .find(|a| a.id == approval_id)
        .unwrap();
    assert_eq!(approval.binding.class, CommandClass::Destructive);
    let rollback = chat.session.execution(approval.execution_id).unwrap();
    assert_eq!(rollback.status, ExecutionStatus::PendingApproval);
    assert_eq!(rollback.host, "host:pve");
    assert_eq!(
        rollback.command,
        format!("pct rollback 100 {}", snapshot_name(change))
    );
    assert!(chat.safety_events().iter().any(
        |e| matches!(e, SafetyAction::RollbackRequested { approval_id: a } if *a == approval_id)
    ));
}
