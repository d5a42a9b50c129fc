//! AUDIT-2 on PostgreSQL: a row edited behind the store's back is named by the
//! verifier, and rows without a hash (written before migration 3) are hashed at open.

#![allow(clippy::unwrap_used)]

use nomos_core::chain::verify_store;
use nomos_postgres::PgStore;
use nomos_test_support::store_checks::{
    assert_first_break_is_a_mismatch, assert_rehashed, chains_before_clearing,
};
use nomos_test_support::store_contract::fixtures::two_chains;

async fn store_with_events(url: &str) -> (PgStore, nomos_core::SessionId) {
    let store = PgStore::connect(url).await.unwrap();
    let session = two_chains(&store, "first ✓").await;
    (store, session)
}

// rule: AUDIT-2
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_edited_with_raw_sql_is_named_by_the_verifier() {
    let url = nomos_test_support::postgres::fresh_database().await;
    let (store, session) = store_with_events(&url).await;
    assert_eq!(verify_store(&store, 2).await.unwrap().broken, None);

    sqlx::query(
        "UPDATE events SET payload = jsonb_set(payload, '{reason}', '\"nothing to see\"')
         WHERE session_id = $1 AND seq = 2",
    )
    .bind(session.as_uuid())
    .execute(store.pool())
    .await
    .unwrap();

    assert_first_break_is_a_mismatch(&store, session, 2).await;
}

// rule: AUDIT-2
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_without_a_hash_are_hashed_in_order_when_the_store_opens() {
    let url = nomos_test_support::postgres::fresh_database().await;
    let (store, _) = store_with_events(&url).await;
    let clear = sqlx::query("UPDATE events SET hash = NULL").execute(store.pool());
    let before = chains_before_clearing(&store, clear).await;

    let reopened = PgStore::connect(&url).await.unwrap();
    assert_rehashed(&reopened, 4, &before).await;
}
