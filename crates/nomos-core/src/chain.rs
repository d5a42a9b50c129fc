//! AUDIT-2: the per-session hash chain of the event log.
//!
//! Each stored event carries `hash = SHA-256(prev || canonical)`, where `prev` is the
//! hash of the session's previous event (32 zero bytes for its first event, seq 1) and
//! `canonical` is the event's canonical JSON: an object with the keys `at` (epoch
//! milliseconds), `kind`, `payload`, `seq` and `session_id`, keys sorted at every
//! level, no whitespace. Hashes are stored and shown as 64 lowercase hex digits.
//!
//! The canonical form is built from the payload as a JSON value, so a backend that
//! re-encodes JSON (PostgreSQL's `jsonb`) verifies the same as one that keeps the text.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::id::SessionId;
use crate::time::Timestamp;

/// The `prev` of a session's first event.
pub const GENESIS: [u8; 32] = [0; 32];

/// One stored event with its chain hash, as the store reads it back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChainedEvent {
    /// The session it belongs to.
    pub session_id: SessionId,
    /// Position in the session's log.
    pub seq: i64,
    /// When it happened.
    pub at: Timestamp,
    /// The event's kind (`task.status`...).
    pub kind: String,
    /// The event as stored.
    pub payload: Value,
    /// The stored hash (hex); `None` for a row never hashed.
    pub hash: Option<String>,
}

/// Where a read of chained events continues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainCursor {
    /// One session's events after a seq (0: from the start).
    Session {
        /// The session.
        session: SessionId,
        /// The last seq already read.
        after_seq: i64,
    },
    /// Every session's events in `(session_id, seq)` order, after a position
    /// (`None`: from the start).
    All {
        /// The last `(session, seq)` already read.
        after: Option<(SessionId, i64)>,
    },
}

/// The canonical JSON of an event: what its hash covers.
pub fn canonical_event(
    session_id: SessionId,
    seq: i64,
    at: Timestamp,
    kind: &str,
    payload: &Value,
) -> String {
    let mut out = String::with_capacity(256);
    out.push_str("{\"at\":");
    out.push_str(&at.as_millis().to_string());
    out.push_str(",\"kind\":");
    push_string(&mut out, kind);
    out.push_str(",\"payload\":");
    push_canonical(&mut out, payload);
    out.push_str(",\"seq\":");
    out.push_str(&seq.to_string());
    out.push_str(",\"session_id\":");
    push_string(&mut out, &session_id.to_string());
    out.push('}');
    out
}

/// A JSON value with object keys sorted (by their UTF-8 bytes) at every level and no
/// whitespace.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    push_canonical(&mut out, value);
    out
}

fn push_canonical(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_string(out, key);
                out.push(':');
                push_canonical(out, &map[key]);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_canonical(out, item);
            }
            out.push(']');
        }
        // Scalars: serde_json's own compact form (strings escaped, numbers shortest).
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn push_string(out: &mut String, text: &str) {
    out.push_str(&Value::String(text.to_owned()).to_string());
}

/// `SHA-256(prev || canonical)`.
pub fn link_hash(prev: &[u8; 32], canonical: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(prev);
    hasher.update(canonical.as_bytes());
    hasher.finalize().into()
}

/// The hash of an event following `prev`.
pub fn event_hash(
    prev: &[u8; 32],
    session_id: SessionId,
    seq: i64,
    at: Timestamp,
    kind: &str,
    payload: &Value,
) -> [u8; 32] {
    link_hash(prev, &canonical_event(session_id, seq, at, kind, payload))
}

