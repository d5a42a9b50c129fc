//! The SQL of the shared store code: the statements written once for every backend
//! ([`SHARED`]) and those each backend writes in its own dialect ([`Sql`]), with the
//! arguments each one is given (`$n` below is the n-th [`Arg`](crate::backend::Arg), in the backend's
//! own placeholder syntax).

/// The statements each backend writes in its own dialect.
#[derive(Clone, Copy, Debug)]
pub struct Sql {
    /// Session rows by id: `$1` ids.
    pub sessions_in: &'static str,
    /// Plan steps by `(session_id, generation, seq)`: `$1` session ids.
    pub steps_in: &'static str,
    /// Executions by `(session_id, created_at, id)`: `$1` session ids.
    pub executions_in: &'static str,
    /// Approvals by `(session_id, requested_at, id)`: `$1` session ids.
    pub approvals_in: &'static str,
    /// Fan-outs (FLEET-1) by `(session_id, created_at, id)`: `$1` session ids.
    pub fanouts_in: &'static str,
    /// The newest message other than a note of each session, by session id: `$1` ids.
    pub last_messages: &'static str,
    /// Session rows: `$1` statuses, `$2` idle before, `$3` goal (`any`, `set`, `unset`),
    /// `$4` after this id, `$5` limit, `$6` and `$7` the newest-first `(created_at, id)`
    /// cursor, `$8` a text the goal or summary contains (ASCII case ignored); one text per
    /// order.
    pub list_sessions: SessionLists,
    /// Executions: `$1` statuses, `$2` session, `$3` started before, `$4` created
    /// before, `$5` limit, `$6` and `$7` the `(created_at, id)` cursor; one text per
    /// order (oldest first, newest first) with and without a cursor.
    pub executions: ExecutionLists,
    /// Pending approvals by `(requested_at, id)`: `$1` session or NULL.
    pub pending_approvals: &'static str,
    /// Entities by slug: `$1` kind or NULL.
    pub entities: &'static str,
    /// An entity, locked for the rest of the write transaction: `$1` slug.
    pub entity_for_update: &'static str,
    /// Takes the lock that orders event appends until the transaction ends, where the
    /// backend has one (SQLite's single writer needs none).
    pub lock_event_log: Option<&'static str>,
    /// WRITEBACK-3: each slug with the newest `updated_at` of the knowledge entries about
    /// it tagged `audit` or `update` (`last_audited_at`, NULL without one), in the order
    /// given: `$1` slugs.
    pub last_audited: &'static str,
    /// Whether the migrations table exists: one row, `present` 1 or 0.
    pub migrations_table: &'static str,
    /// The newest migration applied: one row, `version` or NULL.
    pub applied_version: &'static str,
}

