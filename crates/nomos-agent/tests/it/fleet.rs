//! `run` on a group against real hosts: one sshd per host on loopback, including one that
//! is down, one that hangs past its timeout and one with a wrong host key (FLEET-1, FLEET-2).

use std::sync::Arc;
use std::time::Duration;

use nomos_agent::{Access, Agent, AgentConfig};
use nomos_core::fanout::{HostState, host_state};
use nomos_core::ports::store::Store;
use nomos_core::record::{ExecutionKind, ToolCallOutcome};
use nomos_core::{Decision, ExecutionStatus, SessionId, Span};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::{FleetExecutor, Inventory, SshConfig};
use nomos_test_support::fleet::{HostSpec, Reach, TestFleet};
use tempfile::TempDir;

const DOCKER_PS: &str = "echo 'CONTAINER ID   IMAGE   STATUS'; echo \"c0ffee   nginx   Up 3 days ($(basename $(dirname $(dirname $0))))\"";

/// Real hosts behind the SSH executor, an agent and its store (shared by the fleet tests).
pub(super) struct FleetWorld {
    pub(super) agent: Agent,
    pub(super) store: Arc<SqliteStore>,
    pub(super) fleet: TestFleet,
    _dir: TempDir,
}

pub(super) async fn fleet_world(
    specs: Vec<HostSpec>,
    tune: impl FnOnce(&mut AgentConfig),
) -> FleetWorld {
    let fleet = TestFleet::start(specs);
    let inventory = Inventory::parse(&fleet.inventory_toml(), "fleet.toml").unwrap();
    let mut ssh =
        SshConfig::new(&fleet.known_hosts_path).with_connect_timeout(Duration::from_secs(5));
    ssh.stop_grace = Duration::from_millis(500);
    let executor = FleetExecutor::new(inventory, ssh);
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let model = Arc::new(ScriptedModel::from_yaml_str("[]").unwrap());
    let mut config = AgentConfig::spec_defaults();
    config.backup.root = dir.path().join("backup").display().to_string();
    config.exec_limits.timeout = Span::from_millis(3_000);
    tune(&mut config);
    let agent = Agent::builder(store.clone(), Arc::new(executor), model)
        .config(config)
        .build();
    FleetWorld {
        agent,
        store,
        fleet,
        _dir: dir,
    }
}

async fn states(store: &SqliteStore, id: SessionId) -> Vec<(String, HostState)> {
    let snapshot = store.load_session(id).await.unwrap().unwrap();
    let fanout = &snapshot.fanouts[0];
    fanout
        .hosts
        .iter()
        .map(|h| {
            let e = snapshot
                .executions
                .iter()
                .find(|e| e.id == h.execution_id)
                .unwrap();
            (h.host.clone(), host_state(e))
        })
        .collect()
}

// rule: FLEET-1
// rule: FLEET-2
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tag_runs_once_per_real_host_and_each_failure_says_why() {
    let mut specs: Vec<HostSpec> = (1..=18)
        .map(|i| HostSpec::up(&format!("lxc:web{i:02}"), &["docker"]).program("docker", DOCKER_PS))
        .collect();
    specs.push(HostSpec::up("lxc:down", &["docker"]).reach(Reach::Down));
    specs.push(HostSpec::up("lxc:hang", &["docker"]).program("docker", "exec sleep 300"));
    specs.push(
        HostSpec::up("lxc:rekeyed", &["docker"])
            .reach(Reach::WrongHostKey)
            .program("docker", DOCKER_PS),
    );
    specs.push(HostSpec::up("lxc:db", &["db"]).program("docker", DOCKER_PS));
    let world = fleet_world(specs, |_| {}).await;
    let id = world
        .agent
        .create_client_session("fleet-test 1")
        .await
        .unwrap();
    let reply = world
        .agent
        .call_tool(
            id,
            Access::Operate,
            "run",
            r#"{"host": "tag:docker", "command": "docker ps", "max_parallel": 25, "max_failures": 5}"#,
        )
        .await
        .unwrap();
    assert_eq!(reply.outcome, ToolCallOutcome::Ok, "{}", reply.text);
    assert_eq!(reply.approval_id, None, "read-only: no approval");
    let text = &reply.text;
    assert!(text.contains("(21 hosts): 18 ok, 3 failed"), "{text}");
    assert_eq!(text.lines().count(), 2 + 21, "one row per host: {text}");
    assert!(
        !text.contains("lxc:db"),
        "a host without the tag is not in the group"
    );
    assert!(text.contains("nginx   Up 3 days"), "{text}");
    let row = |slug: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{slug} |")))
            .unwrap_or_else(|| panic!("no row for {slug}: {text}"))
            .to_owned()
    };
    assert!(
        row("lxc:down").contains("could not connect"),
        "{}",
        row("lxc:down")
    );
    assert!(row("lxc:hang").contains("timed out"), "{}", row("lxc:hang"));
    assert!(
        row("lxc:rekeyed").contains("host key"),
        "{}",
        row("lxc:rekeyed")
    );
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    assert_eq!(snapshot.executions.len(), 21, "one execution per host");
    assert_eq!(snapshot.fanouts.len(), 1, "linked to one fan-out");
    assert!(snapshot.executions.iter().all(|e| e.status.is_terminal()));
    let calls = world.store.tool_calls(id).await.unwrap();
    assert_eq!(calls.len(), 1, "one call, recorded with the table");
    assert_eq!(&calls[0].result, text);
    assert_eq!(world.fleet.hosts.len(), 22);
}

