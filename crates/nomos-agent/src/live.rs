//! EXEC-10: the output of a running command, live. The executor hands every chunk it reads
//! to a sink; the sink forwards it (never blocking, at most [`LIVE_OUTPUT_CAP`] bytes per
//! execution) to a task that coalesces what arrives within [`LIVE_COALESCE`] (or up to
//! [`LIVE_CHUNK_BYTES`]) into one non-durable [`LiveEvent::ExecutionOutput`], the way model
//! text streams as deltas. The stored output is the executor's capture, unchanged; the
//! task has published everything before the execution's end is recorded.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use nomos_core::ports::exec::{OutputSink, OutputStream};
use nomos_core::{ExecutionId, SessionId};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::bus::{EventBus, LiveEvent};

/// How long small chunks are gathered into one event.
pub const LIVE_COALESCE: Duration = Duration::from_millis(100);

/// An event carries at most about this many bytes; more is sent at once.
pub const LIVE_CHUNK_BYTES: usize = 8 * 1024;

/// At most this many bytes of one execution's output are streamed live; the rest shows
/// when the command ends, in its stored (capped) output.
pub const LIVE_OUTPUT_CAP: usize = 256 * 1024;

/// The sink an executor writes to and the task that publishes what it gathers; the task
/// ends once the sink (every clone of it) is dropped and all is published.
pub(crate) fn live_output(
    bus: EventBus,
    session_id: SessionId,
    execution_id: ExecutionId,
) -> (OutputSink, JoinHandle<()>) {
    let (sender, receiver) = mpsc::unbounded_channel::<(OutputStream, Vec<u8>)>();
    let forwarded = AtomicUsize::new(0);
    let sink: OutputSink = Arc::new(move |stream, chunk: &[u8]| {
        // The cap bounds what can queue, however fast the command writes.
        let before = forwarded.fetch_add(chunk.len(), Ordering::Relaxed);
        let room = LIVE_OUTPUT_CAP.saturating_sub(before);
        if room > 0 {
            let _ = sender.send((stream, chunk[..room.min(chunk.len())].to_vec()));
        }
    });
    let task = tokio::spawn(publish(bus, session_id, execution_id, receiver));
    (sink, task)
}

async fn publish(
    bus: EventBus,
    session_id: SessionId,
    execution_id: ExecutionId,
    mut receiver: mpsc::UnboundedReceiver<(OutputStream, Vec<u8>)>,
) {
    let mut pending = Pending::default();
    let mut open = true;
    while open {
        let Some((stream, bytes)) = receiver.recv().await else {
            break;
        };
        pending.push(stream, &bytes);
        let deadline = tokio::time::Instant::now() + LIVE_COALESCE;
        while pending.len() < LIVE_CHUNK_BYTES {
            match tokio::time::timeout_at(deadline, receiver.recv()).await {
                Ok(Some((stream, bytes))) => pending.push(stream, &bytes),
                Ok(None) => {
                    open = false;
                    break;
                }
                Err(_) => break,
            }
        }
        for (stream, text) in pending.take(false) {
            bus.publish(LiveEvent::ExecutionOutput {
                session_id,
                execution_id,
                stream,
                text,
            });
        }
    }
    for (stream, text) in pending.take(true) {
        bus.publish(LiveEvent::ExecutionOutput {
            session_id,
            execution_id,
            stream,
            text,
        });
    }
}

/// Bytes gathered per stream, not yet published.
#[derive(Default)]
struct Pending {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Pending {
    fn push(&mut self, stream: OutputStream, bytes: &[u8]) {
        match stream {
            OutputStream::Stdout => self.stdout.extend_from_slice(bytes),
            OutputStream::Stderr => self.stderr.extend_from_slice(bytes),
        }
    }

    fn len(&self) -> usize {
        self.stdout.len() + self.stderr.len()
    }

    /// The text ready to publish per stream; a character split between chunks waits for
    /// its rest unless this is the end.
    fn take(&mut self, end: bool) -> Vec<(OutputStream, String)> {
        let mut out = Vec::new();
        for (stream, bytes) in [
            (OutputStream::Stdout, &mut self.stdout),
            (OutputStream::Stderr, &mut self.stderr),
        ] {
            let text = take_text(bytes, end);
            if !text.is_empty() {
                out.push((stream, text));
            }
        }
        out
    }
}

/// Takes the text of `bytes`, leaving an incomplete UTF-8 character at the end in place
/// (unless `end`); invalid bytes become U+FFFD.
fn take_text(bytes: &mut Vec<u8>, end: bool) -> String {
    let keep = match std::str::from_utf8(bytes) {
        Ok(_) => 0,
        Err(error) if error.error_len().is_none() && !end => bytes.len() - error.valid_up_to(),
        Err(_) => 0,
    };
    let rest = bytes.split_off(bytes.len() - keep);
    let text = String::from_utf8_lossy(bytes).into_owned();
    *bytes = rest;
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: EXEC-10
    #[test]
    fn a_character_split_between_chunks_waits_for_its_rest() {
        let mut bytes = "ab\u{e9}".as_bytes().to_vec();
        bytes.pop();
        assert_eq!(take_text(&mut bytes, false), "ab");
        assert_eq!(bytes, vec![0xc3]);
        bytes.push(0xa9);
        assert_eq!(take_text(&mut bytes, false), "\u{e9}");
        let mut cut = vec![b'x', 0xc3];
        assert_eq!(take_text(&mut cut, true), "x\u{fffd}");
    }

    // rule: EXEC-10
    #[tokio::test]
    async fn small_chunks_are_coalesced_and_the_stream_is_capped() {
        let bus = EventBus::with_capacity(1024);
        let mut heard = bus.subscribe();
        let (session, execution) = (
            SessionId(uuid::Uuid::from_u128(1)),
            ExecutionId(uuid::Uuid::from_u128(2)),
        );
        let (sink, task) = live_output(bus.clone(), session, execution);
        for _ in 0..100 {
            sink(OutputStream::Stdout, b"x");
        }
        sink(OutputStream::Stderr, &vec![b'e'; LIVE_OUTPUT_CAP]);
        drop(sink);
        task.await.unwrap();
        let mut stdout = String::new();
        let mut stderr = 0;
        let mut events = 0;
        while let Ok(event) = heard.try_recv() {
            events += 1;
            let LiveEvent::ExecutionOutput {
                stream,
                text,
                execution_id,
                ..
            } = event
            else {
                panic!("{event:?}");
            };
            assert_eq!(execution_id, execution);
            match stream {
                OutputStream::Stdout => stdout.push_str(&text),
                OutputStream::Stderr => stderr += text.len(),
            }
        }
        assert_eq!(stdout, "x".repeat(100));
        assert_eq!(stderr, LIVE_OUTPUT_CAP - 100, "the cap counts both streams");
        assert!(events <= 3, "100 small chunks became {events} events");
    }
}
