//! The operator's controls over real HTTP (CONTROL-1..3, AUDIT-1): stop a turn mid model
//! stream, mid command on a real sshd, and after an approval started a command; revoke an
//! assent window and cancel an approval while the agent races them; list the grants; and a
//! viewer may do none of it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use nomos_core::ports::chat::{ChatModel, ChatRequest, ChatResponse, DeltaSink, ModelError};
use nomos_core::session::{OPERATOR_STOPPED_NOTE, STOPPED_BY_OPERATOR};
use nomos_llm::ScriptedModel;
use nomos_ssh::{FleetExecutor, Inventory, LocalExecutor, SshConfig};
use nomos_test_support::sshd::Sshd;
use nomos_test_support::trickle::TricklingModel;
use serde_json::{Value, json};

use super::{OPERATOR, Server, VIEWER, serve_parts, server, settle};

/// The scripted model, keeping every request it was sent.
struct Capturing {
    script: ScriptedModel,
    requests: Mutex<Vec<ChatRequest>>,
}

impl Capturing {
    fn new(script: &str) -> Arc<Capturing> {
        Arc::new(Capturing {
            script: ScriptedModel::from_yaml_str(script).unwrap(),
            requests: Mutex::new(Vec::new()),
        })
    }

    fn last_request_text(&self) -> String {
        let requests = self.requests.lock().unwrap();
        format!("{:?}", requests.last().unwrap().messages)
    }
}

#[async_trait]
impl ChatModel for Capturing {
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        self.script.complete(request, sink).await
    }

    fn name(&self) -> String {
        "capturing".into()
    }
}

/// A `sleep` whose command line is unique to this test process and `tag`.
fn unique_sleep(tag: u32) -> String {
    format!("sleep 30.{}0{tag}", std::process::id())
}

/// `pgrep -f NEEDLE`: whether a live process has it in its command line.
fn pgrep(needle: &str) -> bool {
    let out = std::process::Command::new("pgrep")
        .args(["-f", needle])
        .output()
        .unwrap();
    // pgrep matches itself only with -a on some systems; the needle is unique anyway.
    !String::from_utf8_lossy(&out.stdout).trim().is_empty()
}

async fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..400 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn stop(server: &Server, id: &str, token: &str) -> reqwest::Response {
    server
        .http
        .post(server.url(&format!("/api/sessions/{id}/stop")))
        .bearer_auth(token)
        .header("x-request-id", "req-stop")
        .send()
        .await
        .unwrap()
}

/// Every stored event of the session, as `(kind, payload)`.
async fn stored(server: &Server, id: &str) -> Vec<(String, Value)> {
    let session: nomos_core::SessionId = id.parse().unwrap();
    server
        .state
        .agent
        .store()
        .events_after(Some(session), 0, 100_000)
        .await
        .unwrap()
        .into_iter()
        .map(|e| {
            (
                e.event.kind().to_owned(),
                serde_json::to_value(&e.event).unwrap(),
            )
        })
        .collect()
}

fn count(events: &[(String, Value)], kind: &str) -> usize {
    events.iter().filter(|(k, _)| k == kind).count()
}

/// The server's executor: `local` and the sshd as `host:loopback`.
fn ssh_executor(sshd: &Sshd) -> FleetExecutor {
    let text = format!(
        r#"
[[host]]
slug = "local"

[[host]]
slug = "host:loopback"
address = "127.0.0.1"
port = {port}
user = "root"
key_file = "{key}"
"#,
        port = sshd.port,
        key = sshd.client_key_path.display(),
    );
    let inventory = Inventory::parse(&text, "loopback.toml").unwrap();
    let mut config =
        SshConfig::new(&sshd.known_hosts_path).with_connect_timeout(Duration::from_secs(5));
    config.stop_grace = Duration::from_millis(300);
    FleetExecutor::new(inventory, config)
}

