//! The stored form of events on PostgreSQL: rows written before payloads carried a
//! format version read back as version 1.

#![allow(clippy::unwrap_used)]

use nomos_postgres::PgStore;
use nomos_test_support::store_checks::{
    assert_unversioned_rows_read_as_before, events_to_unversion,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_rows_without_a_format_version_read_as_version_1() {
    let url = nomos_test_support::postgres::fresh_database().await;
    let store = PgStore::connect(&url).await.unwrap();
    let before = events_to_unversion(&store).await;
    sqlx::query("UPDATE events SET payload = payload - 'v'")
        .execute(store.pool())
        .await
        .unwrap();
    assert_unversioned_rows_read_as_before(&store, &before).await;
}
