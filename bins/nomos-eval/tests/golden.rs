//! The golden runner's command line: exit status 0, 1 or 2, JSON and JUnit outputs
//! (EVAL-3), run as the real binary.

// Helpers outside #[test] functions panic on setup failures, like the tests do.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn eval() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nomos-eval"));
    cmd.env_remove("RUST_BACKTRACE");
    cmd
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

// rule: EVAL-3, EVAL-2
#[test]
fn shipped_manifest_exits_zero_and_writes_junit() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("golden.xml");
    let manifest = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../../evals/golden.yaml");
    let out = eval()
        .arg("--manifest")
        .arg(&manifest)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    let xml = std::fs::read_to_string(junit).unwrap();
    assert!(xml.contains("failures=\"0\""), "{xml}");
}

// rule: EVAL-3
#[test]
fn failing_case_exits_one_and_json_names_the_failure() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write(
        dir.path(),
        "m.yaml",
        "cases:\n  - name: wrong\n    steps:\n      - say: hi\n        model: [{text: hello}]\n    expect: {status: failed}\n",
    );
    let out = eval()
        .arg("--manifest")
        .arg(&manifest)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["cases"][0]["name"], "wrong");
    assert_eq!(json["cases"][0]["result"], "fail");
    assert_eq!(
        json["cases"][0]["failures"][0],
        "status: expected failed, got done"
    );
}

// rule: EVAL-1
#[test]
fn malformed_manifest_exits_two_naming_the_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write(
        dir.path(),
        "bad.yaml",
        "cases:\n  - name: x\n    stepz: []\n",
    );
    let out = eval().arg("--manifest").arg(&manifest).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown field `stepz`") && stderr.contains("line 3"),
        "{stderr}"
    );
}

fn exit_two(args: &[&str], manifest_text: &str, expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write(dir.path(), "m.yaml", manifest_text);
    let out = eval()
        .env_remove("NOMOS_LLM_BASE_URL")
        .env_remove("NOMOS_LLM_MODEL")
        .arg("--manifest")
        .arg(&manifest)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(expected), "{stderr}");
}

const ONE_CASE: &str = "cases:\n  - name: c\n    tags: [read]\n    steps:\n      - say: hi\n        model: [{text: hello}]\n";

// rule: EVAL-5
#[test]
fn a_tag_that_selects_nothing_exits_two() {
    exit_two(&["--tag", "nope"], ONE_CASE, "--tag nope: no case in");
}

// rule: EVAL-5
#[test]
fn a_real_model_without_an_endpoint_exits_two_with_how_to_name_one() {
    exit_two(
        &["--model", "openai"],
        ONE_CASE,
        "--model openai needs an endpoint: set NOMOS_LLM_BASE_URL",
    );
}

// rule: EVAL-5
#[test]
fn an_assertion_on_an_unknown_tool_exits_two() {
    exit_two(
        &[],
        "cases:\n  - name: c\n    steps: [{say: hi}]\n    expect: {tool_calls: {run_command: 0}}\n",
        "unknown tool `run_command`",
    );
}

// rule: EVAL-4
#[test]
fn repeat_reports_each_cases_pass_rate_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write(dir.path(), "m.yaml", ONE_CASE);
    let out = eval()
        .arg("--manifest")
        .arg(&manifest)
        .args(["--repeat", "3", "--min-pass-rate", "0.5", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["cases"][0]["runs"], 3);
    assert_eq!(json["cases"][0]["pass_rate"], 1.0);
}
