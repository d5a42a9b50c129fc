//! AUDIT-2 on a SQLite file: a row edited behind the store's back is named by the
//! verifier, and rows without a hash (written before migration 3) are hashed at open.

#![allow(clippy::unwrap_used)]

use nomos_core::chain::{BreakKind, verify_store};
use nomos_core::ports::store::Store;
use nomos_sqlite::SqliteStore;
use nomos_test_support::store_contract::fixtures::two_chains;

async fn store_with_events(dir: &std::path::Path) -> (SqliteStore, nomos_core::SessionId) {
    let store = SqliteStore::open_in_data_dir(dir).await.unwrap();
    let session = two_chains(&store, "first").await;
    (store, session)
}

// rule: AUDIT-2
#[tokio::test]
async fn a_payload_edited_with_raw_sql_is_named_by_the_verifier() {
    let dir = tempfile::tempdir().unwrap();
    let (store, session) = store_with_events(dir.path()).await;
    assert_eq!(verify_store(&store, 2).await.unwrap().broken, None);

    sqlx::query(
        "UPDATE events SET payload = json_set(payload, '$.reason', 'nothing to see')
         WHERE session_id = ?1 AND seq = 3",
    )
    .bind(session.to_string())
    .execute(store.write_pool())
    .await
    .unwrap();

    let broken = verify_store(&store, 2).await.unwrap().broken.unwrap();
    assert_eq!((broken.session, broken.seq), (session, 3));
    assert!(
        matches!(broken.kind, BreakKind::Mismatch { .. }),
        "{broken}"
    );
}

// rule: AUDIT-2
#[tokio::test]
async fn rows_without_a_hash_are_hashed_in_order_when_the_store_opens() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store_with_events(dir.path()).await;
    let before = store
        .chained_events(nomos_core::chain::ChainCursor::All { after: None }, 100)
        .await
        .unwrap();
    // What a database migrated from before the chain looks like.
    sqlx::query("UPDATE events SET hash = NULL")
        .execute(store.write_pool())
        .await
        .unwrap();
    assert_eq!(
        verify_store(&store, 10).await.unwrap().broken.unwrap().kind,
        BreakKind::MissingHash
    );
    store.write_pool().close().await;
    store.read_pool().close().await;

    let reopened = SqliteStore::open_in_data_dir(dir.path()).await.unwrap();
    let report = verify_store(&reopened, 10).await.unwrap();
    assert_eq!(report.broken, None);
    assert_eq!(report.events, 4);
    let after = reopened
        .chained_events(nomos_core::chain::ChainCursor::All { after: None }, 100)
        .await
        .unwrap();
    assert_eq!(
        after, before,
        "the backfill gives the hashes the commits gave"
    );
}
