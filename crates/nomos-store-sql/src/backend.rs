//! What a SQL backend gives the shared store code: its SQL text, and a way to run one
//! statement (or several in one read snapshot) with backend-neutral arguments.

use async_trait::async_trait;
use nomos_core::Timestamp;
use nomos_core::ports::store::StoreError;
use serde_json::Value;
use uuid::Uuid;

use crate::RecordRow;
use crate::sql::Sql;

/// One bound parameter, before the backend encodes it.
///
/// Each backend maps every variant to its own column encoding (SQLite: uuid text,
/// integer milliseconds, JSON text and JSON arrays for lists; PostgreSQL: `uuid`,
/// `timestamptz`, `jsonb` and arrays).
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// An id.
    Id(Uuid),
    /// An id or NULL.
    OptId(Option<Uuid>),
    /// A list of ids (SQLite: a JSON array for `json_each`; PostgreSQL: `uuid[]`).
    Ids(Vec<Uuid>),
    /// A list of texts (SQLite: a JSON array for `json_each`; PostgreSQL: `text[]`).
    Texts(Vec<String>),
    /// An integer.
    Int(i64),
    /// A text.
    Text(String),
    /// A text or NULL.
    OptText(Option<String>),
    /// A timestamp.
    Time(Timestamp),
    /// A timestamp or NULL.
    OptTime(Option<Timestamp>),
    /// A JSON value (SQLite: text; PostgreSQL: `jsonb`).
    Json(Value),
    /// A JSON value or NULL.
    OptJson(Option<Value>),
    /// Status names, NULL when empty ("any").
    Statuses(Vec<&'static str>),
    /// A row limit, none for "no limit" (SQLite: -1; PostgreSQL: NULL).
    Limit(Option<u32>),
}

/// One statement: its SQL text, its arguments in order, and what it does (for errors).
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    /// The SQL text, in the backend's placeholder syntax.
    pub sql: &'static str,
    /// The arguments, bound in order.
    pub args: Vec<Arg>,
    /// What the statement does or touches, named in a failure ("loading messages").
    pub what: String,
}

impl Statement {
    /// A statement.
    pub fn new(sql: &'static str, args: Vec<Arg>, what: impl Into<String>) -> Statement {
        Statement {
            sql,
            args,
            what: what.into(),
        }
    }
}

/// A SQL database behind the store port.
///
/// The shared code in [`crate::store`] builds every read (and the simple writes) from
/// [`SqlBackend::SQL`] and runs them through the four `fetch`/`execute` methods, which
/// [`sqlx_backend!`](crate::sqlx_backend) writes for a backend. The writes whose shape
/// differs between backends stay with it; [`impl_store!`](crate::impl_store) names them.
#[async_trait]
pub trait SqlBackend: Sized + Send + Sync {
    /// The backend's row type.
    type Row: RecordRow<Self> + Send + Sync;

    /// The backend's SQL text for each shared statement.
    const SQL: &'static Sql;

    /// Runs a query on a reader and returns every row.
    async fn fetch_all(&self, statement: Statement) -> Result<Vec<Self::Row>, StoreError>;

    /// Runs a query on a reader and returns its first row, if any.
    async fn fetch_optional(&self, statement: Statement) -> Result<Option<Self::Row>, StoreError>;

    /// Runs several queries in one read-only transaction, so their rows are of one
    /// consistent snapshot; returns the rows of each, in order.
    async fn fetch_in_snapshot(
        &self,
        statements: Vec<Statement>,
    ) -> Result<Vec<Vec<Self::Row>>, StoreError>;

    /// Runs a write on the writer, in a transaction of its own; returns the rows it
    /// touched.
    async fn execute(&self, statement: Statement) -> Result<u64, StoreError>;

    /// A write transaction on the writer (SQLite: `BEGIN IMMEDIATE`, so it holds the
    /// write lock from its start). Dropped without [`SqlWriteTx::commit`], it rolls back.
    type WriteTx: SqlWriteTx<Row = Self::Row>;

    /// Begins a write transaction.
    async fn begin_write(&self) -> Result<Self::WriteTx, StoreError>;
}

/// An open write transaction of a [`SqlBackend`].
#[async_trait]
pub trait SqlWriteTx: Send {
    /// The backend's row type.
    type Row: Send + Sync;

    /// Runs a query in the transaction and returns every row.
    async fn fetch_all(&mut self, statement: Statement) -> Result<Vec<Self::Row>, StoreError>;

    /// Runs a query in the transaction and returns its first row, if any.
    async fn fetch_optional(
        &mut self,
        statement: Statement,
    ) -> Result<Option<Self::Row>, StoreError>;

