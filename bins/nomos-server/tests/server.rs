//! Starts the real `nomos-server` binary with a temporary data directory and no
//! configuration, reads the generated token, chats with the demo model, and stops it with
//! SIGTERM.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[tokio::test]
async fn the_binary_starts_without_configuration_and_chats_with_the_demo_model() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-server"));
    command
        .current_dir(dir.path())
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, _) in std::env::vars() {
        if name.starts_with("NOMOS_") {
            command.env_remove(name);
        }
    }
    let mut child = command.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    // "Nomos is running. Open http://127.0.0.1:PORT/#token=TOKEN"
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    let (base, printed) = url
        .split_once("/#token=")
        .expect("the URL carries the token");
    let token = std::fs::read_to_string(data.join("operator-token")).unwrap();
    assert_eq!(printed, token.trim(), "the printed token is the stored one");

    let http = nomos_llm::tls::http_client();
    let health = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let unauthorized = http
        .get(format!("{base}/api/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorized.status(), 401);

    let info: Value = get_json(&http, format!("{base}/api/info"), printed).await;
    assert_eq!(info["demo"], true);
    assert!(info["notice"].as_str().unwrap().contains("Demo mode"));

    let id = start_chat(&http, base, printed, "how is the host doing?").await;
    let id = id.as_str();

    // The demo sets a goal, runs `uptime` and `df -h` on `local` and completes the task.
    let started = Instant::now();
    let mut status = String::new();
    while started.elapsed() < Duration::from_secs(30) {
        let session: Value = get_json(&http, format!("{base}/api/sessions/{id}"), printed).await;
        status = session["status"].as_str().unwrap().to_owned();
        if status == "done" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, "done");
    let transcript: Value = get_json(
        &http,
        format!("{base}/api/sessions/{id}/transcript"),
        printed,
    )
    .await;
    let texts: Vec<&str> = transcript
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(texts.iter().any(|t| t.contains("demo model")), "{texts:?}");

    // SIGTERM: the server drains and exits cleanly.
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let exit = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn an_invalid_configuration_stops_start_up_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("nomos.toml"),
        "listen = \"127.0.0.1:0\"\nlistn = 1\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_nomos-server"))
        .current_dir(dir.path())
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("listn"), "{stderr}");
    assert!(stderr.contains("line 2"), "{stderr}");
}

#[test]
fn running_without_auth_on_a_public_address_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_nomos-server"))
        .current_dir(dir.path())
        .args(["--no-auth", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("loopback"), "{stderr}");
}

fn server_command(dir: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-server"));
    command
        .current_dir(dir)
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .env("RUST_LOG", "warn")
        .env_remove("RUST_BACKTRACE");
    for (name, _) in std::env::vars() {
        if name.starts_with("NOMOS_") {
            command.env_remove(name);
        }
    }
    command
}

#[tokio::test]
async fn a_model_script_answers_instead_of_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("replies.yaml");
    std::fs::write(&script, "- text: \"scripted hello\"\n").unwrap();
    let mut child = server_command(dir.path())
        .env("NOMOS_MODEL_SCRIPT", &script)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    let (base, token) = url
        .split_once("/#token=")
        .expect("the URL carries the token");

    // Public: no token needed to learn the model.
    let http = nomos_llm::tls::http_client();
    let info: Value = http
        .get(format!("{base}/api/info"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(info["model"], "stub");
    assert_eq!(info["demo"], false);
    assert!(info["notice"].is_null(), "{info}");

    let id = start_chat(&http, base, token, "hello?").await;
    let id = id.as_str();
    let started = Instant::now();
    let mut texts = Vec::new();
    while started.elapsed() < Duration::from_secs(30) {
        let transcript: Value =
            get_json(&http, format!("{base}/api/sessions/{id}/transcript"), token).await;
        texts = transcript
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["content"].as_str().map(str::to_owned))
            .collect();
        if texts.iter().any(|t| t == "scripted hello") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(texts.iter().any(|t| t == "scripted hello"), "{texts:?}");

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let exit = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn a_bad_model_script_stops_start_up_naming_the_file_and_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("broken.yaml");
    std::fs::write(&script, "- text: [unclosed\n").unwrap();
    std::fs::write(
        dir.path().join("nomos.toml"),
        format!("[model]\nscript = {:?}\n", script.display().to_string()),
    )
    .unwrap();
    let output = server_command(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("model script"), "{stderr}");
    assert!(stderr.contains("broken.yaml"), "{stderr}");
    assert!(stderr.contains("not valid"), "{stderr}");

    let missing = dir.path().join("missing.yaml");
    let output = server_command(dir.path())
        .env("NOMOS_MODEL_SCRIPT", &missing)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("missing.yaml"), "{stderr}");
    assert!(stderr.contains("No such file"), "{stderr}");
}

/// GETs a JSON document with a bearer token.
async fn get_json(http: &reqwest::Client, url: String, token: &str) -> Value {
    http.get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Creates a session, posts `text` to it (202: the turn runs in the background) and
/// returns the session's id.
async fn start_chat(http: &reqwest::Client, base: &str, token: &str, text: &str) -> String {
    let session: Value = http
        .post(format!("{base}/api/sessions"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = session["id"].as_str().unwrap().to_owned();
    let accepted = http
        .post(format!("{base}/api/sessions/{id}/messages"))
        .bearer_auth(token)
        .json(&json!({ "text": text }))
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 202);
    id
}
