//! AUDIT-2 at the store: the hashes to give rows written before the chain existed.

use nomos_core::chain::{ChainedEvent, Chainer};

/// For one session's events in seq order, the `(seq, hash)` of each row without a
/// hash, chained on the rows before it (a stored hash is kept and chained on as it is,
/// so a row already broken stays broken for the verifier).
pub fn missing_hashes(events: &[ChainedEvent]) -> Vec<(i64, String)> {
    let mut chainer = Chainer::after(None);
    let mut missing = Vec::new();
    for event in events {
        match &event.hash {
            Some(stored) => chainer = Chainer::after(Some(stored)),
            None => {
                let hash = chainer.next(
                    event.session_id,
                    event.seq,
                    event.at,
                    &event.kind,
                    &event.payload,
                );
                missing.push((event.seq, hash));
            }
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use nomos_core::Timestamp;
    use nomos_core::chain::ChainVerifier;
    use serde_json::json;

    use super::*;

    // rule: AUDIT-2
    #[test]
    fn rows_hashed_after_the_fact_form_a_chain_that_verifies() {
        let session = "00000000-0000-4000-8000-000000000002".parse().unwrap();
        let mut events: Vec<ChainedEvent> = (1..=3)
            .map(|seq| ChainedEvent {
                session_id: session,
                seq,
                at: Timestamp::from_millis(seq),
                kind: "session.created".into(),
                payload: json!({"type": "session.created", "n": seq}),
                hash: None,
            })
            .collect();
        let filled = missing_hashes(&events);
        assert_eq!(filled.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 2, 3]);
        for (event, (_, hash)) in events.iter_mut().zip(filled) {
            event.hash = Some(hash);
        }
        let mut verifier = ChainVerifier::new();
        for event in &events {
            verifier.check(event).unwrap();
        }
        assert!(missing_hashes(&events).is_empty());
    }
}
