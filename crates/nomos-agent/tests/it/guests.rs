//! `discover_guests` against a real sshd with a fake Proxmox VE 8 node on its `PATH`
//! (FLEET-3): the fixed read-only commands go through the gate and are recorded as
//! executions, the guests become entities that run on the node and hosts for `run`, and a
//! container is reached through the node with the inner command classified and recorded.

use std::sync::Arc;
use std::time::Duration;

use nomos_agent::{Access, Agent, AgentConfig};
use nomos_core::ports::store::Store;
use nomos_core::record::ToolCallOutcome;
use nomos_core::{CommandClass, ExecutionStatus, SessionId, Span};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::{FleetExecutor, Inventory, SshConfig};
use nomos_test_support::fleet::{HostSpec, TestFleet};
use nomos_test_support::proxmox;
use tempfile::TempDir;

struct PveWorld {
    agent: Agent,
    store: Arc<SqliteStore>,
    fleet: TestFleet,
    _dir: TempDir,
}

async fn pve_world() -> PveWorld {
    let fleet = TestFleet::start(vec![
        proxmox::node("host:pve", &["proxmox"]),
        HostSpec::up("host:nas", &[]),
    ]);
    let inventory = Inventory::parse(&fleet.inventory_toml(), "fleet.toml").unwrap();
    let ssh = SshConfig::new(&fleet.known_hosts_path).with_connect_timeout(Duration::from_secs(5));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let model = Arc::new(ScriptedModel::from_yaml_str("[]").unwrap());
    let mut config = AgentConfig::spec_defaults();
    config.backup.root = dir.path().join("backup").display().to_string();
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
        _dir: dir,
    }
}

async fn call(
    world: &PveWorld,
    id: SessionId,
    name: &str,
    args: &str,
) -> (ToolCallOutcome, String) {
    let reply = world
        .agent
        .call_tool(id, Access::Operate, name, args)
        .await
        .unwrap();
    (reply.outcome, reply.text)
}

