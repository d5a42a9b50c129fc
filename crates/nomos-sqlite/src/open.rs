//! Opening a database: connection options, the two pools, and the schema check
//! that runs before (and instead of) migrations.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use nomos_core::ports::store::StoreError;
use nomos_store_sql::schema::Migrate;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Row, SqliteConnection, SqlitePool};

use crate::error::db_error;
use crate::writer::Writer;

// `MIGRATION_FILES`: the build script's table of `migrations/sqlite`.
include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// The migrations this binary ships, embedded at build time.
pub(crate) static MIGRATOR: LazyLock<Migrator> =
    LazyLock::new(|| nomos_store_sql::schema::embedded_migrator(MIGRATION_FILES));

/// The database's file name in a data directory.
pub const DATABASE_FILE: &str = "nomos.db";

/// Creates an empty file with mode 0600 unless one exists (SQLite takes an empty file
/// as a new database).
fn create_private(path: &Path) -> Result<(), StoreError> {
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match created {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::Unavailable(format!(
            "cannot create the database file {}: {e}",
            path.display()
        ))),
    }
}

/// How long a connection waits for a lock held by another process.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How many connections serve reads of a file database.
const READERS: u32 = 4;

/// A SQLite database behind the store port.
///
/// Every write is a `BEGIN IMMEDIATE` transaction, so concurrent writers queue on
/// SQLite's write lock instead of failing with `SQLITE_BUSY`: commits on the commit
/// connection (`writer.rs`), other writes on a pool of exactly one connection. Reads use
/// a separate pool of read-only connections that never hold a write lock.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    pub(crate) read: SqlitePool,
    pub(crate) write: SqlitePool,
    pub(crate) writer: Arc<Writer>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at a path or a `sqlite:` URL, in WAL
    /// mode, and runs the migrations.
    pub async fn open(path_or_url: &str) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path_or_url, Migrate::Run).await
    }

    /// Opens an existing, migrated database without touching its schema (for
    /// repair tools). A database without the schema is refused with `NotMigrated`.
    pub async fn open_existing(path_or_url: &str) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path_or_url, Migrate::Refuse).await
    }

    /// Opens an existing, migrated database file read-only (`mode=ro`): every
    /// connection is read-only, nothing is created, migrated or hashed, and a write
    /// fails (for tools that must leave the database as it is, AUDIT-3).
    pub async fn open_read_only(path_or_url: &str) -> Result<SqliteStore, StoreError> {
        if path_or_url == ":memory:" || path_or_url.starts_with("sqlite::memory:") {
            return Err(StoreError::Invalid(
                "an in-memory database cannot be opened read-only".into(),
            ));
        }
        let options = if path_or_url.starts_with("sqlite:") {
            SqliteConnectOptions::from_str(path_or_url)
                .map_err(|e| StoreError::Unavailable(format!("{path_or_url}: {e}")))?
        } else {
            SqliteConnectOptions::new().filename(path_or_url)
        };
        let options = options
            .create_if_missing(false)
            .read_only(true)
            .busy_timeout(BUSY_TIMEOUT);
        let read = SqlitePoolOptions::new()
            .max_connections(READERS)
            .connect_with(options)
            .await
            .map_err(|e| unavailable(e, path_or_url))?;
        let store = SqliteStore {
            write: read.clone(),
            read,
            writer: Arc::new(Writer::Borrowed),
        };
        store.prepare_schema(Migrate::Refuse).await?;
        Ok(store)
    }

    /// Opens `nomos.db` under a data directory, creating the directory if needed.
    ///
    /// A directory it creates is private to the user (mode 0700) and so is a database
    /// file it creates (0600; SQLite gives its `-wal` and `-shm` files the same mode).
    /// Existing files keep their modes.
    pub async fn open_in_data_dir(dir: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let dir = dir.as_ref();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| {
                StoreError::Unavailable(format!(
                    "cannot create data directory {}: {e}",
                    dir.display()
                ))
            })?;
        let path = dir.join(DATABASE_FILE);
        create_private(&path)?;
        let path = path.to_str().ok_or_else(|| {
            StoreError::Invalid(format!(
                "data directory path {} is not UTF-8",
                dir.display()
            ))
        })?;
        SqliteStore::open(path).await
    }

    /// A private in-memory database on one connection, migrated (tests, evals).
    pub async fn in_memory() -> Result<SqliteStore, StoreError> {
        let options = SqliteConnectOptions::from_str("sqlite::memory:")
            .map_err(|e| StoreError::Unavailable(format!("sqlite::memory:: {e}")))?
            .foreign_keys(true);
        // One connection that never closes: the database lives as long as it does.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .acquire_timeout(Duration::from_secs(60))
            .connect_with(options)
            .await
            .map_err(|e| unavailable(e, "sqlite::memory:"))?;
        let store = SqliteStore {
            read: pool.clone(),
            write: pool,
            writer: Arc::new(Writer::Borrowed),
        };
        store.prepare_schema(Migrate::Run).await?;
        Ok(store)
    }

    async fn open_with(path_or_url: &str, migrate: Migrate) -> Result<SqliteStore, StoreError> {
        // Separate pools would each get their own private in-memory database.
        if path_or_url == ":memory:" || path_or_url.starts_with("sqlite::memory:") {
            return match migrate {
                Migrate::Run => SqliteStore::in_memory().await,
                Migrate::Refuse => Err(StoreError::NotMigrated),
            };
        }
        let options = if path_or_url.starts_with("sqlite:") {
            SqliteConnectOptions::from_str(path_or_url)
                .map_err(|e| StoreError::Unavailable(format!("{path_or_url}: {e}")))?
        } else {
            SqliteConnectOptions::new().filename(path_or_url)
        };
        let options = options
            .create_if_missing(migrate == Migrate::Run)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(60))
            .before_acquire(|conn, _| Box::pin(outside_transaction(conn)))
            .connect_with(options.clone())
            .await
            .map_err(|e| unavailable(e, path_or_url))?;
        let read = SqlitePoolOptions::new()
            .max_connections(READERS)
            .connect_with(options.clone().read_only(true))
            .await
            .map_err(|e| unavailable(e, path_or_url))?;
        let writer = Writer::own(options.get_filename().to_path_buf(), BUSY_TIMEOUT);
        let store = SqliteStore {
            read,
            write,
            writer: Arc::new(writer),
        };
        store.prepare_schema(migrate).await?;
        Ok(store)
    }

    /// EXEC-9's write probe: rewrites the header's `user_version` with the value it has,
    /// in a transaction of the writer, which puts a page into the WAL and commits it, the
    /// way every real commit does, while nothing a reader sees changes.
    pub(crate) async fn probe(&self) -> Result<(), StoreError> {
        let mut tx = self
            .write
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| db_error(e, "beginning a transaction"))?;
        let version: i64 = sqlx::query("PRAGMA user_version")
            .fetch_one(&mut *tx)
            .await
            .and_then(|row| row.try_get(0))
            .map_err(|e| db_error(e, "reading user_version"))?;
        // A pragma takes no bound parameter; the value is an integer read just above.
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "PRAGMA user_version = {version}"
        )))
        .execute(&mut *tx)
        .await
        .map_err(|e| db_error(e, "probing a write"))?;
        tx.commit().await.map_err(|e| db_error(e, "committing"))
    }

    /// The pool of the single writer connection, for embedders that need raw access.
    pub fn write_pool(&self) -> &SqlitePool {
        &self.write
    }

    /// The pool of reader connections.
    pub fn read_pool(&self) -> &SqlitePool {
        &self.read
    }
}

