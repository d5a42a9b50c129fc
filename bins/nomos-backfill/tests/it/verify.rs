//! `nomos-backfill verify` (AUDIT-2): an intact log exits 0; a row edited behind the
//! store's back with raw SQL makes it exit 4 naming that event's session and seq.

use std::process::Command;

use nomos_core::SessionStatus;
use nomos_core::event::DomainEvent;
use nomos_test_support::store_contract::fixtures::{create, event, events_commit, session_id};

use crate::support::{Backend, fresh, on_both_backends};

fn verify(url: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nomos-backfill"))
        .args(["verify", "--database-url", url])
        .env_remove("NOMOS_DATABASE_URL")
        .output()
        .unwrap()
}

async fn tamper(backend: Backend, url: &str, session: nomos_core::SessionId, seq: i64) {
    match backend {
        Backend::Sqlite => {
            let pool = sqlx::SqlitePool::connect(&format!("sqlite:{url}"))
                .await
                .unwrap();
            sqlx::query("UPDATE events SET at = at + 1 WHERE session_id = ?1 AND seq = ?2")
                .bind(session.to_string())
                .bind(seq)
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
        }
        Backend::Postgres => {
            let pool = sqlx::PgPool::connect(url).await.unwrap();
            sqlx::query(
                "UPDATE events SET at = at + interval '1 second' WHERE session_id = $1 AND seq = $2",
            )
            .bind(session.as_uuid())
            .bind(seq)
            .execute(&pool)
            .await
            .unwrap();
            pool.close().await;
        }
    }
}

// rule: AUDIT-2
async fn verify_names_the_first_event_edited_behind_the_stores_back(backend: Backend) {
    let db = fresh(backend).await;
    create(db.store.as_ref(), session_id(1), SessionStatus::Active).await;
    let b = create(db.store.as_ref(), session_id(2), SessionStatus::Active).await;
    db.store
        .commit(events_commit(
            &b,
            1,
            vec![event(1, DomainEvent::Nudged), event(2, DomainEvent::Nudged)],
        ))
        .await
        .unwrap();

    let intact = verify(&db.url);
    let text = String::from_utf8_lossy(&intact.stdout);
    assert_eq!(intact.status.code(), Some(0), "{text}");
    assert!(
        text.contains("verified 4 event(s) in 2 session(s): every hash chain is intact"),
        "{text}"
    );

    tamper(backend, &db.url, b.id, 2).await;
    let broken = verify(&db.url);
    let text = String::from_utf8_lossy(&broken.stdout);
    assert_eq!(broken.status.code(), Some(4), "{text}");
    assert!(
        text.contains(&format!("first broken event: session {} seq 2", b.id)),
        "{text}"
    );
}
on_both_backends!(
    verify_tampered,
    verify_names_the_first_event_edited_behind_the_stores_back
);
