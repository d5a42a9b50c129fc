//! What only a database file shows: WAL mode, reopening, concurrent writers, the
//! schema version checks at open, and bad paths.

use nomos_core::SessionStatus;
use nomos_core::event::DomainEvent;
use nomos_core::ports::store::{Store, StoreError};
use nomos_sqlite::SqliteStore;
use nomos_test_support::store_contract::fixtures::{create, event, events_commit, session_id};
use sqlx::Row;

#[tokio::test]
async fn a_file_database_runs_in_wal_mode_with_foreign_keys_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in_data_dir(dir.path().join("data"))
        .await
        .unwrap();
    assert!(dir.path().join("data/nomos.db").exists());
    let mode: String = sqlx::query("PRAGMA journal_mode")
        .fetch_one(store.write_pool())
        .await
        .unwrap()
        .get(0);
    assert_eq!(mode, "wal");
    let fk: i64 = sqlx::query("PRAGMA foreign_keys")
        .fetch_one(store.read_pool())
        .await
        .unwrap()
        .get(0);
    assert_eq!(fk, 1);
    let sync: i64 = sqlx::query("PRAGMA synchronous")
        .fetch_one(store.write_pool())
        .await
        .unwrap()
        .get(0);
    assert_eq!(sync, 1, "synchronous=NORMAL");
}

#[tokio::test]
async fn data_survives_reopening_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nomos.db");
    let path = path.to_str().unwrap();
    let record = {
        let store = SqliteStore::open(path).await.unwrap();
        create(&store, session_id(1), SessionStatus::Planning).await
    };
    let url = format!("sqlite://{path}");
    let store = SqliteStore::open_existing(&url).await.unwrap();
    assert_eq!(
        store.load_session(record.id).await.unwrap().unwrap().record,
        record
    );
    store.check().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_neither_deadlock_nor_lose_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let mut tasks = Vec::new();
    for writer in 0..8u128 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let record = create(&*store, session_id(100 + writer), SessionStatus::Executing).await;
            for n in 1..=50i64 {
                let commit = events_commit(&record, n, vec![event(n, DomainEvent::Nudged)]);
                store.commit(commit).await.unwrap();
                // Reads interleave with the writes without blocking them.
                let snapshot = store.load_session(record.id).await.unwrap().unwrap();
                assert_eq!(snapshot.record.version, n + 1);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let all = store.events_after(None, 0, 10_000).await.unwrap();
    assert_eq!(all.len(), 8 * 51);
    assert!(all.windows(2).all(|w| w[0].global_seq < w[1].global_seq));
    for writer in 0..8u128 {
        let seqs: Vec<i64> = store
            .events_after(Some(session_id(100 + writer)), 0, 100)
            .await
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, (1..=51).collect::<Vec<_>>());
    }
}

#[tokio::test]
async fn a_database_at_a_newer_migration_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nomos.db");
    let path = path.to_str().unwrap().to_owned();
    let store = SqliteStore::open(&path).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (9999, 'from the future', 1, x'00', 0)",
    )
    .execute(store.write_pool())
    .await
    .unwrap();
    drop(store);
    let err = SqliteStore::open(&path).await.unwrap_err();
    assert_eq!(
        err,
        StoreError::SchemaTooNew {
            found: 9999,
            known: 3
        }
    );
    assert!(
        err.to_string().contains("newer than this binary knows"),
        "{err}"
    );
    let err = SqliteStore::open_existing(&path).await.unwrap_err();
    assert_eq!(
        err,
        StoreError::SchemaTooNew {
            found: 9999,
            known: 3
        }
    );
}

