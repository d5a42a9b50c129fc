//! SAFE-2 in the core: which changes get a backup first, what the backup records, that a
//! failed backup stops its change, and that Restore waits for its own approval. The
//! commands go through the real classifier; the shell's runs are handed in as outputs.

#![allow(clippy::unwrap_used)]

mod support;

use support::{Chat, ok};

use nomos_core::event::SafetyAction;
use nomos_core::record::{ExecOutput, ExecutionKind};
use nomos_core::safety::{BackupConfig, NetsConfig};
use nomos_core::session::SafetyVerdict;
use nomos_core::snapshot::HostSafety;
use nomos_core::{CommandClass, ExecutionStatus};

fn config() -> NetsConfig {
    NetsConfig {
        backup: BackupConfig {
            mode: nomos_core::safety::BackupMode::BeforeChange,
            root: "/srv/backup".to_owned(),
            max_kib: 1024,
            max_age_days: 7,
        },
        snapshot: nomos_core::snapshot::SnapshotConfig::spec_defaults(),
        revert: nomos_core::revert::RevertConfig::spec_defaults(),
    }
}

fn not_a_guest() -> HostSafety {
    HostSafety::default()
}

// rule: SAFE-2
#[test]
fn a_change_that_names_its_files_gets_one_backup_and_a_read_gets_none() {
    let mut chat = Chat::assented(9, "switch the mode", "web");
    let read = chat.run("cat /etc/app.conf");
    assert_eq!(
        chat.session
            .handle_safety_next(chat.now, read, 0, &config(), &not_a_guest()),
        None
    );
    let change = chat.run("sed -i s/a/b/ /etc/app.conf");
    let net = chat
        .session
        .handle_safety_next(chat.now, change, 0, &config(), &not_a_guest())
        .expect("a backup before the sed");
    assert!(net.command.contains("'/etc/app.conf'"), "{}", net.command);
    assert!(
        net.command.contains(&format!("'/srv/backup/{change}'")),
        "{}",
        net.command
    );
    assert!(net.command.contains("-mtime +7"), "{}", net.command);
    let backup = chat.session.execution(net.execution_id).unwrap();
    assert_eq!(backup.kind, ExecutionKind::Safety);
    assert_eq!(backup.status, ExecutionStatus::Running);
    assert_eq!(net.host, "web");
    // One backup per change: once it ran, the change needs no other net.
    assert_eq!(
        chat.session
            .handle_safety_next(chat.now, change, 1, &config(), &not_a_guest()),
        None
    );
    let stdout = format!(
        "file\t/etc/app.conf\t/srv/backup/{change}/1\t0\t0\t644\t5\t{}\n",
        "a".repeat(64)
    );
    let verdict = chat
        .session
        .handle_safety_finished(chat.now, change, net.execution_id, ok(&stdout))
        .unwrap();
    assert_eq!(verdict, SafetyVerdict::Proceed);
    let events = chat.safety_events();
    assert!(
        matches!(&events[0], SafetyAction::BackupStarted { paths } if paths == &["/etc/app.conf"])
    );
    assert!(matches!(&events[1], SafetyAction::BackedUp { file } if file.mode == "644"));
    assert_eq!(
        chat.session.execution(change).unwrap().status,
        ExecutionStatus::Running,
        "the change goes on"
    );
}

// rule: SAFE-2
#[test]
fn a_failed_backup_stops_the_change_and_says_why() {
    let mut chat = Chat::assented(9, "switch the mode", "web");
    let change = chat.run("echo mode=new > /etc/app.conf");
    let net = chat
        .session
        .handle_safety_next(chat.now, change, 0, &config(), &not_a_guest())
        .unwrap();
    let failed = Ok(ExecOutput {
        exit_code: Some(1),
        stderr: "mkdir: cannot create directory '/srv/backup': Read-only file system".to_owned(),
        ..ExecOutput::default()
    });
    let verdict = chat
        .session
        .handle_safety_finished(chat.now, change, net.execution_id, failed)
        .unwrap();
    let SafetyVerdict::Stop { reason } = verdict else {
        panic!("{verdict:?}");
    };
    assert!(reason.contains("Read-only file system"), "{reason}");
    let change = chat.session.execution(change).unwrap();
    assert_eq!(change.status, ExecutionStatus::Failed);
    assert!(
        change.error.as_deref().unwrap().contains("did not run"),
        "{change:?}"
    );
}

// rule: SAFE-2
#[test]
fn restore_is_a_destructive_request_that_waits_for_its_own_approval() {
    let mut chat = Chat::assented(9, "switch the mode", "web");
    let change = chat.run("sed -i s/a/b/ /etc/app.conf");
    let net = chat
        .session
        .handle_safety_next(chat.now, change, 0, &config(), &not_a_guest())
        .unwrap();
    let stdout = format!(
        "file\t/etc/app.conf\t/srv/backup/{change}/1\t1234\t5678\t640\t5\t{}\n",
        "a".repeat(64)
    );
    chat.session
        .handle_safety_finished(chat.now, change, net.execution_id, ok(&stdout))
        .unwrap();
    // Only a completed backup can be restored.
    assert!(
        chat.session
            .handle_restore_request(chat.now, change, None)
            .is_err()
    );
    let approval_id = chat
        .session
        .handle_restore_request(chat.now, net.execution_id, None)
        .unwrap();
    let approval = chat
        .session
        .approvals()
        .iter()
        .find(|a| a.id == approval_id)
        .unwrap();
    assert_eq!(approval.binding.class, CommandClass::Destructive);
    let restore = chat.session.execution(approval.execution_id).unwrap();
    assert_eq!(restore.status, ExecutionStatus::PendingApproval);
    assert!(
        restore.command.contains("chown 1234:5678"),
        "{}",
        restore.command
    );
    assert!(
        restore.command.contains("chmod '640'"),
        "{}",
        restore.command
    );
    // A restore guards nothing itself: it gets no backup of its own.
    assert_eq!(
        chat.session
            .handle_safety_next(chat.now, restore.id, 0, &config(), &not_a_guest()),
        None
    );
}
