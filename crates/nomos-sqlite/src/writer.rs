//! The commit connection: where `commit` and `commit_batch` run their transaction.
//!
//! A file database's commits run on a connection of their own, opened on the same file,
//! called on the task's own thread. A commit is a few statements on one connection in
//! this process, so a hand-off to another thread for each of them (what the async
//! driver does) would cost more than the commit itself: on two cores a wake-up of the
//! other thread costs as much as a whole small commit. The connection's statements are
//! prepared once and kept in its cache.
//!
//! The other writes (migrations, knowledge, deletions, the write probe) keep the
//! driver's single writer connection. Both take SQLite's write lock with
//! `BEGIN IMMEDIATE`, so they queue on each other through the busy timeout and never
//! interleave. While another process holds the file's write lock, a commit waits for it
//! on its thread, up to the busy timeout.
//!
//! EXEC-9: a commit that fails is rolled back; a connection SQLite leaves inside a
//! transaction anyway is closed and the next commit opens a fresh one.
//!
//! EXEC-11: the commit connection runs with `synchronous = FULL`, so a commit that returned
//! (the one that moves an execution to `running` among them) is synced to disk with its
//! WAL frames before the runtime starts the command: a power loss never forgets a command
//! that ran. The driver's other connections keep `NORMAL`; nothing they write dispatches.
//!
//! An in-memory database exists only inside the driver's one connection, so its
//! commits borrow that connection's handle instead.

use std::path::PathBuf;
use std::time::Duration;

use nomos_core::ports::store::StoreError;
use rusqlite::{Connection, OpenFlags};
use sqlx::SqlitePool;
use tokio::sync::Mutex;

use crate::error::{db_error, sqlite_error};

/// Statements kept prepared on the commit connection: a commit's few shapes, and
/// multi-row event inserts of the usual lengths.
const STATEMENT_CACHE: usize = 128;

/// Where commits run.
#[derive(Debug)]
pub(crate) enum Writer {
    /// A connection of the commits' own on a database file, opened when first needed
    /// and again after one was left broken.
    Own {
        path: PathBuf,
        busy_timeout: Duration,
        conn: Mutex<Option<Connection>>,
    },
    /// The handle of the driver's connection in this pool (an in-memory database, or a
    /// read-only one, whose writes fail as the driver's would).
    Borrowed,
}

impl Writer {
    /// A writer with a connection of its own on the file at `path`.
    pub(crate) fn own(path: PathBuf, busy_timeout: Duration) -> Writer {
        Writer::Own {
            path,
            busy_timeout,
            conn: Mutex::new(None),
        }
    }

    /// Runs `work` in one `BEGIN IMMEDIATE` transaction and commits it; rolls back when
    /// `work` or the commit fails. `pool` is the driver's writer: a closed one closes
    /// the store's writes, and a borrowed writer uses its connection.
    pub(crate) async fn transaction<T>(
        &self,
        pool: &SqlitePool,
        work: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if pool.is_closed() {
            return Err(StoreError::Unavailable("the sqlite store is closed".into()));
        }
        let result = self.run(pool, work).await;
        // The commit ran without a pause: let the runtime's other tasks go before the
        // committer goes on, as they did while a commit waited for the driver's thread
        // (a turn commits several times and would otherwise hold a one-thread runtime
        // to its end).
        tokio::task::yield_now().await;
        result
    }

