//! A model endpoint on loopback that never finishes: it answers every chat request with
//! an OpenAI-style event stream and sends one small text chunk per interval, forever
//! (TURN-12). It never goes silent long enough for an idle timeout to fire.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The running endpoint; it stops when dropped.
#[derive(Debug)]
pub struct TricklingModel {
    /// Where it listens; the base URL is `http://{address}/v1`.
    pub address: SocketAddr,
    requests: Arc<AtomicUsize>,
    open: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl TricklingModel {
    /// Starts an endpoint that sends one chunk every `interval`.
    pub async fn start(interval: Duration) -> TricklingModel {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(AtomicUsize::new(0));
        let counter = requests.clone();
        let streams = open.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let counter = counter.clone();
                let streams = streams.clone();
                tokio::spawn(async move {
                    streams.fetch_add(1, Ordering::SeqCst);
                    trickle(socket, interval, &counter).await;
                    streams.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        TricklingModel {
            address,
            requests,
            open,
            task,
        }
    }

    /// The OpenAI-compatible base URL.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// How many connections it is serving now: a stream the client dropped ends at the
    /// next chunk it fails to send.
    pub fn n_open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// How many chat requests it received.
    pub fn n_requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for TricklingModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn trickle(mut socket: TcpStream, interval: Duration, requests: &AtomicUsize) {
    if !read_request(&mut socket).await {
        return;
    }
    requests.fetch_add(1, Ordering::SeqCst);
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    loop {
        let event = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\".\"},\"finish_reason\":null}]}\n\n";
        let piece = format!("{:x}\r\n{event}\r\n", event.len());
        if socket.write_all(piece.as_bytes()).await.is_err() || socket.flush().await.is_err() {
            return;
        }
        tokio::time::sleep(interval).await;
    }
}

/// Reads one HTTP request (headers and a `content-length` body); `false` when the peer
/// closed first.
async fn read_request(socket: &mut TcpStream) -> bool {
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let Ok(n) = socket.read(&mut buf).await else {
            return false;
        };
        if n == 0 {
            return false;
        }
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        if let Some(end) = text.find("\r\n\r\n") {
            let length: usize = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .and_then(|v| v.trim().parse().ok())
                })
                .unwrap_or(0);
            if seen.len() >= end + 4 + length {
                return true;
            }
        }
    }
}
