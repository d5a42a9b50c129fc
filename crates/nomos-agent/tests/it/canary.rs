//! A fan-out's canary against real hosts (FLEET-5): one sshd per host on loopback, the
//! canary first and alone, then the other hosts on one approval of the rest.

use nomos_agent::Access;
use nomos_core::declared::RequestOrigin;
use nomos_core::fanout::{HostState, host_state};
use nomos_core::ports::store::Store;
use nomos_core::record::ToolCallOutcome;
use nomos_core::{ApprovalStatus, Decision, SessionId, Span};
use nomos_sqlite::SqliteStore;
use nomos_test_support::fleet::HostSpec;

use super::fleet::{FleetWorld, fleet_world};

const UPGRADE: &str = "apt-get upgrade -y";
const PLAN: &str = r#"{"steps": [{"title": "upgrade the web hosts", "commands": [{"host": "tag:web", "command": "apt-get upgrade -y"}]}]}"#;
async fn world(specs: Vec<HostSpec>) -> FleetWorld {
    fleet_world(specs, |config| {
        config.exec_limits.timeout = Span::from_millis(10_000);
        // The operator's policy: a group on `web` hosts runs a canary first.
        config.canary_tags = vec!["web".to_owned()];
    })
    .await
}

async fn call(world: &FleetWorld, id: SessionId, name: &str, args: &str) -> nomos_agent::CallReply {
    world
        .agent
        .call_tool(id, Access::Operate, name, args)
        .await
        .unwrap()
}

/// A session whose plan declared the upgrade on `tag:web`, approved and running.
async fn executing(world: &FleetWorld) -> SessionId {
    let id = world
        .agent
        .create_client_session("canary-test 1")
        .await
        .unwrap();
    call(
        world,
        id,
        "set_goal",
        r#"{"goal": "the web hosts are upgraded"}"#,
    )
    .await;
    call(world, id, "propose_plan", PLAN).await;
    world.agent.send_message(id, "yes, go ahead").await.unwrap();
    call(
        world,
        id,
        "update_plan_step",
        r#"{"seq": 1, "status": "running"}"#,
    )
    .await;
    id
}

async fn states(store: &SqliteStore, id: SessionId) -> Vec<HostState> {
    let snapshot = store.load_session(id).await.unwrap().unwrap();
    snapshot.fanouts[0]
        .hosts
        .iter()
        .map(|h| {
            host_state(
                snapshot
                    .executions
                    .iter()
                    .find(|e| e.id == h.execution_id)
                    .unwrap(),
            )
        })
        .collect()
}

fn web_hosts(n: usize) -> Vec<HostSpec> {
    (1..=n)
        .map(|i| {
            // An `apt-get` that says which host it ran on.
            HostSpec::up(&format!("lxc:web{i:02}"), &["web"])
                .program("apt-get", &format!("echo 'upgraded on web{i:02}'"))
        })
        .collect()
}

// rule: FLEET-5
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_of_one_waits_and_one_approval_of_the_rest_runs_the_other_21() {
    let world = world(web_hosts(22)).await;
    let id = executing(&world).await;
    let reply = call(
        &world,
        id,
        "run",
        &format!(r#"{{"host": "tag:web", "command": "{UPGRADE}"}}"#),
    )
    .await;
    assert_eq!(reply.outcome, ToolCallOutcome::Ok, "{}", reply.text);
    assert!(
        reply.text.contains("upgraded on web01"),
        "the canary ran: {}",
        reply.text
    );
    assert!(
        reply
            .text
            .contains("canary passed on lxc:web01; the other 21 host(s) have not run"),
        "{}",
        reply.text
    );
    let after_canary = states(&world.store, id).await;
    assert_eq!(after_canary[0], HostState::Ok);
    assert!(
        after_canary[1..]
            .iter()
            .all(|s| *s == HostState::PendingApproval),
        "{after_canary:?}"
    );
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    assert_eq!(snapshot.approvals.len(), 1, "one request for the rest");
    let rest = &snapshot.approvals[0];
    assert_eq!(rest.status, ApprovalStatus::Pending);
    assert_eq!(rest.binding.origin, RequestOrigin::AfterCanary { hosts: 1 });
    assert_eq!(rest.binding.command, UPGRADE);
    let bound: Vec<&str> = rest.binding.host.lines().collect();
    assert_eq!(bound.len(), 21, "bound to the remaining host set");
    assert!(!bound.contains(&"lxc:web01"));
    world
        .agent
        .decide(rest.id, Decision::Approve, Some("ops"))
        .await
        .unwrap();
    assert!(
        states(&world.store, id)
            .await
            .iter()
            .all(|s| *s == HostState::Ok),
        "{:?}",
        states(&world.store, id).await
    );
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    assert_eq!(snapshot.approvals.len(), 1, "one approval ran the rest");
    let fanout = &snapshot.fanouts[0];
    let ran: Vec<&str> = snapshot
        .executions
        .iter()
        .filter(|e| fanout.contains(e.id))
        .filter_map(|e| e.output.as_ref())
        .map(|o| o.stdout.trim())
        .collect();
    assert_eq!(ran.len(), 22);
    assert!(ran.contains(&"upgraded on web22"), "{ran:?}");
}

// rule: FLEET-5
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_canary_stops_the_fan_out_and_no_other_host_runs() {
    let mut specs = web_hosts(6);
    specs[0] = HostSpec::up("lxc:web01", &["web"])
        .program("apt-get", "echo 'E: dpkg was interrupted' >&2; exit 100");
    let world = world(specs).await;
    let id = executing(&world).await;
    let reply = call(
        &world,
        id,
        "run",
        &format!(r#"{{"host": "tag:web", "command": "{UPGRADE}"}}"#),
    )
    .await;
    assert!(
        reply.text.contains("not started (the canary did not pass)"),
        "{}",
        reply.text
    );
    assert_eq!(
        states(&world.store, id).await,
        [
            HostState::Failed,
            HostState::Skipped,
            HostState::Skipped,
            HostState::Skipped,
            HostState::Skipped,
            HostState::Skipped
        ]
    );
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    assert!(
        snapshot.approvals.is_empty(),
        "nothing is asked after a failed canary"
    );
    assert_eq!(
        snapshot
            .executions
            .iter()
            .filter(|e| snapshot.fanouts[0].contains(e.id) && e.output.is_some())
            .count(),
        1,
        "only the canary ran"
    );
}
