//! FLEET-3 reach-through against a real sshd: a container the inventory does not list is
//! reached through its Proxmox node with `pct exec VMID -- /bin/sh -c 'COMMAND'`, and the fake
//! `pct` on the node receives exactly the inner command.

use std::time::Duration;

use nomos_core::ports::exec::Executor;
use nomos_core::proxmox::{Guest, GuestKind};
use nomos_ssh::{FleetExecutor, Inventory, SshConfig};
use nomos_test_support::fleet::{HostSpec, TestFleet};
use nomos_test_support::proxmox;

use crate::limits;

fn guest(kind: GuestKind, vmid: u32, name: &str) -> Guest {
    Guest {
        kind,
        vmid,
        name: name.to_owned(),
        status: "running".to_owned(),
        ips: Vec::new(),
        node: "host:pve".to_owned(),
    }
}

fn executor(fleet: &TestFleet) -> FleetExecutor {
    let inventory = match Inventory::parse(&fleet.inventory_toml(), "fleet.toml") {
        Ok(inventory) => inventory,
        Err(error) => panic!("the fleet's inventory does not parse: {error}"),
    };
    let ssh = SshConfig::new(&fleet.known_hosts_path).with_connect_timeout(Duration::from_secs(5));
    FleetExecutor::new(inventory, ssh)
}

// rule: FLEET-3
// rule: EXEC-7
#[tokio::test]
async fn a_container_without_an_address_runs_the_inner_command_intact_through_its_node() {
    let fleet = TestFleet::start(vec![
        proxmox::node("host:pve", &[]),
        HostSpec::up("host:nas", &[]),
    ]);
    let executor = executor(&fleet);
    assert_eq!(executor.proxmox_nodes(), ["host:pve"]);
    let through = executor
        .set_guests(
            "host:pve",
            &[
                guest(GuestKind::Lxc, 100, "nextcloud"),
                guest(GuestKind::Vm, 200, "debian-vm"),
            ],
        )
        .unwrap();
    assert_eq!(
        through,
        ["lxc:nextcloud"],
        "a VM is not reached through its node"
    );
    let slugs: Vec<String> = executor.hosts().into_iter().map(|h| h.slug).collect();
    assert_eq!(
        slugs,
        ["host:pve", "host:nas", "lxc:nextcloud", "vm:debian-vm"]
    );
    let inners = [
        "echo \"in $PVE_GUEST\"",
        "printf '%s\\n' 'it'\\''s' \"two  spaces\" | tr a-z A-Z",
        "echo 'single' \"double\" `echo back` $(echo dollar); echo \\$HOME-not-expanded | wc -c",
        "x='a b'; [ \"$x\" = 'a b' ] && echo same",
    ];
    let expected = [
        "in 100\n",
        "IT'S\nTWO  SPACES\n",
        "single double back dollar\n19\n",
        "same\n",
    ];
    let received = fleet.host("host:pve").bin.join("pct-exec.100");
    for (inner, want) in inners.iter().zip(expected) {
        let out = executor
            .run("lxc:nextcloud", inner, limits(10_000))
            .await
            .unwrap();
        assert_eq!(out.exit_code, Some(0), "{inner}: {out:?}");
        assert_eq!(out.stdout, want, "{inner}");
        assert_eq!(
            std::fs::read_to_string(&received).unwrap(),
            *inner,
            "pct received exactly the inner command"
        );
    }
    let vm = executor
        .run("vm:debian-vm", "uptime", limits(5_000))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        vm.contains("VM on host:pve with no SSH address of its own"),
        "{vm}"
    );
    let refused = executor
        .set_guests("host:nas", &[guest(GuestKind::Lxc, 1, "x")])
        .unwrap_err()
        .to_string();
    assert!(refused.contains("not a Proxmox node"), "{refused}");
}

// rule: FLEET-3
#[tokio::test]
async fn an_inventory_host_with_the_guests_slug_keeps_its_own_address() {
    let fleet = TestFleet::start(vec![
        proxmox::node("host:pve", &[]),
        HostSpec::up("lxc:nextcloud", &["direct"]),
    ]);
    let executor = executor(&fleet);
    let through = executor
        .set_guests("host:pve", &[guest(GuestKind::Lxc, 100, "nextcloud")])
        .unwrap();
    assert!(through.is_empty(), "{through:?}");
    assert_eq!(executor.hosts().len(), 2, "no second lxc:nextcloud");
    let out = executor
        .run("lxc:nextcloud", "echo \"[$PVE_GUEST]\"", limits(10_000))
        .await
        .unwrap();
    assert_eq!(
        out.stdout, "[]\n",
        "ran over its own SSH, not through pct exec"
    );
    assert!(!fleet.host("host:pve").bin.join("pct-exec.100").exists());
}