    /// Runs a write in the transaction; returns the rows it touched.
    async fn execute(&mut self, statement: Statement) -> Result<u64, StoreError>;

    /// Commits the transaction.
    async fn commit(self) -> Result<(), StoreError>;
}

/// Implements [`SqlBackend`] for a store type over sqlx: `db` its sqlx database, `row`
/// its row type, `sql` its [`Sql`] static, `reader` and `writer` its pool fields (the
/// same for one pool), `bind` its `fn(Query, Arg) -> Result<Query, StoreError>`,
/// `error` its `fn(sqlx::Error, &str) -> StoreError`, `begin_write` the statement that
/// opens a write transaction, `snapshot` the statements that make a fresh transaction
/// a read-only snapshot (none where every transaction is one), `migrator` its embedded
/// migrations and `migrate_error` its `fn(MigrateError) -> StoreError`.
///
/// It also defines the backend's `WriteTx` type and two inherent methods of the store:
/// `check_schema` (the applied migrations must be exactly the shipped ones) and
/// `prepare_schema(Migrate)` (check, then migrate or refuse, then hash the event rows
/// from before the AUDIT-2 chain), which opening runs.
#[macro_export]
macro_rules! sqlx_backend {
    (
        $store:ty,
        db = $db:ty,
        row = $row:ty,
        sql = $sql:expr,
        reader = $reader:ident,
        writer = $writer:ident,
        bind = $bind:path,
        error = $error:path,
        begin_write = $begin:literal,
        snapshot = [$($setup:literal),*],
        migrator = $migrator:path,
        migrate_error = $migrate_error:path $(,)?
    ) => {
        impl $store {
            /// Checks the database is reachable and migrated (for `/readyz`).
            pub(crate) async fn check_schema(
                &self,
            ) -> Result<(), ::nomos_core::ports::store::StoreError> {
                let mut conn = self
                    .$reader
                    .acquire()
                    .await
                    .map_err(|e| $error(e, "connecting"))?;
                let found = self.applied_version(&mut conn).await?;
                $crate::schema::check_schema(found, self.known_version())
            }

            /// Checks the applied migrations against the embedded ones, then migrates or
            /// refuses; then gives rows from before migration 3 their hashes (AUDIT-2, a
            /// no-op once done).
            pub(crate) async fn prepare_schema(
                &self,
                migrate: $crate::schema::Migrate,
            ) -> Result<(), ::nomos_core::ports::store::StoreError> {
                let mut conn = self
                    .$writer
                    .acquire()
                    .await
                    .map_err(|e| $error(e, "connecting"))?;
                let found = self.applied_version(&mut conn).await?;
                match $crate::schema::schema_step(found, self.known_version(), migrate)? {
                    $crate::schema::SchemaStep::Current => {}
                    $crate::schema::SchemaStep::Migrate => {
                        $migrator.run(&mut *conn).await.map_err($migrate_error)?
                    }
                }
                drop(conn);
                if migrate == $crate::schema::Migrate::Run {
                    let hashed = $crate::chain::hash_unhashed_events(self).await?;
                    if hashed > 0 {
                        ::tracing::info!(
                            events = hashed,
                            "hashed event rows written before the chain"
                        );
                    }
                }
                Ok(())
            }

            /// The newest migration applied, `None` if the database was never migrated.
            pub(crate) async fn applied_version(
                &self,
                conn: &mut <$db as ::sqlx::Database>::Connection,
            ) -> Result<Option<i64>, ::nomos_core::ports::store::StoreError> {
                use $crate::RecordRow;
                let present = ::sqlx::query(<Self as $crate::backend::SqlBackend>::SQL.migrations_table)
                    .fetch_one(&mut *conn)
                    .await
                    .map_err(|e| $error(e, "reading the schema"))?;
                if present.int("present")? == 0 {
                    return Ok(None);
                }
                ::sqlx::query(<Self as $crate::backend::SqlBackend>::SQL.applied_version)
                    .fetch_one(&mut *conn)
                    .await
                    .map_err(|e| $error(e, "reading the applied migrations"))?
                    .opt_int("version")
            }

            /// The newest migration this binary ships.
            pub(crate) fn known_version(&self) -> i64 {
                $migrator.iter().map(|m| m.version).max().unwrap_or(0)
            }
        }

        /// A write transaction on the writer.
        pub struct WriteTx(::sqlx::Transaction<'static, $db>);

        impl WriteTx {
            /// The transaction's connection, for statements of the backend's own shape.
            pub(crate) fn conn(&mut self) -> &mut <$db as ::sqlx::Database>::Connection {
                &mut self.0
            }
        }

        #[$crate::__private::async_trait]
        impl $crate::backend::SqlWriteTx for WriteTx {
            type Row = $row;

            async fn fetch_all(
                &mut self,
                statement: $crate::backend::Statement,
            ) -> Result<Vec<$row>, ::nomos_core::ports::store::StoreError> {
                let what = statement.what.clone();
                let mut query = ::sqlx::query(statement.sql);
                for arg in statement.args {
                    query = $bind(query, arg)?;
                }
                query.fetch_all(&mut *self.0).await.map_err(|e| $error(e, &what))
            }

            async fn fetch_optional(
                &mut self,
                statement: $crate::backend::Statement,
            ) -> Result<Option<$row>, ::nomos_core::ports::store::StoreError> {
                let what = statement.what.clone();
                let mut query = ::sqlx::query(statement.sql);
                for arg in statement.args {
                    query = $bind(query, arg)?;
                }
                query.fetch_optional(&mut *self.0).await.map_err(|e| $error(e, &what))
            }

            async fn execute(
                &mut self,
                statement: $crate::backend::Statement,
            ) -> Result<u64, ::nomos_core::ports::store::StoreError> {
                let what = statement.what.clone();
                let mut query = ::sqlx::query(statement.sql);
                for arg in statement.args {
                    query = $bind(query, arg)?;
                }
                let done = query.execute(&mut *self.0).await.map_err(|e| $error(e, &what))?;
                Ok(done.rows_affected())
            }

            async fn commit(self) -> Result<(), ::nomos_core::ports::store::StoreError> {
                self.0.commit().await.map_err(|e| $error(e, "committing"))
            }
        }

        #[$crate::__private::async_trait]
        impl $crate::backend::SqlBackend for $store {
            type Row = $row;

            type WriteTx = WriteTx;

            const SQL: &'static $crate::sql::Sql = &$sql;

            async fn fetch_all(
                &self,
                statement: $crate::backend::Statement,
            ) -> Result<Vec<$row>, ::nomos_core::ports::store::StoreError> {
                let what = statement.what.clone();
                let mut query = ::sqlx::query(statement.sql);
                for arg in statement.args {
                    query = $bind(query, arg)?;
                }
                query.fetch_all(&self.$reader).await.map_err(|e| $error(e, &what))
            }

            async fn fetch_optional(
                &self,
                statement: $crate::backend::Statement,
            ) -> Result<Option<$row>, ::nomos_core::ports::store::StoreError> {
                let what = statement.what.clone();
                let mut query = ::sqlx::query(statement.sql);
                for arg in statement.args {
                    query = $bind(query, arg)?;
                }
                query.fetch_optional(&self.$reader).await.map_err(|e| $error(e, &what))
            }

            async fn fetch_in_snapshot(
                &self,
                statements: Vec<$crate::backend::Statement>,
            ) -> Result<Vec<Vec<$row>>, ::nomos_core::ports::store::StoreError> {
                let mut tx = self
                    .$reader
                    .begin()
                    .await
                    .map_err(|e| $error(e, "beginning a read"))?;
                $(
                    ::sqlx::query($setup)
                        .execute(&mut *tx)
                        .await
                        .map_err(|e| $error(e, "beginning a read"))?;
                )*
                let mut sets = Vec::with_capacity(statements.len());
                for statement in statements {
                    let mut query = ::sqlx::query(statement.sql);
                    for arg in statement.args {
                        query = $bind(query, arg)?;
                    }
                    let rows = query
                        .fetch_all(&mut *tx)
                        .await
                        .map_err(|e| $error(e, &statement.what))?;
                    sets.push(rows);
                }
                tx.commit().await.map_err(|e| $error(e, "ending a read"))?;
                Ok(sets)
            }

            async fn execute(
                &self,
                statement: $crate::backend::Statement,
            ) -> Result<u64, ::nomos_core::ports::store::StoreError> {
                let what = statement.what.clone();
                let mut query = ::sqlx::query(statement.sql);
                for arg in statement.args {
                    query = $bind(query, arg)?;
                }
                let done = query.execute(&self.$writer).await.map_err(|e| $error(e, &what))?;
                Ok(done.rows_affected())
            }

            async fn begin_write(
                &self,
            ) -> Result<WriteTx, ::nomos_core::ports::store::StoreError> {
                self.$writer
                    .begin_with($begin)
                    .await
                    .map(WriteTx)
                    .map_err(|e| $error(e, "beginning a transaction"))
            }
        }
    };
}
