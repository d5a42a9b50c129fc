//! The tour of demo mode, end to end against the real binary: the operator takes the tour,
//! approves its plan (whose `sed -i` shows its diff), approves the deletion of the old logs on
//! its own card, and the task completes; every file it changed is under `<data>/demo/`, and
//! nothing else in the data directory, the working directory or `HOME` changed.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// What a tree of files looks like: each path (relative) with its kind, mode, mtime and
/// content.
type Snapshot = BTreeMap<PathBuf, (String, u32, i64, i64, Vec<u8>)>;

fn snapshot(root: &Path, skip: Option<&Path>) -> Snapshot {
    let mut out = Snapshot::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if Some(path.as_path()) == skip {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_owned();
            let (kind, content) = if meta.is_dir() {
                dirs.push(path.clone());
                ("dir", Vec::new())
            } else if meta.is_file() {
                ("file", std::fs::read(&path).unwrap())
            } else {
                ("other", Vec::new())
            };
            out.insert(
                rel,
                (
                    kind.to_owned(),
                    meta.mode(),
                    meta.mtime(),
                    meta.mtime_nsec(),
                    content,
                ),
            );
        }
    }
    out
}

struct Server {
    child: Child,
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the binary in demo mode: no model, the database outside the data directory.
    fn start(work: &Path, data: &Path, home: &Path, database: &Path) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-server"));
        command
            .current_dir(work)
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data)
            .env("RUST_LOG", "warn")
            .env("HOME", home)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (name, _) in std::env::vars() {
            if name.starts_with("NOMOS_") {
                command.env_remove(name);
            }
        }
        command.env(
            "NOMOS_DATABASE_URL",
            format!("sqlite://{}?mode=rwc", database.display()),
        );
        let mut child = command.spawn().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let url = line.trim().rsplit(' ').next().unwrap().to_owned();
        let (base, token) = url
            .split_once("/#token=")
            .expect("the URL carries the token");
        Server {
            base: base.to_owned(),
            token: token.to_owned(),
            child,
            http: nomos_llm::tls::http_client(),
        }
    }

    async fn get(&self, route: &str) -> Value {
        let res = self
            .http
            .get(format!("{}{route}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success(), "GET {route}: {}", res.status());
        res.json().await.unwrap()
    }

    async fn post(&self, route: &str, body: Value) -> (u16, Value) {
        let res = self
            .http
            .post(format!("{}{route}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// Posts until the answer is not 409 (the turn that asked is still ending).
    async fn post_when_free(&self, route: &str, body: Value) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (status, answer) = self.post(route, body.clone()).await;
            if status != 409 || Instant::now() > deadline {
                assert!(
                    (200..300).contains(&status),
                    "POST {route}: {status} {answer}"
                );
                return answer;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn eventually<T>(&self, what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(found) = check().await {
                return found;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test]
async fn the_tour_runs_its_plan_and_card_and_touches_nothing_outside_data_demo() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let data = dir.path().join("data");
    let home = dir.path().join("home");
    let db_dir = dir.path().join("db");
    for d in [&work, &data, &home, &db_dir] {
        std::fs::create_dir_all(d).unwrap();
    }
    // Look-alikes of the sandbox where a relative path or a stray write would land.
    for root in [&work, &data, &home] {
        std::fs::create_dir_all(root.join("logs")).unwrap();
        std::fs::write(root.join("app.conf"), "workers = 2\n").unwrap();
        std::fs::write(root.join("logs/app.log.1"), "keep me\n").unwrap();
    }
    let server = Server::start(&work, &data, &home, &db_dir.join("nomos.db"));
    let demo = data.join("demo");
    let before = (
        snapshot(&data, Some(&demo)),
        snapshot(&work, None),
        snapshot(&home, None),
    );
    assert!(before.0.contains_key(Path::new("operator-token")));

    let info = server.get("/api/info").await;
    assert_eq!(info["demo"], true);
    let session = server.post("/api/sessions", json!({})).await.1;
    let id = session["id"].as_str().unwrap().to_owned();
    let (status, _) = server
        .post(
            &format!("/api/sessions/{id}/messages"),
            json!({"text": nomos_llm::TOUR_MESSAGE}),
        )
        .await;
    assert_eq!(status, 202);

    // The plan waits, with the declared commands and the sed's diff as its preview.
    let plan = server
        .eventually("the tour's plan", async || {
            let plan = server.get(&format!("/api/sessions/{id}/plan")).await;
            let steps = plan["steps"].as_array()?;
            // GATE-10: the sed's preview attaches in the commit after the proposal.
            let previewed = plan["steps"][0]["commands"][0]["preview"]["diff"].is_string();
            (steps.len() == 4 && previewed).then_some(plan)
        })
        .await;
    let declared: Vec<(String, String)> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["commands"].as_array().unwrap().clone())
        .map(|c| {
            (
                c["class"].as_str().unwrap().to_owned(),
                c["command"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let classes: Vec<&str> = declared.iter().map(|(class, _)| class.as_str()).collect();
    assert_eq!(
        classes,
        ["config_mutation", "config_mutation", "destructive"],
        "{declared:?}"
    );
    for (_, command) in &declared {
        assert!(command.contains(&demo.display().to_string()), "{command}");
    }
    let edit = &plan["steps"][0]["commands"][0];
    let diff = edit["preview"]["diff"].as_str().unwrap_or_default();
    assert!(
        diff.contains("-workers = 2") && diff.contains("+workers = 4"),
        "{edit}"
    );
    assert!(
        std::fs::read_to_string(demo.join("app.conf"))
            .unwrap()
            .contains("\nworkers = 2\n"),
        "nothing changes before the approval"
    );

    // Approve: the two declared changes run, and the rm waits on its own card.
    let generation = plan["generation"].as_u64().unwrap();
    let mut decision = json!({"generation": generation, "decision": "approve"});
    // GATE-4 (rev. 3): the digest of the plan shown, where the plan carries one.
    if let Some(digest) = plan["digest"].as_str() {
        decision["digest"] = json!(digest);
    }
    server
        .post_when_free(&format!("/api/sessions/{id}/plan/decision"), decision)
        .await;
    let approval = server
        .eventually("the deletion's card", async || {
            let approvals = server.get(&format!("/api/sessions/{id}/approvals")).await;
            approvals
                .as_array()?
                .iter()
                .find(|a| a["status"] == "pending")
                .cloned()
        })
        .await;
    assert_eq!(approval["class"], "destructive");
    assert!(
        approval["command"].as_str().unwrap().starts_with("rm "),
        "{approval}"
    );
    let config = std::fs::read_to_string(demo.join("app.conf")).unwrap();
    assert!(config.contains("\nworkers = 4\n"), "{config}");
    assert!(
        demo.join("logs/app.log.1").exists(),
        "not deleted before its approval"
    );

    let approval_id = approval["id"].as_str().unwrap();
    server
        .post_when_free(
            &format!("/api/approvals/{approval_id}/decision"),
            json!({"decision": "approve"}),
        )
        .await;
    let done = server
        .eventually("the task's end", async || {
            let session = server.get(&format!("/api/sessions/{id}")).await;
            (session["status"] == "done").then_some(session)
        })
        .await;
    assert!(
        done["summary"].as_str().unwrap().contains("4 workers"),
        "{done}"
    );

    // What the tour did, inside the sandbox.
    assert!(!demo.join("logs/app.log.1").exists());
    assert!(!demo.join("logs/app.log.2").exists());
    let log = std::fs::read_to_string(demo.join("logs/app.log")).unwrap();
    assert!(log.contains("restarted with 4 workers"), "{log}");
    let entity = server.get("/api/entities/demo-app").await;
    assert_eq!(entity["attributes"]["workers"], 4, "{entity}");

    // And nothing outside it.
    let after = (
        snapshot(&data, Some(&demo)),
        snapshot(&work, None),
        snapshot(&home, None),
    );
    assert_eq!(
        before.0, after.0,
        "the data directory outside demo/ changed"
    );
    assert_eq!(before.1, after.1, "the working directory changed");
    assert_eq!(before.2, after.2, "HOME changed");
}
