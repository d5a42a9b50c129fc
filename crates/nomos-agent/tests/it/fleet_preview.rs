//! FLEET-6 against real hosts: a fan-out that waits for the operator is previewed on every
//! host, and its request groups the hosts by what their previews say, outliers first.

use nomos_agent::Access;
use nomos_core::ports::store::Store;
use nomos_core::record::ExecutionKind;
use nomos_core::{SessionId, Span};
use nomos_test_support::fleet::HostSpec;

use super::fleet::{FleetWorld, fleet_world};

/// `apt-get`: with `-s`, Debian's simulation of an upgrade of three packages (and, on an
/// outlier, the removal of `libfoo` too); without `-s`, it leaves a mark and fails.
fn fake_apt_get(also_removes: bool) -> String {
    let extra = if also_removes {
        "Remv libfoo [1.0-1]\n"
    } else {
        ""
    };
    format!(
        r#"case " $* " in
*" -s "*) cat <<'OUT'
NOTE: This is only a simulation!
Inst openssl [3.0.14-1~deb12u2] (3.0.15-1~deb12u1 Debian-Security:12/stable-security [amd64])
Inst libssl3 [3.0.14-1~deb12u2] (3.0.15-1~deb12u1 Debian-Security:12/stable-security [amd64])
Inst curl [7.88.1-10+deb12u7] (7.88.1-10+deb12u8 Debian:12.8/stable [amd64])
{extra}OUT
;;
*) touch "$(dirname "$0")/apt-get-ran"; exit 100 ;;
esac"#
    )
}

async fn world(specs: Vec<HostSpec>) -> FleetWorld {
    fleet_world(specs, |config| {
        config.exec_limits.timeout = Span::from_millis(10_000);
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

// rule: FLEET-6
// rule: GATE-10
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_two_hosts_preview_as_two_groups_with_the_two_that_differ_first() {
    let specs: Vec<HostSpec> = (1..=22)
        .map(|i| {
            HostSpec::up(&format!("lxc:app{i:02}"), &["app"])
                .program("apt-get", &fake_apt_get(i == 7 || i == 15))
        })
        .collect();
    let world = world(specs).await;
    let id = world
        .agent
        .create_client_session("fleet-preview-test 1")
        .await
        .unwrap();
    call(
        &world,
        id,
        "set_goal",
        r#"{"goal": "the app hosts are patched"}"#,
    )
    .await;
    call(
        &world,
        id,
        "propose_plan",
        r#"{"steps": [{"title": "patch the app hosts"}]}"#,
    )
    .await;
    world.agent.send_message(id, "yes, go ahead").await.unwrap();
    call(
        &world,
        id,
        "update_plan_step",
        r#"{"seq": 1, "status": "running"}"#,
    )
    .await;
    // Not declared by the plan: the group waits for the operator, and is previewed first.
    let reply = call(
        &world,
        id,
        "run",
        r#"{"host": "tag:app", "command": "apt-get upgrade -y"}"#,
    )
    .await;
    let approval_id = reply
        .approval_id
        .unwrap_or_else(|| panic!("{}", reply.text));
    let approval = world.store.approval(approval_id).await.unwrap().unwrap();
    let preview = approval
        .binding
        .preview
        .expect("the request carries the previews");
    let groups = &preview.groups;
    assert_eq!(groups.len(), 2, "{groups:#?}");
    assert_eq!(
        groups[0].hosts,
        ["lxc:app07", "lxc:app15"],
        "the outliers come first"
    );
    assert_eq!(
        groups[0].summary,
        "2 hosts: 3 package(s) upgraded, 1 removed (libfoo)"
    );
    assert_eq!(groups[1].hosts.len(), 20);
    assert_eq!(groups[1].summary, "20 hosts: 3 package(s) upgraded");
    assert_eq!(
        preview.packages.len(),
        4,
        "the card's own fields are the first group's"
    );
    let snapshot = world.store.load_session(id).await.unwrap().unwrap();
    let previews = snapshot
        .executions
        .iter()
        .filter(|e| e.kind == ExecutionKind::Preview)
        .count();
    assert_eq!(previews, 22, "one recorded preview per host");
    assert!(
        world
            .fleet
            .hosts
            .iter()
            .all(|h| !h.bin.join("apt-get-ran").exists()),
        "a preview is not the change"
    );
}
