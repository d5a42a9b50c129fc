//! Running commands over SSH: output, exit status, caps, exact command strings.

use nomos_core::ports::exec::{ExecLimits, Executor};
use nomos_core::time::Span;
use nomos_test_support::sshd::Sshd;

use crate::{HOST, executor, limits};

#[tokio::test]
async fn command_output_and_exit_code_come_back() {
    let sshd = Sshd::shared_or_start();
    let output = executor(&sshd)
        .run(HOST, "echo out; echo err >&2; exit 7", limits(10_000))
        .await
        .unwrap();
    assert_eq!(output.stdout, "out\n");
    assert_eq!(output.stderr, "err\n");
    assert_eq!(output.exit_code, Some(7));
    assert_eq!(output.signal, None);
    assert_eq!((output.stdout_cut, output.stderr_cut), (0, 0));
}

#[tokio::test]
async fn a_command_killed_by_a_signal_reports_the_signal() {
    let sshd = Sshd::shared_or_start();
    let output = executor(&sshd)
        .run(HOST, "kill -TERM $$", limits(10_000))
        .await
        .unwrap();
    assert_eq!(output.signal.as_deref(), Some("TERM"));
    assert_eq!(output.exit_code, None);
}

// rule: EXEC-7
// rule: CLASSIFY-8
#[tokio::test]
async fn command_string_reaches_the_pinned_shell_unchanged() {
    let sshd = Sshd::shared_or_start();
    let command = r#"printf '%s|' "a b" '$HOME' "it's" \*; echo; echo "$0""#;
    let output = executor(&sshd)
        .run(HOST, command, limits(10_000))
        .await
        .unwrap();
    let mut lines = output.stdout.lines();
    assert_eq!(lines.next(), Some("a b|$HOME|it's|*|"));
    // The login shell (root's is bash here) only starts the pinned `/bin/sh`.
    assert_eq!(lines.next(), Some("/bin/sh"));
    assert_eq!(output.stderr, "");
}

// rule: CLASSIFY-9
#[tokio::test]
async fn every_pinned_shell_over_ssh_starts_with_git_optional_locks_off() {
    let sshd = Sshd::shared_or_start();
    for shell in [None, Some("bash"), Some("busybox")] {
        if shell == Some("busybox") && std::process::Command::new("busybox").output().is_err() {
            continue;
        }
        let output = pinned_executor(&sshd, shell)
            .run(HOST, r#"echo "[$GIT_OPTIONAL_LOCKS]""#, limits(10_000))
            .await
            .unwrap();
        assert_eq!(output.stdout, "[0]\n", "{shell:?}: {output:?}");
    }
}

/// The loopback host pinned to `shell` (or to nothing: `None`).
fn pinned_executor(sshd: &Sshd, shell: Option<&str>) -> nomos_ssh::SshExecutor {
    let line = shell.map_or(String::new(), |s| format!("shell = \"{s}\""));
    let text = format!(
        "[[host]]\nslug = \"{HOST}\"\naddress = \"127.0.0.1\"\nport = {port}\nuser = \"root\"\nkey_file = \"{key}\"\n{line}\n",
        port = sshd.port,
        key = sshd.client_key_path.display(),
    );
    let inventory = match nomos_ssh::Inventory::parse(&text, "pinned.toml") {
        Ok(inventory) => inventory,
        Err(error) => panic!("test inventory does not parse: {error}"),
    };
    nomos_ssh::SshExecutor::new(inventory.into(), crate::config(sshd))
}

// rule: CLASSIFY-8
#[test]
fn the_exec_request_names_the_pinned_shell_with_the_command_as_one_word() {
    use nomos_core::classify::Shell;
    use nomos_ssh::ssh::exec_request;
    assert_eq!(
        exec_request(Shell::Sh, "uptime"),
        "/usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/sh -c 'uptime'"
    );
    assert_eq!(
        exec_request(Shell::Sh, "echo 'a' {b,c}; ls"),
        r"/usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/sh -c 'echo '\''a'\'' {b,c}; ls'"
    );
    assert_eq!(
        exec_request(Shell::Bash, "id"),
        "/usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/bash -c 'id'"
    );
    assert_eq!(
        exec_request(Shell::Busybox, "id"),
        "/usr/bin/env GIT_OPTIONAL_LOCKS=0 busybox sh -c 'id'"
    );
}

// rule: CLASSIFY-8
#[tokio::test]
async fn a_login_shell_that_reads_the_command_otherwise_never_reads_it() {
    use nomos_core::ports::exec::Executor;
    let sshd = Sshd::shared_or_start();
    // root's login shell is bash, which would expand the braces and read `$'...'`; the
    // pinned POSIX sh (dash) reads both literally, as the classifier does by default.
    let command = r"echo {a,b} $'x'; echo $0";
    let default = pinned_executor(&sshd, None);
    assert_eq!(default.shell(HOST), nomos_core::classify::Shell::Sh);
    let output = default.run(HOST, command, limits(10_000)).await.unwrap();
    assert_eq!(output.stdout, "{a,b} $x\n/bin/sh\n", "{output:?}");
    // A host pinned to bash runs it under bash, and says so for the gate.
    let bash = pinned_executor(&sshd, Some("bash"));
    assert_eq!(bash.shell(HOST), nomos_core::classify::Shell::Bash);
    let output = bash.run(HOST, command, limits(10_000)).await.unwrap();
    assert_eq!(output.stdout, "a b x\n/bin/bash\n", "{output:?}");
}

// rule: EXEC-5
#[tokio::test]
async fn output_past_the_cap_is_cut_counted_and_drained() {
    let sshd = Sshd::shared_or_start();
    let command = "head -c 1000000 /dev/zero | tr '\\0' o; head -c 300000 /dev/zero | tr '\\0' e >&2; echo done >&2";
    let limits = ExecLimits {
        timeout: Span::from_secs(30),
        output_cap: 64 * 1024,
    };
    let output = executor(&sshd).run(HOST, command, limits).await.unwrap();
    assert_eq!(output.stdout.len(), 65_536);
    assert!(output.stdout.bytes().all(|b| b == b'o'));
    assert_eq!(output.stdout_cut, 1_000_000 - 65_536);
    assert_eq!(output.stderr.len(), 65_536);
    assert_eq!(output.stderr_cut, 300_005 - 65_536);
    // The command ran to its end: the remote side was never blocked by the cap.
    assert_eq!(output.exit_code, Some(0));
}

#[tokio::test]
async fn stdin_is_closed_so_a_reader_sees_end_of_file() {
    let sshd = Sshd::shared_or_start();
    let output = executor(&sshd)
        .run(HOST, "cat; echo after-cat", limits(10_000))
        .await
        .unwrap();
    assert_eq!(output.stdout, "after-cat\n");
}
