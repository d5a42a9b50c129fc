//! The real `nomos-server` binary discovers the guests of each Proxmox node at start-up
//! (FLEET-3): a fake Proxmox VE 8 node behind a real sshd, the real classifier, and the
//! guests on `GET /api/hosts` a moment after the server serves.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nomos_test_support::fleet::TestFleet;
use nomos_test_support::proxmox;
use serde_json::Value;

/// The server process, killed when the test ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// rule: FLEET-3
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_discovers_each_proxmox_nodes_guests_at_start_up() {
    let fleet = TestFleet::start(vec![proxmox::node("host:pve", &[])]);
    let dir = tempfile::tempdir().unwrap();
    let inventory = dir.path().join("inventory.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-server"));
    command
        .current_dir(dir.path())
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, _) in std::env::vars() {
        if name.starts_with("NOMOS_") {
            command.env_remove(name);
        }
    }
    command
        .env("NOMOS_INVENTORY", &inventory)
        .env("NOMOS_KNOWN_HOSTS", &fleet.known_hosts_path);
    let mut child = command.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let _running = Running(child);
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line.trim().rsplit(' ').next().unwrap();
    let base = url
        .split("/#")
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    let token = std::fs::read_to_string(dir.path().join("data/operator-token")).unwrap();
    let http = nomos_llm::tls::http_client();
    let deadline = Instant::now() + Duration::from_secs(30);
    let hosts = loop {
        let hosts: Value = http
            .get(format!("{base}/api/hosts"))
            .bearer_auth(token.trim())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let found = hosts
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["node"] == "host:pve")
            .count();
        if found == 5 {
            break hosts;
        }
        assert!(Instant::now() < deadline, "no guests after 30 s: {hosts}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let pihole = hosts
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["slug"] == "lxc:pihole")
        .unwrap();
    assert_eq!(pihole["attributes"]["ips"][0], "10.0.0.7", "{pihole}");
    assert_eq!(pihole["attributes"]["vmid"], 102);
}
