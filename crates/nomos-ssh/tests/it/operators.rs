//! SSH the way operators have it: keys with a passphrase named in the inventory,
//! the ssh-agent, and chains of jump hosts whose keys are checked like any other.

// Setup helpers of these tests fail the test when their setup fails.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nomos_core::ports::exec::{ExecError, Executor};
use nomos_ssh::{AuthMethod, Inventory, KeyTrust, PassphraseUse, SshExecutor};
use nomos_test_support::sshd::Sshd;

use crate::{HOST, config, limits};

/// Makes an ed25519 key with `passphrase` in the server's directory and authorizes it.
fn authorized_key_with_passphrase(sshd: &Sshd, name: &str, passphrase: &str) -> PathBuf {
    let path = sshd.dir.join(name);
    let status = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f"])
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
    authorize(sshd, &path.with_extension("pub"));
    path
}

fn authorize(sshd: &Sshd, public: &Path) {
    let public = std::fs::read_to_string(public).unwrap();
    let mut authorized = std::fs::OpenOptions::new()
        .append(true)
        .open(sshd.authorized_keys_path())
        .unwrap();
    std::io::Write::write_all(&mut authorized, public.as_bytes()).unwrap();
}

fn parse(text: &str) -> Inventory {
    match Inventory::parse(text, "operators.toml") {
        Ok(inventory) => inventory,
        Err(error) => panic!("test inventory does not parse: {error}"),
    }
}

fn host_with(sshd: &Sshd, key: &Path, extra: &str) -> Inventory {
    parse(&format!(
        "[[host]]\nslug='{HOST}'\naddress='127.0.0.1'\nport={}\nuser='root'\nkey_file='{}'\n{extra}",
        sshd.port,
        key.display()
    ))
}

#[tokio::test]
async fn a_key_with_a_passphrase_from_a_file_logs_in() {
    let sshd = Sshd::start();
    let key = authorized_key_with_passphrase(&sshd, "locked_ed25519", "correct horse");
    let file = sshd.dir.join("locked.pass");
    std::fs::write(&file, "correct horse\n").unwrap();
    let inventory = host_with(
        &sshd,
        &key,
        &format!("passphrase_file='{}'\n", file.display()),
    );
    let executor = SshExecutor::new(Arc::new(inventory), config(&sshd));
    let output = executor
        .run(HOST, "echo unlocked", limits(10_000))
        .await
        .unwrap();
    assert_eq!(output.stdout, "unlocked\n");
    let check = executor.check(HOST).await;
    assert_eq!(
        check.outcome.unwrap(),
        AuthMethod::KeyFile {
            path: key,
            passphrase: PassphraseUse::Decrypted
        }
    );
}

#[tokio::test]
async fn a_wrong_passphrase_is_an_auth_error_that_does_not_show_it() {
    let sshd = Sshd::start();
    let key = authorized_key_with_passphrase(&sshd, "wrong_ed25519", "right");
    let file = sshd.dir.join("wrong.pass");
    std::fs::write(&file, "not-the-passphrase\n").unwrap();
    let inventory = host_with(
        &sshd,
        &key,
        &format!("passphrase_file='{}'\n", file.display()),
    );
    let executor = SshExecutor::new(Arc::new(inventory), config(&sshd));
    let error = executor
        .run(HOST, "true", limits(10_000))
        .await
        .unwrap_err();
    let ExecError::Auth { message, .. } = &error else {
        panic!("expected an auth error, got {error:?}");
    };
    assert!(message.contains("could not decrypt"), "{message}");
    assert!(!message.contains("not-the-passphrase"), "{message}");
    assert_eq!(sshd.accepted_logins(), 0);
}

/// An `ssh-agent` child holding `key`, killed on drop.
struct Agent {
    child: std::process::Child,
    socket: PathBuf,
}