/// A hash as 64 lowercase hex digits.
pub fn to_hex(hash: &[u8; 32]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for byte in hash {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

/// Reads 64 hex digits back into a hash.
pub fn from_hex(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let high = char::from(pair[0]).to_digit(16)?;
        let low = char::from(pair[1]).to_digit(16)?;
        out[i] = u8::try_from(high * 16 + low).ok()?;
    }
    Some(out)
}

/// Hashes for a session's next events, continuing from the hash of its last one.
#[derive(Clone, Debug)]
pub struct Chainer {
    prev: [u8; 32],
}

impl Chainer {
    /// Continues after an event with this stored hash, or from the start (`None`: the
    /// session has no event yet).
    ///
    /// A stored hash that is not 64 hex digits continues from its SHA-256 instead, so
    /// the break stays visible to the verifier at that event rather than being healed.
    pub fn after(last: Option<&str>) -> Chainer {
        let prev = match last {
            None => GENESIS,
            Some(text) => from_hex(text).unwrap_or_else(|| link_hash(&GENESIS, text)),
        };
        Chainer { prev }
    }

    /// The hash of the next event, which becomes the `prev` of the one after.
    pub fn next(
        &mut self,
        session_id: SessionId,
        seq: i64,
        at: Timestamp,
        kind: &str,
        payload: &Value,
    ) -> String {
        self.prev = event_hash(&self.prev, session_id, seq, at, kind, payload);
        to_hex(&self.prev)
    }
}

/// Why a link of a chain is broken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BreakKind {
    /// The row carries no hash.
    MissingHash,
    /// The stored hash is not the hash of the row's content and its predecessor.
    Mismatch {
        /// The hash the chain gives.
        expected: String,
        /// The hash stored.
        found: String,
    },
    /// The seq does not follow the previous event's (a row is missing before it).
    Gap {
        /// The seq the chain expected.
        expected: i64,
    },
}

/// The first broken link of a chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokenLink {
    /// The session.
    pub session: SessionId,
    /// The event's seq.
    pub seq: i64,
    /// What is wrong with it.
    pub kind: BreakKind,
}

impl fmt::Display for BrokenLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "session {} event seq {}: ", self.session, self.seq)?;
        match &self.kind {
            BreakKind::MissingHash => write!(f, "no hash stored"),
            BreakKind::Mismatch { expected, found } => write!(
                f,
                "hash {found} does not match its content and predecessor (expected {expected})"
            ),
            BreakKind::Gap { expected } => {
                write!(
                    f,
                    "seq does not follow its predecessor (expected {expected})"
                )
            }
        }
    }
}

/// Walks events in `(session_id, seq)` order and finds the first broken link.
#[derive(Clone, Debug, Default)]
pub struct ChainVerifier {
    current: Option<(SessionId, i64, [u8; 32])>,
    /// Events checked so far.
    pub events: u64,
    /// Sessions seen so far.
    pub sessions: u64,
}

impl ChainVerifier {
    /// A verifier at the start of the log.
    pub fn new() -> ChainVerifier {
        ChainVerifier::default()
    }

    /// Checks the next event; the first error is the first broken link.
    pub fn check(&mut self, event: &ChainedEvent) -> Result<(), BrokenLink> {
        let (prev_seq, prev) = match self.current {
            Some((session, seq, hash)) if session == event.session_id => (seq, hash),
            _ => {
                self.sessions += 1;
                (0, GENESIS)
            }
        };
        self.events += 1;
        let broken = |kind| BrokenLink {
            session: event.session_id,
            seq: event.seq,
            kind,
        };
        if event.seq != prev_seq + 1 {
            return Err(broken(BreakKind::Gap {
                expected: prev_seq + 1,
            }));
        }
        let Some(found) = &event.hash else {
            return Err(broken(BreakKind::MissingHash));
        };
        let expected = event_hash(
            &prev,
            event.session_id,
            event.seq,
            event.at,
            &event.kind,
            &event.payload,
        );
        if from_hex(found) != Some(expected) {
            return Err(broken(BreakKind::Mismatch {
                expected: to_hex(&expected),
                found: found.clone(),
            }));
        }
        self.current = Some((event.session_id, event.seq, expected));
        Ok(())
    }
}

/// What a walk of every chain found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainReport {
    /// Sessions walked.
    pub sessions: u64,
    /// Events checked.
    pub events: u64,
    /// The first broken link, if any (the walk stops there).
    pub broken: Option<BrokenLink>,
}