/// The statements whose text is the same on every backend, with `$n` placeholders
/// (SQLite reads `$1` as the first argument, as PostgreSQL does).
#[derive(Clone, Copy, Debug)]
pub struct Shared {
    /// A session row: `$1` id.
    pub session: &'static str,
    /// A session's plan steps by `(generation, seq)`: `$1` session id.
    pub session_steps: &'static str,
    /// A session's executions by `(created_at, id)`: `$1` session id.
    pub session_executions: &'static str,
    /// A session's approvals by `(requested_at, id)`: `$1` session id.
    pub session_approvals: &'static str,
    /// A session's fan-outs (FLEET-1), oldest first: `$1` session id.
    pub session_fanouts: &'static str,
    /// Deletes a session: `$1` id.
    pub delete_session: &'static str,
    /// A session's messages by position: `$1` session id.
    pub messages: &'static str,
    /// A session's tool calls by position: `$1` session id.
    pub tool_calls: &'static str,
    /// An execution: `$1` id.
    pub execution: &'static str,
    /// An approval: `$1` id.
    pub approval: &'static str,
    /// A session's events after a seq: `$1` session id, `$2` after, `$3` limit.
    pub session_events: &'static str,
    /// Events after a global seq: `$1` after, `$2` limit.
    pub global_events: &'static str,
    /// The newest event's `global_seq` (one row or none).
    pub newest_global_seq: &'static str,
    /// A session's newest event's `seq` (one row or none): `$1` session id.
    pub newest_seq: &'static str,
    /// A session's events with their hashes after a seq: `$1` session id, `$2` after,
    /// `$3` limit.
    pub chained_session_events: &'static str,
    /// Events with their hashes after `(session_id, seq)`: `$1` session id, `$2` seq,
    /// `$3` limit.
    pub chained_events: &'static str,
    /// Inserts or replaces an entity: `$1` slug, `$2` kind, `$3` name, `$4` attributes,
    /// `$5` updated at.
    pub upsert_entity: &'static str,
    /// An entity: `$1` slug.
    pub entity: &'static str,
    /// The slugs among two: `$1`, `$2`.
    pub entity_slugs: &'static str,
    /// Records a relationship once: `$1` from, `$2` kind, `$3` to, `$4` created at.
    pub insert_relationship: &'static str,
    /// Relationships touching an entity: `$1` slug.
    pub relations: &'static str,
    /// Sets an entity's attributes: `$1` attributes, `$2` updated at, `$3` slug.
    pub set_entity_attributes: &'static str,
    /// The sessions that have events without a hash (AUDIT-2, rows from before it).
    pub unhashed_sessions: &'static str,
    /// A session's events with their hashes, by seq: `$1` session id.
    pub all_chained_session_events: &'static str,
    /// Sets an event's hash: `$1` hash, `$2` session id, `$3` seq.
    pub set_event_hash: &'static str,
    /// Inserts a session row at version 1: `$1` to `$14` its columns (see
    /// [`crate::commit::session_args`]), `$15` client, `$16` the owner (`created_by`).
    pub insert_session: &'static str,
    /// Rewrites a session row at a version: `$1` to `$14` its columns, `$15` the new
    /// version, `$16` the expected one.
    pub update_session: &'static str,
    /// Bumps a session's version: `$1` the new version, `$2` id, `$3` the expected one.
    pub bump_version: &'static str,
    /// A session's version: `$1` id.
    pub session_version: &'static str,
}

/// The shared statements.
pub static SHARED: Shared = Shared {
    session: "SELECT * FROM sessions WHERE id = $1",
    session_steps: "SELECT * FROM plan_steps WHERE session_id = $1 ORDER BY generation, seq",
    session_executions: "SELECT * FROM executions WHERE session_id = $1 ORDER BY created_at, id",
    session_approvals: "SELECT * FROM approvals WHERE session_id = $1 ORDER BY requested_at, id",
    session_fanouts: "SELECT * FROM fanouts WHERE session_id = $1 ORDER BY created_at, id",
    delete_session: "DELETE FROM sessions WHERE id = $1",
    messages: "SELECT * FROM messages WHERE session_id = $1 ORDER BY position",
    tool_calls: "SELECT * FROM tool_calls WHERE session_id = $1 ORDER BY position",
    execution: "SELECT * FROM executions WHERE id = $1",
    approval: "SELECT * FROM approvals WHERE id = $1",
    session_events: "SELECT * FROM events WHERE session_id = $1 AND seq > $2
                     ORDER BY seq LIMIT $3",
    global_events: "SELECT * FROM events WHERE global_seq > $1 ORDER BY global_seq LIMIT $2",
    newest_global_seq: "SELECT global_seq FROM events ORDER BY global_seq DESC LIMIT 1",
    newest_seq: "SELECT seq FROM events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1",
    chained_session_events: "SELECT session_id, seq, at, kind, payload, hash FROM events
                             WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
    chained_events: "SELECT session_id, seq, at, kind, payload, hash FROM events
                     WHERE (session_id, seq) > ($1, $2) ORDER BY session_id, seq LIMIT $3",
    upsert_entity: "INSERT INTO entities (slug, kind, name, attributes, updated_at)
                    VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (slug) DO UPDATE SET kind = EXCLUDED.kind, name = EXCLUDED.name,
                    attributes = EXCLUDED.attributes, updated_at = EXCLUDED.updated_at",
    entity: "SELECT * FROM entities WHERE slug = $1",
    entity_slugs: "SELECT slug FROM entities WHERE slug IN ($1, $2)",
    insert_relationship: "INSERT INTO relationships (from_slug, kind, to_slug, created_at)
                          VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
    relations: "SELECT * FROM relationships WHERE from_slug = $1 OR to_slug = $1
                ORDER BY from_slug, kind, to_slug",
    set_entity_attributes: "UPDATE entities SET attributes = $1, updated_at = $2 WHERE slug = $3",
    unhashed_sessions: "SELECT DISTINCT session_id FROM events WHERE hash IS NULL",
    all_chained_session_events: "SELECT session_id, seq, at, kind, payload, hash FROM events
                                 WHERE session_id = $1 ORDER BY seq",
    set_event_hash: "UPDATE events SET hash = $1 WHERE session_id = $2 AND seq = $3",
    insert_session:
        "INSERT INTO sessions (id, status, goal, summary, board_outcome, plan_generation,
                     assent, knowledge, nudged_at, n_messages, created_at, last_activity_at,
                     archived_at, plan_approvals, version, client, created_by)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 1, $15,
                     $16)",
    update_session: "UPDATE sessions SET status = $2, goal = $3, summary = $4, board_outcome = $5,
                     plan_generation = $6, assent = $7, knowledge = $8, nudged_at = $9,
                     n_messages = $10, created_at = $11, last_activity_at = $12,
                     archived_at = $13, plan_approvals = $14, version = $15
                     WHERE id = $1 AND version = $16",
    bump_version: "UPDATE sessions SET version = $1 WHERE id = $2 AND version = $3",
    session_version: "SELECT version FROM sessions WHERE id = $1",
};

