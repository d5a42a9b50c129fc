//! SAFE-1 end to end against a real sshd with a fake Proxmox VE 8 node on its `PATH`: a
//! change on a container whose node asks for `snapshot = "before-change"` is preceded by
//! `pct snapshot VMID nomos-...` on the node (an execution of kind `safety`), older Nomos
//! snapshots are pruned and no other, a failing snapshot stops the change, and Rollback,
//! once approved, runs `pct rollback` with the snapshot's name.

use std::sync::Arc;
use std::time::Duration;

use nomos_agent::{Access, Agent, AgentConfig};
use nomos_core::event::{DomainEvent, SafetyAction};
use nomos_core::ports::store::Store;
use nomos_core::record::{Execution, ExecutionKind, ToolCallOutcome};
use nomos_core::snapshot::snapshot_name;
use nomos_core::{CommandClass, Decision, ExecutionStatus, SessionId, Span};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::{FleetExecutor, Inventory, SshConfig};
use nomos_test_support::fleet::TestFleet;
use nomos_test_support::proxmox;
use tempfile::TempDir;

struct PveWorld {
    agent: Agent,
    store: Arc<SqliteStore>,
    fleet: TestFleet,
    dir: TempDir,
}

async fn pve_world(keep: usize) -> PveWorld {
    let fleet = TestFleet::start(vec![
        proxmox::node("host:pve", &["proxmox"])
            .inventory("proxmox = true\nsnapshot = \"before-change\""),
    ]);
    let inventory = Inventory::parse(&fleet.inventory_toml(), "fleet.toml").unwrap();
    let ssh = SshConfig::new(&fleet.known_hosts_path).with_connect_timeout(Duration::from_secs(5));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let model = Arc::new(ScriptedModel::from_yaml_str("[]").unwrap());
    let mut config = AgentConfig::spec_defaults();
    config.backup.root = dir.path().join("backup").display().to_string();
    config.snapshot.keep = keep;
    config.exec_limits.timeout = Span::from_millis(10_000);
    let agent = Agent::builder(
        store.clone(),
        Arc::new(FleetExecutor::new(inventory, ssh)),
        model,
    )
    .config(config)
    .build();
    PveWorld {
        agent,
        store,
        fleet,
        dir,
    }
}

impl PveWorld {
    fn bin(&self) -> std::path::PathBuf {
        self.fleet.host("host:pve").bin.clone()
    }

