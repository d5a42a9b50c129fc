//! GATE-10 against a real sshd: before a request is shown, its preview runs on the same
//! host and the request carries it: the packages an `apt-get -s` would change (from a fake
//! `apt-get` on the host's `PATH` that prints Debian's simulation format), and the unified
//! diff a `sed -i` would make to a real file.

use std::sync::Arc;
use std::time::Duration;

use nomos_agent::{Access, Agent, AgentConfig};
use nomos_core::classify::PackageAction;
use nomos_core::ports::store::Store;
use nomos_core::preview::PreviewOutcome;
use nomos_core::record::ExecutionKind;
use nomos_core::{Decision, ExecutionStatus, SessionId, Span};
use nomos_llm::ScriptedModel;
use nomos_sqlite::SqliteStore;
use nomos_ssh::{FleetExecutor, Inventory, SshConfig};
use nomos_test_support::fleet::{HostSpec, TestFleet};
use tempfile::TempDir;

/// `apt-get`: with `-s`, what Debian's apt-get prints for `apt-get -s install curl` on a
/// bookworm host without curl (apt-pkg's simulation: `Inst name (version release [arch])`
/// then `Conf` lines); without `-s`, it leaves a mark and fails, so a test sees a real run.
const FAKE_APT_GET: &str = r#"case " $* " in
*" -s "*) cat <<'OUT'
NOTE: This is only a simulation!
      apt-get needs root privileges for real execution.
      Keep also in mind that locking is deactivated,
      so don't depend on the relevance to the real current situation!
Reading package lists...
Building dependency tree...
Reading state information...
The following additional packages will be installed:
  libcurl4
The following NEW packages will be installed:
  curl libcurl4
0 upgraded, 2 newly installed, 0 to remove and 0 not upgraded.
Inst libcurl4 (7.88.1-10+deb12u5 Debian:12.5/stable [amd64])
Inst curl (7.88.1-10+deb12u5 Debian:12.5/stable [amd64])
Conf libcurl4 (7.88.1-10+deb12u5 Debian:12.5/stable [amd64])
Conf curl (7.88.1-10+deb12u5 Debian:12.5/stable [amd64])
OUT
;;
*) touch "$(dirname "$0")/apt-get-ran"; exit 100 ;;
esac"#;

/// `systemctl status nginx` as systemd prints it for a running unit.
const FAKE_SYSTEMCTL: &str = r#"case "$1" in
status) touch "$(dirname "$0")/systemctl-status-ran"; echo "* nginx.service - A high performance web server"; echo "     Active: active (running) since Tue 2026-12-01 09:00:00 UTC; 4h ago" ;;
*) touch "$(dirname "$0")/systemctl-ran" ;;
esac"#;

struct World {
    agent: Agent,
    store: Arc<SqliteStore>,
    fleet: TestFleet,
    _dir: TempDir,
}

async fn world() -> World {
    world_with(nomos_agent::config::ApprovalPolicy::AwaitOperator).await
}

async fn world_with(approvals: nomos_agent::config::ApprovalPolicy) -> World {
    let fleet = TestFleet::start(vec![
        HostSpec::up("lxc:web", &["web"])
            .program("apt-get", FAKE_APT_GET)
            .program("systemctl", FAKE_SYSTEMCTL),
    ]);
    let inventory = Inventory::parse(&fleet.inventory_toml(), "fleet.toml").unwrap();
    let ssh = SshConfig::new(&fleet.known_hosts_path).with_connect_timeout(Duration::from_secs(5));
    let executor = FleetExecutor::new(inventory, ssh);
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let model = Arc::new(ScriptedModel::from_yaml_str("[]").unwrap());
    let mut config = AgentConfig::spec_defaults();
    config.backup.root = dir.path().join("backup").display().to_string();
    config.exec_limits.timeout = Span::from_millis(5_000);
    config.approvals = approvals;
    let agent = Agent::builder(store.clone(), Arc::new(executor), model)
        .config(config)
        .build();
    World {
        agent,
        store,
        fleet,
        _dir: dir,
    }
}

