//! What the store adapters' own tests check the same way once each adapter has done
//! its part by hand (raw SQL, a reopen): the errors they expect and the AUDIT-2 chain
//! after a tamper or a rehash. Each helper panics with the value it got.

#![allow(clippy::unwrap_used, clippy::panic)]

use nomos_core::SessionId;
use nomos_core::chain::{BreakKind, ChainCursor, ChainedEvent, verify_store};
use nomos_core::ports::store::{Store, StoreError};

/// The error of a database at migration 9999, which this binary does not know;
/// `backend` names the migrations folder (`sqlite`, `postgres`).
pub fn assert_schema_too_new(err: &StoreError, backend: &str) {
    let known = crate::migrations::newest_migration(backend);
    assert_eq!(*err, StoreError::SchemaTooNew { found: 9999, known });
}

/// A store error that is `Unavailable` and names every one of `words`.
pub fn assert_unavailable_naming(err: &StoreError, words: &[&str]) {
    match err {
        StoreError::Unavailable(message) => {
            assert!(words.iter().all(|w| message.contains(w)), "{message}");
        }
        other => panic!("expected Unavailable naming {words:?}, got {other:?}"),
    }
}

/// A store error that is `Invalid` and names every one of `words`.
pub fn assert_invalid_naming(err: &StoreError, words: &[&str]) {
    match err {
        StoreError::Invalid(message) => {
            assert!(words.iter().all(|w| message.contains(w)), "{message}");
        }
        other => panic!("expected Invalid naming {words:?}, got {other:?}"),
    }
}

/// AUDIT-2: the verifier names `(session, seq)` as the first broken event, a mismatch.
pub async fn assert_first_break_is_a_mismatch(store: &dyn Store, session: SessionId, seq: i64) {
    let broken = verify_store(store, 2).await.unwrap().broken.unwrap();
    assert_eq!((broken.session, broken.seq), (session, seq));
    assert!(
        matches!(broken.kind, BreakKind::Mismatch { .. }),
        "{broken}"
    );
}

/// Every stored event with its hash, in chain order (at most 100).
pub async fn chained(store: &dyn Store) -> Vec<ChainedEvent> {
    store
        .chained_events(ChainCursor::All { after: None }, 100)
        .await
        .unwrap()
}

/// AUDIT-2: the store's chains verify, hold `n` events, and are `before` again (a
/// store that hashed rows without a hash gave them the hashes the commits gave).
pub async fn assert_rehashed(store: &dyn Store, n: u64, before: &[ChainedEvent]) {
    let report = verify_store(store, 10).await.unwrap();
    assert_eq!(report.broken, None);
    assert_eq!(report.events, n);
    assert_eq!(
        chained(store).await,
        before,
        "the backfill gives the hashes the commits gave"
    );
}

/// AUDIT-2: runs `clear` (raw SQL that sets every event's hash to NULL, the way a
/// database migrated from before the chain looks), checks the verifier now stops at a
/// missing hash, and returns the chains as they were before.
pub async fn chains_before_clearing<R>(
    store: &dyn Store,
    clear: impl std::future::Future<Output = Result<R, sqlx::Error>>,
) -> Vec<ChainedEvent> {
    let before = chained(store).await;
    clear.await.unwrap();
    assert_first_break_is_a_missing_hash(store).await;
    before
}

/// A session whose row the caller then gives an unknown status with raw SQL.
pub async fn session_to_corrupt(store: &dyn Store) -> SessionId {
    use crate::store_contract::fixtures::{create, session_id};
    create(store, session_id(7), nomos_core::SessionStatus::Active)
        .await
        .id
}

/// Loading a session whose row holds the status `zombie` is refused as invalid data
/// naming the column and the value.
pub async fn assert_unknown_status_is_reported(store: &dyn Store, id: SessionId) {
    let err = store.load_session(id).await.unwrap_err();
    assert_invalid_naming(&err, &["status", "zombie"]);
}

/// AUDIT-2: the first event the verifier stops at has no hash.
pub async fn assert_first_break_is_a_missing_hash(store: &dyn Store) {
    assert_eq!(
        verify_store(store, 10).await.unwrap().broken.unwrap().kind,
        BreakKind::MissingHash
    );
}

/// After concurrent writers: sessions `session_id(100)`, `session_id(101)`... (one per
/// writer) each hold events numbered 1 to `per_session` without a gap, and the global
/// log orders all of them by an increasing `global_seq`.
pub async fn assert_dense_logs(store: &dyn Store, writers: u128, per_session: i64) {
    use crate::store_contract::fixtures::session_id;
    let all = store.events_after(None, 0, 10_000).await.unwrap();
    assert_eq!(all.len() as i64, writers as i64 * per_session);
    assert!(all.windows(2).all(|w| w[0].global_seq < w[1].global_seq));
    for writer in 0..writers {
        let seqs: Vec<i64> = store
            .events_after(Some(session_id(100 + writer)), 0, 10_000)
            .await
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, (1..=per_session).collect::<Vec<_>>());
    }
}

/// A session holding [`every_event`](crate::store_contract::fixtures::every_event), for
/// the test that strips the format version from its rows with raw SQL; returns its log.
pub async fn events_to_unversion(store: &dyn Store) -> Vec<nomos_core::event::EventRecord> {
    crate::store_contract::fixtures::committed_every_event(store)
        .await
        .1
}

/// Rows without a format version (what the stores wrote before it) read as version 1:
/// after raw SQL removed `v` from every payload, the log reads back as `before`.
pub async fn assert_unversioned_rows_read_as_before(
    store: &dyn Store,
    before: &[nomos_core::event::EventRecord],
) {
    let rows = chained(store).await;
    assert!(
        !rows.is_empty() && rows.iter().all(|row| row.payload.get("v").is_none()),
        "{rows:?}"
    );
    let session = before[0].session_id;
    let after = store.events_after(Some(session), 0, 100).await.unwrap();
    assert_eq!(after, before);
}
