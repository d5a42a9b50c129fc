//! The `nomos::audit` log lines a test causes, captured as JSON objects.

use std::sync::{Arc, Mutex};

use serde_json::Value;

/// What a [`capture`]d subscriber wrote so far.
#[derive(Clone, Debug, Default)]
pub struct AuditLines(Arc<Mutex<Vec<u8>>>);

impl AuditLines {
    /// Every line written so far, each a JSON object (its fields under `fields`).
    pub fn lines(&self) -> Vec<Value> {
        let bytes = match self.0.lock() {
            Ok(bytes) => bytes.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("an audit line that is not JSON ({e}): {line}"))
            })
            .collect()
    }

    /// The fields of the lines whose message is `message`.
    pub fn with_message(&self, message: &str) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|line| line["fields"]["message"] == message)
            .map(|line| line["fields"].clone())
            .collect()
    }
}

/// Sets, for this thread, a subscriber that keeps the `nomos::audit` lines as JSON; it
/// stays set while the guard lives. Under tokio's current-thread runtime (what
/// `#[tokio::test]` starts) the tasks a test spawns log to it too.
pub fn capture() -> (tracing::subscriber::DefaultGuard, AuditLines) {
    let lines = AuditLines::default();
    let sink = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_env_filter(tracing_subscriber::EnvFilter::new("nomos::audit=info"))
        .with_writer(move || Sink(sink.0.clone()))
        .finish();
    (tracing::subscriber::set_default(subscriber), lines)
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("the audit buffer is poisoned"))?
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