/// A client session with a plan declaring `systemctl restart nginx` on lxc:web, assented,
/// step 1 running.
async fn approved_plan(world: &World) -> SessionId {
    let id = world
        .agent
        .create_client_session("preview-test 1")
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
    call("set_goal", r#"{"goal": "web serves curl"}"#).await;
    call(
        "propose_plan",
        r#"{"steps": [{"title": "restart nginx", "commands": [{"host": "lxc:web", "command": "systemctl restart nginx"}]}]}"#,
    )
    .await;
    world.agent.send_message(id, "yes, go ahead").await.unwrap();
    call("update_plan_step", r#"{"seq": 1, "status": "running"}"#).await;
    id
}

// rule: GATE-10
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apt_install_request_shows_the_packages_its_simulation_would_change() {
    let world = world().await;
    let id = approved_plan(&world).await;
    let bin = &world.fleet.hosts[0].bin;

    // The plan's declared change was previewed on the host when it was proposed.
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    let declared = &snapshot.steps[0].commands[0];
    let status = declared
        .preview
        .as_ref()
        .expect("the declared change has a preview");
    assert_eq!(status.runs[0].command, "systemctl status nginx");
    assert!(
        status.runs[0].stdout.contains("active (running)"),
        "{status:?}"
    );
    assert!(
        !bin.join("systemctl-ran").exists(),
        "the preview is not the change"
    );

    let reply = world
        .agent
        .call_tool(
            id,
            Access::Operate,
            "run",
            r#"{"host": "lxc:web", "command": "apt-get install -y curl"}"#,
        )
        .await
        .unwrap();
    let approval_id = reply
        .approval_id
        .unwrap_or_else(|| panic!("{}", reply.text));
    let approval = world.store.approval(approval_id).await.unwrap().unwrap();
    let preview = approval
        .binding
        .preview
        .as_ref()
        .expect("the request carries its preview");
    assert_eq!(preview.outcome, PreviewOutcome::Shown, "{preview:?}");
    assert_eq!(
        preview.runs[0].command,
        "apt-get -s -o Dir::Log::Planner= install curl"
    );
    assert!(
        preview.runs[0]
            .stdout
            .contains("NOTE: This is only a simulation!")
    );
    let packages: Vec<_> = preview
        .packages
        .iter()
        .map(|p| (p.action, p.name.as_str(), p.to.as_deref()))
        .collect();
    assert_eq!(
        packages,
        [
            (
                PackageAction::Install,
                "libcurl4",
                Some("7.88.1-10+deb12u5")
            ),
            (PackageAction::Install, "curl", Some("7.88.1-10+deb12u5")),
        ]
    );
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    let recorded = snapshot
        .executions
        .iter()
        .find(|e| Some(e.id) == preview.runs[0].execution_id)
        .unwrap();
    assert_eq!(recorded.kind, ExecutionKind::Preview);
    assert_eq!(recorded.status, ExecutionStatus::Completed);
    assert!(!bin.join("apt-get-ran").exists(), "only the simulation ran");

    // Denied: the install never runs.
    world
        .agent
        .decide(approval_id, Decision::Deny, Some("ops"))
        .await
        .unwrap();
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    let guarded = snapshot
        .executions
        .iter()
        .find(|e| e.id == approval.execution_id)
        .unwrap();
    assert_eq!(guarded.status, ExecutionStatus::Cancelled);
    assert!(
        !bin.join("apt-get-ran").exists(),
        "a denied request never runs"
    );
}

// rule: GATE-10
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sed_in_place_request_shows_the_unified_diff_it_would_make() {
    let world = world().await;
    let id = approved_plan(&world).await;
    let conf = world.fleet.hosts[0].bin.parent().unwrap().join("app.conf");
    std::fs::write(&conf, "server {\n    listen 80;\n    root /srv/www;\n}\n").unwrap();
    let command = format!("sed -i 's/listen 80;/listen 8080;/' {}", conf.display());
    let args = serde_json::json!({"host": "lxc:web", "command": command}).to_string();
    let reply = world
        .agent
        .call_tool(id, Access::Operate, "run", &args)
        .await
        .unwrap();
    let approval_id = reply
        .approval_id
        .unwrap_or_else(|| panic!("{}", reply.text));
    let approval = world.store.approval(approval_id).await.unwrap().unwrap();
    let preview = approval.binding.preview.as_ref().unwrap();
    let shown = conf.display().to_string();
    let file = shown.trim_start_matches('/');
    assert_eq!(
        preview.diff.as_deref(),
        Some(
            format!(
                "--- a/{file}\n+++ b/{file}\n@@ -1,4 +1,4 @@\n server {{\n-    listen 80;\n+    listen 8080;\n     root /srv/www;\n }}\n"
            )
            .as_str()
        )
    );
    assert!(
        std::fs::read_to_string(&conf)
            .unwrap()
            .contains("listen 80;"),
        "the preview did not edit the file"
    );
    // Approved: the command that runs is the one whose preview was shown.
    world
        .agent
        .decide(approval_id, Decision::Approve, Some("ops"))
        .await
        .unwrap();
    assert!(
        std::fs::read_to_string(&conf)
            .unwrap()
            .contains("listen 8080;")
    );
}

/// The preview executions session `id` recorded.
async fn preview_executions(world: &World, id: SessionId) -> usize {
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    snapshot
        .executions
        .iter()
        .filter(|e| e.kind == ExecutionKind::Preview)
        .count()
}

const DECLARING: &str = r#"{"steps": [{"title": "restart nginx", "commands": [{"host": "lxc:web", "command": "systemctl restart nginx"}]}]}"#;

// rule: GATE-10
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_proposal_or_an_unattended_runtime_runs_no_preview_on_the_host() {
    // Refused: no goal yet, so the plan is not recorded and nobody is shown it.
    let world = world().await;
    let id = world.agent.create_client_session("refused").await.unwrap();
    let reply = world
        .agent
        .call_tool(id, Access::Operate, "propose_plan", DECLARING)
        .await
        .unwrap();
    assert!(reply.text.contains("set_goal"), "{}", reply.text);
    let bin = world.fleet.hosts[0].bin.clone();
    assert!(!bin.join("systemctl-status-ran").exists(), "no preview ran");
    assert_eq!(preview_executions(&world, id).await, 0);

    // Accepted, the preview runs (recorded) once the plan is.
    let call = |name: &'static str, args: &'static str| {
        let agent = world.agent.clone();
        async move {
            agent
                .call_tool(id, Access::Operate, name, args)
                .await
                .unwrap()
        }
    };
    call("set_goal", r#"{"goal": "nginx restarted"}"#).await;
    call("propose_plan", DECLARING).await;
    assert!(bin.join("systemctl-status-ran").exists());
    assert_eq!(preview_executions(&world, id).await, 1);

    // Unattended: nobody can decide, so nothing is previewed.
    let unattended = world_with(nomos_agent::config::ApprovalPolicy::RefuseWithoutOperator).await;
    let id = unattended
        .agent
        .create_client_session("unattended")
        .await
        .unwrap();
    for (name, args) in [
        ("set_goal", r#"{"goal": "nginx restarted"}"#),
        ("propose_plan", DECLARING),
    ] {
        unattended
            .agent
            .call_tool(id, Access::Operate, name, args)
            .await
            .unwrap();
    }
    let bin = &unattended.fleet.hosts[0].bin;
    assert!(!bin.join("systemctl-status-ran").exists(), "no preview ran");
    assert_eq!(preview_executions(&unattended, id).await, 0);
}