/// The two texts of the session list.
#[derive(Clone, Copy, Debug)]
pub struct SessionLists {
    /// By id, paged with `after`.
    pub oldest_first: &'static str,
    /// By `(created_at, id)` descending, paged with the cursor.
    pub newest_first: &'static str,
}

/// The four texts of the execution list.
#[derive(Clone, Copy, Debug)]
pub struct ExecutionLists {
    /// Oldest first.
    pub oldest_first: &'static str,
    /// Oldest first, before the cursor.
    pub oldest_first_before: &'static str,
    /// Newest first.
    pub newest_first: &'static str,
    /// Newest first, before the cursor: the next page.
    pub newest_first_before: &'static str,
}

/// The `ON CONFLICT` clause of a plan step upsert, the same on every backend: it updates
/// the row only when it belongs to the same session, so an upsert of another session's
/// id touches no row. A literal, for `concat!` after the backend's own `INSERT`.
#[macro_export]
macro_rules! step_upsert {
    () => {
        "ON CONFLICT (id) DO UPDATE SET generation = EXCLUDED.generation, seq = EXCLUDED.seq,
           title = EXCLUDED.title, detail = EXCLUDED.detail, status = EXCLUDED.status,
           commands = EXCLUDED.commands, step_check = EXCLUDED.step_check,
           note = EXCLUDED.note, started_at = EXCLUDED.started_at,
           finished_at = EXCLUDED.finished_at, updated_at = EXCLUDED.updated_at
         WHERE plan_steps.session_id = EXCLUDED.session_id"
    };
}

/// The `ON CONFLICT` clause of an execution upsert (see [`step_upsert!`]).
#[macro_export]
macro_rules! execution_upsert {
    () => {
        "ON CONFLICT (id) DO UPDATE SET tool_call_id = EXCLUDED.tool_call_id,
           host = EXCLUDED.host, command = EXCLUDED.command, class = EXCLUDED.class,
           reason = EXCLUDED.reason, generation = EXCLUDED.generation,
           step_seq = EXCLUDED.step_seq, status = EXCLUDED.status,
           created_at = EXCLUDED.created_at, started_at = EXCLUDED.started_at,
           finished_at = EXCLUDED.finished_at, output = EXCLUDED.output, error = EXCLUDED.error
         WHERE executions.session_id = EXCLUDED.session_id"
    };
}

/// The `ON CONFLICT` clause of an approval upsert (see [`step_upsert!`]).
#[macro_export]
macro_rules! approval_upsert {
    () => {
        "ON CONFLICT (id) DO UPDATE SET execution_id = EXCLUDED.execution_id,
           binding = EXCLUDED.binding, binding_hash = EXCLUDED.binding_hash,
           status = EXCLUDED.status, requested_at = EXCLUDED.requested_at,
           expires_at = EXCLUDED.expires_at, decided_at = EXCLUDED.decided_at,
           decided_by = EXCLUDED.decided_by, approvers_required = EXCLUDED.approvers_required,
           approved_by = EXCLUDED.approved_by
         WHERE approvals.session_id = EXCLUDED.session_id"
    };
}
