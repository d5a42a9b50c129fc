//! `nomos-eval policy-diff` (AUDIT-3) on real databases: it reports the executions a
//! new policy would move to another class, with counts and samples, honours `--since`,
//! and leaves the database exactly as it was (SQLite: the file's bytes and mtime; both:
//! the row counts).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use nomos_core::ports::store::{Commit, Store};
use nomos_core::{CommandClass, ExecutionStatus, SessionStatus, Span, Timestamp};
use nomos_test_support::store_contract::fixtures::{create, execution, session_id};
use serde_json::Value;

const POLICY: &str = r#"
[[rule]]
prefix = ["systemctl", "restart"]
class = "destructive"
reason = "restarts take the service down here"
"#;

fn policy_diff(url: &str, policy: &std::path::Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nomos-eval"))
        .args(["policy-diff", "--json", "--database-url", url, "--policy"])
        .arg(policy)
        .args(extra)
        .env_remove("NOMOS_DATABASE_URL")
        .output()
        .unwrap()
}

/// Three restarts (one of them 40 days old) and one read-only `ls`.
async fn seed(store: &dyn Store) {
    let record = create(store, session_id(1), SessionStatus::Executing).await;
    let now = Timestamp::from(chrono::Utc::now());
    let mut executions: Vec<_> = (1..=3)
        .map(|n| {
            execution(
                record.id,
                n,
                ExecutionStatus::Completed,
                now - Span::from_mins(n as i64),
            )
        })
        .collect();
    executions[2].created_at = now - Span::from_mins(40 * 24 * 60);
    let mut ls = execution(record.id, 4, ExecutionStatus::Completed, now);
    ls.command = "ls /srv".into();
    ls.class = CommandClass::ReadOnly;
    ls.reason = "ls lists".into();
    executions.push(ls);
    store
        .commit(Commit {
            expected_version: Some(1),
            executions,
            ..Commit::default()
        })
        .await
        .unwrap();
}

fn check_report(output: &Output, expected: u64, scanned: u64) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["scanned"], scanned, "{report}");
    assert_eq!(report["changed"], expected, "{report}");
    let change = &report["changes"][0];
    assert_eq!(change["from"], "config_mutation");
    assert_eq!(change["to"], "destructive");
    assert_eq!(change["count"], expected);
    let reason = change["samples"][0]["new_reason"].as_str().unwrap();
    assert!(
        reason.contains("restarts take the service down"),
        "{report}"
    );
    assert_eq!(report["changes"].as_array().unwrap().len(), 1, "{report}");
}

async fn counts_sqlite(path: &std::path::Path) -> Vec<i64> {
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .read_only(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    let mut counts = Vec::new();
    for table in ["sessions", "executions", "events", "approvals"] {
        let n: (i64,) =
            sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
                .fetch_one(&pool)
                .await
                .unwrap();
        counts.push(n.0);
    }
    pool.close().await;
    counts
}

// rule: AUDIT-3
#[tokio::test]
async fn policy_diff_reports_changes_on_sqlite_and_leaves_the_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("new.toml");
    std::fs::write(&policy, POLICY).unwrap();
    let data = dir.path().join("data");
    let store = nomos_sqlite::SqliteStore::open_in_data_dir(&data)
        .await
        .unwrap();
    seed(&store).await;
    store.write_pool().close().await;
    store.read_pool().close().await;
    drop(store);
    let db = data.join("nomos.db");
    let counts = counts_sqlite(&db).await;
    let bytes = std::fs::read(&db).unwrap();
    let mtime = std::fs::metadata(&db).unwrap().modified().unwrap();
    let url = db.to_str().unwrap();

    check_report(&policy_diff(url, &policy, &[]), 3, 4);
    check_report(
        &policy_diff(url, &policy, &["--since", "30d", "--page", "1"]),
        2,
        3,
    );

    assert_eq!(
        std::fs::read(&db).unwrap(),
        bytes,
        "the database file changed"
    );
    assert_eq!(std::fs::metadata(&db).unwrap().modified().unwrap(), mtime);
    assert_eq!(counts_sqlite(&db).await, counts);
}

// rule: AUDIT-3
#[tokio::test]
async fn policy_diff_reports_changes_on_postgres_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("new.toml");
    std::fs::write(&policy, POLICY).unwrap();
    let url = nomos_test_support::postgres::fresh_database().await;
    let store = nomos_postgres::PgStore::connect(&url).await.unwrap();
    seed(&store).await;
    let count = |table: &'static str| {
        let pool = store.pool().clone();
        async move {
            let n: (i64,) =
                sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
                    .fetch_one(&pool)
                    .await
                    .unwrap();
            n.0
        }
    };
    let before = (count("executions").await, count("events").await);

    check_report(&policy_diff(&url, &policy, &[]), 3, 4);
    check_report(&policy_diff(&url, &policy, &["--since", "30d"]), 2, 3);

    assert_eq!((count("executions").await, count("events").await), before);
    // The read-only connection refuses a write outright.
    let read_only = nomos_postgres::PgStore::connect_read_only(&url)
        .await
        .unwrap();
    let err = sqlx::query("DELETE FROM executions")
        .execute(read_only.pool())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("read-only"), "{err}");
}
