//! SAFE-2 end to end against a real sshd on loopback: a `sed -i` the plan declared is
//! preceded by a backup of the file it edits (an execution of kind `safety`, a `safety.net`
//! event per file), and Restore, once approved, brings back the exact bytes, mode and owner.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::Arc;
use std::time::Duration;

use nomos_agent::{Agent, AgentConfig};
use nomos_core::event::{DomainEvent, SafetyAction};
use nomos_core::ports::store::Store;
use nomos_core::record::ExecutionKind;
use nomos_core::{CommandClass, Decision, ExecutionStatus, Span};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::{FleetExecutor, Inventory, SshConfig};
use nomos_test_support::fleet::{HostSpec, TestFleet};

fn script(path: &str) -> String {
    format!(
        r#"
- tool_calls:
    - {{name: set_goal, arguments: {{goal: "switch the mode to new"}}}}
    - {{name: propose_plan, arguments: {{steps: [{{title: "edit the config", commands: [{{host: "host:web", command: "sed -i s/mode=old/mode=new/ {path}"}}]}}, {{title: "write back: update_entity_attributes"}}]}}}}
- text: "Plan ready. Approve?"
- tool_calls:
    - {{name: update_plan_step, arguments: {{seq: 1, status: running}}}}
    - {{name: run, arguments: {{host: "host:web", command: "sed -i s/mode=old/mode=new/ {path}"}}}}
  expect: {{last_user_contains: "approved"}}
- text: "Edited."
- text: "Restored."
"#
    )
}

// rule: SAFE-2
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sed_in_place_is_backed_up_and_restore_brings_back_bytes_mode_and_owner() {
    let fleet = TestFleet::start(vec![HostSpec::up("host:web", &[])]);
    let inventory = Inventory::parse(&fleet.inventory_toml(), "fleet.toml").unwrap();
    let ssh = SshConfig::new(&fleet.known_hosts_path).with_connect_timeout(Duration::from_secs(5));
    let dir = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let backups = tempfile::tempdir().unwrap();
    let path = files.path().join("app.conf");
    let original = b"# app\nmode=old\nkeep=1\n";
    std::fs::write(&path, original).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::chown(&path, Some(1234), Some(5678)).unwrap();
    let path_text = path.display().to_string();

    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let model = Arc::new(ScriptedModel::from_yaml_str(&script(&path_text)).unwrap());
    let mut config = AgentConfig::spec_defaults();
    config.exec_limits.timeout = Span::from_millis(10_000);
    config.backup.root = backups.path().display().to_string();
    let agent = Agent::builder(
        store.clone(),
        Arc::new(FleetExecutor::new(inventory, ssh)),
        model,
    )
    .config(config)
    .build();
    let id = agent.create_session().await.unwrap();
    agent.send_message(id, "switch the mode").await.unwrap();
    let turn = agent.send_message(id, "approved").await.unwrap();
    assert_eq!(turn.error, None, "{turn:?}");

    // The change ran, after its backup.
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "# app\nmode=new\nkeep=1\n"
    );
    let snapshot = store.load_session(id).await.unwrap().unwrap();
    let backup = snapshot
        .executions
        .iter()
        .find(|e| e.kind == ExecutionKind::Safety)
        .expect("a backup ran");
    assert_eq!(backup.status, ExecutionStatus::Completed, "{backup:?}");
    let change = snapshot
        .executions
        .iter()
        .find(|e| e.kind == ExecutionKind::Command && e.command.starts_with("sed -i"))
        .unwrap();
    assert_eq!(change.status, ExecutionStatus::Completed);
    assert!(backup.created_at <= change.finished_at.unwrap());
    let records = store.events_after(Some(id), 0, 10_000).await.unwrap();
    let copied: Vec<_> = records
        .iter()
        .filter_map(|r| match &r.event {
            DomainEvent::SafetyNet {
                execution_id,
                action: SafetyAction::BackedUp { file },
                ..
            } if *execution_id == change.id => Some(file.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(copied.len(), 1, "{copied:?}");
    let file = &copied[0];
    assert_eq!(file.path, path_text);
    assert_eq!(
        (file.uid, file.gid, file.mode.as_str()),
        (1234, 5678, "640")
    );
    assert_eq!(file.size, original.len() as u64);
    assert_eq!(std::fs::read(&file.copy).unwrap(), original);
    assert!(
        file.copy
            .starts_with(&format!("{}/{}/", backups.path().display(), change.id)),
        "{}",
        file.copy
    );

    // Someone also changes the owner and the mode; Restore puts all of it back.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    std::os::unix::fs::chown(&path, Some(0), Some(0)).unwrap();
    let approval_id = agent.request_restore(id, backup.id).await.unwrap();
    let snapshot = store.load_session(id).await.unwrap().unwrap();
    let approval = snapshot
        .approvals
        .iter()
        .find(|a| a.id == approval_id)
        .unwrap();
    assert_eq!(approval.binding.class, CommandClass::Destructive);
    let preview = approval.binding.preview.as_ref().expect("a diff preview");
    let shown = format!("{preview:?}");
    assert!(
        shown.contains("-mode=new") && shown.contains("+mode=old"),
        "{shown}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "# app\nmode=new\nkeep=1\n",
        "nothing is restored before the approval"
    );
    agent
        .decide(approval_id, Decision::Approve, Some("alice"))
        .await
        .unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), original);
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o640);
    assert_eq!((meta.uid(), meta.gid()), (1234, 5678));
    drop(fleet);
}
