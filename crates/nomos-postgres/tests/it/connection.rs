//! Connection-level behaviour: bad URLs, the statement timeout, schema versions and
//! the retry-safe commit path under contention.

use std::time::Duration;

use nomos_core::SessionStatus;
use nomos_core::event::DomainEvent;
use nomos_core::ports::store::{Store, StoreError};
use nomos_postgres::{PgStore, PgStoreOptions};
use nomos_test_support::postgres::fresh_database;
use nomos_test_support::store_checks::{
    assert_dense_logs, assert_schema_too_new, assert_unavailable_naming,
    assert_unknown_status_is_reported, session_to_corrupt,
};
use nomos_test_support::store_contract::fixtures::{create, event, events_commit, session_id};

#[tokio::test]
async fn an_unreachable_server_is_unavailable_and_the_password_is_not_shown() {
    // Port 1 on loopback refuses connections.
    let url = "postgres://nomos:hunter2@127.0.0.1:1/nomos";
    let options = PgStoreOptions {
        acquire_timeout: Duration::from_secs(3),
        ..PgStoreOptions::standard()
    };
    let err = PgStore::connect_with(url, options).await.unwrap_err();
    match err {
        StoreError::Unavailable(message) => {
            assert!(
                message.contains("postgres://nomos:***@127.0.0.1:1/nomos"),
                "{message}"
            );
            assert!(!message.contains("hunter2"), "{message}");
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[tokio::test]
async fn a_malformed_url_is_unavailable_and_says_why() {
    let err = PgStore::connect("postgres://u:pw@localhost:notaport/db")
        .await
        .unwrap_err();
    match err {
        StoreError::Unavailable(message) => {
            assert!(message.contains("bad database url"), "{message}");
            assert!(!message.contains(":pw@"), "{message}");
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[tokio::test]
async fn a_missing_database_is_unavailable() {
    let url = fresh_database().await;
    let (base, _) = url.rsplit_once('/').unwrap();
    let err = PgStore::connect(&format!("{base}/nomos_no_such_database"))
        .await
        .unwrap_err();
    assert_unavailable_naming(&err, &["nomos_no_such_database"]);
}

#[tokio::test]
async fn every_connection_has_the_statement_timeout() {
    let url = fresh_database().await;
    let options = PgStoreOptions {
        statement_timeout: Duration::from_millis(250),
        ..PgStoreOptions::standard()
    };
    let store = PgStore::connect_with(&url, options).await.unwrap();
    let shown: String = sqlx::query_scalar("SHOW statement_timeout")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(shown, "250ms");
    let err = sqlx::query("SELECT pg_sleep(5)")
        .execute(store.pool())
        .await
        .unwrap_err();
    let code = err
        .as_database_error()
        .and_then(|e| e.code())
        .map(|c| c.into_owned());
    assert_eq!(code.as_deref(), Some("57014"), "{err}");
    let standard = PgStore::connect(&url).await.unwrap();
    let shown: String = sqlx::query_scalar("SHOW statement_timeout")
        .fetch_one(standard.pool())
        .await
        .unwrap();
    assert_eq!(shown, "30s");
}

// rule: EXEC-11
#[tokio::test]
async fn every_commit_waits_for_its_wal_flush_even_where_the_server_says_otherwise() {
    // The test server runs with `synchronous_commit = off`; the store's connections do not.
    let url = fresh_database().await;
    let store = PgStore::connect(&url).await.unwrap();
    let server: String =
        sqlx::query_scalar("SELECT boot_val FROM pg_settings WHERE name = 'synchronous_commit'")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(server, "on", "PostgreSQL's own default is durable");
    for _ in 0..3 {
        let shown: String = sqlx::query_scalar("SHOW synchronous_commit")
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(shown, "on");
    }
}

#[tokio::test]
async fn a_database_at_a_newer_migration_is_refused() {
    let url = fresh_database().await;
    let store = PgStore::connect(&url).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (9999, 'from the future', true, '\\x00', 0)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    let err = PgStore::connect(&url).await.unwrap_err();
    assert_schema_too_new(&err, "postgres");
    let err = PgStore::connect_without_migrating(&url).await.unwrap_err();
    assert_schema_too_new(&err, "postgres");
    assert_schema_too_new(&store.check().await.unwrap_err(), "postgres");
}

#[tokio::test]
async fn an_unmigrated_database_is_refused_without_migrating() {
    let url = fresh_database().await;
    let err = PgStore::connect_without_migrating(&url).await.unwrap_err();
    assert_eq!(err, StoreError::NotMigrated);
    let store = PgStore::connect(&url).await.unwrap();
    store.check().await.unwrap();
    let again = PgStore::connect_without_migrating(&url).await.unwrap();
    again.check().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_on_many_sessions_keep_dense_sequences() {
    let url = fresh_database().await;
    let store = std::sync::Arc::new(PgStore::connect(&url).await.unwrap());
    let mut tasks = Vec::new();
    for writer in 0..8u128 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let record = create(&*store, session_id(100 + writer), SessionStatus::Executing).await;
            for n in 1..=25i64 {
                let commit = events_commit(
                    &record,
                    n,
                    vec![event(n, DomainEvent::Nudged), event(n, DomainEvent::Nudged)],
                );
                store.commit(commit).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_dense_logs(&*store, 8, 51).await;
}

#[tokio::test]
async fn a_row_holding_an_unknown_status_is_reported_with_its_column() {
    let url = fresh_database().await;
    let store = PgStore::connect(&url).await.unwrap();
    let id = session_to_corrupt(&store).await;
    let corrupt = format!(
        "ALTER TABLE sessions DROP CONSTRAINT sessions_status_check;
         UPDATE sessions SET status = 'zombie' WHERE id = '{id}'"
    );
    let done = sqlx::raw_sql(sqlx::AssertSqlSafe(corrupt)).execute(store.pool());
    done.await.unwrap();
    assert_unknown_status_is_reported(&store, id).await;
}

/// Two batches that lock the same sessions in opposite orders can deadlock; the
/// transaction Postgres aborts is run again, so neither caller sees the deadlock, and
/// every slot is either committed or a version conflict.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn opposite_order_batches_are_retried_instead_of_failing_on_deadlock() {
    let url = fresh_database().await;
    let store = std::sync::Arc::new(PgStore::connect(&url).await.unwrap());
    let a = create(&*store, session_id(1), SessionStatus::Executing).await;
    let b = create(&*store, session_id(2), SessionStatus::Executing).await;
    for round in 0..3i64 {
        let version = 1 + round;
        let forward = vec![
            events_commit(&a, version, vec![event(round, DomainEvent::Nudged)]),
            events_commit(&b, version, vec![event(round, DomainEvent::Nudged)]),
        ];
        let backward = vec![
            events_commit(&b, version, vec![event(round, DomainEvent::Nudged)]),
            events_commit(&a, version, vec![event(round, DomainEvent::Nudged)]),
        ];
        let (s1, s2) = (store.clone(), store.clone());
        let (r1, r2) = tokio::join!(
            tokio::spawn(async move { s1.commit_batch(forward).await }),
            tokio::spawn(async move { s2.commit_batch(backward).await }),
        );
        let (r1, r2) = (r1.unwrap().unwrap(), r2.unwrap().unwrap());
        let landed = r1.iter().chain(&r2).filter(|r| r.is_ok()).count();
        assert_eq!(
            landed, 2,
            "each session moves once per round: {r1:?} {r2:?}"
        );
        for slot in r1.iter().chain(&r2) {
            if let Err(err) = slot {
                assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
            }
        }
    }
    assert_eq!(
        store
            .load_session(a.id)
            .await
            .unwrap()
            .unwrap()
            .record
            .version,
        4
    );
    assert_eq!(
        store
            .load_session(b.id)
            .await
            .unwrap()
            .unwrap()
            .record
            .version,
        4
    );
    let deadlocks: i64 = sqlx::query_scalar(
        "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    eprintln!("deadlocks detected and retried: {deadlocks}");
}

// rule: EXEC-9
#[tokio::test]
async fn writes_succeed_again_once_a_stopped_server_is_back_without_reconnecting() {
    let server = nomos_test_support::postgres::private_server();
    let mut admin = <sqlx::PgConnection as sqlx::Connection>::connect(&server.admin_url)
        .await
        .unwrap();
    sqlx::raw_sql("CREATE DATABASE nomos")
        .execute(&mut admin)
        .await
        .unwrap();
    drop(admin);
    let url = nomos_test_support::postgres::with_database(&server.admin_url, "nomos");
    let options = PgStoreOptions {
        acquire_timeout: Duration::from_secs(3),
        ..PgStoreOptions::standard()
    };
    let store = PgStore::connect_with(&url, options).await.unwrap();
    let record = create(&store, session_id(1), SessionStatus::Executing).await;
    store.probe_write().await.unwrap();

    nomos_test_support::postgres::stop(&server);
    let failed = store
        .commit(events_commit(
            &record,
            1,
            vec![event(1, DomainEvent::Nudged)],
        ))
        .await
        .unwrap_err();
    assert!(matches!(failed, StoreError::Unavailable(_)), "{failed:?}");
    let probe = store.probe_write().await;
    assert!(
        matches!(probe, Err(StoreError::Unavailable(_))),
        "{probe:?}"
    );

    nomos_test_support::postgres::start_again(&server);
    store.probe_write().await.unwrap();
    let receipt = store
        .commit(events_commit(
            &record,
            1,
            vec![event(1, DomainEvent::Nudged)],
        ))
        .await
        .unwrap();
    assert_eq!(receipt.version, 2);
    let receipt = store
        .commit(events_commit(
            &record,
            2,
            vec![event(2, DomainEvent::Nudged)],
        ))
        .await
        .unwrap();
    assert_eq!(receipt.version, 3);
}
