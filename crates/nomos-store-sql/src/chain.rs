//! AUDIT-2 at the store: the hashes to give rows written before the chain existed.

use nomos_core::chain::{ChainedEvent, Chainer};
use nomos_core::ports::store::StoreError;

use crate::backend::{Arg, SqlBackend, SqlWriteTx, Statement};
use crate::sql::SHARED;
use crate::{RecordRow, record};

/// Hashes every event row that has no hash yet, session by session in seq order, each
/// session in its own write transaction (under the event-log lock where there is one);
/// returns how many rows it hashed.
pub async fn hash_unhashed_events<B: SqlBackend>(db: &B) -> Result<u64, StoreError> {
    let sql = B::SQL;
    let sessions = db
        .fetch_all(Statement::new(
            SHARED.unhashed_sessions,
            Vec::new(),
            "finding unhashed events",
        ))
        .await?
        .iter()
        .map(|row| row.uuid("session_id"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut hashed = 0;
    for sid in sessions {
        let mut tx = db.begin_write().await?;
        if let Some(lock) = sql.lock_event_log {
            tx.execute(Statement::new(lock, Vec::new(), "locking the event log"))
                .await?;
        }
        let events = tx
            .fetch_all(Statement::new(
                SHARED.all_chained_session_events,
                vec![Arg::Id(sid)],
                "reading events to hash",
            ))
            .await?
            .iter()
            .map(record::chained_event)
            .collect::<Result<Vec<_>, _>>()?;
        for (seq, hash) in missing_hashes(&events) {
            let args = vec![Arg::Text(hash), Arg::Id(sid), Arg::Int(seq)];
            let what = format!("hashing event {seq} of session {sid}");
            tx.execute(Statement::new(SHARED.set_event_hash, args, what))
                .await?;
            hashed += 1;
        }
        tx.commit().await?;
    }
    Ok(hashed)
}

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
