//! The operator's commands of the real binary: `check-config` (exit 0 valid, 2 naming what
//! is wrong) and `hosts check` against a loopback sshd (reachability, auth method, host
//! key fingerprint and trust; `--trust-new` records unknown keys after showing them).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use nomos_test_support::sshd::Sshd;

fn server(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-server"));
    command
        .current_dir(dir)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("SSH_AUTH_SOCK")
        .env("RUST_LOG", "warn");
    for (name, _) in std::env::vars() {
        if name.starts_with("NOMOS_") {
            command.env_remove(name);
        }
    }
    command
}

fn run(dir: &Path, args: &[&str]) -> Output {
    server(dir, args).output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A nomos.toml pointing at `inventory` and `known_hosts`, in `dir`.
fn config_with(dir: &Path, inventory: &str, known_hosts: &Path, extra: &str) {
    std::fs::write(dir.join("inventory.toml"), inventory).unwrap();
    std::fs::write(
        dir.join("nomos.toml"),
        format!(
            "data_dir = \"data\"\ninventory = \"inventory.toml\"\nknown_hosts = {:?}\n{extra}",
            known_hosts.display().to_string()
        ),
    )
    .unwrap();
}

fn loopback_inventory(sshd: &Sshd, key_fields: &str) -> String {
    format!(
        "[[host]]\nslug = \"local\"\n\
         [[host]]\nslug = \"host:loopback\"\naddress = \"127.0.0.1\"\nport = {}\nuser = \"root\"\n{key_fields}",
        sshd.port
    )
}

#[test]
fn check_config_accepts_the_example_files_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../..");
    let example = root.join("nomos.example.toml");
    let inventory = root.join("fixtures/inventory.example.toml");
    let output = server(
        dir.path(),
        &["check-config", "--config", example.to_str().unwrap()],
    )
    .env("NOMOS_INVENTORY", &inventory)
    .output()
    .unwrap();
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}{}", stderr(&output));
    assert!(text.contains("ok     inventory"), "{text}");
    assert!(
        text.contains("3 host(s): local, host:bastion, vm:db"),
        "{text}"
    );
    assert!(text.contains("the scripted demo model answers"), "{text}");
    assert!(text.ends_with("configuration is valid\n"), "{text}");
    // Nothing was started or created.
    assert!(!dir.path().join("data").exists());
}

#[test]
fn check_config_names_every_part_that_is_wrong_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("inventory.toml"),
        "[[host]]\nslug = \"vm:db\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("policy.toml"), "this is = not a policy [\n").unwrap();
    std::fs::write(dir.path().join("replies.yaml"), "- [unclosed\n").unwrap();
    std::fs::write(
        dir.path().join("nomos.toml"),
        "inventory = \"inventory.toml\"\npolicy_file = \"policy.toml\"\n\
         [model]\nscript = \"replies.yaml\"\n",
    )
    .unwrap();
    let output = run(dir.path(), &["check-config"]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("error  inventory      loading the inventory: inventory.toml: host `vm:db`: missing address"),
        "{text}"
    );
    assert!(text.contains("error  policy         "), "{text}");
    assert!(text.contains("policy.toml"), "{text}");
    assert!(
        text.contains("error  model          loading the model script"),
        "{text}"
    );
    assert!(text.contains("ok     configuration  nomos.toml"), "{text}");
    assert!(stderr(&output).contains("3 part(s)"), "{}", stderr(&output));
}

