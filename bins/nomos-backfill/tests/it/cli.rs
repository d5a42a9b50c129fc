//! The real binary: dry-run text, `--apply`, `--json` shape, and its exit status: 0 when
//! nothing needs repair, 3 when a dry run found repairs, 2 for usage errors and for a
//! database that is missing, without the schema or newer than the tool.

use std::process::{Command, Output};

use nomos_core::SessionStatus;

use crate::seed::{Kind, seed_one_of_each};
use crate::support::{Backend, empty_url, fresh, load, now, on_both_backends, ten_days_ago};

fn backfill(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nomos-backfill"))
        .arg("--database-url")
        .arg(url)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("NOMOS_DATABASE_URL")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

// rule: BACKFILL-1
async fn dry_run_prints_counts_and_samples_then_apply_repairs(backend: Backend) {
    let db = fresh(backend).await;
    let seeded = seed_one_of_each(db.store.as_ref(), ten_days_ago(now())).await;
    let trivial = seeded.iter().find(|s| s.kind == Kind::Trivial).unwrap().id;

    let dry = backfill(&db.url, &[]);
    // A dry run that found repairs exits 3, so a cron job can alert on it.
    assert_eq!(dry.status.code(), Some(3), "{}", stderr(&dry));
    let text = stdout(&dry);
    assert!(text.contains("dry run: nothing was changed"), "{text}");
    assert!(text.contains("would change 4 session(s)"), "{text}");
    assert!(text.contains("trivial_completed             1"), "{text}");
    assert!(text.contains("idle_closed                   2"), "{text}");
    assert!(
        text.contains("awaiting_input                1  (reported, not touched)"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{trivial}  never set a goal; completed as success: hubris has been up"
        )),
        "{text}"
    );
    assert_eq!(
        load(db.store.as_ref(), trivial).await.record.status,
        SessionStatus::Active
    );

    let apply = backfill(&db.url, &["--apply"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    assert!(stdout(&apply).contains("apply: repairs committed"));
    assert!(stdout(&apply).contains("changed 4 session(s)"));
    assert_eq!(
        load(db.store.as_ref(), trivial).await.record.status,
        SessionStatus::Done
    );

    let again = backfill(&db.url, &["--apply"]);
    assert!(
        stdout(&again).contains("changed 0 session(s)"),
        "{}",
        stdout(&again)
    );
    assert_eq!(again.status.code(), Some(0));
    // Nothing left to repair: a dry run now exits 0.
    let clean = backfill(&db.url, &[]);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    assert!(stdout(&clean).contains("would change 0 session(s)"));
}
on_both_backends!(
    cli_dry_run,
    dry_run_prints_counts_and_samples_then_apply_repairs
);

// rule: BACKFILL-1
async fn json_summary_has_counts_samples_and_conflicts(backend: Backend) {
    let db = fresh(backend).await;
    seed_one_of_each(db.store.as_ref(), ten_days_ago(now())).await;
    let output = backfill(&db.url, &["--json", "--batch-size", "3"]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["mode"], "dry_run");
    assert_eq!(json["scanned"], 8);
    assert_eq!(json["sessions_changed"], 4);
    assert_eq!(json["batches"], 3);
    assert_eq!(json["older_than_secs"], 86_400);
    let counts = json["counts"].as_object().unwrap();
    assert_eq!(counts.len(), 8);
    assert_eq!(counts["trivial_completed"], 1);
    assert_eq!(counts["execution_timed_out"], 2);
    assert_eq!(counts["steps_closed"], 1);
    let sample = &json["samples"]["idle_closed"][0];
    assert!(sample["session"].as_str().unwrap().len() == 36);
    assert!(
        sample["reason"]
            .as_str()
            .unwrap()
            .starts_with("closed by backfill after")
    );
    assert_eq!(json["n_conflicts"], 0);
    assert!(json["conflicts"].as_array().unwrap().is_empty());
    assert_eq!(json["limit_reached"], false);
}
on_both_backends!(cli_json, json_summary_has_counts_samples_and_conflicts);

// rule: BACKFILL-1
async fn an_empty_database_is_refused_with_exit_2_unless_migrate(backend: Backend) {
    let (url, _dir) = empty_url(backend).await;
    if let Backend::Sqlite = backend {
        // An existing file without the schema, not only a missing one.
        std::fs::write(&url, b"").unwrap();
    }
    let refused = backfill(&url, &[]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("does not have the current Nomos schema"),
        "{}",
        stderr(&refused)
    );
    assert!(stderr(&refused).contains("--migrate"));

    let migrated = backfill(&url, &["--migrate"]);
    assert!(migrated.status.success(), "{}", stderr(&migrated));
    assert!(stdout(&migrated).contains("scanned 0 session(s)"));
    assert!(backfill(&url, &[]).status.success());
}
on_both_backends!(
    cli_empty,
    an_empty_database_is_refused_with_exit_2_unless_migrate
);

// rule: BACKFILL-1
async fn a_schema_newer_than_the_tool_is_refused_with_exit_2(backend: Backend) {
    let db = fresh(backend).await;
    let insert = match backend {
        Backend::Sqlite => {
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (99990101000000, 'from the future', 1, X'00', 0)"
        }
        Backend::Postgres => {
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (99990101000000, 'from the future', TRUE, '\\x00'::bytea, 0)"
        }
    };
    match backend {
        Backend::Sqlite => {
            let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.url))
                .await
                .unwrap();
            sqlx::query(insert).execute(&pool).await.unwrap();
            pool.close().await;
        }
        Backend::Postgres => {
            let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
            sqlx::query(insert).execute(&pool).await.unwrap();
            pool.close().await;
        }
    }
    for args in [&[][..], &["--migrate"][..], &["--apply"][..]] {
        let output = backfill(&db.url, args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("is at migration 99990101000000, newer than this tool knows"),
            "{}",
            stderr(&output)
        );
    }
}
on_both_backends!(
    cli_too_new,
    a_schema_newer_than_the_tool_is_refused_with_exit_2
);

#[test]
fn a_missing_sqlite_file_is_refused_with_exit_2_even_with_migrate_and_never_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.db");
    for args in [&[][..], &["--migrate"][..], &["--migrate", "--apply"][..]] {
        let output = backfill(path.to_str().unwrap(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let text = stderr(&output);
        assert!(
            text.contains(&format!("no database at {}", path.display())),
            "{text}"
        );
        assert!(text.contains("--database-url"), "{text}");
        assert!(
            !text.contains("create") && !text.contains("--migrate"),
            "{text}"
        );
        assert!(!path.exists(), "{args:?} created the file");
    }
}

#[test]
fn an_unknown_flag_is_a_usage_error_with_exit_2() {
    let output = backfill("./unused.db", &["--aply"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--aply"), "{}", stderr(&output));
}

#[test]
fn a_bad_age_is_a_usage_error_with_exit_2_that_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.db");
    let output = backfill(path.to_str().unwrap(), &["--older-than", "7y"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--older-than: bad age `7y`: unknown unit `y`"),
        "{}",
        stderr(&output)
    );
}
