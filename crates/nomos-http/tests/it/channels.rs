//! AUTHZ-4 over real HTTP: a waiting request reaches a local webhook receiver with its body
//! signed, an ntfy server in ntfy's JSON publish shape, and a Slack-compatible webhook; a
//! receiver that never answers holds up neither the gate, the turn nor the other channels.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use nomos_http::channels::{self, Channel, Retry, SIGNATURE_HEADER};
use serde_json::Value;
use tokio::sync::mpsc;

use super::{server, settle};

const SCRIPT: &str = r#"
- tool_calls:
    - {name: set_goal, arguments: {goal: "remove the mark"}}
    - {name: propose_plan, arguments: {steps: [{title: "remove the mark"}, {title: "write back: update_entity_attributes"}]}}
- text: "Plan ready. Approve?"
- tool_calls:
    - {name: run, arguments: {host: local, command: "rm MARK-channels"}}
  expect: {last_user_contains: "approved"}
- text: "Removing the mark needs your approval."
"#;

type Received = (String, HeaderMap, String);

async fn receive(
    State(tx): State<mpsc::UnboundedSender<Received>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: String,
) -> &'static str {
    let _ = tx.send((uri.path().to_owned(), headers, body));
    "ok"
}

/// A receiver on loopback: every POST lands on the returned channel.
async fn receiver() -> (String, mpsc::UnboundedReceiver<Received>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let app = Router::new()
        .route("/", post(receive))
        .route("/hook", post(receive))
        .route("/slack", post(receive))
        .with_state(tx);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, rx)
}

// rule: AUTHZ-4
#[tokio::test]
async fn authz_4_a_waiting_request_reaches_each_channel_once_and_a_silent_one_delays_nothing() {
    let server = server(SCRIPT).await;
    let (base, mut received) = receiver().await;
    // Accepts connections and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/hook", silent.local_addr().unwrap());
    let channels: Arc<[Channel]> = Arc::from(vec![
        Channel::Webhook {
            url: silent_url,
            secret: "s".into(),
        },
        Channel::Webhook {
            url: format!("{base}/hook"),
            secret: "webhook-secret".into(),
        },
        Channel::Ntfy {
            server: base.clone(),
            topic: "nomos-ops".into(),
        },
        Channel::Slack {
            url: format!("{base}/slack"),
        },
    ]);
    let retry = Retry {
        attempts: 3,
        first_backoff: Duration::from_millis(50),
        timeout: Duration::from_secs(120),
    };
    let _task = channels::start(
        server.state.agent.clone(),
        channels,
        "https://nomos.example".into(),
        retry,
    );

    let id = server.create_session().await;
    assert_eq!(
        server.say(&id, "remove the mark please").await.status(),
        202
    );
    settle(&server, &id).await;
    assert_eq!(server.say(&id, "approved").await.status(), 202);
    // The turn ends while the silent receiver still holds its connection.
    settle(&server, &id).await;
    let approvals = server
        .json(&format!("/api/approvals?session_id={id}"))
        .await;
    let approval = approvals[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(approvals[0]["status"], "pending");

    let mut by_path = std::collections::BTreeMap::new();
    while by_path.len() < 3 {
        let (path, headers, body) = tokio::time::timeout(Duration::from_secs(20), received.recv())
            .await
            .expect("every live channel got the request")
            .unwrap();
        assert!(
            by_path.insert(path.clone(), (headers, body)).is_none(),
            "{path} twice"
        );
    }

    // The webhook: the notice, signed.
    let (headers, body) = &by_path["/hook"];
    let signature = headers[SIGNATURE_HEADER].to_str().unwrap();
    assert_eq!(
        signature,
        format!(
            "sha256={}",
            channels::sign("webhook-secret", body.as_bytes())
        )
    );
    let notice: Value = serde_json::from_str(body).unwrap();
    assert_eq!(notice["approval_id"], approval.as_str());
    assert_eq!(notice["command"], "rm MARK-channels");
    assert_eq!(notice["hosts"], "local");
    assert_eq!(notice["class"], "destructive");
    assert_eq!(
        notice["binding_hash"].as_str().unwrap().len(),
        64,
        "{notice}"
    );
    assert!(
        notice["expires_at"].as_str().unwrap().contains('T'),
        "{notice}"
    );
    assert_eq!(
        notice["card_url"],
        format!("https://nomos.example/sessions/{id}?approval={approval}")
    );

    // ntfy's JSON publish: POST to the server's root with topic, message, title, tags,
    // priority (1..5) and click.
    let (_, body) = &by_path["/"];
    let ntfy: Value = serde_json::from_str(body).unwrap();
    assert_eq!(ntfy["topic"], "nomos-ops");
    assert!(
        ntfy["message"]
            .as_str()
            .unwrap()
            .contains("rm MARK-channels"),
        "{ntfy}"
    );
    assert!(ntfy["title"].is_string(), "{ntfy}");
    assert!(
        ntfy["tags"]
            .as_array()
            .unwrap()
            .iter()
            .all(Value::is_string),
        "{ntfy}"
    );
    assert!(
        (1..=5).contains(&ntfy["priority"].as_u64().unwrap()),
        "{ntfy}"
    );
    assert_eq!(ntfy["click"], notice["card_url"]);

    // Slack: an incoming webhook's `text`.
    let (_, body) = &by_path["/slack"];
    let slack: Value = serde_json::from_str(body).unwrap();
    assert!(
        slack["text"].as_str().unwrap().contains("rm MARK-channels"),
        "{slack}"
    );

    // No channel decided anything.
    let approvals = server
        .json(&format!("/api/approvals?session_id={id}"))
        .await;
    assert_eq!(approvals[0]["status"], "pending");
    // Sent once: nothing more arrives.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), received.recv())
            .await
            .is_err()
    );
}
