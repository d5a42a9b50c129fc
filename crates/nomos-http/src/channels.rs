//! Decisions away from the console (AUTHZ-4): each approval request that waits for an
//! operator is sent, once, to the configured channels: a generic JSON webhook (its body
//! signed with HMAC-SHA256), an ntfy topic (ntfy's JSON publish), a Slack-compatible
//! incoming webhook. A channel only tells: it never decides; the operator decides in Nomos
//! through the link it carries.
//!
//! [`start`] follows the bus and sends from tasks of their own, each retried with back-off,
//! so a channel that is slow or down never holds up the gate or a turn.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nomos_agent::{Agent, LiveEvent};
use nomos_core::ApprovalId;
use nomos_core::event::DomainEvent;
use nomos_core::record::Approval;
use serde::Serialize;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

/// The header that carries a webhook body's signature: `sha256=<hex HMAC-SHA256>`.
pub const SIGNATURE_HEADER: &str = "x-nomos-signature";

/// One configured channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Channel {
    /// A generic JSON webhook: the [`Notice`] as the body, signed with `secret`.
    Webhook {
        /// Where to POST.
        url: String,
        /// The HMAC key.
        secret: String,
    },
    /// An ntfy server and topic (ntfy's JSON publish to the server's root).
    Ntfy {
        /// The server (`https://ntfy.sh`).
        server: String,
        /// The topic.
        topic: String,
    },
    /// A Slack-compatible incoming webhook (`{"text": ...}`).
    Slack {
        /// The webhook's URL.
        url: String,
    },
}

impl Channel {
    /// The channel's kind, for logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Channel::Webhook { .. } => "webhook",
            Channel::Ntfy { .. } => "ntfy",
            Channel::Slack { .. } => "slack",
        }
    }
}

/// What a waiting request is sent as: what the operator is shown, and where to decide.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Notice {
    /// The approval.
    pub approval_id: String,
    /// Its session.
    pub session_id: String,
    /// The exact command (EXEC-7).
    pub command: String,
    /// The host, or a fan-out's host set (FLEET-1).
    pub hosts: String,
    /// Its class.
    pub class: String,
    /// A line about the preview shown with it (GATE-10), if it has one.
    pub preview: Option<String>,
    /// The hash of what the approval binds to (GATE-7).
    pub binding_hash: String,
    /// How many distinct operators must approve it (AUTHZ-3).
    pub approvers_required: u32,
    /// When it expires (expiry means deny), RFC 3339.
    pub expires_at: String,
    /// The card, where an operator decides.
    pub card_url: String,
}

impl Notice {
    /// The notice of an approval, linking under `base` (the console's URL).
    pub fn of(approval: &Approval, base: &str) -> Notice {
        let preview = approval.binding.preview.as_ref().map(|preview| {
            let mut line = format!("{:?} preview, {:?}", preview.parser, preview.outcome);
            if !preview.packages.is_empty() {
                line.push_str(&format!(", {} package changes", preview.packages.len()));
            }
            if let Some(file) = &preview.file {
                line.push_str(&format!(", diff of {file}"));
            }
            line
        });
        Notice {
            approval_id: approval.id.to_string(),
            session_id: approval.session_id.to_string(),
            command: approval.binding.command.clone(),
            hosts: approval.binding.host.clone(),
            class: approval.binding.class.as_str().to_owned(),
            preview,
            binding_hash: approval.binding_hash.clone(),
            approvers_required: approval.approvers_required,
            expires_at: approval.expires_at.to_rfc3339(),
            card_url: format!(
                "{}/sessions/{}?approval={}",
                base.trim_end_matches('/'),
                approval.session_id,
                approval.id
            ),
        }
    }

    /// The notice in a sentence, for the chat channels.
    pub fn text(&self) -> String {
        let mut text = format!(
            "Nomos waits for approval: `{}` on {} ({}), until {}.",
            self.command, self.hosts, self.class, self.expires_at
        );
        if self.approvers_required > 1 {
            text.push_str(&format!(" Needs {} operators.", self.approvers_required));
        }
        if let Some(preview) = &self.preview {
            text.push_str(&format!(" Preview: {preview}."));
        }
        text.push_str(&format!(" Decide at {}", self.card_url));
        text
    }
}

/// A request to send: where, the body and its headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// Where to POST.
    pub url: String,
    /// The JSON body.
    pub body: String,
    /// Extra headers.
    pub headers: Vec<(&'static str, String)>,
}

