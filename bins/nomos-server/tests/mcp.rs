//! `nomos-server mcp` over stdio (MCP-1, MCP-2): a real MCP client spawns the real binary
//! on a temporary data directory, next to a real `nomos-server` on the same directory where
//! the operator speaks and decides over the HTTP API.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

// rule: MCP-1
// rule: MCP-2
#[tokio::test]
async fn mcp_over_stdio_runs_through_the_gates_and_the_operator_decides_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (mut server, base, token) = start_server(dir.path(), &data);
    let client = stdio_client(dir.path(), &data, "codex", "0.9.1").await;

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"run") && names.contains(&"wait_for_approval"),
        "{names:?}"
    );

    let read = call(
        &client,
        "run",
        json!({ "host": "local", "command": "echo via-stdio" }),
    )
    .await;
    assert!(text(&read).starts_with("exit 0"), "{}", text(&read));
    assert!(text(&read).contains("via-stdio"), "{}", text(&read));

    // The stdio session is on the server's board, under the client's name.
    let http = nomos_llm::tls::http_client();
    let sessions: Value = get(&http, &format!("{base}/api/sessions"), &token).await;
    let session = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["client"] == "codex 0.9.1")
        .unwrap_or_else(|| panic!("{sessions}"))
        .clone();
    let id = session["id"].as_str().unwrap().to_owned();

    let marker = dir.path().join("old.log");
    std::fs::write(&marker, "old").unwrap();
    let remove = format!("rm -f {}", marker.display());
    call(
        &client,
        "set_goal",
        json!({ "goal": "the old log is gone" }),
    )
    .await;
    call(
        &client,
        "propose_plan",
        json!({ "steps": [{ "title": "remove the old log" }] }),
    )
    .await;
    let (status, _) = post(
        &http,
        &format!("{base}/api/sessions/{id}/messages"),
        &token,
        json!({ "text": "yes, go ahead" }),
    )
    .await;
    assert_eq!(status, 202);
    call(
        &client,
        "update_plan_step",
        json!({ "seq": 1, "status": "running" }),
    )
    .await;

    let asked = call(
        &client,
        "run",
        json!({ "host": "local", "command": remove }),
    )
    .await;
    let approval = asked.structured_content.clone().unwrap()["approval"].clone();
    assert_eq!(approval["class"], "destructive", "{}", text(&asked));
    assert_eq!(approval["command"], remove.as_str());
    assert!(
        approval["operations_url"]
            .as_str()
            .unwrap()
            .ends_with("/operations")
    );
    let approval_id = approval["approval_id"].as_str().unwrap().to_owned();
    assert!(marker.exists());

    let peer = client.peer().clone();
    let waiting_id = approval_id.clone();
    let waiting = tokio::spawn(async move {
        call(
            &peer,
            "wait_for_approval",
            json!({ "approval_id": waiting_id, "timeout_secs": 60 }),
        )
        .await
    });
    let (status, body) = post(
        &http,
        &format!("{base}/api/approvals/{approval_id}/decision"),
        &token,
        json!({ "decision": "approve" }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let waited = waiting.await.unwrap();
    let decision = waited.structured_content.clone().unwrap();
    assert_eq!(decision["decision"], "approved", "{}", text(&waited));
    assert_eq!(decision["decided_by"], "operator");
    assert!(
        decision["result"].as_str().unwrap().starts_with("exit 0"),
        "{decision}"
    );
    assert!(!marker.exists(), "the approved command ran");

    client.cancel().await.unwrap();
    stop(&mut server);
}

// rule: MCP-1
#[tokio::test]
async fn mcp_over_stdio_answers_a_malformed_line_with_a_protocol_error_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_nomos-server"));
    configure(&mut child, dir.path(), &data);
    let mut child = child
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "1" } }
    });
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let reply = next_json(&mut stdout).await;
    assert_eq!(reply["id"], 1, "{reply}");
    assert_eq!(reply["result"]["serverInfo"]["name"], "nomos", "{reply}");
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    for line in [
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"no/such/method\"}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"run\",\"arguments\":[1,2]}}\n",
    ] {
        stdin.write_all(line.as_bytes()).await.unwrap();
        let reply = next_json(&mut stdout).await;
        assert!(
            reply["error"]["code"].as_i64().unwrap() < 0,
            "{line} -> {reply}"
        );
    }
    stdin.write_all(b"{not json at all\n").await.unwrap();
    // The process goes on serving.
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}\n")
        .await
        .unwrap();
    let reply = loop {
        let reply = next_json(&mut stdout).await;
        if reply["id"] == 4 {
            break reply;
        }
        assert!(reply.get("error").is_some(), "{reply}");
    };
    assert!(
        reply["result"]["tools"].as_array().unwrap().len() > 10,
        "{reply}"
    );
    drop(stdin);
    let exit = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(
        exit.success(),
        "the process ends cleanly when stdin closes: {exit:?}"
    );
}

async fn next_json(
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("a reply within 20 s")
        .unwrap()
        .expect("the process is still serving");
    serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC: {e}: {line}"))
}

fn configure(command: &mut tokio::process::Command, dir: &Path, data: &Path) {
    command
        .current_dir(dir)
        .arg("--data-dir")
        .arg(data)
        .env("RUST_LOG", "warn")
        .env_remove("RUST_BACKTRACE");
    for (name, _) in std::env::vars() {
        if name.starts_with("NOMOS_") {
            command.env_remove(name);
        }
    }
}

async fn stdio_client(
    dir: &Path,
    data: &Path,
    name: &str,
    version: &str,
) -> RunningService<RoleClient, ClientConfig> {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_nomos-server"));
    configure(&mut command, dir, data);
    command.arg("mcp");
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(name, version),
    );
    info.serve(transport).await.unwrap()
}

/// The HTTP server on the same data directory: the child, its base URL and its token.
fn start_server(dir: &Path, data: &Path) -> (Child, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nomos-server"));
    command
        .current_dir(dir)
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .env("RUST_LOG", "warn")
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("server.log")).unwrap());
    for (name, _) in std::env::vars() {
        if name.starts_with("NOMOS_") {
            command.env_remove(name);
        }
    }
    let mut child = command.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    let (base, token) = url
        .split_once("/#token=")
        .expect("the URL carries the token");
    (child, base.to_owned(), token.to_owned())
}

fn stop(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

async fn call(client: &Peer<RoleClient>, name: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    tokio::time::timeout(Duration::from_secs(90), client.call_tool(params))
        .await
        .expect("the call answered")
        .unwrap_or_else(|e| panic!("{name}: protocol error {e}"))
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            rmcp::model::ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

async fn get(http: &reqwest::Client, url: &str, token: &str) -> Value {
    let response = http.get(url).bearer_auth(token).send().await.unwrap();
    assert_eq!(response.status(), 200, "GET {url}");
    response.json().await.unwrap()
}

async fn post(http: &reqwest::Client, url: &str, token: &str, body: Value) -> (u16, Value) {
    let response = http
        .post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}