/// EXEC-9: the writer is handed out only outside any transaction. A commit that failed
/// (a full disk, an I/O error) may have been rolled back by SQLite itself, so the
/// rollback queued when its transaction dropped fails and the driver still counts the
/// transaction as open; every later `BEGIN` would then be refused. Such a connection is
/// closed (SQLite rolls back whatever it still holds) and the pool opens a fresh one.
/// The pool's ping on release has run any queued rollback by the time this is asked.
async fn outside_transaction(conn: &mut SqliteConnection) -> Result<bool, sqlx::Error> {
    if conn.is_in_transaction() {
        tracing::warn!("the sqlite writer was left inside a transaction; reopening it");
        return Ok(false);
    }
    Ok(true)
}

fn unavailable(err: sqlx::Error, target: &str) -> StoreError {
    StoreError::Unavailable(format!("cannot open sqlite database {target}: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_embedded_migrations_are_what_sqlx_resolves_from_the_directory() {
        let dir = std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
        )
        .join("../../migrations/sqlite");
        let resolved = Migrator::new(dir.as_path()).await.unwrap();
        let key = |m: &sqlx::migrate::Migration| {
            (
                m.version,
                m.description.to_string(),
                m.checksum.to_vec(),
                m.no_tx,
            )
        };
        let embedded: Vec<_> = MIGRATOR.iter().map(key).collect();
        let expected: Vec<_> = resolved.iter().map(key).collect();
        assert!(!expected.is_empty());
        assert_eq!(embedded, expected);
    }
}
