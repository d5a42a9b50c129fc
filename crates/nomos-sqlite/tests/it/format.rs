//! The stored form of events on a SQLite file: rows written before payloads carried a
//! format version read back as version 1.

#![allow(clippy::unwrap_used)]

use nomos_sqlite::SqliteStore;
use nomos_test_support::store_checks::{
    assert_unversioned_rows_read_as_before, events_to_unversion,
};

#[tokio::test]
async fn event_rows_without_a_format_version_read_as_version_1() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in_data_dir(dir.path()).await.unwrap();
    let before = events_to_unversion(&store).await;
    sqlx::query("UPDATE events SET payload = json_remove(payload, '$.v')")
        .execute(store.write_pool())
        .await
        .unwrap();
    assert_unversioned_rows_read_as_before(&store, &before).await;
}