// rule: CONTROL-1
// rule: AUDIT-1
#[tokio::test]
async fn a_stop_mid_model_stream_drops_the_request_and_ends_the_turn_once() {
    let trickle = TricklingModel::start(Duration::from_millis(20)).await;
    let config = nomos_llm::OpenAiConfig::builder(trickle.base_url(), "trickle")
        .build()
        .unwrap();
    let model = Arc::new(nomos_llm::OpenAiModel::new(config).unwrap());
    let server = serve_parts(model, Arc::new(LocalExecutor::new())).await;
    let id = server.create_session().await;
    let mut events = server
        .events(&format!("/api/sessions/{id}/events"), None)
        .await;
    assert_eq!(server.say(&id, "hello").await.status(), 202);
    wait_for("the model stream", || trickle.n_open() == 1).await;

    let stopped = stop(&server, &id, OPERATOR).await;
    assert_eq!(stopped.status(), 202);
    let turn = events.until("turn.done").await;
    let done = turn.last().unwrap().json();
    assert_eq!(done["event"]["error"], STOPPED_BY_OPERATOR, "{done}");
    // The request was dropped: the endpoint's stream ends at its next chunk.
    wait_for("the dropped stream", || trickle.n_open() == 0).await;
    settle(&server, &id).await;

    let log = stored(&server, &id).await;
    assert_eq!(count(&log, "turn.done"), 1, "{log:?}");
    let (_, stop_event) = log.iter().find(|(k, _)| k == "turn.stopped").unwrap();
    assert_eq!(stop_event["stopped_by"], "alice");
    assert_eq!(stop_event["request_id"], "req-stop");

    // No running turn: a second stop is a 409 that says so.
    let again = stop(&server, &id, OPERATOR).await;
    assert_eq!(again.status(), 409);
    let body: Value = again.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no running turn"),
        "{body}"
    );
    let activity = server.json(&format!("/api/sessions/{id}/activity")).await;
    assert!(
        activity.to_string().contains("by alice (request req-stop)"),
        "{activity}"
    );
}

// rule: CONTROL-1
#[tokio::test]
async fn a_stop_mid_sleep_on_the_sshd_kills_the_remote_process_and_tells_the_model() {
    let sshd = Sshd::shared_or_start();
    let sleep = unique_sleep(1);
    let model = Capturing::new(&format!(
        r#"
- tool_calls:
    - {{name: run, arguments: {{host: "host:loopback", command: "{sleep}"}}}}
- text: "Understood, I stopped."
"#
    ));
    let server = serve_parts(model.clone(), Arc::new(ssh_executor(&sshd))).await;
    let id = server.create_session().await;
    let mut events = server
        .events(&format!("/api/sessions/{id}/events"), None)
        .await;
    assert_eq!(server.say(&id, "wait a while").await.status(), 202);
    wait_for("the remote sleep", || pgrep(&sleep)).await;

    let stopped = stop(&server, &id, OPERATOR).await;
    assert_eq!(stopped.status(), 202);
    let body: Value = stopped.json().await.unwrap();
    assert_eq!(body["stopping"].as_array().unwrap().len(), 1, "{body}");
    let turn = events.until("turn.done").await;
    assert_eq!(
        turn.last().unwrap().json()["event"]["error"],
        STOPPED_BY_OPERATOR
    );
    // The remote process is gone by the time the turn ended.
    assert!(!pgrep(&sleep), "`{sleep}` survived the stop");
    settle(&server, &id).await;

    let executions = server.json(&format!("/api/sessions/{id}/executions")).await;
    assert_eq!(executions[0]["status"], "cancelled", "{executions}");
    assert_eq!(executions[0]["error"], STOPPED_BY_OPERATOR);
    let log = stored(&server, &id).await;
    assert_eq!(count(&log, "turn.done"), 1);

    // The model's next request carries the note that the operator stopped it.
    assert_eq!(server.say(&id, "what happened?").await.status(), 202);
    events.until("turn.done").await;
    let note = OPERATOR_STOPPED_NOTE.split(':').next().unwrap();
    assert!(
        model.last_request_text().contains(note),
        "{}",
        model.last_request_text()
    );
}