#[test]
fn check_config_exits_2_naming_a_bad_key_before_anything_else() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("nomos.toml"), "log_format = \"xml\"\n").unwrap();
    let output = run(dir.path(), &["check-config"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("invalid log_format = \"xml\": expected text or json"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn hosts_check_shows_an_unknown_key_then_trust_new_records_it_and_it_is_trusted() {
    let sshd = Sshd::start();
    let dir = tempfile::tempdir().unwrap();
    let known_hosts = dir.path().join("data/known_hosts");
    let key = format!(
        "key_file = {:?}\n",
        sshd.client_key_path.display().to_string()
    );
    config_with(
        dir.path(),
        &loopback_inventory(&sshd, &key),
        &known_hosts,
        "",
    );
    let fingerprint = sshd.host_key_fingerprint();

    let refused = run(dir.path(), &["hosts", "check"]);
    let text = stdout(&refused);
    assert_eq!(refused.status.code(), Some(1), "{text}{}", stderr(&refused));
    assert!(
        text.contains("local        commands run on this machine"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "host:loopback            unreachable  root@127.0.0.1:{}",
            sshd.port
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("host key {fingerprint} NOT TRUSTED")),
        "{text}"
    );
    assert!(text.contains("hosts check --trust-new"), "{text}");
    assert!(!known_hosts.exists(), "a plain check recorded a key");
    assert_eq!(sshd.accepted_logins(), 0);

    let trusted = run(dir.path(), &["hosts", "check", "--trust-new"]);
    let text = stdout(&trusted);
    assert_eq!(trusted.status.code(), Some(0), "{text}{}", stderr(&trusted));
    let shown = text
        .find(&format!("host key {fingerprint} NOT TRUSTED"))
        .unwrap();
    let recorded = text
        .find(&format!("recorded host key {fingerprint} of host:loopback"))
        .unwrap();
    assert!(
        shown < recorded,
        "the fingerprint is shown before it is recorded: {text}"
    );
    assert!(
        text.contains(&format!("host key {fingerprint} trusted")),
        "{text}"
    );
    let line = std::fs::read_to_string(&known_hosts).unwrap();
    assert!(
        line.trim_start()
            .starts_with(&format!("[127.0.0.1]:{} ssh-ed25519 ", sshd.port)),
        "{line}"
    );

    let again = run(dir.path(), &["hosts", "check"]);
    let text = stdout(&again);
    assert_eq!(again.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!(
            "reachable    root@127.0.0.1:{}; auth key {}; host key {fingerprint} trusted",
            sshd.port,
            sshd.client_key_path.display()
        )),
        "{text}"
    );
    assert!(text.ends_with("all hosts reachable\n"), "{text}");
}

#[test]
fn hosts_check_unlocks_a_key_with_the_passphrase_from_the_named_variable() {
    let sshd = Sshd::start();
    let key = sshd.dir.join("locked_ed25519");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "open sesame", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(made.success());
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let authorized = std::fs::read_to_string(sshd.authorized_keys_path()).unwrap();
    std::fs::write(sshd.authorized_keys_path(), authorized + &public).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fields = format!(
        "key_file = {:?}\npassphrase_env = \"NOMOS_TEST_KEY_PASSPHRASE\"\n",
        key.display().to_string()
    );
    config_with(
        dir.path(),
        &loopback_inventory(&sshd, &fields),
        &sshd.known_hosts_path,
        "",
    );

    let output = server(dir.path(), &["hosts", "check"])
        .env("NOMOS_TEST_KEY_PASSPHRASE", "open sesame")
        .output()
        .unwrap();
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}{}", stderr(&output));
    assert!(
        text.contains(&format!("auth key {} (with passphrase)", key.display())),
        "{text}"
    );

    let missing = run(dir.path(), &["hosts", "check"]);
    let text = stdout(&missing);
    assert_eq!(missing.status.code(), Some(1), "{text}");
    assert!(
        text.contains("its passphrase_env variable NOMOS_TEST_KEY_PASSPHRASE is not set"),
        "{text}"
    );
}

#[test]
fn the_first_start_makes_a_private_data_directory_database_and_token_and_logs_without_colour() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
    let mut child = server(
        dir.path(),
        &["--listen", "127.0.0.1:0", "--data-dir", "data"],
    )
    .env("RUST_LOG", "info")
    .stdout(std::process::Stdio::piped())
    .stderr(log)
    .spawn()
    .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("Nomos is running"), "{line}");
    let mode = |name: &str| {
        std::fs::metadata(dir.path().join("data").join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    let modes = [mode(""), mode("nomos.db"), mode("operator-token")];
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(modes, [0o700, 0o600, 0o600]);
    // The log is a file, not a terminal: no colour codes in it.
    let text = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    assert!(text.contains("serving"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
}

#[test]
fn trust_new_reaches_a_host_behind_a_jump_host_once_the_jump_host_is_trusted() {
    let edge = Sshd::start();
    let inner = Sshd::start();
    let public = std::fs::read_to_string(edge.client_key_path.with_extension("pub")).unwrap();
    let authorized = std::fs::read_to_string(inner.authorized_keys_path()).unwrap();
    std::fs::write(inner.authorized_keys_path(), authorized + &public).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let known_hosts = dir.path().join("known_hosts");
    let inventory = format!(
        "[defaults]\nuser = \"root\"\nkey_file = {:?}\n\
         [[host]]\nslug = \"host:edge\"\naddress = \"127.0.0.1\"\nport = {}\n\
         [[host]]\nslug = \"vm:inner\"\naddress = \"127.0.0.1\"\nport = {}\njump = \"host:edge\"\n",
        edge.client_key_path.display().to_string(),
        edge.port,
        inner.port
    );
    config_with(dir.path(), &inventory, &known_hosts, "");

    let output = run(dir.path(), &["hosts", "check", "--trust-new"]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}{}", stderr(&output));
    let edge_recorded = text
        .find(&format!(
            "recorded host key {} of host:edge",
            edge.host_key_fingerprint()
        ))
        .unwrap();
    let inner_recorded = text
        .find(&format!(
            "recorded host key {} of vm:inner",
            inner.host_key_fingerprint()
        ))
        .unwrap();
    assert!(edge_recorded < inner_recorded, "{text}");
    assert!(text.contains(" via host:edge; auth key "), "{text}");
    assert!(text.ends_with("all hosts reachable\n"), "{text}");
    let recorded = std::fs::read_to_string(&known_hosts).unwrap();
    assert_eq!(
        recorded.lines().filter(|l| !l.is_empty()).count(),
        2,
        "{recorded}"
    );
}
