//! Runs the real `nomos-eval classify` binary over the shipped corpus and stdin.

// Test helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};

/// A fixture of the workspace, found at run time (a build reused from another checkout
/// must not read that checkout's files).
fn fixture(name: &str) -> String {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../../fixtures/classify")
    .join(name)
    .display()
    .to_string()
}

fn eval() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-eval"));
    command.env_remove("RUST_BACKTRACE");
    command
}

fn run_with_stdin(args: &[&str], input: &str) -> std::process::Output {
    let mut child = eval()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The binary may exit before reading its input (a bad policy): ignore a broken pipe.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}

// rule: CLASSIFY-1
#[test]
fn shipped_corpus_scores_one_hundred_percent() {
    let output = eval()
        .args(["classify", "--corpus", &fixture("corpus.tsv")])
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("accuracy: 100.00%"), "{stdout}");
    assert!(stdout.contains("expected \\ got"), "{stdout}");
}

#[test]
fn corpus_json_reports_counts_and_confusion() {
    let output = eval()
        .args(["classify", "--json", "--corpus", &fixture("corpus.tsv")])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["accuracy"], 1.0);
    assert!(report["total"].as_u64().unwrap() >= 400);
    assert_eq!(report["confusion"]["read_only"]["destructive"], 0);
    assert_eq!(report["misses"].as_array().unwrap().len(), 0);
}

#[test]
fn a_miss_exits_non_zero_and_names_its_line() {
    let dir = std::env::temp_dir().join(format!("nomos-eval-miss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let corpus = dir.join("corpus.tsv");
    std::fs::write(
        &corpus,
        "# labels\nread_only\tls\nread_only\trm -rf /tmp/x\n",
    )
    .unwrap();
    let output = eval()
        .args(["classify", "--corpus"])
        .arg(&corpus)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("miss: line 3: expected read_only, got destructive"),
        "{stdout}"
    );
    assert!(stdout.contains("accuracy: 50.00%"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_malformed_corpus_line_is_an_error_naming_the_line() {
    let dir = std::env::temp_dir().join(format!("nomos-eval-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let corpus = dir.join("corpus.tsv");
    std::fs::write(&corpus, "read_only\tls\nread_only ls -la\n").unwrap();
    let output = eval()
        .args(["classify", "--corpus"])
        .arg(&corpus)
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("line 2"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stdin_mode_prints_class_reason_and_command() {
    let output = run_with_stdin(&["classify", "-"], "ls -la\n\nrm -rf /tmp/x\nfrobnicate\n");
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0], "read_only\t`ls` only reads\tls -la");
    assert!(
        lines[1].starts_with("destructive\t`rm` deletes files\t"),
        "{stdout}"
    );
    assert_eq!(
        lines[2],
        "config_mutation\tunknown command `frobnicate`\tfrobnicate"
    );
}

// rule: GATE-8
#[test]
fn policy_applies_in_stdin_mode() {
    let output = run_with_stdin(
        &["classify", "--policy", &fixture("policy.example.toml"), "-"],
        "healthcheck --quick\n",
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.starts_with("read_only\t"), "{stdout}");
}

// rule: GATE-8
#[test]
fn a_broken_policy_stops_with_file_and_line() {
    let dir = std::env::temp_dir().join(format!("nomos-eval-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policy = dir.join("bad.toml");
    std::fs::write(&policy, "[[rule]]\nprefix = [\"bash\"]\nclass = \"read_only\"\nreason = \"x\"\nmatch = [\"bash -c ls\"]\n").unwrap();
    let output = run_with_stdin(
        &["classify", "--policy", policy.to_str().unwrap(), "-"],
        "ls\n",
    );
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.toml:1:"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn no_subcommand_prints_help_and_exits_2() {
    let output = eval().output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8(output.stdout)
            .unwrap()
            .contains("classify")
    );
}