/// The request a channel sends for a notice.
pub fn outgoing(channel: &Channel, notice: &Notice) -> Outgoing {
    match channel {
        Channel::Webhook { url, secret } => {
            let body = serde_json::to_string(notice).unwrap_or_default();
            let signature = sign(secret, body.as_bytes());
            Outgoing {
                url: url.clone(),
                body,
                headers: vec![(SIGNATURE_HEADER, format!("sha256={signature}"))],
            }
        }
        Channel::Ntfy { server, topic } => {
            let body = serde_json::json!({
                "topic": topic,
                "title": format!("Nomos: approval needed on {}", notice.hosts),
                "message": notice.text(),
                "tags": ["warning", notice.class],
                "priority": 4,
                "click": notice.card_url,
            });
            Outgoing {
                url: server.trim_end_matches('/').to_owned(),
                body: body.to_string(),
                headers: Vec::new(),
            }
        }
        Channel::Slack { url } => Outgoing {
            url: url.clone(),
            body: serde_json::json!({ "text": notice.text() }).to_string(),
            headers: Vec::new(),
        },
    }
}

/// The hex HMAC-SHA256 of `body` under `secret`.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    hex::encode(ring::hmac::sign(&key, body).as_ref())
}

/// How the senders retry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retry {
    /// Attempts in all.
    pub attempts: u32,
    /// The wait before the second attempt; it doubles after each.
    pub first_backoff: Duration,
    /// One attempt's timeout.
    pub timeout: Duration,
}

impl Default for Retry {
    fn default() -> Retry {
        Retry {
            attempts: 5,
            first_backoff: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
        }
    }
}

/// Follows the bus and sends each new approval request to every channel, once, from tasks
/// of their own. Ends with the bus.
pub fn start(
    agent: Agent,
    channels: Arc<[Channel]>,
    base_url: String,
    retry: Retry,
) -> JoinHandle<()> {
    let http = reqwest::Client::new();
    let sent: Arc<Mutex<HashSet<ApprovalId>>> = Arc::default();
    let mut events = agent.bus().subscribe();
    tokio::spawn(async move {
        loop {
            let record = match events.recv().await {
                Ok(LiveEvent::Committed(record)) => record,
                Ok(_) => continue,
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(
                        missed,
                        "channels: the bus lagged; some requests may not be sent"
                    );
                    continue;
                }
                Err(RecvError::Closed) => return,
            };
            let DomainEvent::ApprovalRequested { approval_id, .. } = record.event else {
                continue;
            };
            let first = sent
                .lock()
                .map(|mut sent| sent.insert(approval_id))
                .unwrap_or(false);
            if !first {
                continue;
            }
            let approval = match agent.store().approval(approval_id).await {
                Ok(Some(approval)) => approval,
                Ok(None) => continue,
                Err(error) => {
                    tracing::warn!(%error, %approval_id, "channels: the request could not be read");
                    continue;
                }
            };
            let notice = Notice::of(&approval, &base_url);
            for channel in channels.iter() {
                let request = outgoing(channel, &notice);
                tokio::spawn(deliver(
                    http.clone(),
                    channel.kind(),
                    request,
                    retry.clone(),
                ));
            }
        }
    })
}

/// Sends one request, retrying with back-off; logs the outcome. Returns whether it was
/// delivered (a 2xx answer).
pub async fn deliver(
    http: reqwest::Client,
    kind: &'static str,
    request: Outgoing,
    retry: Retry,
) -> bool {
    let mut backoff = retry.first_backoff;
    for attempt in 1..=retry.attempts.max(1) {
        let mut builder = http
            .post(&request.url)
            .timeout(retry.timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(request.body.clone());
        for (name, value) in &request.headers {
            builder = builder.header(*name, value);
        }
        match builder.send().await {
            Ok(response) if response.status().is_success() => {
                tracing::info!(channel = kind, attempt, "channel: request sent");
                return true;
            }
            Ok(response) => {
                tracing::warn!(channel = kind, attempt, status = %response.status(), "channel: refused");
            }
            Err(error) => {
                tracing::warn!(channel = kind, attempt, %error, "channel: not reached");
            }
        }
        if attempt < retry.attempts {
            tokio::time::sleep(backoff).await;
            backoff *= 2;
        }
    }
    tracing::error!(channel = kind, url = %request.url, "channel: gave up");
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: AUTHZ-4
    #[test]
    fn the_signature_is_the_hmac_sha256_of_the_body() {
        // RFC 4231, test case 2.
        assert_eq!(
            sign("Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
