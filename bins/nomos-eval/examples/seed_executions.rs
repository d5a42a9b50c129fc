//! Seeds a SQLite database with many executions for timing `nomos-eval policy-diff`:
//!
//! ```text
//! cargo run --release -p nomos-eval --example seed_executions -- /tmp/bench.db 1000000
//! ```
//!
//! One session holds them all; commands cycle through a few of each class, one a
//! millisecond apart. The rows are generated in SQL (a recursive CTE), in one statement.
//!
//! Measured once (release build, 2 shared cores, SQLite file of 1,000,000 executions, a
//! policy of two rules moving 250,000 of them): `nomos-eval policy-diff` took 12.0 s
//! wall (7.0 s user), 39 MB peak RSS.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use nomos_core::ports::store::{Commit, Store};
use nomos_core::record::{KnowledgeLoop, SessionRecord};
use nomos_core::{SessionId, SessionStatus, Timestamp};

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "./bench.db".to_owned());
    let n: i64 = args
        .next()
        .map_or(1_000_000, |t| t.parse().expect("a count"));
    let store = nomos_sqlite::SqliteStore::open(&path).await.unwrap();
    let id = SessionId(uuid::Uuid::new_v4());
    let now = Timestamp::from(chrono::Utc::now());
    let record = SessionRecord {
        id,
        status: SessionStatus::Executing,
        goal: Some("bench".into()),
        summary: None,
        board_outcome: None,
        plan_generation: 1,
        assent: None,
        knowledge: KnowledgeLoop::Untouched,
        nudged_at: None,
        n_messages: 0,
        created_at: now,
        last_activity_at: now,
        version: 1,
        client: None,
        owner: None,
        archived_at: None,
        plan_approvals: None,
    };
    store
        .commit(Commit {
            expected_version: None,
            session: Some(record),
            ..Commit::default()
        })
        .await
        .unwrap();
    let start = now.as_millis() - n;
    sqlx::query(
        "WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n + 1 < ?1),
              c(k, command, class) AS (VALUES
                (0, 'systemctl restart nginx', 'config_mutation'),
                (1, 'ls -la /var/log', 'read_only'),
                (2, 'docker ps', 'read_only'),
                (3, 'rm -rf /tmp/cache', 'destructive'),
                (4, 'apt-get install -y curl', 'config_mutation'),
                (5, 'journalctl -u nginx --since today', 'read_only'),
                (6, 'cat /etc/hosts | grep web', 'read_only'),
                (7, 'docker compose down', 'destructive'))
         INSERT INTO executions (id, session_id, tool_call_id, host, command, class, reason,
           generation, step_seq, status, created_at)
         SELECT printf('%08x-0000-4000-8000-%012x', n / 65536, n), ?2, NULL, 'web-' || (n % 50),
                c.command || ' #' || (n % 1000), c.class, 'seeded', 1, NULL, 'completed', ?3 + n
         FROM i JOIN c ON c.k = n % 8",
    )
    .bind(n)
    .bind(id.to_string())
    .bind(start)
    .execute(store.write_pool())
    .await
    .unwrap();
    eprintln!("seeded {n} execution(s) into {path}");
}
