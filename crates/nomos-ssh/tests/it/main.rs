//! Integration tests of the executors against a real OpenSSH `sshd` on loopback.

mod failures;
mod fleet;
mod host_keys;
mod operators;
mod pool;
mod proxmox;
mod run;

use std::path::Path;
use std::time::Duration;

use nomos_core::ports::exec::ExecLimits;
use nomos_core::time::Span;
use nomos_ssh::{Inventory, SshConfig, SshExecutor};
use nomos_test_support::sshd::{Sshd, processes_matching};

/// The slug of the loopback test host.
const HOST: &str = "host:loopback";

/// An inventory with `local` and one SSH host for `sshd`, logging in with `key`.
fn inventory_with_key(sshd: &Sshd, key: &Path) -> Inventory {
    let text = format!(
        r#"
[[host]]
slug = "local"

[[host]]
slug = "{HOST}"
address = "127.0.0.1"
port = {port}
user = "root"
key_file = "{key}"
tags = ["test"]
"#,
        port = sshd.port,
        key = key.display(),
    );
    match Inventory::parse(&text, "loopback.toml") {
        Ok(inventory) => inventory,
        Err(error) => panic!("test inventory does not parse: {error}"),
    }
}

fn inventory(sshd: &Sshd) -> Inventory {
    inventory_with_key(sshd, &sshd.client_key_path)
}

/// Settings for tests: the server's known_hosts, short connect timeout and grace.
fn config(sshd: &Sshd) -> SshConfig {
    let mut config =
        SshConfig::new(&sshd.known_hosts_path).with_connect_timeout(Duration::from_secs(5));
    config.stop_grace = Duration::from_millis(500);
    config
}

fn executor(sshd: &Sshd) -> SshExecutor {
    SshExecutor::new(inventory(sshd).into(), config(sshd))
}

fn limits(timeout_ms: i64) -> ExecLimits {
    ExecLimits::with_timeout(Span::from_millis(timeout_ms))
}

/// A `sleep` argument unique to this test process and `tag`, so a leftover process
/// can be found by its command line (`sleep 60.PID0TAG` sleeps about 60 s).
fn unique_sleep(tag: u32) -> String {
    format!("sleep 60.{}0{tag}", std::process::id())
}

/// Waits up to 10 s for no live process to have `needle` in its command line.
async fn wait_gone(needle: &str) -> bool {
    for _ in 0..200 {
        if processes_matching(needle).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Waits up to 10 s for `needle` to be running.
async fn wait_running(needle: &str) -> bool {
    for _ in 0..200 {
        if !processes_matching(needle).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}