// rule: FLEET-2
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_first_failure_no_new_host_starts_and_the_rest_are_skipped() {
    let apt = "echo 'Listing... Done'; echo 'openssl/stable-security 3.0.15-1~deb12u1 amd64'";
    let specs: Vec<HostSpec> = (1..=5)
        .map(|i| {
            let script = if i == 3 {
                "echo 'E: Could not get lock' >&2; exit 100"
            } else {
                apt
            };
            HostSpec::up(&format!("lxc:app{i}"), &["app"]).program("apt", script)
        })
        .collect();
    let world = fleet_world(specs, |_| {}).await;
    let id = world
        .agent
        .create_client_session("fleet-test 1")
        .await
        .unwrap();
    let reply = world
        .agent
        .call_tool(
            id,
            Access::Operate,
            "run",
            r#"{"hosts": ["lxc:app1", "lxc:app2", "lxc:app3", "lxc:app4", "lxc:app5"], "command": "apt list --upgradable", "max_parallel": 1}"#,
        )
        .await
        .unwrap();
    let text = &reply.text;
    assert!(text.contains("2 ok, 1 failed, 2 skipped"), "{text}");
    assert!(
        text.contains("not started (max_failures = 1 reached): lxc:app4, lxc:app5"),
        "{text}"
    );
    assert!(text.contains("lxc:app3 | failed | 100 |"), "{text}");
    assert!(text.contains("E: Could not get lock"), "{text}");
    assert_eq!(
        states(&world.store, id).await,
        [
            ("lxc:app1".to_owned(), HostState::Ok),
            ("lxc:app2".to_owned(), HostState::Ok),
            ("lxc:app3".to_owned(), HostState::Failed),
            ("lxc:app4".to_owned(), HostState::Skipped),
            ("lxc:app5".to_owned(), HostState::Skipped),
        ]
    );
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    let skipped: Vec<_> = snapshot
        .executions
        .iter()
        .filter(|e| e.status == ExecutionStatus::Cancelled)
        .collect();
    assert!(
        skipped.iter().all(|e| e.started_at.is_none()),
        "a skipped host never started"
    );
}

