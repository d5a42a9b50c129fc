//! Several real `nomos-server` processes on one throwaway PostgreSQL (REPLICA-1..3): one
//! turn per session across processes, a process killed with `kill -9` closed by the others
//! and nothing of a live one touched, and every event heard by a client of any process.

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

    /// Follows the global event stream from now on, collecting `(global_seq, kind)`.
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
                    for line in block.lines() {
                        if let Some(v) = line.strip_prefix("id:") {
                            id = v.trim().parse::<i64>().ok();
                        } else if let Some(v) = line.strip_prefix("event:") {
                            kind = Some(v.trim().to_owned());
                        }
                    }
                    if let (Some(id), Some(kind)) = (id, kind) {
                        events.lock().unwrap().push((id, kind));
                    }
                }
            }
        });
        heard
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one SSE client heard: `(global_seq, kind)` in order of receipt.
#[derive(Clone, Default)]
struct Heard {
    events: Arc<Mutex<Vec<(i64, String)>>>,
}

impl Heard {
    fn count(&self, kind: &str) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, k)| k == kind)
            .count()
    }

    fn ids(&self) -> Vec<i64> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|(id, _)| *id)
            .collect()
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
    let http = reqwest::Client::new();
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
    let live = format!("sleep 25.{pid}");
    let http = reqwest::Client::new();
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
    // closes its turn (TURN-11).
    let bound = HEARTBEAT_TIMEOUT + Duration::from_secs(6);
    assert!(
        wait_for(bound + Duration::from_secs(10), || {
            let id = on_b.clone();
            let execution_of = &execution_of;
            async move { execution_of(id).await[0].status == ExecutionStatus::Failed }
        })
        .await,
        "the killed process's execution was never failed"
    );
    let took = killed.elapsed();
    assert!(
        took >= HEARTBEAT_TIMEOUT && took <= bound,
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
}

// rule: REPLICA-3
#[tokio::test]
async fn a_client_of_one_process_hears_every_event_of_200_turns_run_on_another_once_in_order() {
    let mut cluster = Cluster::new(Vec::new(), 1).await;
    let answers = "- text: \"noted\"\n".repeat(210);
    let a = cluster.start(&cluster.script("a", "- text: \"hi\"\n"));
    let b = cluster.start(&cluster.script("b", &answers));
    let http = reqwest::Client::new();
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
    let stored: Vec<i64> = all_events(&store)
        .await
        .iter()
        .map(|r| r.global_seq)
        .filter(|seq| *seq > before)
        .collect();
    let ids = heard.ids();
    assert_eq!(ids.len(), stored.len(), "every event once");
    assert_eq!(ids, stored, "in commit order, without gaps or duplicates");
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
}

// rule: REPLICA-1
// rule: REPLICA-2
// rule: REPLICA-3
#[tokio::test]
async fn a_soak_of_random_messages_across_three_processes_interleaves_no_turn_runs_nothing_twice_and_loses_no_event()
 {
    let mut cluster = Cluster::new(Vec::new(), 1).await;
    let script = run_then_answer(400, "local", "echo soak");
    let procs: Vec<Proc> = (0..3)
        .map(|n| {
            let script = cluster.script(&format!("p{n}"), &script);
            cluster.start(&script)
        })
        .collect();
    let http = reqwest::Client::new();
    let clients: Vec<Heard> =
        futures::future::join_all(procs.iter().map(|p| p.follow(&http))).await;
    let store = cluster.store().await;
    let before = all_events(&store).await.last().map_or(0, |r| r.global_seq);
    let mut sessions = Vec::new();
    for n in 0..6 {
        sessions.push(procs[n % 3].create_session(&http).await);
    }
    let mut random = XorShift(0x6e6f_6d6f_7321);
    let mut accepted = 0;
    let mut refused = 0;
    for _round in 0..20 {
        // Up to four messages at once, each to a random session through a random process.
        let batch: Vec<(usize, usize)> = (0..4)
            .map(|_| (random.below(3), random.below(sessions.len())))
            .collect();
        let sends = batch
            .iter()
            .map(|(p, s)| procs[*p].message(&http, &sessions[*s], "check"));
        for status in futures::future::join_all(sends).await {
            match status {
                202 => accepted += 1,
                409 => refused += 1,
                other => panic!("a message got {other}"),
            }
        }
        tokio::time::sleep(Duration::from_millis(100 * random.below(4) as u64)).await;
    }
    // Every accepted turn ends.
    assert!(
        wait_for(Duration::from_secs(60), || {
            let store = store.clone();
            let sessions = sessions.clone();
            async move {
                let mut done = 0;
                for id in &sessions {
                    done += turns_done(&store, id).await;
                }
                done == accepted
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
    assert_no_interleaving_and_no_second_run(&events);
    let started = events
        .iter()
        .filter(|r| matches!(r.event, DomainEvent::TurnStarted { .. }))
        .count();
    assert_eq!(started, accepted, "one turn per accepted message");
    // Every client, whichever process it is connected to, hears every event once, in order.
    let stored: Vec<i64> = events.iter().map(|r| r.global_seq).collect();
    for (n, client) in clients.iter().enumerate() {
        assert!(
            wait_for(Duration::from_secs(10), || {
                let client = client.clone();
                let want = stored.len();
                async move { client.ids().len() >= want }
            })
            .await,
            "the client of process {n} missed events"
        );
        assert_eq!(client.ids(), stored, "client of process {n}");
    }
    let per_session: BTreeMap<SessionId, usize> =
        events.iter().fold(BTreeMap::new(), |mut acc, r| {
            *acc.entry(r.session_id).or_default() += 1;
            acc
        });
    let seen: HashSet<SessionId> = per_session.keys().copied().collect();
    assert_eq!(seen.len(), sessions.len());
    eprintln!(
        "soak: {accepted} turns, {refused} refused with 409, {} events",
        events.len()
    );
}