    async fn run<T>(
        &self,
        pool: &SqlitePool,
        work: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match self {
            Writer::Own {
                path,
                busy_timeout,
                conn,
            } => {
                let mut slot = conn.lock().await;
                let db = match slot.take() {
                    Some(db) => db,
                    None => open(path, *busy_timeout)?,
                };
                let result = in_transaction(&db, work);
                if db.is_autocommit() {
                    *slot = Some(db);
                } else {
                    tracing::warn!(
                        "the sqlite commit connection was left inside a transaction; reopening it"
                    );
                }
                result
            }
            Writer::Borrowed => {
                let mut pooled = pool
                    .acquire()
                    .await
                    .map_err(|e| db_error(e, "taking the writer connection"))?;
                let mut handle = pooled
                    .lock_handle()
                    .await
                    .map_err(|e| db_error(e, "locking the writer connection"))?;
                // SAFETY: the handle is a live connection the locked guard keeps for this
                // task alone until it drops, after the borrowing `Connection` (which does
                // not close what it borrows) is gone.
                #[allow(unsafe_code)]
                let db = unsafe { Connection::from_handle(handle.as_raw_handle().as_ptr()) }
                    .map_err(|e| sqlite_error(e, "borrowing the writer connection"))?;
                let result = in_transaction(&db, work);
                let broken = !db.is_autocommit();
                drop(db);
                drop(handle);
                if broken {
                    pooled.close_on_drop();
                }
                result
            }
        }
    }
}

/// The commit connection's `synchronous` setting (EXEC-11): every commit is synced to disk
/// before it returns.
const COMMIT_SYNCHRONOUS: &str = "FULL";

/// Opens the commit connection on the database file, with the pragmas every connection
/// of the store has and the durability a dispatch needs (EXEC-11).
fn open(path: &std::path::Path, busy_timeout: Duration) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let db = Connection::open_with_flags(path, flags).map_err(|e| {
        sqlite_error(
            e,
            &format!("opening the commit connection on {}", path.display()),
        )
    })?;
    db.busy_timeout(busy_timeout)
        .and_then(|()| {
            db.execute_batch(&format!(
                "PRAGMA foreign_keys = ON; PRAGMA synchronous = {COMMIT_SYNCHRONOUS}"
            ))
        })
        .map_err(|e| sqlite_error(e, "setting up the commit connection"))?;
    db.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(db)
}

/// `work` inside `BEGIN IMMEDIATE` ... `COMMIT`, rolled back when anything fails.
fn in_transaction<T>(
    db: &Connection,
    work: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    if !db.is_autocommit() {
        // A borrowed connection whose last commit was cut short by a panic.
        let _ = run(db, "ROLLBACK");
    }
    run(db, "BEGIN IMMEDIATE").map_err(|e| sqlite_error(e, "beginning a transaction"))?;
    let result = work(db).and_then(|value| {
        run(db, "COMMIT")
            .map(|()| value)
            .map_err(|e| sqlite_error(e, "committing"))
    });
    if result.is_err() && !db.is_autocommit() {
        // SQLite may have rolled back by itself (a full disk); a failed rollback leaves
        // the connection in a transaction, and the caller closes it.
        let _ = run(db, "ROLLBACK");
    }
    result
}

fn run(db: &Connection, sql: &str) -> rusqlite::Result<()> {
    db.prepare_cached(sql)?.execute([]).map(|_| ())
}

#[cfg(test)]
mod tests {
    use nomos_core::ports::store::Store;
    use nomos_test_support::store_contract::fixtures::{create, session_id};

    use crate::SqliteStore;

    // rule: EXEC-11
    #[tokio::test]
    async fn the_connection_that_commits_a_dispatch_syncs_every_commit() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("nomos.db").to_str().unwrap())
            .await
            .unwrap();
        // A commit through the port runs on the commit connection and opens it.
        create(&store, session_id(1), nomos_core::SessionStatus::Planning).await;
        assert!(store.load_session(session_id(1)).await.unwrap().is_some());
        let seen = store
            .writer
            .transaction(&store.write, |db| {
                let sync: i64 = db
                    .query_row("PRAGMA synchronous", [], |row| row.get(0))
                    .unwrap();
                let mode: String = db
                    .query_row("PRAGMA journal_mode", [], |row| row.get(0))
                    .unwrap();
                Ok((sync, mode))
            })
            .await
            .unwrap();
        // 2 is FULL: the WAL is synced at every commit, not only at checkpoints.
        assert_eq!(seen, (2, "wal".to_owned()));
    }
}
