//! Host-key verification against known_hosts, and client-key authentication.

use std::sync::Arc;

use nomos_core::ports::exec::{ExecError, Executor};
use nomos_ssh::{HostKeyPolicy, SshExecutor};
use nomos_test_support::sshd::{Sshd, fingerprint};

use crate::{HOST, config, executor, inventory, inventory_with_key, limits};

#[tokio::test]
async fn a_changed_host_key_is_refused_showing_both_fingerprints() {
    let mut sshd = Sshd::start();
    let old = sshd.host_key_fingerprint();
    sshd.rotate_host_key();
    let new = sshd.host_key_fingerprint();
    assert_ne!(old, new);
    for policy in [HostKeyPolicy::Strict, HostKeyPolicy::AcceptNew] {
        let config = config(&sshd).with_host_key_policy(policy);
        let executor = SshExecutor::new(Arc::new(inventory(&sshd)), config);
        let error = executor
            .run(HOST, "true", limits(10_000))
            .await
            .unwrap_err();
        assert_eq!(
            error,
            ExecError::HostKeyMismatch {
                host: HOST.into(),
                expected: old.clone(),
                actual: new.clone(),
            },
            "policy {policy:?}"
        );
        let text = error.to_string();
        assert!(text.contains(&old) && text.contains(&new), "{text}");
    }
    assert_eq!(sshd.accepted_logins(), 0);
}

#[tokio::test]
async fn an_unknown_host_key_is_refused_when_strict() {
    let sshd = Sshd::start();
    std::fs::write(&sshd.known_hosts_path, "").unwrap();
    let error = executor(&sshd)
        .run(HOST, "true", limits(10_000))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ExecError::UnknownHostKey {
            host: HOST.into(),
            fingerprint: sshd.host_key_fingerprint(),
        }
    );
    assert_eq!(std::fs::read_to_string(&sshd.known_hosts_path).unwrap(), "");
}

#[tokio::test]
async fn an_unknown_host_key_is_recorded_under_accept_new_and_trusted_after() {
    let sshd = Sshd::start();
    std::fs::write(&sshd.known_hosts_path, "").unwrap();
    let config = config(&sshd).with_host_key_policy(HostKeyPolicy::AcceptNew);
    let executor = SshExecutor::new(Arc::new(inventory(&sshd)), config);
    let output = executor
        .run(HOST, "echo trusted", limits(10_000))
        .await
        .unwrap();
    assert_eq!(output.stdout, "trusted\n");

    let recorded = std::fs::read_to_string(&sshd.known_hosts_path).unwrap();
    assert!(
        recorded.contains(&format!("[127.0.0.1]:{} ssh-ed25519 ", sshd.port)),
        "{recorded}"
    );
    // A strict executor now trusts the recorded key.
    let strict = crate::executor(&sshd);
    assert_eq!(
        strict
            .run(HOST, "echo again", limits(10_000))
            .await
            .unwrap()
            .stdout,
        "again\n"
    );
    // The OpenSSH client agrees with what was recorded.
    let public = sshd.host_public_key_path();
    let key_field = std::fs::read_to_string(&public).unwrap();
    let key_field = key_field.split_whitespace().nth(1).unwrap();
    assert!(recorded.contains(key_field));
    assert!(fingerprint(&public).starts_with("SHA256:"));
}

#[tokio::test]
async fn a_client_key_the_server_does_not_know_is_refused() {
    let sshd = Sshd::start();
    let stranger = sshd.generate_client_key("stranger_ed25519");
    let executor = SshExecutor::new(
        Arc::new(inventory_with_key(&sshd, &stranger)),
        config(&sshd),
    );
    let error = executor
        .run(HOST, "true", limits(10_000))
        .await
        .unwrap_err();
    let ExecError::Auth { host, message } = &error else {
        panic!("expected an auth error, got {error:?}");
    };
    assert_eq!(host, HOST);
    assert!(message.contains("stranger_ed25519"), "{message}");
    assert_eq!(sshd.accepted_logins(), 0);
}

#[tokio::test]
async fn an_rsa_client_key_is_accepted() {
    let sshd = Sshd::start();
    let rsa = sshd.dir.join("client_rsa");
    let status = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f"])
        .arg(&rsa)
        .status()
        .unwrap();
    assert!(status.success());
    let public = std::fs::read_to_string(rsa.with_extension("pub")).unwrap();
    let mut authorized = std::fs::OpenOptions::new()
        .append(true)
        .open(sshd.authorized_keys_path())
        .unwrap();
    std::io::Write::write_all(&mut authorized, public.as_bytes()).unwrap();
    let executor = SshExecutor::new(Arc::new(inventory_with_key(&sshd, &rsa)), config(&sshd));
    let output = executor
        .run(HOST, "echo rsa", limits(10_000))
        .await
        .unwrap();
    assert_eq!(output.stdout, "rsa\n");
}

#[tokio::test]
async fn a_missing_client_key_file_is_an_auth_error_naming_the_file() {
    let sshd = Sshd::shared_or_start();
    let missing = sshd.dir.join("no_such_key");
    let executor = SshExecutor::new(Arc::new(inventory_with_key(&sshd, &missing)), config(&sshd));
    let error = executor
        .run(HOST, "true", limits(10_000))
        .await
        .unwrap_err();
    let ExecError::Auth { message, .. } = &error else {
        panic!("expected an auth error, got {error:?}");
    };
    assert!(message.contains("no_such_key"), "{message}");
}

/// An `ssh-agent` child process, killed on drop.
struct Agent(std::process::Child);

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn inventory_without_key(sshd: &Sshd) -> nomos_ssh::Inventory {
    let text = format!(
        "[[host]]\nslug='{HOST}'\naddress='127.0.0.1'\nport={}\nuser='root'\n",
        sshd.port
    );
    match nomos_ssh::Inventory::parse(&text, "agent.toml") {
        Ok(inventory) => inventory,
        Err(error) => panic!("agent inventory does not parse: {error}"),
    }
}

#[tokio::test]
async fn a_host_without_key_file_authenticates_with_the_ssh_agent() {
    let sshd = Sshd::start();
    let socket = sshd.dir.join("agent.sock");
    let _agent = Agent(
        std::process::Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&socket)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    for _ in 0..100 {
        if socket.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let added = std::process::Command::new("ssh-add")
        .arg("-q")
        .arg(&sshd.client_key_path)
        .env("SSH_AUTH_SOCK", &socket)
        .status()
        .unwrap();
    assert!(added.success());
    let config = config(&sshd).with_agent_socket(Some(socket));
    let executor = SshExecutor::new(Arc::new(inventory_without_key(&sshd)), config);
    let output = executor
        .run(HOST, "echo via-agent", limits(10_000))
        .await
        .unwrap();
    assert_eq!(output.stdout, "via-agent\n");
}

#[tokio::test]
async fn a_host_without_key_file_and_no_agent_is_an_auth_error() {
    let sshd = Sshd::shared_or_start();
    let config = config(&sshd).with_agent_socket(None);
    let executor = SshExecutor::new(Arc::new(inventory_without_key(&sshd)), config);
    let error = executor
        .run(HOST, "true", limits(10_000))
        .await
        .unwrap_err();
    let ExecError::Auth { message, .. } = &error else {
        panic!("expected an auth error, got {error:?}");
    };
    assert!(message.contains("SSH_AUTH_SOCK"), "{message}");
}
