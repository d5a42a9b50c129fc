//! The real `nomos-server` binary killed with `kill -9` and stopped with SIGTERM while it
//! works (EXEC-8, TURN-11): a local command dies with it, a remote one is stopped at the
//! next start, the execution says its outcome is unknown, a fan-out's queued hosts are
//! cancelled unrun, and no turn is left open.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nomos_core::SessionId;
use nomos_core::event::DomainEvent;
use nomos_core::ports::store::Store;
use nomos_core::sweep::{TURN_INTERRUPTED_BY_RESTART, TURN_INTERRUPTED_BY_SHUTDOWN};
use nomos_test_support::sshd::{Sshd, processes_matching};
use serde_json::{Value, json};

/// A running server: the process, its base URL and its token.
struct Running {
    child: Child,
    base: String,
    token: String,
    _stdout: BufReader<std::process::ChildStdout>,
}

/// Starts the server on `dir` (data in `dir/data`) with extra environment variables and
/// waits until it serves (the start-up reconcile runs before that).
fn start(dir: &Path, env: &[(&str, String)]) -> Running {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-server"));
    command
        .current_dir(dir)
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .env("RUST_LOG", "warn")
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, _) in std::env::vars() {
        if name.starts_with("NOMOS_") {
            command.env_remove(name);
        }
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    // "Nomos is running. Open http://HOST:PORT/#token=T" or "Nomos is running on http://HOST:PORT/".
    let url = line.trim().rsplit(' ').next().unwrap();
    let base = url
        .split("/#")
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    let token = std::fs::read_to_string(dir.join("data/operator-token")).unwrap();
    Running {
        child,
        base,
        token: token.trim().to_owned(),
        _stdout: stdout,
    }
}

