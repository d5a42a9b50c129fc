//! Connecting: the pool, the per-connection statement timeout, and the schema check
//! that runs before (and instead of) migrations.

use std::str::FromStr;
use std::sync::LazyLock;
use std::time::Duration;

use nomos_core::ports::replica::InstanceId;
use nomos_core::ports::store::StoreError;
use nomos_store_sql::schema::Migrate;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgConnection, PgPool};

use crate::error::{db_error, redact_url};

/// EXEC-9: a connection is handed out only outside any transaction; one whose `COMMIT`
/// or `ROLLBACK` failed (a lost connection, a server that went away) is closed, and the
/// pool opens a fresh one when the server is back. The pool's ping on release has run
/// any queued rollback by the time this is asked.
async fn outside_transaction(conn: &mut PgConnection) -> Result<bool, sqlx::Error> {
    Ok(!conn.is_in_transaction())
}

// `MIGRATION_FILES`: the build script's table of `migrations/postgres`.
include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// The migrations this binary ships, embedded at build time.
pub(crate) static MIGRATOR: LazyLock<Migrator> =
    LazyLock::new(|| nomos_store_sql::schema::embedded_migrator(MIGRATION_FILES));

/// How a [`PgStore`] connects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgStoreOptions {
    /// Pool size.
    pub max_connections: u32,
    /// `statement_timeout` set on every connection.
    pub statement_timeout: Duration,
    /// How long to wait for a connection (and for the first connect).
    pub acquire_timeout: Duration,
    /// How many times a commit is run again after a serialization failure or deadlock.
    pub commit_retries: u32,
}

impl PgStoreOptions {
    /// The settings `PgStore::connect` uses: 10 connections, 30 s statement timeout,
    /// 10 s acquire timeout, 5 retries.
    pub fn standard() -> PgStoreOptions {
        PgStoreOptions {
            max_connections: 10,
            statement_timeout: Duration::from_secs(30),
            acquire_timeout: Duration::from_secs(10),
            commit_retries: 5,
        }
    }
}

/// A PostgreSQL database behind the store port.
#[derive(Clone, Debug)]
pub struct PgStore {
    pub(crate) pool: PgPool,
    pub(crate) retries: u32,
    pub(crate) instance: Option<InstanceId>,
}

impl PgStore {
    /// EXEC-9's write probe: a transaction that takes a transaction id commits a record
    /// to the WAL, the way every real commit does, and changes no row.
    pub(crate) async fn probe(&self) -> Result<(), StoreError> {
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(|e| db_error(e, "beginning a transaction"))?;
        sqlx::query("SELECT pg_current_xact_id()::text")
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(e, "probing a write"))?;
        tx.commit().await.map_err(|e| db_error(e, "committing"))
    }

    /// Connects with the standard options and runs the migrations.
    pub async fn connect(url: &str) -> Result<PgStore, StoreError> {
        PgStore::connect_with(url, PgStoreOptions::standard()).await
    }

    /// Connects with the given options and runs the migrations.
    pub async fn connect_with(url: &str, options: PgStoreOptions) -> Result<PgStore, StoreError> {
        PgStore::open(url, options, Migrate::Run).await
    }

    /// Connects without touching the schema (for repair tools); a database without
    /// the Nomos schema is refused with `NotMigrated`.
    pub async fn connect_without_migrating(url: &str) -> Result<PgStore, StoreError> {
        PgStore::open(url, PgStoreOptions::standard(), Migrate::Refuse).await
    }

    /// Connects without touching the schema, every transaction read-only
    /// (`default_transaction_read_only`), so a write fails (for tools that must leave
    /// the database as it is, AUDIT-3). A database without the current schema is refused.
    pub async fn connect_read_only(url: &str) -> Result<PgStore, StoreError> {
        PgStore::open_as(url, PgStoreOptions::standard(), Migrate::Refuse, true).await
    }

    /// Connects as one of several server processes sharing the database (REPLICA-2): every
    /// connection says it works for `instance`, so the rows it writes record their owner
    /// and the events it commits their origin. Runs the migrations.
    pub async fn connect_instance(
        url: &str,
        options: PgStoreOptions,
        instance: InstanceId,
    ) -> Result<PgStore, StoreError> {
        PgStore::open_for(url, options, Migrate::Run, false, Some(instance)).await
    }

    async fn open(
        url: &str,
        options: PgStoreOptions,
        migrate: Migrate,
    ) -> Result<PgStore, StoreError> {
        PgStore::open_as(url, options, migrate, false).await
    }

    async fn open_as(
        url: &str,
        options: PgStoreOptions,
        migrate: Migrate,
        read_only: bool,
    ) -> Result<PgStore, StoreError> {
        PgStore::open_for(url, options, migrate, read_only, None).await
    }

    async fn open_for(
        url: &str,
        options: PgStoreOptions,
        migrate: Migrate,
        read_only: bool,
        instance: Option<InstanceId>,
    ) -> Result<PgStore, StoreError> {
        let shown = redact_url(url);
        let mut connect = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::Unavailable(format!("bad database url {shown}: {e}")))?;
        if let Some(instance) = instance {
            connect = connect.options([("nomos.instance", instance.to_string())]);
        }
        let timeout_ms = options.statement_timeout.as_millis();
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections)
            .acquire_timeout(options.acquire_timeout)
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    let read_only = if read_only {
                        "; SET default_transaction_read_only = on"
                    } else {
                        ""
                    };
                    // EXEC-11: a commit returns only once its WAL is flushed, whatever the
                    // server's default, so the commit that marks an execution `running` is
                    // on stable storage before its command starts.
                    let set = format!(
                        "SET statement_timeout = {timeout_ms}; SET synchronous_commit = on{read_only}"
                    );
                    sqlx::raw_sql(sqlx::AssertSqlSafe(set))
                        .execute(conn)
                        .await
                        .map(drop)
                })
            })
            .before_acquire(|conn, _meta| Box::pin(outside_transaction(conn)))
            .connect_with(connect)
            .await
            .map_err(|e| StoreError::Unavailable(format!("cannot connect to {shown}: {e}")))?;
        let store = PgStore {
            pool,
            retries: options.commit_retries,
            instance,
        };
        store.prepare_schema(migrate).await?;
        Ok(store)
    }

    /// The connection pool, for embedders that need raw access.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
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
        .join("../../migrations/postgres");
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
