//! AUDIT-2 on a SQLite file: a row edited behind the store's back is named by the
//! verifier, and rows without a hash (written before migration 3) are hashed at open.

#![allow(clippy::unwrap_used)]

use nomos_core::chain::verify_store;
use nomos_sqlite::SqliteStore;
use nomos_test_support::store_checks::{
    assert_first_break_is_a_mismatch, assert_rehashed, chains_before_clearing,
};
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

    assert_first_break_is_a_mismatch(&store, session, 3).await;
}

// rule: AUDIT-2
#[tokio::test]
async fn rows_without_a_hash_are_hashed_in_order_when_the_store_opens() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store_with_events(dir.path()).await;
    // What a database migrated from before the chain looks like.
    let clear = sqlx::query("UPDATE events SET hash = NULL").execute(store.write_pool());
    let before = chains_before_clearing(&store, clear).await;
    store.write_pool().close().await;
    store.read_pool().close().await;

    let reopened = SqliteStore::open_in_data_dir(dir.path()).await.unwrap();
    assert_rehashed(&reopened, 4, &before).await;
}