const APPROVAL_SCRIPT: &str = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "clear the cache"}}
    - {name: propose_plan, arguments: {steps: [{title: "clear the cache"}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready. Approve?"
- tool_calls:
    - {name: run, arguments: {host: local, command: "rm -f /nonexistent-nomos-cache; SLEEP"}}
- text: "Clearing the cache needs your approval."
- text: "Stopped, as you asked."
"#;

/// A session whose plan is approved and whose `rm` waits for its approval.
async fn pending_approval(server: &Server, id: &str) -> (super::Sse, String) {
    let mut events = server
        .events(&format!("/api/sessions/{id}/events"), None)
        .await;
    assert_eq!(server.say(id, "clear the cache").await.status(), 202);
    events.until("turn.done").await;
    assert_eq!(server.say(id, "approved").await.status(), 202);
    events.until("turn.done").await;
    settle(server, id).await;
    let approvals = server
        .json(&format!("/api/approvals?session_id={id}"))
        .await;
    let approval = approvals[0]["id"].as_str().unwrap().to_owned();
    (events, approval)
}

// rule: CONTROL-1
#[tokio::test]
async fn a_stop_after_an_approval_started_a_command_cancels_it_and_ends_one_turn() {
    let sleep = unique_sleep(2);
    let server = server(&APPROVAL_SCRIPT.replace("SLEEP", &sleep)).await;
    let id = server.create_session().await;
    let (mut events, approval) = pending_approval(&server, &id).await;
    let before = count(&stored(&server, &id).await, "turn.done");

    let decided = server
        .post(
            &format!("/api/approvals/{approval}/decision"),
            json!({"decision": "approve"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(decided.status(), 200);
    wait_for("the approved command", || pgrep(&sleep)).await;
    assert_eq!(stop(&server, &id, OPERATOR).await.status(), 202);
    let turn = events.until("turn.done").await;
    assert_eq!(
        turn.last().unwrap().json()["event"]["error"],
        STOPPED_BY_OPERATOR
    );
    assert!(!pgrep(&sleep), "`{sleep}` survived the stop");
    settle(&server, &id).await;

    let executions = server.json(&format!("/api/sessions/{id}/executions")).await;
    assert_eq!(executions[0]["status"], "cancelled", "{executions}");
    assert_eq!(executions[0]["error"], STOPPED_BY_OPERATOR);
    let log = stored(&server, &id).await;
    assert_eq!(count(&log, "turn.done"), before + 1, "{log:?}");
    // The stop withdrew the plan's assent.
    assert!(
        log.iter()
            .any(|(k, p)| k == "assent.closed" && p["reason"] == "stopped")
    );
}

/// A plan, then a turn of 40 state-changing `touch` commands inside the window.
fn touch_script(n: u32) -> String {
    let mut script = String::from(
        r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "touch files"}}
    - {name: propose_plan, arguments: {steps: [{title: "touch files"}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready. Approve?"
"#,
    );
    for idx in 0..n {
        script.push_str(&format!(
            "- tool_calls:\n    - {{name: run, arguments: {{host: local, command: \"touch /tmp/nomos-revoke-{}-{idx}\"}}}}\n",
            std::process::id()
        ));
    }
    script.push_str("- text: \"Done touching.\"\n");
    script
}

// rule: CONTROL-2
// rule: AUDIT-1
#[tokio::test]
async fn a_revoke_racing_the_agent_takes_effect_before_the_next_gate_decision() {
    let server = server(&touch_script(30)).await;
    let id = server.create_session().await;
    let mut events = server
        .events(&format!("/api/sessions/{id}/events"), None)
        .await;
    assert_eq!(server.say(&id, "touch the files").await.status(), 202);
    events.until("turn.done").await;
    assert_eq!(server.say(&id, "approved").await.status(), 202);
    // Revoke while the agent runs its commands inside the window.
    events.until("execution.created").await;
    let revoked = server
        .post(&format!("/api/sessions/{id}/assent/revoke"), json!({}))
        .header("x-request-id", "req-revoke")
        .send()
        .await
        .unwrap();
    let status = revoked.status();
    let body: Value = revoked.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["generation"], 1);
    events.until("turn.done").await;
    settle(&server, &id).await;

    let log = stored(&server, &id).await;
    let closed = log
        .iter()
        .position(|(k, p)| k == "assent.closed" && p["reason"] == "revoked")
        .expect("the revoke closed the window");
    let (_, revoke) = &log[closed - 1];
    assert_eq!(revoke["type"], "assent.revoked");
    assert_eq!(revoke["revoked_by"], "alice");
    assert_eq!(revoke["request_id"], "req-revoke");
    // No command was let through after the revoke was committed, and the agent's runs
    // after it were refused.
    assert!(
        !log[closed..].iter().any(|(k, _)| k == "execution.created"),
        "a command was created after the revoke: {log:?}"
    );
    let calls = server
        .state
        .agent
        .store()
        .tool_calls(id.parse().unwrap())
        .await
        .unwrap();
    let refused = calls
        .iter()
        .filter(|c| c.name == "run" && c.outcome == nomos_core::record::ToolCallOutcome::Refused)
        .count();
    assert!(refused > 0, "the revoke landed after every run: {calls:?}");
    // Nothing is left to revoke.
    let again = server
        .post(&format!("/api/sessions/{id}/assent/revoke"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
}

// rule: CONTROL-2
#[tokio::test]
async fn a_cancel_racing_a_decision_lets_exactly_one_of_them_win() {
    let server = server(&APPROVAL_SCRIPT.replace("SLEEP", "true")).await;
    let id = server.create_session().await;
    let (_events, approval) = pending_approval(&server, &id).await;

    let decide = server
        .post(
            &format!("/api/approvals/{approval}/decision"),
            json!({"decision": "approve"}),
        )
        .send();
    let cancel = server
        .post(&format!("/api/approvals/{approval}/cancel"), json!({}))
        .send();
    let (decided, cancelled) = tokio::join!(decide, cancel);
    let (decided, cancelled) = (decided.unwrap().status(), cancelled.unwrap().status());
    settle(&server, &id).await;
    let stored = server
        .state
        .agent
        .store()
        .approval(nomos_core::ApprovalId(approval.parse().unwrap()))
        .await
        .unwrap()
        .unwrap();
    let executions = server.json(&format!("/api/sessions/{id}/executions")).await;
    match (decided.as_u16(), cancelled.as_u16()) {
        (200, 409) => {
            assert_eq!(stored.status.as_str(), "approved");
            assert_eq!(executions[0]["status"], "completed", "{executions}");
        }
        (409, 200) => {
            assert_eq!(stored.status.as_str(), "cancelled");
            assert_eq!(stored.decided_by.as_deref(), Some("alice"));
            assert_eq!(executions[0]["status"], "cancelled", "{executions}");
            assert!(executions[0]["started_at"].is_null(), "{executions}");
        }
        other => panic!("exactly one must win, got {other:?}"),
    }
}

// rule: CONTROL-3
#[tokio::test]
async fn the_grants_list_the_open_window_and_the_pending_approval_until_revoked() {
    let server = server(&APPROVAL_SCRIPT.replace("SLEEP", "true")).await;
    let id = server.create_session().await;
    let (_events, approval) = pending_approval(&server, &id).await;

    let grants = server.json("/api/grants").await;
    let windows = grants["windows"].as_array().unwrap();
    assert_eq!(windows.len(), 1, "{grants}");
    assert_eq!(windows[0]["session_id"], id);
    assert_eq!(windows[0]["generation"], 1);
    assert_eq!(windows[0]["granted_by"], "alice");
    assert_eq!(windows[0]["goal"], "clear the cache");
    assert!(windows[0]["expires_at"].as_str().unwrap() > grants["now"].as_str().unwrap());
    let approvals = grants["approvals"].as_array().unwrap();
    assert_eq!(approvals.len(), 1, "{grants}");
    assert_eq!(approvals[0]["id"], approval.as_str());

    let cancelled = server
        .post(&format!("/api/approvals/{approval}/cancel"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(cancelled.status(), 200);
    let revoked = server
        .post(&format!("/api/sessions/{id}/assent/revoke"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    let grants = server.json("/api/grants").await;
    assert_eq!(grants["windows"], json!([]), "{grants}");
    assert_eq!(grants["approvals"], json!([]), "{grants}");
    let activity = server.json(&format!("/api/sessions/{id}/activity")).await;
    assert!(
        activity.to_string().contains("revoked by alice"),
        "{activity}"
    );
    // AUDIT-1: the session's approvals say who cancelled.
    let approvals = server.json(&format!("/api/sessions/{id}/approvals")).await;
    assert_eq!(approvals[0]["status"], "cancelled", "{approvals}");
    assert_eq!(approvals[0]["decided_by"], "alice");
}

// rule: CONTROL-1
// rule: CONTROL-2
#[tokio::test]
async fn a_viewer_can_neither_stop_nor_revoke_nor_cancel() {
    let sleep = unique_sleep(3);
    let server = server(&APPROVAL_SCRIPT.replace("SLEEP", &sleep)).await;
    let id = server.create_session().await;
    let (_events, approval) = pending_approval(&server, &id).await;

    for path in [
        format!("/api/sessions/{id}/stop"),
        format!("/api/sessions/{id}/assent/revoke"),
        format!("/api/approvals/{approval}/cancel"),
    ] {
        let refused = server
            .http
            .post(server.url(&path))
            .bearer_auth(VIEWER)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 403, "POST {path}");
    }
    // The viewer may read the grants, and nothing was revoked.
    let grants = server
        .http
        .get(server.url("/api/grants"))
        .bearer_auth(VIEWER)
        .send()
        .await
        .unwrap();
    assert_eq!(grants.status(), 200);
    let grants: Value = grants.json().await.unwrap();
    assert_eq!(grants["windows"].as_array().unwrap().len(), 1);
    assert_eq!(grants["approvals"].as_array().unwrap().len(), 1);
}