#[tokio::test]
async fn an_unmigrated_database_is_refused_without_migrating() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    // An empty SQLite file.
    let conn = sqlx::sqlite::SqlitePoolOptions::new()
        .connect_with(
            sqlx::sqlite::SqliteConnectOptions::new()
                .filename(&path)
                .create_if_missing(true),
        )
        .await
        .unwrap();
    sqlx::query("CREATE TABLE unrelated (x INTEGER)")
        .execute(&conn)
        .await
        .unwrap();
    conn.close().await;
    let err = SqliteStore::open_existing(path.to_str().unwrap())
        .await
        .unwrap_err();
    assert_eq!(err, StoreError::NotMigrated);
    // Opening normally migrates it, keeping what was there.
    let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
    store.check().await.unwrap();
    let kept: i64 = sqlx::query("SELECT count(*) FROM unrelated")
        .fetch_one(store.read_pool())
        .await
        .unwrap()
        .get(0);
    assert_eq!(kept, 0);
}

#[tokio::test]
async fn a_path_that_cannot_be_opened_is_unavailable_and_names_it() {
    let err = SqliteStore::open("/proc/nomos-no-such-dir/x/nomos.db")
        .await
        .unwrap_err();
    match err {
        StoreError::Unavailable(message) => {
            assert!(
                message.contains("/proc/nomos-no-such-dir/x/nomos.db"),
                "{message}"
            )
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    let missing = tempfile::tempdir().unwrap();
    let err = SqliteStore::open_existing(missing.path().join("absent.db").to_str().unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    let err = SqliteStore::open("sqlite://x?mode=bogus")
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Unavailable(ref m) if m.contains("sqlite://x?mode=bogus")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_row_holding_an_unknown_status_is_reported_with_its_column() {
    let store = SqliteStore::in_memory().await.unwrap();
    let record = create(&store, session_id(7), SessionStatus::Active).await;
    // Bypass the CHECK constraint the way an old or foreign writer might.
    sqlx::query("PRAGMA ignore_check_constraints = ON")
        .execute(store.write_pool())
        .await
        .unwrap();
    sqlx::query("UPDATE sessions SET status = 'zombie' WHERE id = ?1")
        .bind(record.id.to_string())
        .execute(store.write_pool())
        .await
        .unwrap();
    let err = store.load_session(record.id).await.unwrap_err();
    match err {
        StoreError::Invalid(message) => {
            assert!(
                message.contains("status") && message.contains("zombie"),
                "{message}"
            )
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[tokio::test]
async fn check_constraints_refuse_unknown_spellings() {
    let store = SqliteStore::in_memory().await.unwrap();
    let record = create(&store, session_id(8), SessionStatus::Active).await;
    let err = sqlx::query("UPDATE sessions SET status = 'zombie' WHERE id = ?1")
        .bind(record.id.to_string())
        .execute(store.write_pool())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("CHECK constraint failed"), "{err}");
}

#[tokio::test]
async fn a_memory_url_opens_one_shared_in_memory_database() {
    let store = SqliteStore::open("sqlite::memory:").await.unwrap();
    let record = create(&store, session_id(9), SessionStatus::Active).await;
    // Reads see the write: readers and the writer share the one database.
    assert_eq!(
        store.load_session(record.id).await.unwrap().unwrap().record,
        record
    );
    assert_eq!(
        SqliteStore::open_existing(":memory:").await.unwrap_err(),
        StoreError::NotMigrated
    );
}

#[tokio::test]
async fn a_new_data_directory_and_its_database_files_are_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = SqliteStore::open_in_data_dir(&data).await.unwrap();
    // A write makes sure the WAL and its index exist.
    create(&store, session_id(70), SessionStatus::Active).await;
    let mode = |name: &str| {
        std::fs::metadata(data.join(name))
            .map(|m| m.permissions().mode() & 0o777)
            .ok()
    };
    assert_eq!(mode(""), Some(0o700));
    assert_eq!(mode("nomos.db"), Some(0o600));
    for companion in ["nomos.db-wal", "nomos.db-shm"] {
        if let Some(found) = mode(companion) {
            assert_eq!(found, 0o600, "{companion}");
        }
    }
    drop(store);
    // Reopening keeps working on the file made empty at first.
    SqliteStore::open_in_data_dir(&data).await.unwrap();
}
