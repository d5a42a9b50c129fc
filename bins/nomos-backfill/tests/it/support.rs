//! Shared helpers: a store on each backend, the backfill's clock, and run shortcuts.

use std::sync::Arc;

use nomos_backfill::{BackfillConfig, Mode, Report, SchemaPolicy, open_store, run_backfill};
use nomos_core::ports::store::{SessionSnapshot, Store};
use nomos_core::{SessionId, Span, Timestamp};

/// A database on one backend, kept alive for the test.
pub struct Db {
    /// The URL the binary is given.
    pub url: String,
    /// The store, opened (and migrated) through the backfill's own opener.
    pub store: Arc<dyn Store>,
    _dir: Option<tempfile::TempDir>,
}

/// Which backend a test runs on.
#[derive(Clone, Copy, Debug)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A fresh, migrated database.
pub async fn fresh(backend: Backend) -> Db {
    let (url, dir) = empty_url(backend).await;
    if let Backend::Sqlite = backend {
        // The tool refuses a missing file; an empty one is a database without a schema.
        std::fs::write(&url, b"").unwrap();
    }
    let store = open_store(&url, SchemaPolicy::Migrate).await.unwrap();
    Db {
        url,
        store,
        _dir: dir,
    }
}

/// The URL of a fresh database without any schema (SQLite: a path that does not exist
/// yet inside a temp dir kept by the returned guard).
pub async fn empty_url(backend: Backend) -> (String, Option<tempfile::TempDir>) {
    match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("nomos.db");
            (path.to_str().unwrap().to_owned(), Some(dir))
        }
        Backend::Postgres => (nomos_test_support::postgres::fresh_database().await, None),
    }
}

/// The time the backfill runs at in tests.
pub fn now() -> Timestamp {
    Timestamp::from(chrono::Utc::now())
}

/// When the seeded debt went idle: ten days and an hour before `now`.
pub fn ten_days_ago(now: Timestamp) -> Timestamp {
    now - Span::from_mins(10 * 24 * 60 + 60)
}

/// Runs the backfill with a config, ignoring progress.
pub async fn run(store: &dyn Store, config: &BackfillConfig, now: Timestamp) -> Report {
    run_backfill(store, config, now, &mut |_| {}).await.unwrap()
}

/// Standard config in a mode, with a batch size.
pub fn config(mode: Mode, batch_size: u32) -> BackfillConfig {
    let mut config = BackfillConfig::standard(mode);
    config.batch_size = batch_size;
    config
}

/// Loads a session that must exist.
pub async fn load(store: &dyn Store, id: SessionId) -> SessionSnapshot {
    store.load_session(id).await.unwrap().unwrap()
}

/// How many events the whole store holds.
pub async fn n_events(store: &dyn Store) -> usize {
    let mut n = 0;
    let mut after = 0;
    loop {
        let page = store.events_after(None, after, 1000).await.unwrap();
        let Some(last) = page.last() else { return n };
        after = last.global_seq;
        n += page.len();
    }
}

/// Declares one async test per backend from a body `async fn(Backend)`.
macro_rules! on_both_backends {
    ($(#[$meta:meta])* $name:ident, $body:ident) => {
        mod $name {
            $(#[$meta])*
            #[tokio::test]
            async fn on_sqlite() {
                super::$body(crate::support::Backend::Sqlite).await;
            }

            $(#[$meta])*
            #[tokio::test]
            async fn on_postgres() {
                super::$body(crate::support::Backend::Postgres).await;
            }
        }
    };
}
pub(crate) use on_both_backends;