    async fn session(&self, name: &str) -> SessionId {
        let id = self.agent.create_client_session(name).await.unwrap();
        let reply = self
            .agent
            .call_tool(
                id,
                Access::Operate,
                "discover_guests",
                r#"{"host": "host:pve"}"#,
            )
            .await
            .unwrap();
        assert_eq!(reply.outcome, ToolCallOutcome::Ok, "{}", reply.text);
        for (name, args) in [
            ("set_goal", r#"{"goal": "clean up the container"}"#),
            (
                "propose_plan",
                r#"{"steps": [{"title": "remove the marker"}, {"title": "write back: update_entity_attributes"}]}"#,
            ),
        ] {
            let reply = self
                .agent
                .call_tool(id, Access::Operate, name, args)
                .await
                .unwrap();
            assert_eq!(reply.outcome, ToolCallOutcome::Ok, "{name}: {}", reply.text);
        }
        self.agent.send_message(id, "yes, go ahead").await.unwrap();
        let reply = self
            .agent
            .call_tool(
                id,
                Access::Operate,
                "update_plan_step",
                r#"{"seq": 1, "status": "running"}"#,
            )
            .await
            .unwrap();
        assert_eq!(reply.outcome, ToolCallOutcome::Ok, "{}", reply.text);
        id
    }

    /// A file the change removes (`rm` asks for its own approval).
    fn marker(&self) -> std::path::PathBuf {
        let marker = self.dir.path().join("marker");
        std::fs::write(&marker, "x").unwrap();
        marker
    }

    /// Asks for `command` on the container, approves it, and returns its execution.
    async fn approved_change(&self, id: SessionId, command: &str) -> Execution {
        let args = serde_json::json!({ "host": "lxc:nextcloud", "command": command }).to_string();
        let reply = self
            .agent
            .call_tool(id, Access::Operate, "run", &args)
            .await
            .unwrap();
        let approval_id = reply
            .approval_id
            .unwrap_or_else(|| panic!("the change waits for approval: {}", reply.text));
        let approval = self.store.approval(approval_id).await.unwrap().unwrap();
        self.agent
            .decide(approval_id, Decision::Approve, Some("alice"))
            .await
            .unwrap();
        self.execution(id, approval.execution_id).await
    }

    async fn execution(&self, id: SessionId, execution: nomos_core::ExecutionId) -> Execution {
        let snapshot = self.store.load_session(id).await.unwrap().unwrap();
        snapshot
            .executions
            .into_iter()
            .find(|e| e.id == execution)
            .unwrap()
    }

    async fn nets(&self, id: SessionId) -> Vec<Execution> {
        let snapshot = self.store.load_session(id).await.unwrap().unwrap();
        snapshot
            .executions
            .into_iter()
            .filter(|e| e.kind == ExecutionKind::Safety)
            .collect()
    }
}

// rule: SAFE-1
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_a_container_is_snapshotted_on_its_node_first_and_rollback_runs_once_approved()
{
    let world = pve_world(3).await;
    let id = world.session("pve-snapshot 1").await;
    let marker = world.marker();
    let change = world
        .approved_change(id, &format!("rm {}", marker.display()))
        .await;
    assert_eq!(change.status, ExecutionStatus::Completed, "{change:?}");
    assert!(!marker.exists(), "the change ran");
    let name = snapshot_name(change.id);
    assert_eq!(
        proxmox::calls(&world.bin()),
        [
            format!("pct snapshot 100 {name}"),
            "pct listsnapshot 100".to_owned()
        ]
    );
    let nets = world.nets(id).await;
    let net = &nets[0];
    assert_eq!(net.host, "host:pve", "run through its node");
    assert_eq!(net.status, ExecutionStatus::Completed);
    assert!(net.finished_at.unwrap() <= change.finished_at.unwrap());
    let records = world.store.events_after(Some(id), 0, 10_000).await.unwrap();
    assert!(records.iter().any(|r| matches!(&r.event,
        DomainEvent::SafetyNet { execution_id, action: SafetyAction::SnapshotTaken { vmid: 100, name: taken, .. }, .. }
            if *execution_id == change.id && *taken == name)));

    // Rollback: a destructive request previewed by the listing, run only once approved.
    let approval_id = world.agent.request_rollback(id, net.id).await.unwrap();
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    let approval = snapshot
        .approvals
        .iter()
        .find(|a| a.id == approval_id)
        .unwrap();
    assert_eq!(approval.binding.class, CommandClass::Destructive);
    let shown = format!("{:?}", approval.binding.preview);
    assert!(shown.contains(&name), "{shown}");
    assert!(
        !proxmox::calls(&world.bin())
            .iter()
            .any(|c| c.contains("rollback")),
        "nothing rolls back before the approval"
    );
    world
        .agent
        .decide(approval_id, Decision::Approve, Some("alice"))
        .await
        .unwrap();
    assert_eq!(
        proxmox::calls(&world.bin()).last().unwrap(),
        &format!("pct rollback 100 {name}")
    );
    let rollback = world.execution(id, approval.execution_id).await;
    assert_eq!(rollback.status, ExecutionStatus::Completed, "{rollback:?}");
}

// rule: SAFE-1
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_snapshot_stops_the_change_and_says_why() {
    let world = pve_world(3).await;
    let id = world.session("pve-snapshot 2").await;
    proxmox::fail_snapshots(&world.bin(), "snapshot feature is not available");
    let marker = world.marker();
    let change = world
        .approved_change(id, &format!("rm {}", marker.display()))
        .await;
    assert_eq!(change.status, ExecutionStatus::Failed);
    let error = change.error.unwrap();
    assert!(
        error.contains("snapshot feature is not available") && error.contains("did not run"),
        "{error}"
    );
    assert!(marker.exists(), "the change did not run");
    let calls = world.store.tool_calls(id).await.unwrap();
    let messages = world.store.messages(id).await.unwrap();
    let told = calls
        .iter()
        .map(|c| c.result.as_str())
        .chain(messages.iter().map(|m| m.content.as_str()))
        .any(|text| text.contains("snapshot feature is not available"));
    assert!(told, "the caller reads why: {calls:?} {messages:?}");
}

// rule: SAFE-1
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruning_keeps_the_newest_nomos_snapshots_and_never_another() {
    let world = pve_world(2).await;
    let bin = world.bin();
    proxmox::seed_snapshot(&bin, 100, "before-upgrade", "2026-01-01 10:00:00");
    proxmox::seed_snapshot(&bin, 100, "nomos-000000000001", "2026-01-02 10:00:00");
    proxmox::seed_snapshot(&bin, 100, "nomos-000000000002", "2026-01-03 10:00:00");
    proxmox::seed_snapshot(&bin, 102, "nomos-000000000003", "2026-01-01 10:00:00");
    let id = world.session("pve-snapshot 3").await;
    let marker = world.marker();
    let change = world
        .approved_change(id, &format!("rm {}", marker.display()))
        .await;
    assert_eq!(change.status, ExecutionStatus::Completed, "{change:?}");
    let name = snapshot_name(change.id);
    assert_eq!(
        proxmox::snapshots(&bin),
        [
            "100 before-upgrade".to_owned(),
            "100 nomos-000000000002".to_owned(),
            "102 nomos-000000000003".to_owned(),
            format!("100 {name}"),
        ]
    );
    assert!(proxmox::calls(&bin).contains(&"pct delsnapshot 100 nomos-000000000001".to_owned()));
}