impl Running {
    fn kill_9(mut self) {
        let status = Command::new("kill")
            .args(["-KILL", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.child.wait().unwrap();
    }

    fn terminate(mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = self.child.wait().unwrap();
        assert!(exit.success(), "{exit:?}");
    }

    async fn chat(&self, http: &reqwest::Client, text: &str) -> String {
        let session: Value = http
            .post(format!("{}/api/sessions", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = session["id"].as_str().unwrap().to_owned();
        let accepted = http
            .post(format!("{}/api/sessions/{id}/messages", self.base))
            .bearer_auth(&self.token)
            .json(&json!({ "text": text }))
            .send()
            .await
            .unwrap();
        assert_eq!(accepted.status(), 202);
        id
    }

    async fn executions(&self, http: &reqwest::Client, id: &str) -> Vec<Value> {
        let list: Value = http
            .get(format!("{}/api/sessions/{id}/executions", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        list.as_array().unwrap().clone()
    }
}

/// Waits up to `bound` for `done`.
async fn wait_for(bound: Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < bound {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done()
}

/// The errors of the session's `turn.done` events, read from the database file.
async fn turn_dones(dir: &Path, id: &str) -> Vec<Option<String>> {
    let store =
        nomos_sqlite::SqliteStore::open_existing(dir.join("data/nomos.db").to_str().unwrap())
            .await
            .unwrap();
    let id = SessionId(id.parse().unwrap());
    let events = store.events_after(Some(id), 0, 10_000).await.unwrap();
    let started = events
        .iter()
        .filter(|r| matches!(r.event, DomainEvent::TurnStarted { .. }))
        .count();
    let dones: Vec<Option<String>> = events
        .into_iter()
        .filter_map(|r| match r.event {
            DomainEvent::TurnDone { error, .. } => Some(error),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        dones.len(),
        "every turn.started has its turn.done: {dones:?}"
    );
    dones
}

fn run_script(dir: &Path, host: &str, command: &str) -> std::path::PathBuf {
    let script = dir.join("replies.yaml");
    std::fs::write(
        &script,
        format!(
            "- tool_calls:\n    - name: run\n      arguments: {{host: \"{host}\", command: \"{command}\"}}\n- text: \"never reached\"\n"
        ),
    )
    .unwrap();
    script
}

/// Kills the server while `command` runs on `host`, restarts it, and checks what the
/// restart left: nothing of the command running, the execution's outcome unknown, the
/// turn closed. `needle` finds the command's processes.
async fn kill_mid_command(dir: &Path, env: Vec<(&str, String)>, host: &str, needle: &str) {
    let command = format!("{needle}; echo finished");
    let script = run_script(dir, host, &command);
    let mut env = env;
    env.push(("NOMOS_MODEL_SCRIPT", script.display().to_string()));
    let http = nomos_llm::tls::http_client();
    let server = start(dir, &env);
    let id = server.chat(&http, "run it").await;
    assert!(
        wait_for(Duration::from_secs(20), || !processes_matching(needle)
            .is_empty())
        .await,
        "`{needle}` never started"
    );
    server.kill_9();
    let shell = format!("-c {command}");
    if host == "local" {
        // The shell dies with the server, at once (its parent-death signal).
        assert!(
            wait_for(Duration::from_secs(5), || processes_matching(&shell)
                .is_empty())
            .await,
            "the shell of `{command}` outlived the server"
        );
        // And so does the rest of its process group, without waiting for a restart.
        assert!(
            wait_for(Duration::from_secs(5), || processes_matching(needle)
                .is_empty())
            .await,
            "`{needle}` outlived the server"
        );
    } else {
        // sshd lets a command run on when its connection goes: only the clean-up stops it.
        assert!(
            !processes_matching(needle).is_empty(),
            "`{needle}` should still run on the host until the restart stops it"
        );
    }

    let server = start(dir, &env);
    assert!(
        processes_matching(needle).is_empty(),
        "`{needle}` still runs after the restart"
    );
    let executions = server.executions(&http, &id).await;
    assert_eq!(executions.len(), 1, "{executions:?}");
    assert_eq!(executions[0]["status"], "failed");
    let error = executions[0]["error"].as_str().unwrap();
    assert!(error.starts_with("interrupted: outcome unknown"), "{error}");
    assert!(!error.contains("did not run"), "{error}");
    assert_eq!(
        turn_dones(dir, &id).await,
        vec![Some(TURN_INTERRUPTED_BY_RESTART.to_owned())]
    );
    server.terminate();
}

// rule: EXEC-8
// rule: TURN-11
#[tokio::test]
async fn kill_9_mid_local_command_leaves_nothing_running_and_reports_the_outcome_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let needle = format!("sleep 3101.{}", std::process::id());
    kill_mid_command(dir.path(), Vec::new(), "local", &needle).await;
}

// rule: EXEC-8
// rule: TURN-11
#[tokio::test]
async fn kill_9_mid_remote_command_stops_it_at_the_next_start_and_reports_the_outcome_unknown() {
    let sshd = Sshd::start();
    let dir = tempfile::tempdir().unwrap();
    let env = sshd.server_env(dir.path());
    let needle = format!("sleep 3102.{}", std::process::id());
    kill_mid_command(dir.path(), env, "host:loopback", &needle).await;
}

// rule: TURN-11
#[tokio::test]
async fn sigterm_mid_model_reply_ends_the_turn_it_interrupts() {
    let model =
        nomos_test_support::trickle::TricklingModel::start(Duration::from_millis(100)).await;
    let dir = tempfile::tempdir().unwrap();
    let env = vec![
        ("NOMOS_LLM_BASE_URL", model.base_url()),
        ("NOMOS_LLM_MODEL", "trickle".to_owned()),
    ];
    let http = nomos_llm::tls::http_client();
    let server = start(dir.path(), &env);
    let id = server.chat(&http, "hello").await;
    assert!(
        wait_for(Duration::from_secs(10), || model.n_requests() > 0).await,
        "the model was never asked"
    );
    let terminated = tokio::task::spawn_blocking(move || server.terminate());
    terminated.await.unwrap();
    assert_eq!(
        turn_dones(dir.path(), &id).await,
        vec![Some(TURN_INTERRUPTED_BY_SHUTDOWN.to_owned())]
    );
}

// rule: EXEC-3
// rule: FLEET-2
// rule: TURN-11
#[tokio::test]
async fn kill_9_mid_fanout_cancels_its_queued_hosts_at_the_next_start_and_none_of_them_runs() {
    let sshd = Sshd::start();
    let dir = tempfile::tempdir().unwrap();
    let mut env = sshd.server_env(dir.path());
    // Four inventory hosts tagged `fleet`, all this test's sshd.
    let inventory: String = (1..=4)
        .map(|n| {
            format!(
                "[[host]]\nslug = \"host:fleet-{n}\"\naddress = \"127.0.0.1\"\nport = {}\nuser = \"root\"\nkey_file = \"{}\"\ntags = [\"fleet\"]\n\n",
                sshd.port,
                sshd.client_key_path.display()
            )
        })
        .collect();
    std::fs::write(dir.path().join("inventory.toml"), inventory).unwrap();
    let needle = format!("sleep 3103.{}", std::process::id());
    // One host at a time: the first runs, the other three wait in the fan-out's queue.
    let script = dir.path().join("replies.yaml");
    std::fs::write(
        &script,
        format!(
            "- tool_calls:\n    - name: run\n      arguments: {{host: \"tag:fleet\", command: \"{needle}\", max_parallel: 1}}\n- text: \"never reached\"\n"
        ),
    )
    .unwrap();
    env.push(("NOMOS_MODEL_SCRIPT", script.display().to_string()));
    let http = nomos_llm::tls::http_client();
    let server = start(dir.path(), &env);
    let id = server.chat(&http, "run it on the fleet").await;
    assert!(
        wait_for(Duration::from_secs(20), || !processes_matching(&needle)
            .is_empty())
        .await,
        "`{needle}` never started"
    );
    let mut statuses: Vec<String> = server
        .executions(&http, &id)
        .await
        .iter()
        .map(|e| e["status"].as_str().unwrap().to_owned())
        .collect();
    statuses.sort();
    assert_eq!(statuses, ["approved", "approved", "approved", "running"]);
    server.kill_9();

    // The start-up reconcile settles the whole fan-out before the server serves.
    let server = start(dir.path(), &env);
    let executions = server.executions(&http, &id).await;
    let failed: Vec<&Value> = executions
        .iter()
        .filter(|e| e["status"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{executions:?}");
    let error = failed[0]["error"].as_str().unwrap();
    assert!(error.starts_with("interrupted: outcome unknown"), "{error}");
    let cancelled: Vec<&Value> = executions
        .iter()
        .filter(|e| e["status"] == "cancelled")
        .collect();
    assert_eq!(cancelled.len(), 3, "{executions:?}");
    for execution in &cancelled {
        assert_eq!(
            execution["error"].as_str(),
            Some(nomos_core::sweep::QUEUED_AT_RESTART_REASON),
            "{execution}"
        );
        assert!(execution["started_at"].is_null(), "{execution}");
    }
    assert!(
        processes_matching(&needle).is_empty(),
        "`{needle}` still runs after the restart"
    );
    assert_eq!(
        turn_dones(dir.path(), &id).await,
        vec![Some(TURN_INTERRUPTED_BY_RESTART.to_owned())]
    );
    // The session is told once which hosts never started.
    let store = nomos_sqlite::SqliteStore::open_existing(
        dir.path().join("data/nomos.db").to_str().unwrap(),
    )
    .await
    .unwrap();
    let notes: Vec<String> = store
        .messages(SessionId(id.parse().unwrap()))
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .filter(|c| c.contains("never started and did not run"))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("3 of its 4 hosts"), "{}", notes[0]);
    server.terminate();
}
