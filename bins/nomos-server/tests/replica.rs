//! Several real `nomos-server` processes on one throwaway PostgreSQL (REPLICA-1..3): one
//! turn per session across processes, a process killed with `kill -9` closed by the others
//! (its fan-out's queued hosts cancelled unrun) and nothing of a live one touched, every
//! event heard by a client of any process, and a seeded soak of messages, decisions and
//! stops across three processes (`NOMOS_SOAK_SEED` replays its choices).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nomos_core::event::{DomainEvent, EventRecord};
use nomos_core::ports::store::Store;
use nomos_core::sweep::TURN_INTERRUPTED_BY_RESTART;
use nomos_core::{ExecutionStatus, SessionId};
use nomos_postgres::PgStore;
use nomos_test_support::sshd::{Sshd, processes_matching};
use serde_json::{Value, json};

/// How old a heartbeat may be in these tests before its process counts as gone.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(3);

/// One running server process.
struct Proc {
    child: Child,
    base: String,
    _stdout: BufReader<std::process::ChildStdout>,
}

/// What every process of a test shares: the database, and the files they read.
struct Cluster {
    dir: tempfile::TempDir,
    database_url: String,
    env: Vec<(&'static str, String)>,
    started: u32,
}

impl Cluster {
    /// A cluster whose processes sweep every `sweep_secs` seconds.
    async fn new(env: Vec<(&'static str, String)>, sweep_secs: u64) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("nomos.toml"),
            format!(
                "[sweep]\ninterval_secs = {sweep_secs}\nheartbeat_timeout_secs = {}\n",
                HEARTBEAT_TIMEOUT.as_secs()
            ),
        )
        .unwrap();
        Cluster {
            dir,
            database_url: nomos_test_support::postgres::fresh_database().await,
            env,
            started: 0,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A model script of `replies`, for the next process started.
    fn script(&self, name: &str, replies: &str) -> PathBuf {
        let path = self.path().join(format!("{name}.yaml"));
        std::fs::write(&path, replies).unwrap();
        path
    }

    /// Starts a process with its own data directory and `script`, and waits until it
    /// serves (its start-up reconcile has run by then).
    fn start(&mut self, script: &Path) -> Proc {
        self.started += 1;
        let data = self.path().join(format!("data-{}", self.started));
        let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-server"));
        command
            .current_dir(self.path())
            .args(["--no-auth", "--listen", "127.0.0.1:0", "--config"])
            .arg(self.path().join("nomos.toml"))
            .arg("--data-dir")
            .arg(&data)
            .env("RUST_LOG", "warn")
            .env_remove("RUST_BACKTRACE")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (name, _) in std::env::vars() {
            if name.starts_with("NOMOS_") {
                command.env_remove(name);
            }
        }
        command.env("NOMOS_DATABASE_URL", &self.database_url);
        command.env("NOMOS_MODEL_SCRIPT", script);
        for (name, value) in &self.env {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        // "Nomos is running on http://HOST:PORT/".
        let base = line
            .trim()
            .rsplit(' ')
            .next()
            .unwrap()
            .trim_end_matches('/')
            .to_owned();
        assert!(
            base.starts_with("http://"),
            "the server did not start: {line:?}"
        );
        Proc {
            child,
            base,
            _stdout: stdout,
        }
    }

    async fn store(&self) -> PgStore {
        PgStore::connect_without_migrating(&self.database_url)
            .await
            .unwrap()
    }
}

impl Proc {
    fn kill_9(&mut self) {
        let status = Command::new("kill")
            .args(["-KILL", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.child.wait().unwrap();
    }

    async fn create_session(&self, http: &reqwest::Client) -> String {
        let session: Value = http
            .post(format!("{}/api/sessions", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        session["id"].as_str().unwrap().to_owned()
    }

    async fn message(&self, http: &reqwest::Client, id: &str, text: &str) -> u16 {
        let response = http
            .post(format!("{}/api/sessions/{id}/messages", self.base))
            .json(&json!({ "text": text }))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        if status != 202 {
            let body = response.text().await.unwrap_or_default();
            eprintln!("{}: a message got {status}: {body}", self.base);
        }
        status
    }

    /// Follows the global event stream from now on, collecting each event's global
    /// position, kind, session and position in its session.
    async fn follow(&self, http: &reqwest::Client) -> Heard {
        let mut response = http
            .get(format!("{}/api/events", self.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let heard = Heard::default();
        let events = heard.events.clone();
        tokio::spawn(async move {
            let mut buffer = String::new();
            while let Ok(Some(chunk)) = response.chunk().await {
                buffer.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = buffer.find("\n\n") {
                    let block: String = buffer.drain(..end + 2).collect();
                    let mut id = None;
                    let mut kind = None;
                    let mut data: Option<Value> = None;
                    for line in block.lines() {
                        if let Some(v) = line.strip_prefix("id:") {
                            id = v.trim().parse::<i64>().ok();
                        } else if let Some(v) = line.strip_prefix("event:") {
                            kind = Some(v.trim().to_owned());
                        } else if let Some(v) = line.strip_prefix("data:") {
                            data = serde_json::from_str(v.trim()).ok();
                        }
                    }
                    if let (Some(id), Some(kind)) = (id, kind) {
                        let session = data
                            .as_ref()
                            .and_then(|d| d["session_id"].as_str())
                            .unwrap_or_default()
                            .to_owned();
                        let seq = data.as_ref().and_then(|d| d["seq"].as_i64()).unwrap_or(0);
                        events.lock().unwrap().push(HeardEvent {
                            id,
                            kind,
                            session,
                            seq,
                        });
                    }
                }
            }
        });
        heard
    }

    /// Posts `body` to `path`; the status and the body's text.
    async fn post(&self, http: &reqwest::Client, path: &str, body: Value) -> (u16, String) {
        let response = http
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    }

    /// The ids of the pending approvals, as this process reads them.
    async fn pending_approvals(&self, http: &reqwest::Client) -> Vec<String> {
        let list: Value = http
            .get(format!("{}/api/approvals", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        list.as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap().to_owned())
            .collect()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One event an SSE client heard.
#[derive(Clone, Debug)]
struct HeardEvent {
    id: i64,
    kind: String,
    session: String,
    seq: i64,
}

/// What one SSE client heard, in order of receipt.
#[derive(Clone, Default)]
struct Heard {
    events: Arc<Mutex<Vec<HeardEvent>>>,
}

impl Heard {
    fn count(&self, kind: &str) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.kind == kind)
            .count()
    }

    fn ids(&self) -> Vec<i64> {
        self.events.lock().unwrap().iter().map(|e| e.id).collect()
    }

    /// Each session's positions, in order of receipt.
    fn seqs_by_session(&self) -> BTreeMap<String, Vec<i64>> {
        let mut by: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for event in self.events.lock().unwrap().iter() {
            by.entry(event.session.clone()).or_default().push(event.seq);
        }
        by
    }
}

/// Waits up to `bound` for `done`.
async fn wait_for<F: std::future::Future<Output = bool>>(
    bound: Duration,
    mut done: impl FnMut() -> F,
) -> bool {
    let started = Instant::now();
    while started.elapsed() < bound {
        if done().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done().await
}

/// Every event in the database, in global order.
async fn all_events(store: &PgStore) -> Vec<EventRecord> {
    let mut all = Vec::new();
    loop {
        let after = all.last().map_or(0, |r: &EventRecord| r.global_seq);
        let page = store.events_after(None, after, 1000).await.unwrap();
        if page.is_empty() {
            return all;
        }
        all.extend(page);
    }
}

/// REPLICA-3: `client` hears every event committed after `before` once, in commit
/// order, without a gap. Waits until it has heard as many as the store held when asked,
/// then compares what it heard with the store's log up to the last event it heard (a
/// sweep may commit more meanwhile; those need not have arrived yet).
async fn assert_heard_every_event(client: &Heard, store: &PgStore, before: i64, label: &str) {
    let committed = all_events(store)
        .await
        .iter()
        .filter(|r| r.global_seq > before)
        .count();
    assert!(
        wait_for(Duration::from_secs(20), || {
            let client = client.clone();
            async move { client.ids().len() >= committed }
        })
        .await,
        "{label} heard {} of {committed} events",
        client.ids().len()
    );
    let heard = client.ids();
    let last = heard.last().copied().unwrap_or(before);
    let stored: Vec<i64> = all_events(store)
        .await
        .iter()
        .map(|r| r.global_seq)
        .filter(|seq| *seq > before && *seq <= last)
        .collect();
    assert_eq!(heard.len(), stored.len(), "{label}: every event once");
    assert_eq!(
        heard, stored,
        "{label}: in commit order, without gaps or duplicates"
    );
}

/// The session's events.
async fn session_events(store: &PgStore, id: &str) -> Vec<EventRecord> {
    let id = SessionId(id.parse().unwrap());
    store.events_after(Some(id), 0, 100_000).await.unwrap()
}

/// How many turns of the session have ended.
async fn turns_done(store: &PgStore, id: &str) -> usize {
    session_events(store, id)
        .await
        .iter()
        .filter(|r| matches!(r.event, DomainEvent::TurnDone { .. }))
        .count()
}

/// `n` copies of a turn that runs `command` on `host` and then answers.
fn run_then_answer(n: usize, host: &str, command: &str) -> String {
    let one = format!(
        "- tool_calls:\n    - name: run\n      arguments: {{host: \"{host}\", command: \"{command}\"}}\n- text: \"ran it\"\n"
    );
    one.repeat(n)
}

/// REPLICA checks every test ends with: in each session turns never interleave (a
/// `turn.started` only after the previous turn's `turn.done`), and no execution starts
/// running twice.
fn assert_no_interleaving_and_no_second_run(events: &[EventRecord]) {
    let mut open: HashMap<SessionId, bool> = HashMap::new();
    let mut runs: HashMap<nomos_core::ExecutionId, u32> = HashMap::new();
    for record in events {
        match &record.event {
            DomainEvent::TurnStarted { .. } => {
                let was_open = open.insert(record.session_id, true).unwrap_or(false);
                assert!(
                    !was_open,
                    "two turns interleave in session {}",
                    record.session_id
                );
            }
            DomainEvent::TurnDone { .. } => {
                open.insert(record.session_id, false);
            }
            DomainEvent::ExecutionStatusChanged {
                execution_id,
                status: ExecutionStatus::Running,
                ..
            } => *runs.entry(*execution_id).or_default() += 1,
            DomainEvent::ExecutionCreated {
                execution_id,
                status: ExecutionStatus::Running,
                ..
            } => *runs.entry(*execution_id).or_default() += 1,
            _ => {}
        }
    }
    let twice: Vec<_> = runs.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "executions run twice: {twice:?}");
}

// rule: REPLICA-1
#[tokio::test]
async fn a_message_to_a_session_busy_in_another_process_gets_409_and_only_one_turn_runs() {
    // A sweep holds each session it judges for a moment, and a message then gets 409 in
    // one process as well (TURN-8); these sweeps wait until the test is over.
    let mut cluster = Cluster::new(Vec::new(), 300).await;
    let script = run_then_answer(20, "local", "sleep 1");
    let a = cluster.start(&cluster.script("a", &script));
    let b = cluster.start(&cluster.script("b", &script));
    let http = nomos_llm::tls::http_client();
    let store = cluster.store().await;
    for round in 0..5 {
        let id = a.create_session(&http).await;
        let (to_a, to_b) = tokio::join!(
            a.message(&http, &id, "check it"),
            b.message(&http, &id, "check it")
        );
        let mut statuses = [to_a, to_b];
        statuses.sort();
        assert_eq!(statuses, [202, 409], "round {round}");
        assert!(
            wait_for(Duration::from_secs(30), || {
                let store = store.clone();
                let id = id.clone();
                async move { turns_done(&store, &id).await == 1 }
            })
            .await,
            "round {round}: the turn never ended"
        );
        // The session is free again in both processes once its turn is done.
        let again = if round % 2 == 0 { &b } else { &a };
        assert_eq!(again.message(&http, &id, "again").await, 202);
        assert!(
            wait_for(Duration::from_secs(30), || {
                let store = store.clone();
                let id = id.clone();
                async move { turns_done(&store, &id).await == 2 }
            })
            .await
        );
        let events = session_events(&store, &id).await;
        let started = events
            .iter()
            .filter(|r| matches!(r.event, DomainEvent::TurnStarted { .. }))
            .count();
        assert_eq!(
            started, 2,
            "round {round}: exactly the two accepted turns ran"
        );
    }
    assert_no_interleaving_and_no_second_run(&all_events(&store).await);
}

// rule: REPLICA-2
#[tokio::test]
async fn a_killed_process_is_closed_by_the_others_and_a_live_ones_command_is_never_touched() {
    let sshd = Sshd::start();
    let probe = tempfile::tempdir().unwrap();
    let env = sshd.server_env(probe.path());
    let mut cluster = Cluster::new(env, 1).await;
    let pid = std::process::id();
    // The doomed process's command, and a live process's command that outlives the test's
    // checks (read-only, so they run at once).
    let doomed = format!("sleep 3201.{pid}");
    // Long enough to outlive the checks on a busy machine; stopped at the end.
    let live = format!("sleep 300.{pid}");
    let http = nomos_llm::tls::http_client();
    let a_script = cluster.script("a", &run_then_answer(1, "host:loopback", &live));
    let b_script = cluster.script("b", &run_then_answer(1, "host:loopback", &doomed));
    let a = cluster.start(&a_script);
    let mut b = cluster.start(&b_script);
    let store = cluster.store().await;
    let on_a = a.create_session(&http).await;
    let on_b = a.create_session(&http).await;
    assert_eq!(a.message(&http, &on_a, "run the long one").await, 202);
    assert_eq!(b.message(&http, &on_b, "run the doomed one").await, 202);
    for needle in [&doomed, &live] {
        assert!(
            wait_for(Duration::from_secs(20), || {
                let needle = needle.clone();
                async move { !processes_matching(&needle).is_empty() }
            })
            .await,
            "`{needle}` never started"
        );
    }
    b.kill_9();
    let killed = Instant::now();

    // A process starting now reconciles only what no live instance owns: A's command runs on.
    let quiet = cluster.script("c", "- text: \"hi\"\n");
    let c = cluster.start(&quiet);
    let execution_of = |id: String| {
        let store = store.clone();
        async move {
            let id = SessionId(id.parse().unwrap());
            store.load_session(id).await.unwrap().unwrap().executions
        }
    };
    let a_executions = execution_of(on_a.clone()).await;
    assert_eq!(a_executions.len(), 1);
    assert_eq!(a_executions[0].status, ExecutionStatus::Running);
    assert!(!processes_matching(&live).is_empty());

    // Once B's heartbeat lapses, the sweeper fails its execution, stops its command and
    // closes its turn (TURN-11). Not before: B's last heartbeat is at most a third of the
    // timeout older than the kill. And soon after: within a sweep interval and the stop of
    // the command over ssh, which a busy machine may slow to seconds (EXEC-3's own sweep
    // would take 10 minutes).
    let earliest = HEARTBEAT_TIMEOUT - HEARTBEAT_TIMEOUT / 3;
    let bound = HEARTBEAT_TIMEOUT + Duration::from_secs(15);
    assert!(
        wait_for(bound, || {
            let id = on_b.clone();
            let execution_of = &execution_of;
            async move { execution_of(id).await[0].status == ExecutionStatus::Failed }
        })
        .await,
        "the killed process's execution was never failed"
    );
    let took = killed.elapsed();
    assert!(
        took >= earliest && took <= bound,
        "failed {took:?} after the kill; the heartbeat timeout is {HEARTBEAT_TIMEOUT:?}"
    );
    let failed = &execution_of(on_b.clone()).await[0];
    let error = failed.error.clone().unwrap_or_default();
    assert!(error.starts_with("interrupted: outcome unknown"), "{error}");
    assert!(
        wait_for(Duration::from_secs(10), || {
            let doomed = doomed.clone();
            async move { processes_matching(&doomed).is_empty() }
        })
        .await,
        "the killed process's command still runs on the host"
    );
    // The same pass closes the turn, right after the execution.
    assert!(
        wait_for(Duration::from_secs(10), || {
            let store = store.clone();
            let id = on_b.clone();
            async move { turns_done(&store, &id).await > 0 }
        })
        .await,
        "the killed process's turn was never closed"
    );
    let dones: Vec<Option<String>> = session_events(&store, &on_b)
        .await
        .into_iter()
        .filter_map(|r| match r.event {
            DomainEvent::TurnDone { error, .. } => Some(error),
            _ => None,
        })
        .collect();
    assert_eq!(dones, vec![Some(TURN_INTERRUPTED_BY_RESTART.to_owned())]);

    // A's execution and turn were never touched, and its command still runs.
    let a_executions = execution_of(on_a.clone()).await;
    assert_eq!(a_executions[0].status, ExecutionStatus::Running);
    assert!(!processes_matching(&live).is_empty());
    assert_eq!(turns_done(&store, &on_a).await, 0);
    drop((a, c));
    // A's command would run on with A gone (sshd keeps it): the test's own, by its pid.
    for pid in processes_matching(&live) {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
}

// rule: REPLICA-2
// rule: FLEET-2
// rule: EXEC-3
// rule: TURN-11
#[tokio::test]
async fn a_fanout_left_by_a_killed_process_is_settled_by_the_survivor_its_queued_hosts_cancelled_unrun()
 {
    let sshd = Sshd::start();
    let files = tempfile::tempdir().unwrap();
    let env = sshd.server_env(files.path());
    // Four inventory hosts tagged `fleet`, all this test's sshd.
    let host = |n: u32| {
        format!(
            "[[host]]\nslug = \"host:fleet-{n}\"\naddress = \"127.0.0.1\"\nport = {}\nuser = \"root\"\nkey_file = \"{}\"\ntags = [\"fleet\"]\n\n",
            sshd.port,
            sshd.client_key_path.display()
        )
    };
    let inventory: String = (1..=4).map(host).collect();
    std::fs::write(files.path().join("inventory.toml"), inventory).unwrap();
    let mut cluster = Cluster::new(env, 1).await;
    let needle = format!("sleep 3301.{}", std::process::id());
    // One host at a time: the first runs, the other three wait in the fan-out's queue.
    let fanout = format!(
        "- tool_calls:\n    - name: run\n      arguments: {{host: \"tag:fleet\", command: \"{needle}\", max_parallel: 1}}\n- text: \"never reached\"\n"
    );
    let a = cluster.start(&cluster.script("a", "- text: \"hi\"\n"));
    let mut b = cluster.start(&cluster.script("b", &fanout));
    let http = nomos_llm::tls::http_client();
    let store = cluster.store().await;
    let id = b.create_session(&http).await;
    let session = SessionId(id.parse().unwrap());
    assert_eq!(b.message(&http, &id, "run it on the fleet").await, 202);
    assert!(
        wait_for(Duration::from_secs(20), || {
            let needle = needle.clone();
            async move { !processes_matching(&needle).is_empty() }
        })
        .await,
        "`{needle}` never started"
    );
    let snapshot = store.load_session(session).await.unwrap().unwrap();
    let mut statuses: Vec<ExecutionStatus> = snapshot.executions.iter().map(|e| e.status).collect();
    statuses.sort_by_key(|s| s.as_str());
    assert_eq!(
        statuses,
        [
            ExecutionStatus::Approved,
            ExecutionStatus::Approved,
            ExecutionStatus::Approved,
            ExecutionStatus::Running,
        ],
        "one host runs and three wait"
    );
    b.kill_9();

    // Once B's heartbeat lapses, the survivor settles the whole fan-out at once: the host
    // that ran is failed with its outcome unknown, the queued ones are cancelled saying
    // they did not run, and none of them ever starts.
    assert!(
        wait_for(HEARTBEAT_TIMEOUT + Duration::from_secs(15), || {
            let store = store.clone();
            async move {
                let snapshot = store.load_session(session).await.unwrap().unwrap();
                snapshot.executions.iter().all(|e| e.status.is_terminal())
            }
        })
        .await,
        "the fan-out's hosts were never settled"
    );
    let snapshot = store.load_session(session).await.unwrap().unwrap();
    let order = &snapshot.fanouts[0].hosts;
    let execution = |host: &nomos_core::fanout::FanoutHost| {
        snapshot
            .executions
            .iter()
            .find(|e| e.id == host.execution_id)
            .unwrap()
    };
    let ran = execution(&order[0]);
    assert_eq!(ran.status, ExecutionStatus::Failed);
    let error = ran.error.clone().unwrap_or_default();
    assert!(error.starts_with("interrupted: outcome unknown"), "{error}");
    for host in &order[1..] {
        let queued = execution(host);
        assert_eq!(queued.status, ExecutionStatus::Cancelled, "{}", host.host);
        assert_eq!(
            queued.error.as_deref(),
            Some(nomos_core::sweep::QUEUED_AT_RESTART_REASON),
            "{}",
            host.host
        );
        assert_eq!(
            nomos_core::fanout::host_state(queued),
            nomos_core::fanout::HostState::Cancelled
        );
    }
    let events = session_events(&store, &id).await;
    let runs = events
        .iter()
        .filter(|r| {
            matches!(
                r.event,
                DomainEvent::ExecutionStatusChanged {
                    status: ExecutionStatus::Running,
                    ..
                }
            )
        })
        .count();
    assert_eq!(runs, 1, "only the first host ever started");
    assert!(
        wait_for(Duration::from_secs(10), || {
            let needle = needle.clone();
            async move { processes_matching(&needle).is_empty() }
        })
        .await,
        "the killed process's command still runs on the host"
    );
    // The session is told once which hosts never started, and its turn is closed.
    let notes: Vec<String> = store
        .messages(session)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.content.contains("never started and did not run"))
        .map(|m| m.content)
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("3 of its 4 hosts"), "{}", notes[0]);
    assert!(
        wait_for(Duration::from_secs(10), || {
            let store = store.clone();
            let id = id.clone();
            async move { turns_done(&store, &id).await == 1 }
        })
        .await,
        "the killed process's turn was never closed"
    );
    assert_no_interleaving_and_no_second_run(&session_events(&store, &id).await);
    drop(a);
}

// rule: REPLICA-3
#[tokio::test]
async fn a_client_of_one_process_hears_every_event_of_200_turns_run_on_another_once_in_order() {
    let mut cluster = Cluster::new(Vec::new(), 1).await;
    let answers = "- text: \"noted\"\n".repeat(210);
    let a = cluster.start(&cluster.script("a", "- text: \"hi\"\n"));
    let b = cluster.start(&cluster.script("b", &answers));
    let http = nomos_llm::tls::http_client();
    let heard = a.follow(&http).await;
    let store = cluster.store().await;
    let before = all_events(&store).await.last().map_or(0, |r| r.global_seq);
    let id = b.create_session(&http).await;
    for turn in 1..=200 {
        assert_eq!(b.message(&http, &id, &format!("note {turn}")).await, 202);
        assert!(
            wait_for(Duration::from_secs(20), || {
                let heard = heard.clone();
                async move { heard.count("turn.done") == turn }
            })
            .await,
            "turn {turn} never reached the client of the other process"
        );
    }
    assert_heard_every_event(&heard, &store, before, "the client of process A").await;
    assert_no_interleaving_and_no_second_run(&all_events(&store).await);
}

/// A small deterministic generator, so a failing soak can be replayed.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }
}

/// The soak's seed: `NOMOS_SOAK_SEED` replays a run; a fixed one otherwise.
fn soak_seed() -> u64 {
    std::env::var("NOMOS_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6e6f_6d6f_7321)
}

/// How many sessions the soak drives, and how many rounds of actions it sends.
const SOAK_SESSIONS: usize = 6;
const SOAK_ROUNDS: usize = 30;

/// A reply that runs `command` on `host`.
fn run_reply(host: &str, command: &str) -> String {
    format!(
        "- tool_calls:\n    - name: run\n      arguments: {{host: \"{host}\", command: \"{command}\"}}\n"
    )
}

/// Process `p`'s model: the setup of each of its `sessions` (a goal and a plan, then an
/// answer to the operator's assent), then random replies: a change that needs the
/// operator's approval (it appends its own line to `side`, so the host shows how often it
/// ran), a read-only command that takes a moment (so turns overlap the other actions), or
/// an answer that ends the turn. Every command is unique.
fn soak_script(p: usize, sessions: usize, side: &Path, random: &mut XorShift) -> String {
    let mut out = String::new();
    for _ in 0..sessions {
        out.push_str(
            "- tool_calls:\n    - name: set_goal\n      arguments: {goal: \"the soak lines are appended\"}\n    - name: propose_plan\n      arguments: {steps: [{title: \"append the soak lines\"}]}\n- text: \"Plan ready; approve?\"\n- text: \"Going ahead.\"\n",
        );
    }
    for k in 0..600 {
        match random.below(5) {
            0 | 1 => out.push_str(&run_reply(
                "local",
                &format!("echo m-{p}-{k} >> {}", side.display()),
            )),
            2 => out.push_str(&run_reply("local", &format!("sleep 0.3; echo r-{p}-{k}"))),
            _ => out.push_str("- text: \"done for now\"\n"),
        }
    }
    out
}

/// The tag of a soak command (`m-P-K` or `r-P-K`).
fn tag_of(command: &str) -> Option<&str> {
    command
        .split_whitespace()
        .find(|w| w.starts_with("m-") || w.starts_with("r-"))
}

/// What one soak action was answered.
enum Answer {
    Message(u16),
    Decision {
        approval: String,
        approve: bool,
        status: u16,
    },
    Stop(u16),
}

// rule: REPLICA-1
// rule: REPLICA-2
// rule: REPLICA-3
// rule: GATE-7
// rule: EXEC-6
#[tokio::test]
async fn a_soak_of_random_messages_decisions_and_stops_across_three_processes_interleaves_no_turn_runs_nothing_twice_and_loses_no_event()
 {
    let seed = soak_seed();
    eprintln!("soak seed {seed} (NOMOS_SOAK_SEED={seed} replays it)");
    let mut random = XorShift(seed);
    let mut cluster = Cluster::new(Vec::new(), 1).await;
    let side = cluster.path().join("side-effects");
    let procs: Vec<Proc> = (0..3)
        .map(|p| {
            let script = soak_script(p, SOAK_SESSIONS / 3, &side, &mut random);
            let script = cluster.script(&format!("p{p}"), &script);
            cluster.start(&script)
        })
        .collect();
    let http = nomos_llm::tls::http_client();
    let clients: Vec<Heard> =
        futures::future::join_all(procs.iter().map(|p| p.follow(&http))).await;
    let store = cluster.store().await;
    let before = all_events(&store).await.last().map_or(0, |r| r.global_seq);

    // Setup, one session at a time so each process plays its setup replies in order: a
    // goal and a plan, then the operator's assent opens the window in which changes the
    // plan did not declare each wait for an approval (GATE-9).
    let mut sessions = Vec::new();
    for n in 0..SOAK_SESSIONS {
        let owner = &procs[n % 3];
        let id = owner.create_session(&http).await;
        for (turn, text) in [(1, "append the soak lines"), (2, "yes, go ahead")] {
            assert_eq!(owner.message(&http, &id, text).await, 202);
            assert!(
                wait_for(Duration::from_secs(30), || {
                    let store = store.clone();
                    let id = id.clone();
                    async move { turns_done(&store, &id).await == turn }
                })
                .await,
                "setup turn {turn} of session {n} never ended"
            );
        }
        sessions.push(id);
    }
    let grants: Value = http
        .get(format!("{}/api/grants", procs[0].base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        grants["windows"].as_array().unwrap().len(),
        SOAK_SESSIONS,
        "every session's assent window is open: {grants}"
    );
    let setup_turns = 2 * SOAK_SESSIONS;

    // Rounds of up to four actions at once, each through a random process: a message to
    // a random session, a decision on a random pending approval (now and then the same
    // decision through two processes at once, or a late one on an approval already
    // decided), or a stop.
    let mut answers: Vec<Answer> = Vec::new();
    let mut decided: Vec<String> = Vec::new();
    for _round in 0..SOAK_ROUNDS {
        let pending = procs[random.below(3)].pending_approvals(&http).await;
        let mut batch: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = Answer> + '_>>> =
            Vec::new();
        let mut chosen: HashSet<String> = HashSet::new();
        for _ in 0..1 + random.below(4) {
            let p = &procs[random.below(3)];
            let roll = random.below(100);
            let untaken: Vec<&String> = pending.iter().filter(|a| !chosen.contains(*a)).collect();
            if roll < 45 && !untaken.is_empty() {
                let approval = untaken[random.below(untaken.len())].clone();
                chosen.insert(approval.clone());
                let approve = random.percent(70);
                let body = json!({ "decision": if approve { "approve" } else { "deny" } });
                let twice = random.percent(30);
                let other = &procs[random.below(3)];
                for via in if twice { vec![p, other] } else { vec![p] } {
                    let approval = approval.clone();
                    let body = body.clone();
                    let http = &http;
                    batch.push(Box::pin(async move {
                        let path = format!("/api/approvals/{approval}/decision");
                        let (status, _) = via.post(http, &path, body).await;
                        Answer::Decision {
                            approval,
                            approve,
                            status,
                        }
                    }));
                }
            } else if roll < 50 && !decided.is_empty() {
                let approval = decided[random.below(decided.len())].clone();
                let http = &http;
                batch.push(Box::pin(async move {
                    let path = format!("/api/approvals/{approval}/decision");
                    let (status, _) = p.post(http, &path, json!({ "decision": "approve" })).await;
                    Answer::Decision {
                        approval,
                        approve: true,
                        status,
                    }
                }));
            } else if roll < 60 {
                let id = sessions[random.below(sessions.len())].clone();
                let http = &http;
                batch.push(Box::pin(async move {
                    let (status, _) = p
                        .post(http, &format!("/api/sessions/{id}/stop"), json!({}))
                        .await;
                    Answer::Stop(status)
                }));
            } else {
                // Now and then the same session through two processes at once: one
                // turn runs, the other gets 409 (REPLICA-1).
                let id = sessions[random.below(sessions.len())].clone();
                let other = &procs[random.below(3)];
                let twice = random.percent(25);
                for via in if twice { vec![p, other] } else { vec![p] } {
                    let id = id.clone();
                    let http = &http;
                    batch.push(Box::pin(async move {
                        Answer::Message(via.message(http, &id, "check").await)
                    }));
                }
            }
        }
        for answer in futures::future::join_all(batch).await {
            if let Answer::Decision {
                approval, status, ..
            } = &answer
                && *status == 200
            {
                decided.push(approval.clone());
            }
            answers.push(answer);
        }
        // Pacing only: the checks below wait for content.
        tokio::time::sleep(Duration::from_millis(50 * random.below(5) as u64)).await;
    }

    // Every answer is one the rules allow, and each accepted message or decision starts
    // exactly one turn.
    let mut turns_expected = setup_turns;
    let mut refused = 0;
    let mut stops = 0;
    let mut decisions: BTreeMap<String, Vec<(bool, u16)>> = BTreeMap::new();
    for answer in &answers {
        match answer {
            Answer::Message(202) => turns_expected += 1,
            Answer::Message(409) => refused += 1,
            Answer::Message(other) => panic!("a message got {other}"),
            Answer::Decision {
                approval,
                approve,
                status,
            } => {
                assert!(
                    [200, 409].contains(status),
                    "a decision on {approval} got {status}"
                );
                if *status == 200 {
                    turns_expected += 1;
                }
                decisions
                    .entry(approval.clone())
                    .or_default()
                    .push((*approve, *status));
            }
            Answer::Stop(202) => stops += 1,
            Answer::Stop(409) => {}
            Answer::Stop(other) => panic!("a stop got {other}"),
        }
    }
    assert!(
        wait_for(Duration::from_secs(90), || {
            let store = store.clone();
            let sessions = sessions.clone();
            async move {
                let mut done = 0;
                for id in &sessions {
                    done += turns_done(&store, id).await;
                }
                done == turns_expected
            }
        })
        .await,
        "not every accepted turn ended"
    );
    let events: Vec<EventRecord> = all_events(&store)
        .await
        .into_iter()
        .filter(|r| r.global_seq > before)
        .collect();
    // 0 interleaved turns, and no execution dispatched twice (EXEC-6).
    assert_no_interleaving_and_no_second_run(&events);
    let started = events
        .iter()
        .filter(|r| matches!(r.event, DomainEvent::TurnStarted { .. }))
        .count();
    assert_eq!(
        started, turns_expected,
        "one turn per accepted message or decision"
    );
    let stopped = events
        .iter()
        .filter(|r| matches!(r.event, DomainEvent::TurnStopped { .. }))
        .count();
    assert_eq!(stopped, stops, "one recorded stop per accepted stop");

    // Every decision was applied once or refused with 409, and the store holds the one
    // that was applied.
    let mut snapshots = Vec::new();
    for id in &sessions {
        let id = SessionId(id.parse().unwrap());
        snapshots.push(store.load_session(id).await.unwrap().unwrap());
    }
    let approvals: HashMap<String, &nomos_core::record::Approval> = snapshots
        .iter()
        .flat_map(|s| s.approvals.iter())
        .map(|a| (a.id.to_string(), a))
        .collect();
    let executions: HashMap<nomos_core::ExecutionId, &nomos_core::record::Execution> = snapshots
        .iter()
        .flat_map(|s| s.executions.iter())
        .map(|e| (e.id, e))
        .collect();
    let dispatched: HashSet<nomos_core::ExecutionId> = events
        .iter()
        .filter_map(|r| match &r.event {
            DomainEvent::ExecutionStatusChanged {
                execution_id,
                status: ExecutionStatus::Running,
                ..
            } => Some(*execution_id),
            _ => None,
        })
        .collect();
    let (mut approved, mut denied, mut conflicts) = (0, 0, 0);
    for (id, tries) in &decisions {
        let applied: Vec<bool> = tries
            .iter()
            .filter(|(_, status)| *status == 200)
            .map(|(approve, _)| *approve)
            .collect();
        conflicts += tries.len() - applied.len();
        assert!(
            applied.len() <= 1,
            "approval {id} was decided twice: {tries:?}"
        );
        let approval = approvals[id];
        let execution = executions[&approval.execution_id];
        match applied.first() {
            Some(true) => {
                approved += 1;
                assert_eq!(
                    approval.status,
                    nomos_core::ApprovalStatus::Approved,
                    "{id}"
                );
                assert!(
                    dispatched.contains(&execution.id),
                    "approved {id} never ran `{}`",
                    execution.command
                );
            }
            Some(false) => {
                denied += 1;
                assert_eq!(approval.status, nomos_core::ApprovalStatus::Denied, "{id}");
                assert_eq!(execution.status, ExecutionStatus::Cancelled, "{id}");
            }
            None => assert_ne!(
                approval.status,
                nomos_core::ApprovalStatus::Approved,
                "{id}: approved, though every decision on it was refused"
            ),
        }
    }
    // Messages sent together mostly both run, one after the other, within the lease's
    // grace; the [202, 409] case has its own test above.
    assert!(
        approved > 0 && denied > 0 && conflicts > 0,
        "the soak exercised too little: {approved} approved, {denied} denied, {conflicts} \
         decisions refused"
    );

    // 0 commands run twice, counted on the host: each change appends its own line.
    let written = std::fs::read_to_string(&side).unwrap_or_default();
    let mut lines: HashMap<&str, usize> = HashMap::new();
    for line in written.lines() {
        *lines.entry(line.trim()).or_default() += 1;
    }
    let twice: Vec<_> = lines.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "commands that ran twice on the host: {twice:?}"
    );
    let mut changes = 0;
    for execution in executions.values() {
        let Some(tag) = tag_of(&execution.command) else {
            continue;
        };
        let on_host = lines.contains_key(tag);
        if tag.starts_with("m-") {
            changes += 1;
            if execution.status == ExecutionStatus::Completed {
                assert!(on_host, "`{}` completed but never ran", execution.command);
            }
            if !dispatched.contains(&execution.id) {
                assert!(
                    !on_host,
                    "`{}` ran without being dispatched",
                    execution.command
                );
            }
        } else {
            // Read-only commands run at once, each once.
            assert!(dispatched.contains(&execution.id), "{}", execution.command);
            if execution.status == ExecutionStatus::Completed {
                let stdout = execution.output.as_ref().map(|o| o.stdout.as_str());
                assert_eq!(stdout.map(str::trim), Some(tag), "{}", execution.command);
            }
        }
    }
    let known: HashSet<&str> = executions
        .values()
        .filter_map(|e| tag_of(&e.command))
        .collect();
    for tag in lines.keys() {
        assert!(
            known.contains(tag),
            "`{tag}` ran on the host but no execution says so"
        );
    }

    // 0 lost events: every client, whichever process it is connected to, hears every
    // event once, in commit order, each session's positions without a gap.
    for (n, client) in clients.iter().enumerate() {
        let label = format!("the client of process {n}");
        assert_heard_every_event(client, &store, before, &label).await;
        for (session, seqs) in client.seqs_by_session() {
            let gapless = seqs.windows(2).all(|w| w[1] == w[0] + 1);
            assert!(
                gapless,
                "client of process {n}, session {session}: {seqs:?}"
            );
            assert_eq!(
                seqs.first(),
                Some(&1),
                "session {session} heard from its start"
            );
        }
    }
    eprintln!(
        "soak: {turns_expected} turns, {refused} messages refused with 409, {approved} approved, {denied} denied, {conflicts} decisions refused with 409, {stops} stops, {changes} changes requested, {} lines on the host, {} events",
        lines.len(),
        events.len()
    );
}

// rule: CONTROL-1
// rule: REPLICA-3
#[tokio::test]
async fn a_stop_sent_to_the_process_that_does_not_run_the_turn_stops_it_on_the_host_once() {
    let sshd = Sshd::start();
    let probe = tempfile::tempdir().unwrap();
    let env = sshd.server_env(probe.path());
    let mut cluster = Cluster::new(env, 1).await;
    let long = format!("sleep 3401.{}", std::process::id());
    let http = nomos_llm::tls::http_client();
    let a_script = cluster.script("a", &run_then_answer(1, "host:loopback", &long));
    let quiet = cluster.script("b", "- text: \"hi\"\n");
    let a = cluster.start(&a_script);
    let b = cluster.start(&quiet);
    let store = cluster.store().await;

    // No turn runs anywhere: 409 from either process.
    let idle = a.create_session(&http).await;
    let stop_of = |id: &str| format!("/api/sessions/{id}/stop");
    assert_eq!(b.post(&http, &stop_of(&idle), json!({})).await.0, 409);

    let id = a.create_session(&http).await;
    assert_eq!(a.message(&http, &id, "run the long one").await, 202);
    assert!(
        wait_for(Duration::from_secs(20), || {
            let long = long.clone();
            async move { !processes_matching(&long).is_empty() }
        })
        .await,
        "`{long}` never started"
    );

    // Two stops at once through the process that does not run the turn: one is recorded.
    let path = stop_of(&id);
    let (first, second) = tokio::join!(
        b.post(&http, &path, json!({})),
        b.post(&http, &path, json!({}))
    );
    let mut statuses = vec![first.0, second.0];
    statuses.sort_unstable();
    assert_eq!(statuses, vec![202, 409], "{first:?} {second:?}");

    // The owner heard it: the command is gone from the host and the turn ended stopped.
    assert!(
        wait_for(Duration::from_secs(30), || {
            let long = long.clone();
            async move { processes_matching(&long).is_empty() }
        })
        .await,
        "the stopped command still runs on the host"
    );
    assert!(
        wait_for(Duration::from_secs(30), || {
            let store = store.clone();
            let id = id.clone();
            async move { turns_done(&store, &id).await > 0 }
        })
        .await,
        "the stopped turn never ended"
    );
    let events = session_events(&store, &id).await;
    let stopped = events
        .iter()
        .filter(|r| matches!(r.event, DomainEvent::TurnStopped { .. }))
        .count();
    let dones: Vec<Option<String>> = events
        .iter()
        .filter_map(|r| match &r.event {
            DomainEvent::TurnDone { error, .. } => Some(error.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(stopped, 1);
    assert_eq!(
        dones,
        vec![Some(nomos_core::session::STOPPED_BY_OPERATOR.to_owned())]
    );
    let executions = store
        .load_session(SessionId(id.parse().unwrap()))
        .await
        .unwrap()
        .unwrap()
        .executions;
    assert_eq!(executions.len(), 1);
    assert_eq!(executions[0].status, ExecutionStatus::Cancelled);
    assert_eq!(
        executions[0].error.as_deref(),
        Some(nomos_core::session::STOPPED_BY_OPERATOR)
    );

    // The turn ended: a stop through either process is 409 and records nothing.
    assert_eq!(b.post(&http, &path, json!({})).await.0, 409);
    assert_eq!(a.post(&http, &path, json!({})).await.0, 409);
    assert_eq!(session_events(&store, &id).await.len(), events.len());
    assert_no_interleaving_and_no_second_run(&all_events(&store).await);
    drop((a, b));
    for pid in processes_matching(&long) {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
}
