//! Connections with JSON parse errors: when a request cannot even be parsed (a request
//! line over the parser's limit, headers too large, bytes that are not HTTP), hyper
//! answers by itself with an empty body. [`JsonErrorListener`] accepts TCP connections
//! whose writes turn exactly that automatic answer into the usual JSON error body with
//! the same status, so every error a client gets is `{"error": {...}}`.
//!
//! hyper's automatic answer is the one response that starts with `HTTP/1.1 400`, `414` or
//! `431` and says `content-length: 0`; every response of a handler here carries a JSON
//! body. After it, hyper closes the connection, so nothing follows the replaced bytes.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use crate::error::{ApiError, ErrorBody, ErrorDetail};

/// A TCP listener for `axum::serve` whose connections answer parse errors in JSON.
#[derive(Debug)]
pub struct JsonErrorListener {
    tcp: TcpListener,
}

impl JsonErrorListener {
    /// Wraps a bound listener.
    pub fn new(tcp: TcpListener) -> JsonErrorListener {
        JsonErrorListener { tcp }
    }
}

impl axum::serve::Listener for JsonErrorListener {
    type Io = JsonErrors<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (stream, addr) = axum::serve::Listener::accept(&mut self.tcp).await;
        (JsonErrors::new(stream), addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// A connection whose writes replace hyper's empty parse-error answer (module docs).
#[derive(Debug)]
pub struct JsonErrors<Io> {
    io: Io,
    /// Replacement bytes not yet written.
    pending: Vec<u8>,
}

impl<Io> JsonErrors<Io> {
    fn new(io: Io) -> JsonErrors<Io> {
        JsonErrors {
            io,
            pending: Vec::new(),
        }
    }
}

impl<Io: AsyncWrite + Unpin> JsonErrors<Io> {
    /// Writes what is pending; `Ready(Ok)` once nothing is.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            match Pin::new(&mut self.io).poll_write(cx, &self.pending) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    self.pending.drain(..n);
                }
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<Io: AsyncRead + Unpin> AsyncRead for JsonErrors<Io> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<Io: AsyncWrite + Unpin> AsyncWrite for JsonErrors<Io> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.poll_pending(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
            Poll::Pending => return Poll::Pending,
        }
        if let Some(replacement) = json_parse_error(buf) {
            self.pending = replacement;
            // The caller's bytes are taken whole; what goes out instead is pending.
            let _ = self.poll_pending(cx);
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.poll_pending(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut self.io).poll_flush(cx),
            other => other,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.poll_pending(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut self.io).poll_shutdown(cx),
            other => other,
        }
    }
}

/// The JSON answer that replaces `written` when it is hyper's automatic parse-error
/// answer (status 400, 414 or 431 with an empty body), else `None`.
fn json_parse_error(written: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(written).ok()?;
    let error = if text.starts_with("HTTP/1.1 414 ") {
        ApiError::UriTooLong
    } else if text.starts_with("HTTP/1.1 431 ") {
        ApiError::HeadersTooLarge
    } else if text.starts_with("HTTP/1.1 400 ") {
        ApiError::MalformedRequest
    } else {
        return None;
    };
    let (head, rest) = text.split_once("\r\n\r\n")?;
    let empty = head
        .lines()
        .any(|line| line.eq_ignore_ascii_case("content-length: 0"));
    if !empty || !rest.is_empty() {
        return None;
    }
    let status = error.status_code();
    let body = ErrorBody {
        error: ErrorDetail {
            code: error.code().to_owned(),
            message: error.public_message(),
        },
    };
    let body = serde_json::to_vec(&body).ok()?;
    let mut out = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_empty_automatic_answers_are_replaced() {
        let automatic = b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let replaced = String::from_utf8(json_parse_error(automatic).unwrap()).unwrap();
        assert!(
            replaced.starts_with("HTTP/1.1 414 URI Too Long\r\n"),
            "{replaced}"
        );
        assert!(replaced.ends_with(r#"{"error":{"code":"uri_too_long","message":"the request line is too long; send large values in a JSON body"}}"#), "{replaced}");
        let own = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 20\r\n\r\n";
        assert_eq!(json_parse_error(own), None);
        assert_eq!(
            json_parse_error(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"),
            None
        );
    }
}
