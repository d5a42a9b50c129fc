//! EXEC-9 on a real full disk: a small tmpfs as the data directory fills up, commits
//! fail with a clear error, and once space is freed writes succeed again on the same
//! store, without reopening it.

use nomos_core::SessionStatus;
use nomos_core::ports::store::{Commit, Store, StoreError};
use nomos_core::record::SessionRecord;
use nomos_core::status::Role;
use nomos_sqlite::SqliteStore;
use nomos_test_support::small_disk::SmallDisk;
use nomos_test_support::store_contract::fixtures::{create, message, session_id};

/// A commit that appends one large message, so a few of them outgrow any slack the
/// database and its WAL file keep.
fn big_message(record: &SessionRecord, version: i64, n: u64) -> Commit {
    Commit {
        expected_version: Some(version),
        session: Some(record.clone()),
        messages: vec![message(
            record.id,
            n,
            Role::Operator,
            &"x".repeat(256 * 1024),
        )],
        ..Commit::default()
    }
}

/// Commits large messages until one fails; returns that error and the version to
/// commit against next.
async fn commit_until_full(store: &SqliteStore, record: &SessionRecord, n: &mut u64) -> StoreError {
    let mut version = match store.load_session(record.id).await {
        Ok(Some(snapshot)) => snapshot.record.version,
        other => panic!("cannot load session {}: {other:?}", record.id),
    };
    for _ in 0..200 {
        *n += 1;
        match store.commit(big_message(record, version, *n)).await {
            Ok(receipt) => version = receipt.version,
            Err(error) => return error,
        }
    }
    panic!("200 large commits fit on a full disk");
}

// rule: EXEC-9
#[tokio::test]
async fn a_full_disk_fails_commits_cleanly_and_writes_resume_once_space_is_freed() {
    let disk = SmallDisk::mount(6);
    let store = SqliteStore::open_in_data_dir(disk.path().join("data"))
        .await
        .unwrap();
    let record = create(&store, session_id(1), SessionStatus::Executing).await;
    let ballast = disk.fill();
    let mut n = 0;

    // Several failures in a row, each a clean error about the disk, none about a
    // transaction left open by the one before.
    for _ in 0..3 {
        let error = commit_until_full(&store, &record, &mut n).await;
        let text = error.to_string();
        assert!(
            matches!(error, StoreError::Unavailable(_)),
            "a full disk is an unavailable store, got {error:?}"
        );
        assert!(
            text.contains("full"),
            "the error names the full disk: {text}"
        );
        assert!(!text.contains("transaction depth"), "{text}");
    }
    let probe = store.probe_write().await;
    assert!(
        matches!(probe, Err(StoreError::Unavailable(_))),
        "the write probe sees the full disk: {probe:?}"
    );
    // Other writes fail the same clean way.
    let other = store
        .commit(nomos_test_support::store_contract::fixtures::create_commit(
            nomos_test_support::store_contract::fixtures::session(
                session_id(2),
                SessionStatus::Planning,
            ),
        ))
        .await;
    if let Err(error) = &other {
        assert!(!error.to_string().contains("transaction depth"), "{error}");
    }

    std::fs::remove_file(ballast).unwrap();
    let version = store
        .load_session(record.id)
        .await
        .unwrap()
        .unwrap()
        .record
        .version;
    let receipt = store
        .commit(big_message(&record, version, n + 1))
        .await
        .unwrap();
    assert_eq!(receipt.version, version + 1);
    store.probe_write().await.unwrap();
    let messages = store.messages(record.id).await.unwrap();
    assert_eq!(messages.last().unwrap().id, record.id.message_id(n + 1));
}
