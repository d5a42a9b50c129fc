//! The exact bytes of each HTTP exchange with the model server, kept on disk: what a real
//! server sent, byte for byte, so a test can serve the same bytes again (EVAL-7).
//!
//! Each exchange is three files named `<time>-<hash>`, the Unix time in milliseconds when the
//! response was read (13 digits, so the names sort in the order of the exchanges) and the
//! first 16 hex digits of the SHA-256 of the request body: `.request.json` (the body sent),
//! `.response` (the body received, a whole JSON reply, the raw event stream or an error) and
//! `.meta.json` (the endpoint, the model, the status and the content type).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Where the exchanges go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WireLog {
    dir: PathBuf,
}

/// The description of one exchange beside its bytes.
#[derive(Debug, Serialize)]
struct Meta<'a> {
    endpoint: &'a str,
    model: &'a str,
    status: u16,
    content_type: &'a str,
    response_bytes: usize,
}

/// One exchange as it happened.
pub(crate) struct Exchange<'a> {
    pub endpoint: &'a str,
    pub model: &'a str,
    pub request: &'a [u8],
    pub status: u16,
    pub content_type: &'a str,
    pub response: &'a [u8],
}

impl WireLog {
    pub(crate) fn new(dir: impl Into<PathBuf>) -> WireLog {
        WireLog { dir: dir.into() }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes one exchange. A failure to write is logged, never turned into a failure of the
    /// model call: the log is for people, the turn is for the operator.
    pub(crate) fn save(&self, exchange: &Exchange<'_>) {
        if let Err(err) = self.try_save(exchange) {
            tracing::warn!(dir = %self.dir.display(), error = %err, "could not write the wire log");
        }
    }

    fn try_save(&self, exchange: &Exchange<'_>) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let stem = format!("{now:013}-{}", hash_of(exchange.request));
        let meta = Meta {
            endpoint: exchange.endpoint,
            model: exchange.model,
            status: exchange.status,
            content_type: exchange.content_type,
            response_bytes: exchange.response.len(),
        };
        let meta = serde_json::to_vec_pretty(&meta).map_err(std::io::Error::other)?;
        std::fs::write(
            self.dir.join(format!("{stem}.request.json")),
            exchange.request,
        )?;
        std::fs::write(self.dir.join(format!("{stem}.response")), exchange.response)?;
        std::fs::write(self.dir.join(format!("{stem}.meta.json")), meta)
    }
}

/// The first 16 hex digits of the SHA-256 of `request`.
fn hash_of(request: &[u8]) -> String {
    let digest = Sha256::digest(request);
    let mut stem = String::with_capacity(16);
    for byte in &digest[..8] {
        // Writing to a String cannot fail.
        let _ = write!(stem, "{byte:02x}");
    }
    stem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exchange_is_kept_byte_for_byte_under_the_hash_of_its_request() {
        let dir = tempfile::tempdir().unwrap();
        let log = WireLog::new(dir.path().join("wire"));
        let response = b"data: {\"choices\":[]}\n\ndata: [DONE]\n\n";
        log.save(&Exchange {
            endpoint: "http://127.0.0.1:8080/v1/chat/completions",
            model: "gemma",
            request: b"{\"model\":\"gemma\"}",
            status: 200,
            content_type: "text/event-stream",
            response,
        });
        let hash = hash_of(b"{\"model\":\"gemma\"}");
        assert_eq!(hash.len(), 16);
        let wire = dir.path().join("wire");
        let names: Vec<String> = std::fs::read_dir(&wire)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let stem = names[0].split('.').next().unwrap().to_owned();
        assert_eq!(stem.len(), 13 + 1 + 16, "{stem}");
        assert!(stem.ends_with(&format!("-{hash}")), "{stem}");
        assert_eq!(
            std::fs::read(wire.join(format!("{stem}.response"))).unwrap(),
            response
        );
        assert_eq!(
            std::fs::read(wire.join(format!("{stem}.request.json"))).unwrap(),
            b"{\"model\":\"gemma\"}"
        );
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(wire.join(format!("{stem}.meta.json"))).unwrap())
                .unwrap();
        assert_eq!(meta["content_type"], "text/event-stream");
        assert_eq!(meta["response_bytes"], response.len());
    }
}
