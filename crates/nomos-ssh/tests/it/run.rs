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
#[tokio::test]
async fn command_string_reaches_the_login_shell_unchanged() {
    let sshd = Sshd::shared_or_start();
    let command = r#"printf '%s|' "a b" '$HOME' "it's" \*; echo; echo "$0""#;
    let output = executor(&sshd)
        .run(HOST, command, limits(10_000))
        .await
        .unwrap();
    let mut lines = output.stdout.lines();
    assert_eq!(lines.next(), Some("a b|$HOME|it's|*|"));
    // The server runs `$SHELL -c STRING`; $0 is that shell.
    let shell = lines.next().unwrap_or_default();
    assert!(shell.ends_with("sh"), "$0 was {shell:?}");
    assert_eq!(output.stderr, "");
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
