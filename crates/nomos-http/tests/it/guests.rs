//! FLEET-3 over HTTP: `POST /api/hosts/{slug}/discover` against a real sshd with a fake
//! Proxmox VE 8 node on its `PATH`, and the Hosts list that shows the guests.

use std::sync::Arc;
use std::time::Duration;

use nomos_llm::ScriptedModel;
use nomos_ssh::{FleetExecutor, Inventory, SshConfig};
use nomos_test_support::fleet::{HostSpec, TestFleet};
use nomos_test_support::proxmox;
use serde_json::{Value, json};

use crate::{VIEWER, serve_parts};

// rule: FLEET-3
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_adds_a_nodes_guests_and_refuses_what_is_not_a_node() {
    let fleet = TestFleet::start(vec![
        proxmox::node("host:pve", &[]),
        HostSpec::up("host:nas", &[]),
    ]);
    let inventory = Inventory::parse(&fleet.inventory_toml(), "fleet.toml").unwrap();
    let ssh = SshConfig::new(&fleet.known_hosts_path).with_connect_timeout(Duration::from_secs(5));
    let server = serve_parts(
        Arc::new(ScriptedModel::new(Vec::new())),
        Arc::new(FleetExecutor::new(inventory, ssh)),
    )
    .await;

    let before = server.json("/api/hosts").await;
    assert_eq!(before.as_array().unwrap().len(), 2, "{before}");
    assert_eq!(before[0]["proxmox"], true);
    assert_eq!(before[1]["proxmox"], false);

    let viewer = server
        .http
        .post(server.url("/api/hosts/host:pve/discover"))
        .bearer_auth(VIEWER)
        .send()
        .await
        .unwrap();
    assert_eq!(viewer.status(), 403, "a viewer may not discover");

    let response = server
        .post("/api/hosts/host:pve/discover", json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let found: Value = response.json().await.unwrap();
    assert_eq!(found["outcome"], "ok", "{found}");
    let mut slugs: Vec<&str> = found["guests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["slug"].as_str().unwrap())
        .collect();
    slugs.sort_unstable();
    assert_eq!(
        slugs,
        [
            "lxc:media",
            "lxc:nextcloud",
            "lxc:pihole",
            "vm:debian-vm",
            "vm:win11"
        ]
    );
    let session = found["session_id"].as_str().unwrap();
    let executions = server
        .json(&format!("/api/executions?session_id={session}"))
        .await;
    let n = executions["items"]
        .as_array()
        .or_else(|| executions.as_array())
        .map(Vec::len);
    assert_eq!(n, Some(7), "every command recorded: {executions}");

    let after = server.json("/api/hosts").await;
    let hosts = after.as_array().unwrap();
    let nextcloud = hosts
        .iter()
        .find(|h| h["slug"] == "lxc:nextcloud")
        .unwrap_or_else(|| panic!("no lxc:nextcloud in {after}"));
    assert_eq!(nextcloud["node"], "host:pve");
    assert_eq!(nextcloud["attributes"]["vmid"], 100);
    assert_eq!(nextcloud["attributes"]["ips"], json!(["10.0.0.5"]));

    let not_a_node = server
        .post("/api/hosts/host:nas/discover", json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(not_a_node.status(), 409);
    let body: Value = not_a_node.json().await.unwrap();
    let message = body.to_string();
    assert!(
        message.contains("host:nas is not a Proxmox node"),
        "{message}"
    );

    let unknown = server
        .post("/api/hosts/host:gone/discover", json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
}