impl Agent {
    async fn holding(sshd: &Sshd, key: &Path) -> Agent {
        let socket = sshd.dir.join("operator-agent.sock");
        let child = std::process::Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&socket)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..250 {
            if socket.exists() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let added = std::process::Command::new("ssh-add")
            .arg("-q")
            .arg(key)
            .env("SSH_AUTH_SOCK", &socket)
            .output()
            .unwrap();
        assert!(
            added.status.success(),
            "ssh-add: {}",
            String::from_utf8_lossy(&added.stderr)
        );
        Agent { child, socket }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn the_ssh_agent_authenticates_and_the_check_names_its_key() {
    let sshd = Sshd::start();
    let agent = Agent::holding(&sshd, &sshd.client_key_path).await;
    let inventory = parse(&format!(
        "[[host]]\nslug='{HOST}'\naddress='127.0.0.1'\nport={}\nuser='root'\n",
        sshd.port
    ));
    let config = config(&sshd).with_agent_socket(Some(agent.socket.clone()));
    let executor = SshExecutor::new(Arc::new(inventory), config);
    let check = executor.check(HOST).await;
    let AuthMethod::Agent {
        socket,
        fingerprint,
        comment,
    } = check.outcome.unwrap()
    else {
        panic!("expected the agent to authenticate");
    };
    assert_eq!(socket, agent.socket);
    assert_eq!(
        fingerprint,
        nomos_test_support::sshd::fingerprint(&sshd.client_key_path.with_extension("pub"))
    );
    assert_eq!(comment, "nomos-test-client");
    let key = check.host_key.unwrap();
    assert_eq!(key.trust, KeyTrust::Trusted);
    assert_eq!(key.fingerprint(), sshd.host_key_fingerprint());
}

/// Two servers that both accept the first one's client key.
fn two_servers() -> (Sshd, Sshd) {
    let first = Sshd::start();
    let second = Sshd::start();
    authorize(&second, &first.client_key_path.with_extension("pub"));
    (first, second)
}

fn known_hosts_of(path: &Path, trusted: &[&Sshd]) {
    let text: String = trusted
        .iter()
        .map(|sshd| std::fs::read_to_string(&sshd.known_hosts_path).unwrap())
        .collect();
    std::fs::write(path, text).unwrap();
}

/// `vm:inner` (on `first`) behind `host:middle` (on `second`) behind `host:edge`
/// (on `first`).
fn two_hops(first: &Sshd, second: &Sshd) -> Inventory {
    parse(&format!(
        "[defaults]\nuser='root'\nkey_file='{key}'\n\
         [[host]]\nslug='host:edge'\naddress='127.0.0.1'\nport={a}\n\
         [[host]]\nslug='host:middle'\naddress='127.0.0.1'\nport={b}\njump='host:edge'\n\
         [[host]]\nslug='vm:inner'\naddress='127.0.0.1'\nport={a}\njump='host:middle'\n",
        key = first.client_key_path.display(),
        a = first.port,
        b = second.port,
    ))
}

#[tokio::test]
async fn a_host_two_jumps_away_is_reached_through_both_tunnels() {
    let (first, second) = two_servers();
    let known_hosts = first.dir.join("two_hops_known_hosts");
    known_hosts_of(&known_hosts, &[&first, &second]);
    let config = config(&first).with_known_hosts(known_hosts);
    let executor = SshExecutor::new(Arc::new(two_hops(&first, &second)), config);
    let output = executor
        .run("vm:inner", "echo two-hops", limits(20_000))
        .await
        .unwrap();
    assert_eq!(output.stdout, "two-hops\n");
    assert_eq!(executor.stats().connects, 3, "{:?}", executor.stats());
    // The middle server served one login (from the edge's tunnel); the first served two.
    assert_eq!(second.accepted_logins(), 1);
    assert_eq!(first.accepted_logins(), 2);
}

#[tokio::test]
async fn a_jump_host_with_an_unknown_key_is_refused_before_anything_behind_it() {
    let (first, second) = two_servers();
    let known_hosts = first.dir.join("no_edge_known_hosts");
    // Only the middle host's key is on record (`vm:inner` shares the edge's key and
    // address, so it is not trusted either, but it is never reached).
    known_hosts_of(&known_hosts, &[&second]);
    let config = config(&first).with_known_hosts(known_hosts);
    let executor = SshExecutor::new(Arc::new(two_hops(&first, &second)), config);
    let error = executor
        .run("vm:inner", "true", limits(20_000))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ExecError::UnknownHostKey {
            host: "host:edge".into(),
            fingerprint: first.host_key_fingerprint(),
        }
    );
    assert!(
        error
            .to_string()
            .contains("nomos-server hosts check --trust-new"),
        "{error}"
    );
    assert_eq!(first.accepted_logins(), 0);
    assert_eq!(second.accepted_logins(), 0);
}

#[tokio::test]
async fn a_jump_host_whose_key_changed_is_refused_with_both_fingerprints() {
    let (mut first, second) = two_servers();
    let known_hosts = first.dir.join("changed_known_hosts");
    known_hosts_of(&known_hosts, &[&first, &second]);
    let old = first.host_key_fingerprint();
    first.rotate_host_key();
    let config = config(&first).with_known_hosts(known_hosts);
    let executor = SshExecutor::new(Arc::new(two_hops(&first, &second)), config);
    let check = executor.check("host:middle").await;
    let error = check.outcome.unwrap_err().into_exec_error("host:middle");
    assert_eq!(
        error,
        ExecError::HostKeyMismatch {
            host: "host:edge".into(),
            expected: old,
            actual: first.host_key_fingerprint(),
        }
    );
    assert_eq!(second.accepted_logins(), 0);
}
