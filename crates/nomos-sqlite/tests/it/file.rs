//! What only a database file shows: WAL mode, reopening, concurrent writers, the
//! schema version checks at open, and bad paths.

use nomos_core::SessionStatus;
use nomos_core::event::DomainEvent;
use nomos_core::ports::store::{Store, StoreError};
use nomos_sqlite::SqliteStore;
use nomos_test_support::store_checks::{
    assert_dense_logs, assert_schema_too_new, assert_unavailable_naming,
    assert_unknown_status_is_reported, session_to_corrupt,
};
use nomos_test_support::store_contract::fixtures::{create, event, events_commit, session_id};
use sqlx::{ConnectOptions, Row};

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

// rule: EXEC-9
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_neither_deadlock_nor_lose_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    // Commits run on the commit connection, the write probe on the driver's writer:
    // neither may fail with SQLITE_BUSY while the other holds the lock.
    let probes = {
        let store = store.clone();
        tokio::spawn(async move {
            for _ in 0..200 {
                store.probe_write().await.unwrap();
            }
        })
    };
    let writers: Vec<_> = (0..8u128)
        .map(|writer| {
            let store = store.clone();
            tokio::spawn(async move {
                let id = session_id(100 + writer);
                let record = create(&*store, id, SessionStatus::Executing).await;
                for n in 1..=50i64 {
                    let commit = events_commit(&record, n, vec![event(n, DomainEvent::Nudged)]);
                    store.commit(commit).await.unwrap();
                    // Reads interleave with the writes without blocking them.
                    let snapshot = store.load_session(record.id).await.unwrap().unwrap();
                    assert_eq!(snapshot.record.version, n + 1);
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    probes.await.unwrap();
    assert_dense_logs(&*store, 8, 51).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_waits_while_another_process_holds_the_write_lock() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(SqliteStore::open_in_data_dir(dir.path()).await.unwrap());
    let record = create(&*store, session_id(100), SessionStatus::Executing).await;
    let mut other = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(dir.path().join("nomos.db"))
        .connect()
        .await
        .unwrap();
    sqlx::raw_sql("BEGIN IMMEDIATE")
        .execute(&mut other)
        .await
        .unwrap();
    let commit = {
        let store = store.clone();
        let commit = events_commit(&record, 1, vec![event(1, DomainEvent::Nudged)]);
        tokio::spawn(async move { store.commit(commit).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        !commit.is_finished(),
        "a commit ended while another process held the lock"
    );
    sqlx::raw_sql("COMMIT").execute(&mut other).await.unwrap();
    let receipt = commit.await.unwrap().unwrap();
    assert_eq!(receipt.version, 2);
    assert_dense_logs(&*store, 1, 2).await;
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
    assert_schema_too_new(&err, "sqlite");
    assert!(
        err.to_string().contains("newer than this binary knows"),
        "{err}"
    );
    let err = SqliteStore::open_existing(&path).await.unwrap_err();
    assert_schema_too_new(&err, "sqlite");
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
    assert_unavailable_naming(&err, &["/proc/nomos-no-such-dir/x/nomos.db"]);
    let missing = tempfile::tempdir().unwrap();
    let err = SqliteStore::open_existing(missing.path().join("absent.db").to_str().unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    let err = SqliteStore::open("sqlite://x?mode=bogus")
        .await
        .unwrap_err();
    assert_unavailable_naming(&err, &["sqlite://x?mode=bogus"]);
}

#[tokio::test]
async fn a_row_holding_an_unknown_status_is_reported_with_its_column() {
    let store = SqliteStore::in_memory().await.unwrap();
    let id = session_to_corrupt(&store).await;
    // Bypass the CHECK constraint the way an old or foreign writer might.
    let bypass = format!(
        "PRAGMA ignore_check_constraints = ON;
         UPDATE sessions SET status = 'zombie' WHERE id = '{id}'"
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(bypass))
        .execute(store.write_pool())
        .await
        .unwrap();
    assert_unknown_status_is_reported(&store, id).await;
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