// rule: FLEET-1
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_approval_runs_a_destructive_command_on_every_host_of_the_set() {
    let specs: Vec<HostSpec> = (1..=4)
        .map(|i| HostSpec::up(&format!("lxc:c{i}"), &["cache"]))
        .collect();
    let world = fleet_world(specs, |_| {}).await;
    let id = world
        .agent
        .create_client_session("fleet-test 1")
        .await
        .unwrap();
    let call = |name: &'static str, args: &'static str| {
        let agent = world.agent.clone();
        async move {
            agent
                .call_tool(id, Access::Operate, name, args)
                .await
                .unwrap()
        }
    };
    call("set_goal", r#"{"goal": "caches are empty"}"#).await;
    call(
        "propose_plan",
        r#"{"steps": [{"title": "empty the caches"}]}"#,
    )
    .await;
    world.agent.send_message(id, "yes, go ahead").await.unwrap();
    call("update_plan_step", r#"{"seq": 1, "status": "running"}"#).await;
    let reply = call(
        "run",
        r#"{"host": "tag:cache", "command": "rm -rf /tmp/nomos-fleet-cache-test"}"#,
    )
    .await;
    let approval_id = reply
        .approval_id
        .unwrap_or_else(|| panic!("{}", reply.text));
    assert!(reply.text.contains("all 4 hosts"), "{}", reply.text);
    let pending = world.store.approval(approval_id).await.unwrap().unwrap();
    assert_eq!(
        pending.binding.host.lines().collect::<Vec<_>>(),
        ["lxc:c1", "lxc:c2", "lxc:c3", "lxc:c4"],
        "the approval shows the exact host set"
    );
    world
        .agent
        .decide(approval_id, Decision::Approve, Some("ops"))
        .await
        .unwrap();
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    assert_eq!(snapshot.approvals.len(), 1);
    assert_eq!(snapshot.executions.len(), 4);
    assert!(
        snapshot
            .executions
            .iter()
            .all(|e| e.status == ExecutionStatus::Completed),
        "{:?}",
        snapshot
            .executions
            .iter()
            .map(|e| (e.host.clone(), e.status, e.error.clone()))
            .collect::<Vec<_>>()
    );
}

// rule: FLEET-7
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_host_of_a_fan_out_streams_its_own_output_while_it_runs() {
    use nomos_agent::LiveEvent;
    use nomos_core::event::DomainEvent;
    use std::collections::HashMap;

    let specs: Vec<HostSpec> = (1..=3)
        .map(|i| {
            HostSpec::up(&format!("lxc:s{i}"), &["stream"]).program(
                "docker",
                &format!("for n in 1 2 3; do echo s{i}-line$n; sleep 0.3; done"),
            )
        })
        .collect();
    let world = fleet_world(specs, |_| {}).await;
    let id = world
        .agent
        .create_client_session("fleet-test 1")
        .await
        .unwrap();
    let mut events = world.agent.bus().subscribe();
    let agent = world.agent.clone();
    let call = tokio::spawn(async move {
        agent
            .call_tool(
                id,
                Access::Operate,
                "run",
                r#"{"host": "tag:stream", "command": "docker logs app"}"#,
            )
            .await
            .unwrap()
    });
    // What each execution streamed by the time its end was recorded.
    let mut live: HashMap<nomos_core::ExecutionId, Vec<String>> = HashMap::new();
    let mut at_end: HashMap<nomos_core::ExecutionId, Vec<String>> = HashMap::new();
    while at_end.len() < 3 {
        match tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("the fan-out ends")
            .unwrap()
        {
            LiveEvent::ExecutionOutput {
                session_id,
                execution_id,
                text,
                ..
            } if session_id == id => live.entry(execution_id).or_default().push(text),
            LiveEvent::Committed(record) if record.session_id == id => {
                if let DomainEvent::ExecutionStatusChanged {
                    execution_id,
                    status: ExecutionStatus::Completed,
                    ..
                } = record.event
                {
                    at_end.insert(
                        execution_id,
                        live.get(&execution_id).cloned().unwrap_or_default(),
                    );
                }
            }
            _ => {}
        }
    }
    let reply = call.await.unwrap();
    assert!(reply.text.contains("3 ok"), "{}", reply.text);
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    for execution in &snapshot.executions {
        let seen = &at_end[&execution.id];
        let slug = execution.host.trim_start_matches("lxc:");
        assert!(
            seen.len() >= 2,
            "{slug} streamed in one piece, not while it ran: {seen:?}"
        );
        assert_eq!(
            seen.concat(),
            format!("{slug}-line1\n{slug}-line2\n{slug}-line3\n"),
            "each host's row holds its own output, whole, before its end"
        );
        assert_eq!(seen.concat(), execution.output.as_ref().unwrap().stdout);
    }
}

// rule: SAFE-2
// rule: FLEET-2
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_host_of_a_group_run_is_backed_up_before_its_change() {
    let specs: Vec<HostSpec> = (1..=2)
        .map(|i| HostSpec::up(&format!("lxc:w{i}"), &["web"]))
        .collect();
    let world = fleet_world(specs, |_| {}).await;
    let files = tempfile::tempdir().unwrap();
    let path = files.path().join("app.conf");
    std::fs::write(&path, "mode=old\n").unwrap();
    let id = world
        .agent
        .create_client_session("fleet-test backup")
        .await
        .unwrap();
    let call = |name: &'static str, args: String| {
        let agent = world.agent.clone();
        async move {
            agent
                .call_tool(id, Access::Operate, name, &args)
                .await
                .unwrap()
        }
    };
    call("set_goal", r#"{"goal": "the mode is new"}"#.to_owned()).await;
    call(
        "propose_plan",
        r#"{"steps": [{"title": "switch the mode on the web hosts"}]}"#.to_owned(),
    )
    .await;
    world.agent.send_message(id, "yes, go ahead").await.unwrap();
    call(
        "update_plan_step",
        r#"{"seq": 1, "status": "running"}"#.to_owned(),
    )
    .await;
    let command = format!("sed -i s/mode=old/mode=new/ {}", path.display());
    let args = serde_json::json!({ "host": "tag:web", "command": command }).to_string();
    let reply = call("run", args).await;
    if let Some(approval_id) = reply.approval_id {
        world
            .agent
            .decide(approval_id, Decision::Approve, Some("ops"))
            .await
            .unwrap();
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "mode=new\n");
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    let changes: Vec<_> = snapshot
        .executions
        .iter()
        .filter(|e| e.kind == ExecutionKind::Command && e.command == command)
        .collect();
    assert_eq!(changes.len(), 2, "{:?}", snapshot.executions);
    for change in changes {
        assert_eq!(change.status, ExecutionStatus::Completed, "{change:?}");
        let backup = snapshot
            .executions
            .iter()
            .find(|e| {
                e.kind == ExecutionKind::Safety
                    && e.reason
                        .ends_with(&format!("before execution {}", change.id))
            })
            .unwrap_or_else(|| panic!("no backup for {}", change.host));
        assert_eq!(backup.host, change.host, "backed up on its own host");
        assert_eq!(backup.status, ExecutionStatus::Completed, "{backup:?}");
        assert!(backup.finished_at.unwrap() <= change.finished_at.unwrap());
        assert!(
            backup.output.as_ref().unwrap().stdout.contains("app.conf"),
            "{backup:?}"
        );
    }
}
