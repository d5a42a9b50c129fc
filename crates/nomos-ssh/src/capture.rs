//! Capped capture of one output stream (EXEC-5): keep the first bytes, count the rest.

use nomos_core::ports::exec::{OutputSink, OutputStream};
use nomos_core::record::ExecOutput;

/// Collects at most `cap` bytes of a stream and counts how many more arrived.
///
/// Bytes beyond the cap are read and discarded, never left unread, so the remote
/// side is not blocked by a full pipe or SSH window.
#[derive(Clone)]
pub struct CappedBuffer {
    kept: Vec<u8>,
    cap: usize,
    cut: u64,
    live: Option<(OutputSink, OutputStream)>,
}

impl std::fmt::Debug for CappedBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CappedBuffer")
            .field("kept", &self.kept.len())
            .field("cap", &self.cap)
            .field("cut", &self.cut)
            .field("live", &self.live.as_ref().map(|(_, stream)| *stream))
            .finish()
    }
}

impl CappedBuffer {
    /// An empty buffer that keeps at most `cap` bytes.
    pub fn new(cap: usize) -> CappedBuffer {
        CappedBuffer {
            kept: Vec::with_capacity(cap.min(8 * 1024)),
            cap,
            cut: 0,
            live: None,
        }
    }

    /// EXEC-10: a buffer that also hands every chunk to `live` as `stream`.
    pub fn with_live(cap: usize, live: Option<OutputSink>, stream: OutputStream) -> CappedBuffer {
        CappedBuffer {
            live: live.map(|sink| (sink, stream)),
            ..CappedBuffer::new(cap)
        }
    }

    /// Appends a chunk, keeping what fits and counting the rest as cut; a live buffer
    /// hands the whole chunk on first.
    pub fn push(&mut self, chunk: &[u8]) {
        if let Some((sink, stream)) = &self.live
            && !chunk.is_empty()
        {
            sink(*stream, chunk);
        }
        let room = self.cap.saturating_sub(self.kept.len());
        let take = room.min(chunk.len());
        self.kept.extend_from_slice(&chunk[..take]);
        self.cut += (chunk.len() - take) as u64;
    }

    /// How many bytes were cut so far.
    pub fn cut(&self) -> u64 {
        self.cut
    }

    /// The kept bytes as text (invalid UTF-8, including a character split by the
    /// cap, becomes U+FFFD).
    pub fn into_text(self) -> (String, u64) {
        (String::from_utf8_lossy(&self.kept).into_owned(), self.cut)
    }
}

/// The two captured streams of one command.
#[derive(Clone, Debug)]
pub struct Captured {
    /// Standard output.
    pub stdout: CappedBuffer,
    /// Standard error.
    pub stderr: CappedBuffer,
}

impl Captured {
    /// Two empty buffers with the same cap.
    pub fn new(cap: usize) -> Captured {
        Captured::with_live(cap, None)
    }

    /// EXEC-10: two buffers that also hand their chunks to `live`.
    pub fn with_live(cap: usize, live: Option<OutputSink>) -> Captured {
        Captured {
            stdout: CappedBuffer::with_live(cap, live.clone(), OutputStream::Stdout),
            stderr: CappedBuffer::with_live(cap, live, OutputStream::Stderr),
        }
    }

    /// The port's output record.
    pub fn finish(
        self,
        exit_code: Option<i32>,
        signal: Option<String>,
        duration_ms: u64,
    ) -> ExecOutput {
        let (stdout, stdout_cut) = self.stdout.into_text();
        let (stderr, stderr_cut) = self.stderr.into_text();
        ExecOutput {
            exit_code,
            signal,
            stdout,
            stderr,
            stdout_cut,
            stderr_cut,
            duration_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: EXEC-5
    #[test]
    fn bytes_past_the_cap_are_counted_not_kept() {
        let mut buffer = CappedBuffer::new(5);
        buffer.push(b"abc");
        buffer.push(b"defgh");
        buffer.push(b"ij");
        assert_eq!(buffer.into_text(), ("abcde".to_string(), 5));
    }

    // rule: EXEC-5
    #[test]
    fn zero_cap_keeps_nothing_and_counts_everything() {
        let mut buffer = CappedBuffer::new(0);
        buffer.push(b"hello");
        assert_eq!(buffer.into_text(), (String::new(), 5));
    }

    // rule: EXEC-10
    #[test]
    fn a_live_buffer_hands_on_every_chunk_and_keeps_only_the_cap() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink: OutputSink = {
            let seen = seen.clone();
            std::sync::Arc::new(move |stream, chunk: &[u8]| {
                seen.lock().unwrap().push((stream, chunk.to_vec()));
            })
        };
        let mut buffer = CappedBuffer::with_live(3, Some(sink), OutputStream::Stderr);
        buffer.push(b"ab");
        buffer.push(b"");
        buffer.push(b"cd");
        assert_eq!(
            *seen.lock().unwrap(),
            vec![
                (OutputStream::Stderr, b"ab".to_vec()),
                (OutputStream::Stderr, b"cd".to_vec())
            ]
        );
        assert_eq!(buffer.into_text(), ("abc".to_string(), 1));
    }

    #[test]
    fn character_split_by_the_cap_becomes_a_replacement() {
        let mut buffer = CappedBuffer::new(2);
        buffer.push("é!".as_bytes());
        buffer.push(b"");
        let mut split = CappedBuffer::new(1);
        split.push("é".as_bytes());
        assert_eq!(buffer.into_text(), ("é".to_string(), 1));
        assert_eq!(split.into_text(), ("\u{fffd}".to_string(), 1));
    }
}
