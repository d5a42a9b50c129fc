//! PostgreSQL under the shared store code: its SQL text, how it binds each argument
//! (`uuid`, `timestamptz`, `jsonb`, arrays for lists), and snapshot reads in a
//! repeatable-read, read-only transaction.

use nomos_core::ports::store::StoreError;
use nomos_store_sql::backend::Arg;
use nomos_store_sql::sql::{ExecutionLists, SessionLists, Sql};
use sqlx::Postgres;
use sqlx::postgres::{PgArguments, PgRow};

use crate::codec::{dt, opt_dt};
use crate::error::{db_error, migrate_error};
use crate::open::{MIGRATOR, PgStore};

type PgQuery = sqlx::query::Query<'static, Postgres, PgArguments>;

/// The session list's filters in one order; `$6, $7` is the newest-first cursor.
macro_rules! list_sessions_sql {
    ($order:literal) => {
        concat!(
            "SELECT * FROM sessions
             WHERE ($1::text[] IS NULL OR status = ANY($1))
               AND ($2::timestamptz IS NULL OR last_activity_at < $2)
               AND ($3::text = 'any' OR ($3 = 'set' AND goal IS NOT NULL)
                    OR ($3 = 'unset' AND goal IS NULL))
               AND ($4::uuid IS NULL OR id > $4)
               AND ($6::timestamptz IS NULL OR created_at < $6 OR (created_at = $6 AND id < $7))
               AND ($8::text IS NULL
                    OR strpos(lower(coalesce(goal, '') || ' ' || coalesce(summary, '')), lower($8)) > 0)
               AND ($9::text = 'any' OR ($9 = 'listed' AND archived_at IS NULL)
                    OR ($9 = 'archived' AND archived_at IS NOT NULL))
               AND ($10::text IS NULL OR created_by = $10)
             ORDER BY ",
            $order,
            " LIMIT $5"
        )
    };
}

/// The execution list's filters; `$6, $7` is the `(created_at, id)` cursor.
///
/// Without a cursor the bound is a no-op; with one it is a plain row-value comparison,
/// so the `(created_at, id)` index seeks to the cursor instead of scanning up to it.
macro_rules! list_executions_sql {
    ($cursor:literal, $order:literal) => {
        concat!(
            "SELECT * FROM executions
             WHERE ($1::text[] IS NULL OR status = ANY($1))
               AND ($2::uuid IS NULL OR session_id = $2)
               AND ($3::timestamptz IS NULL OR started_at < $3)
               AND ($4::timestamptz IS NULL OR created_at < $4)
               AND ",
            $cursor,
            "
             ORDER BY ",
            $order,
            " LIMIT $5"
        )
    };
}

/// The statements PostgreSQL writes in its own dialect.
static SQL: Sql = Sql {
    sessions_in: "SELECT * FROM sessions WHERE id = ANY($1) ORDER BY id",
    steps_in: "SELECT * FROM plan_steps WHERE session_id = ANY($1)
               ORDER BY session_id, generation, seq",
    executions_in: "SELECT * FROM executions WHERE session_id = ANY($1)
                    ORDER BY session_id, created_at, id",
    approvals_in: "SELECT * FROM approvals WHERE session_id = ANY($1)
                   ORDER BY session_id, requested_at, id",
    fanouts_in: "SELECT * FROM fanouts WHERE session_id = ANY($1)
                 ORDER BY session_id, created_at, id",
    last_messages: "SELECT DISTINCT ON (session_id) * FROM messages
                    WHERE session_id = ANY($1) AND role <> 'note'
                    ORDER BY session_id, position DESC",
    list_sessions: SessionLists {
        oldest_first: list_sessions_sql!("id"),
        newest_first: list_sessions_sql!("created_at DESC, id DESC"),
    },
    executions: ExecutionLists {
        oldest_first: list_executions_sql!(
            "($6::timestamptz IS NULL OR (created_at, id) < ($6, $7::uuid))",
            "created_at, id"
        ),
        oldest_first_before: list_executions_sql!(
            "(created_at, id) < ($6::timestamptz, $7::uuid)",
            "created_at, id"
        ),
        newest_first: list_executions_sql!(
            "($6::timestamptz IS NULL OR (created_at, id) < ($6, $7::uuid))",
            "created_at DESC, id DESC"
        ),
        newest_first_before: list_executions_sql!(
            "(created_at, id) < ($6::timestamptz, $7::uuid)",
            "created_at DESC, id DESC"
        ),
    },
    pending_approvals: "SELECT * FROM approvals
                        WHERE status = 'pending' AND ($1::uuid IS NULL OR session_id = $1)
                        ORDER BY requested_at, id",
    entities: "SELECT * FROM entities WHERE ($1::text IS NULL OR kind = $1) ORDER BY slug",
    entity_for_update: "SELECT * FROM entities WHERE slug = $1 FOR UPDATE",
    // EVENT_LOG_LOCK (a test checks they agree).
    lock_event_log: Some("SELECT pg_advisory_xact_lock(7957699392031782449)"),
    last_audited: "SELECT s.slug,
                  (SELECT MAX(k.updated_at) FROM knowledge k
                  WHERE s.slug = ANY(k.about) AND k.tags && ARRAY['audit', 'update']
                  ) AS last_audited_at
                  FROM UNNEST($1::text[]) WITH ORDINALITY AS s(slug, n)
                  ORDER BY s.n",
    migrations_table: "SELECT COUNT(to_regclass('_sqlx_migrations')) AS present",
    applied_version: "SELECT MAX(version) AS version FROM _sqlx_migrations WHERE success",
};

/// Binds one argument as its PostgreSQL type.
fn bind(query: PgQuery, arg: Arg) -> Result<PgQuery, StoreError> {
    let query = match arg {
        Arg::Id(id) => query.bind(id),
        Arg::OptId(id) => query.bind(id),
        Arg::Ids(ids) => query.bind(ids),
        Arg::Texts(texts) => query.bind(texts),
        Arg::Int(n) => query.bind(n),
        Arg::Text(text) => query.bind(text),
        Arg::OptText(text) => query.bind(text),
        Arg::Time(at) => query.bind(dt(at)),
        Arg::OptTime(at) => query.bind(opt_dt(at)),
        Arg::Json(value) => query.bind(value),
        Arg::OptJson(value) => query.bind(value),
        Arg::Statuses(names) => query.bind(if names.is_empty() { None } else { Some(names) }),
        Arg::Limit(limit) => query.bind(limit.map(i64::from)),
    };
    Ok(query)
}

nomos_store_sql::sqlx_backend! {
    PgStore, db = Postgres, row = PgRow, sql = SQL, reader = pool,
    writer = pool, bind = bind, error = db_error, begin_write = "BEGIN",
    snapshot = ["SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"],
    migrator = MIGRATOR, migrate_error = migrate_error
}

nomos_store_sql::impl_store!(PgStore);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hashing_lock_is_the_event_log_lock() {
        let lock = SQL.lock_event_log.unwrap_or_default();
        assert_eq!(
            lock,
            format!(
                "SELECT pg_advisory_xact_lock({})",
                crate::commit::EVENT_LOG_LOCK
            )
        );
    }
}