/// Walks every session's chain in the store, `page` events per read (never the whole
/// log in memory), and stops at the first broken link.
pub async fn verify_store(
    store: &dyn crate::ports::store::Store,
    page: u32,
) -> Result<ChainReport, crate::ports::store::StoreError> {
    let mut verifier = ChainVerifier::new();
    let mut after = None;
    loop {
        let events = store
            .chained_events(ChainCursor::All { after }, page.max(1))
            .await?;
        for event in &events {
            if let Err(broken) = verifier.check(event) {
                return Ok(ChainReport {
                    sessions: verifier.sessions,
                    events: verifier.events,
                    broken: Some(broken),
                });
            }
        }
        match events.last() {
            Some(last) => after = Some((last.session_id, last.seq)),
            None => {
                return Ok(ChainReport {
                    sessions: verifier.sessions,
                    events: verifier.events,
                    broken: None,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn session() -> SessionId {
        "00000000-0000-4000-8000-000000000001".parse().unwrap()
    }

    fn chain(n: i64) -> Vec<ChainedEvent> {
        let mut chainer = Chainer::after(None);
        (1..=n)
            .map(|seq| {
                let payload = json!({"type": "note", "text": format!("n{seq}"), "b": [1, 2.5]});
                let at = Timestamp::from_millis(1_000 * seq);
                let hash = chainer.next(session(), seq, at, "note", &payload);
                ChainedEvent {
                    session_id: session(),
                    seq,
                    at,
                    kind: "note".into(),
                    payload,
                    hash: Some(hash),
                }
            })
            .collect()
    }

    fn verify(events: &[ChainedEvent]) -> Result<(), BrokenLink> {
        let mut verifier = ChainVerifier::new();
        events.iter().try_for_each(|e| verifier.check(e))
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level_without_whitespace() {
        let value = json!({"z": 1, "a": {"y": [true, null, "x"], "b": 0.5}});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":{"b":0.5,"y":[true,null,"x"]},"z":1}"#
        );
    }

    // rule: AUDIT-2
    #[test]
    fn the_first_hash_is_sha256_of_32_zero_bytes_and_the_canonical_event() {
        let payload = json!({"type": "session.created"});
        let at = Timestamp::from_millis(5);
        let canonical = canonical_event(session(), 1, at, "session.created", &payload);
        assert_eq!(
            canonical,
            r#"{"at":5,"kind":"session.created","payload":{"type":"session.created"},"seq":1,"session_id":"00000000-0000-4000-8000-000000000001"}"#
        );
        let mut reference = Sha256::new();
        reference.update([0u8; 32]);
        reference.update(canonical.as_bytes());
        let reference: [u8; 32] = reference.finalize().into();
        let mut chainer = Chainer::after(None);
        assert_eq!(
            chainer.next(session(), 1, at, "session.created", &payload),
            to_hex(&reference)
        );
    }

    // rule: AUDIT-2
    #[test]
    fn an_untouched_chain_verifies_and_an_edited_payload_is_named() {
        let mut events = chain(5);
        verify(&events).unwrap();
        events[2].payload["text"] = json!("edited");
        let broken = verify(&events).unwrap_err();
        assert_eq!((broken.session, broken.seq), (session(), 3));
        assert!(matches!(broken.kind, BreakKind::Mismatch { .. }));
    }

    // rule: AUDIT-2
    #[test]
    fn a_deleted_event_breaks_the_chain_at_the_next_one() {
        let mut events = chain(4);
        events.remove(1);
        let broken = verify(&events).unwrap_err();
        assert_eq!(broken.seq, 3);
        assert_eq!(broken.kind, BreakKind::Gap { expected: 2 });
    }

    #[test]
    fn a_row_without_hash_is_a_broken_link() {
        let mut events = chain(2);
        events[1].hash = None;
        assert_eq!(verify(&events).unwrap_err().kind, BreakKind::MissingHash);
    }

    #[test]
    fn hex_round_trips_and_rejects_bad_text() {
        let hash = link_hash(&GENESIS, "x");
        assert_eq!(from_hex(&to_hex(&hash)), Some(hash));
        assert_eq!(from_hex("zz"), None);
        assert_eq!(from_hex(&"g".repeat(64)), None);
    }

    #[test]
    fn the_chainer_continues_from_a_stored_hash() {
        let events = chain(3);
        let mut chainer = Chainer::after(events[1].hash.as_deref());
        let third = &events[2];
        assert_eq!(
            Some(chainer.next(third.session_id, 3, third.at, &third.kind, &third.payload)),
            third.hash
        );
    }
}