// rule: FLEET-3
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_gates_and_records_each_command_and_adds_every_guest_as_entity_and_host() {
    let world = pve_world().await;
    let id = world
        .agent
        .create_client_session("pve-test 1")
        .await
        .unwrap();
    let (outcome, text) = call(&world, id, "discover_guests", r#"{"host": "host:pve"}"#).await;
    assert_eq!(outcome, ToolCallOutcome::Ok, "{text}");
    assert!(text.starts_with("host:pve: 3 containers, 2 VMs"), "{text}");
    assert!(
        text.contains("lxc:nextcloud | vmid 100 | running | 10.0.0.5 | run through host:pve"),
        "{text}"
    );
    assert!(
        text.contains("vm:win11 | vmid 201 | stopped | - |"),
        "{text}"
    );

    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    let commands: Vec<(&str, &str, CommandClass, ExecutionStatus)> = snapshot
        .executions
        .iter()
        .map(|e| (e.host.as_str(), e.command.as_str(), e.class, e.status))
        .collect();
    let want = [
        "pct list",
        "qm list",
        "pct config 100",
        "pct config 101",
        "pct config 102",
        "qm config 200",
        "qm config 201",
    ];
    assert_eq!(commands.len(), want.len(), "{commands:?}");
    for ((host, command, class, status), want) in commands.iter().zip(want) {
        assert_eq!(
            (*host, *command, *class, *status),
            (
                "host:pve",
                want,
                CommandClass::ReadOnly,
                ExecutionStatus::Completed
            )
        );
    }

    let nextcloud = world.store.entity("lxc:nextcloud").await.unwrap().unwrap();
    assert_eq!(nextcloud.kind, "lxc");
    assert_eq!(nextcloud.attributes["vmid"], 100);
    assert_eq!(nextcloud.attributes["status"], "running");
    assert_eq!(nextcloud.attributes["ips"], serde_json::json!(["10.0.0.5"]));
    let pihole = world.store.entity("lxc:pihole").await.unwrap().unwrap();
    assert_eq!(
        pihole.attributes["ips"],
        serde_json::json!(["10.0.0.7"]),
        "a snapshot's address is not the current one"
    );
    let vm = world.store.entity("vm:debian-vm").await.unwrap().unwrap();
    assert_eq!(
        (vm.kind.as_str(), &vm.attributes["ips"]),
        ("vm", &serde_json::json!(["10.0.0.60"]))
    );
    let runs_on: Vec<String> = world
        .store
        .relations("host:pve")
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.kind == "runs_on" && r.to == "host:pve")
        .map(|r| r.from)
        .collect();
    assert_eq!(runs_on.len(), 5, "{runs_on:?}");

    let (_, hosts) = call(&world, id, "list_hosts", "{}").await;
    for slug in [
        "lxc:nextcloud",
        "lxc:media",
        "lxc:pihole",
        "vm:debian-vm",
        "vm:win11",
    ] {
        assert!(
            hosts.contains(&format!("\"slug\":\"{slug}\"")),
            "{slug}: {hosts}"
        );
    }

    // Discovering again changes nothing it already knew.
    let (again, _) = call(&world, id, "discover_guests", r#"{"host": "host:pve"}"#).await;
    assert_eq!(again, ToolCallOutcome::Ok);
    let relations = world.store.relations("lxc:nextcloud").await.unwrap();
    assert_eq!(relations.len(), 1, "{relations:?}");
}

// rule: FLEET-3
// rule: EXEC-7
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_runs_the_inner_command_as_classified_shown_and_recorded() {
    let world = pve_world().await;
    let id = world
        .agent
        .create_client_session("pve-test 2")
        .await
        .unwrap();
    let (outcome, text) = call(&world, id, "discover_guests", r#"{"host": "host:pve"}"#).await;
    assert_eq!(outcome, ToolCallOutcome::Ok, "{text}");
    let inner = r#"echo "guest $PVE_GUEST" | sed 's/guest/ct/'; printf '%s\n' 'it'\''s'"#;
    let args = serde_json::json!({ "host": "lxc:nextcloud", "command": inner }).to_string();
    let (outcome, text) = call(&world, id, "run", &args).await;
    assert_eq!(outcome, ToolCallOutcome::Ok, "{text}");
    assert!(text.contains("ct 100\nit's\n"), "{text}");
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    let run = snapshot.executions.last().unwrap();
    assert_eq!(run.host, "lxc:nextcloud");
    assert_eq!(run.command, inner, "the recorded command is the inner one");
    assert_eq!(run.class, CommandClass::ReadOnly);
    let received = world.fleet.host("host:pve").bin.join("pct-exec.100");
    assert_eq!(std::fs::read_to_string(received).unwrap(), inner);

    // The inner command is what the gate judges: a change needs approval.
    let args = serde_json::json!({ "host": "lxc:nextcloud", "command": "systemctl restart nginx" })
        .to_string();
    let (outcome, text) = call(&world, id, "run", &args).await;
    assert_ne!(outcome, ToolCallOutcome::Ok, "{text}");

    // A VM without an address of its own is not reached through its node.
    let args = serde_json::json!({ "host": "vm:win11", "command": "uptime" }).to_string();
    let (outcome, text) = call(&world, id, "run", &args).await;
    assert_eq!(outcome, ToolCallOutcome::Error, "{text}");
    assert!(
        text.contains("VM on host:pve with no SSH address of its own"),
        "{text}"
    );
}

// rule: FLEET-3
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_is_not_a_proxmox_node_gets_a_directive_error_and_nothing_runs() {
    let world = pve_world().await;
    let id = world
        .agent
        .create_client_session("pve-test 3")
        .await
        .unwrap();
    let (outcome, text) = call(&world, id, "discover_guests", r#"{"host": "host:nas"}"#).await;
    assert_eq!(outcome, ToolCallOutcome::Error);
    assert_eq!(
        text,
        "discover_guests: host:nas is not a Proxmox node (the Proxmox nodes are: host:pve). Call discover_guests with a Proxmox node, or use list_hosts and run for other hosts."
    );
    let (outcome, text) = call(&world, id, "discover_guests", r#"{"host": "host:gone"}"#).await;
    assert_eq!(outcome, ToolCallOutcome::Error);
    assert!(text.starts_with("unknown host `host:gone`"), "{text}");
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    assert!(snapshot.executions.is_empty());
    let refused = world
        .agent
        .call_tool(
            id,
            Access::ReadOnly,
            "discover_guests",
            r#"{"host": "host:pve"}"#,
        )
        .await
        .unwrap();
    assert_eq!(
        refused.outcome,
        ToolCallOutcome::Refused,
        "a viewer may not run commands"
    );
}

// rule: FLEET-3
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_refresh_records_its_discoveries_in_one_session_per_node() {
    let world = pve_world().await;
    let found = world.agent.discover_node("host:pve").await.unwrap();
    assert_eq!(
        found.reply.outcome,
        ToolCallOutcome::Ok,
        "{}",
        found.reply.text
    );
    let snapshot = world
        .store
        .load_session(found.session_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(snapshot.executions.len(), 7);
    let calls = world.store.tool_calls(found.session_id).await.unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "discover_guests");
    assert!(world.store.entity("lxc:media").await.unwrap().is_some());

    // A second refresh (a restart, the Discover button) adds to the same session.
    let again = world.agent.discover_node("host:pve").await.unwrap();
    assert_eq!(again.session_id, found.session_id);
    assert_eq!(again.reply.outcome, ToolCallOutcome::Ok);
    let calls = world.store.tool_calls(found.session_id).await.unwrap();
    assert_eq!(
        calls.len(),
        2,
        "both refreshes are on record in one session"
    );
    let snapshot = world
        .store
        .load_session(found.session_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(snapshot.executions.len(), 14);
}
