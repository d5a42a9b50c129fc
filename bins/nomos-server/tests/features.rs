//! The real binary with the optional parts it was built with: a setting that needs a part
//! it lacks stops start-up (exit 2) naming the setting and the `--features` to rebuild
//! with; a built-in one is accepted. Run with the default features too (the first build's
//! binary), as `scripts/test.sh` does.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

/// `nomos-server ARGS` in `dir` with `nomos.toml` holding `toml`, no `NOMOS_*` variables.
fn run(dir: &Path, toml: &str, args: &[&str]) -> Output {
    std::fs::write(dir.join("nomos.toml"), toml).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-server"));
    command
        .current_dir(dir)
        .args(["--data-dir"])
        .arg(dir.join("data"))
        .args(args)
        .env("RUST_LOG", "warn")
        .env_remove("RUST_BACKTRACE");
    for (name, _) in std::env::vars() {
        if name.starts_with("NOMOS_") {
            command.env_remove(name);
        }
    }
    command.output().unwrap()
}

fn assert_refused(output: &Output, setting: &str, feature: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{setting} needs ")),
        "names {setting}: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "rebuild it with the `{feature}` feature (cargo run --release -p nomos-server --features {feature})"
        )),
        "names the feature {feature}: {stderr}"
    );
}

#[test]
fn check_config_refuses_exactly_the_settings_of_the_parts_not_built_in() {
    let cases = [
        (
            "database_url = \"postgres://nomos:secret@localhost/nomos\"\n",
            "database_url",
            "postgres",
            cfg!(feature = "postgres"),
        ),
        (
            "[telemetry]\notlp_endpoint = \"http://127.0.0.1:4318\"\n",
            "telemetry.otlp_endpoint",
            "otlp",
            cfg!(feature = "otlp"),
        ),
        (
            "[auth]\nmode = \"oidc\"\n[auth.oidc]\nissuer = \"https://id.example\"\naudience = \"nomos\"\njwks_url = \"https://id.example/jwks\"\n",
            "auth.mode = \"oidc\"",
            "oidc",
            cfg!(feature = "oidc"),
        ),
    ];
    for (toml, setting, feature, built) in cases {
        let dir = tempfile::tempdir().unwrap();
        let output = run(dir.path(), toml, &["check-config"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains("secret"),
            "the password stays out: {stderr}"
        );
        if built {
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert_eq!(output.status.code(), Some(0), "{feature}: {stdout}{stderr}");
        } else {
            assert_refused(&output, setting, feature);
        }
    }
}

#[cfg(not(feature = "mcp"))]
#[test]
fn the_mcp_command_of_a_binary_without_mcp_names_the_feature() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(dir.path(), "", &["mcp"]);
    assert_refused(&output, "nomos-server mcp", "mcp");
}

#[cfg(not(feature = "mcp"))]
#[tokio::test]
async fn the_mcp_route_of_a_server_without_mcp_is_a_404_naming_the_feature() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-server"));
    command
        .current_dir(dir.path())
        .args(["--no-auth", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, _) in std::env::vars() {
        if name.starts_with("NOMOS_") {
            command.env_remove(name);
        }
    }
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // "Nomos is running on http://127.0.0.1:PORT/"
    let base = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .trim_end_matches('/');
    let response = nomos_llm::tls::http_client()
        .post(format!("{base}/mcp"))
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: serde_json::Value = response.json().await.unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 404);
    let message = body.to_string();
    assert!(
        message.contains("built without MCP") && message.contains("--features mcp"),
        "{message}"
    );
}
