//! The store port: sessions as aggregates committed atomically with their events,
//! the event log, the transcript, executions and approvals, and the knowledge graph.
//!
//! Every adapter (SQLite, Postgres, an embedder's own) must pass the same contract
//! suite; a behaviour difference between two adapters is a bug.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::event::{EventRecord, PendingEvent};
use crate::fanout::Fanout;
use crate::id::{ApprovalId, ExecutionId, SessionId, StepId};
use crate::record::{
    Approval, Entity, Execution, KnowledgeEntry, Message, PlanStep, Relationship, SessionRecord,
    ToolCallRecord,
};
use crate::status::{ExecutionStatus, SessionStatus};
use crate::time::Timestamp;

/// A session with everything the core needs to decide: its row, all plan steps of
/// every generation, its executions and its approvals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionSnapshot {
    /// The session row (its `version` is the one to commit against).
    pub record: SessionRecord,
    /// Every step of every generation, ordered by `(generation, seq)`.
    pub steps: Vec<PlanStep>,
    /// Every execution, ordered by creation.
    pub executions: Vec<Execution>,
    /// Every approval, ordered by request time.
    pub approvals: Vec<Approval>,
    /// Every fan-out (FLEET-1), ordered by creation.
    #[serde(default)]
    pub fanouts: Vec<Fanout>,
}

impl SessionSnapshot {
    /// PLAN-7: the plan as shown: the current generation's steps, or with `all` every
    /// generation's, ordered by `(generation, seq)`.
    pub fn plan_steps(&self, all: bool) -> Vec<&PlanStep> {
        let generation = self.record.plan_generation;
        let mut steps: Vec<&PlanStep> = self
            .steps
            .iter()
            .filter(|step| all || step.generation == generation)
            .collect();
        steps.sort_by_key(|step| (step.generation, step.seq));
        steps
    }
}

/// One decision of the core, to be committed atomically: rows and their events.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Commit {
    /// `None` inserts a new session; `Some(v)` requires the stored version to be `v`.
    pub expected_version: Option<i64>,
    /// The session row as it must be after the commit (its `version` field is ignored:
    /// the store writes `expected_version + 1`, or 1 for a new session).
    pub session: Option<SessionRecord>,
    /// Steps to insert or update, by id.
    pub steps: Vec<PlanStep>,
    /// Steps to delete (a plan revised before any step started, PLAN-2).
    pub removed_steps: Vec<StepId>,
    /// Executions to insert or update, by id.
    pub executions: Vec<Execution>,
    /// Approvals to insert or update, by id.
    pub approvals: Vec<Approval>,
    /// Fan-outs to insert (FLEET-1); a fan-out never changes once written.
    pub fanouts: Vec<Fanout>,
    /// Messages to append.
    pub messages: Vec<Message>,
    /// Tool calls to append; a second record with the same `(session, call_id)` is an error.
    pub tool_calls: Vec<ToolCallRecord>,
    /// The events, in order; the store numbers them.
    pub events: Vec<PendingEvent>,
}

impl Commit {
    /// Whether the commit would change nothing.
    pub fn is_empty(&self) -> bool {
        self.session.is_none()
            && self.steps.is_empty()
            && self.removed_steps.is_empty()
            && self.executions.is_empty()
            && self.approvals.is_empty()
            && self.fanouts.is_empty()
            && self.messages.is_empty()
            && self.tool_calls.is_empty()
            && self.events.is_empty()
    }
}

/// What a successful commit produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitReceipt {
    /// The session's new version.
    pub version: i64,
    /// The committed events with their sequence numbers, for publishing.
    pub events: Vec<EventRecord>,
}

/// Whether a session has a goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GoalFilter {
    /// Either.
    #[default]
    Any,
    /// Only sessions that called `set_goal`.
    Set,
    /// Only sessions that never did.
    Unset,
}

/// CONTROL-6: whether a session is archived.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ArchiveFilter {
    /// Either.
    #[default]
    Any,
    /// Only sessions on the board (not archived).
    Listed,
    /// Only archived sessions.
    Archived,
}

/// Which sessions to list. Results are ordered by id, for keyset pagination.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SessionFilter {
    /// Only these statuses (empty: all).
    pub statuses: Vec<SessionStatus>,
    /// Only sessions whose last activity is strictly before this time.
    pub idle_since: Option<Timestamp>,
    /// Goal filter.
    pub goal: GoalFilter,
    /// Only sessions with an id greater than this (keyset pagination by id).
    pub after: Option<SessionId>,
    /// At most this many.
    pub limit: Option<u32>,
    /// `OldestFirst` (the default) orders by id and pages with `after`; `NewestFirst`
    /// orders by `(created_at, id)` descending and pages with `before`.
    pub order: ListOrder,
    /// With `NewestFirst`: only sessions after this one in that order (the last of the
    /// previous page).
    pub before: Option<SessionCursor>,
    /// Only sessions whose goal or summary contains this text, ignoring ASCII case.
    pub text: Option<String>,
    /// CONTROL-6: archived sessions, listed ones, or both.
    pub archived: ArchiveFilter,
    /// AUTHZ-1: only sessions this principal created.
    pub owner: Option<String>,
}

/// A position in the newest-first `(created_at, id)` order of sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionCursor {
    /// The session's creation time.
    pub created_at: Timestamp,
    /// The session's id: it orders sessions created in the same millisecond.
    pub id: SessionId,
}

/// The order of a list keyed by `(created_at, id)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ListOrder {
    /// Ascending `(created_at, id)`: oldest first.
    #[default]
    OldestFirst,
    /// Descending `(created_at, id)`: newest first.
    NewestFirst,
}

/// A position in the `(created_at, id)` order of executions: the last execution of a
/// page, from which the next newest-first page continues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecutionCursor {
    /// The execution's creation time.
    pub created_at: Timestamp,
    /// The execution's id: it orders executions created in the same millisecond.
    pub id: ExecutionId,
}

impl ExecutionCursor {
    /// The position of an execution.
    pub fn of(execution: &Execution) -> Self {
        Self {
            created_at: execution.created_at,
            id: execution.id,
        }
    }
}

/// Which executions to list, ordered by `created_at` then id, ascending or descending.
///
/// Keyset pagination newest first: list with `order: NewestFirst` and a `limit`, then
/// pass the last execution of each page as `before` to read the next one.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ExecutionFilter {
    /// Only these statuses (empty: all).
    pub statuses: Vec<ExecutionStatus>,
    /// Only this session's.
    pub session: Option<SessionId>,
    /// Only those started strictly before this time (EXEC-3 sweep).
    pub started_before: Option<Timestamp>,
    /// Only those created strictly before this time (EXEC-3 start-up clean-up).
    pub created_before: Option<Timestamp>,
    /// Only those strictly before this position in `(created_at, id)` order, whatever
    /// the `order`: with `NewestFirst` it is the cursor of the next page; with
    /// `OldestFirst` it bounds the list from above (the oldest ones before it).
    pub before: Option<ExecutionCursor>,
    /// Oldest first (the default) or newest first; `limit` keeps the first ones in
    /// this order.
    pub order: ListOrder,
    /// At most this many.
    pub limit: Option<u32>,
}

/// A knowledge entry found by full-text search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeHit {
    /// The entry.
    pub entry: KnowledgeEntry,
    /// Relevance; higher is better, comparable only within one result list.
    pub rank: f64,
}

/// A host's last audit (WRITEBACK-3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditMark {
    /// The entity slug.
    pub slug: String,
    /// The newest knowledge entry about it tagged `audit` or `update`, if any.
    pub last_audited_at: Option<Timestamp>,
}

/// Why a store call failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Another writer committed first; reload the session and decide again.
    #[error("session {session} changed concurrently (expected version {expected}, found {found})")]
    Conflict {
        /// The session.
        session: SessionId,
        /// The version the commit expected.
        expected: i64,
        /// The version stored (0: the session does not exist).
        found: i64,
    },
    /// The thing asked for does not exist.
    #[error("{what} not found")]
    NotFound {
        /// What was looked up, with its id.
        what: String,
    },
    /// A unique key was already taken.
    #[error("duplicate {what}")]
    Duplicate {
        /// What collided.
        what: String,
    },
    /// The input breaks a rule of the schema (a check, a foreign key, a bad value).
    #[error("invalid data: {0}")]
    Invalid(String),
    /// The database could not be reached.
    #[error("cannot reach the database: {0}")]
    Unavailable(String),
    /// The database has no Nomos schema (run the migrations).
    #[error("the database has no Nomos schema; run the migrations first")]
    NotMigrated,
    /// The database is at a migration this binary does not know.
    #[error(
        "the database is at migration {found}, newer than this binary knows ({known}); upgrade Nomos"
    )]
    SchemaTooNew {
        /// The newest migration applied in the database.
        found: i64,
        /// The newest migration this binary ships.
        known: i64,
    },
    /// Any other backend error, with its text.
    #[error("database error: {0}")]
    Backend(String),
}

/// The persistence port.
///
/// What an implementation must guarantee (the contract suite in `nomos-test-support`
/// checks each of these against both shipped stores; run it against your own):
///
/// * [`Store::commit`] writes the rows and the events of one [`Commit`] in one
///   transaction, or nothing; it refuses with [`StoreError::Conflict`] when the stored
///   version is not [`Commit::expected_version`], and then writes nothing.
/// * Events are numbered per session 1, 2, 3... without gaps, in commit order, and
///   globally by a `global_seq` that increases in commit order, so a reader following
///   [`Store::events_after`] never skips a commit that lands late.
/// * Readers see only committed state.
#[async_trait]
pub trait Store: Send + Sync {
    /// Checks the database is reachable and migrated (for `/readyz`).
    async fn check(&self) -> Result<(), StoreError>;

    /// Proves the store can commit a write now (EXEC-9, `/readyz` when the last write is
    /// old or failed). The write changes nothing a reader sees; a store that cannot write
    /// without changing something may only run its [`Store::check`].
    async fn probe_write(&self) -> Result<(), StoreError>;

    /// Loads a session aggregate.
    async fn load_session(&self, id: SessionId) -> Result<Option<SessionSnapshot>, StoreError>;

    /// Loads several session aggregates at once, in id order; ids without a session are
    /// left out (the same snapshots as [`Store::load_session`] of each), for the callers
    /// that read sessions a page at a time (the backfill tool).
    async fn load_sessions(&self, ids: &[SessionId]) -> Result<Vec<SessionSnapshot>, StoreError>;

    /// The newest message other than a note of each of several sessions, for those that
    /// have one, in session id order (SWEEP-4 reads it to decide SESSION-4): for each, the
    /// message [`crate::sweep::last_word`] picks from its transcript.
    async fn last_messages(&self, ids: &[SessionId]) -> Result<Vec<Message>, StoreError>;

    /// Commits one decision atomically, with the optimistic version check: all of its rows
    /// and events, or (on any error, a [`StoreError::Conflict`] included) none of them.
    async fn commit(&self, commit: Commit) -> Result<CommitReceipt, StoreError>;

    /// Commits several decisions in one transaction. A commit whose version check fails
    /// is skipped (its slot holds the `Conflict`); the others still commit.
    async fn commit_batch(
        &self,
        commits: Vec<Commit>,
    ) -> Result<Vec<Result<CommitReceipt, StoreError>>, StoreError>;

    /// Deletes a session and everything it owns.
    async fn delete_session(&self, id: SessionId) -> Result<(), StoreError>;

    /// Lists session rows, ordered by id.
    async fn list_sessions(&self, filter: &SessionFilter)
    -> Result<Vec<SessionRecord>, StoreError>;

    /// The transcript of a session, in order.
    async fn messages(&self, session: SessionId) -> Result<Vec<Message>, StoreError>;

    /// The tool calls of a session, in order.
    async fn tool_calls(&self, session: SessionId) -> Result<Vec<ToolCallRecord>, StoreError>;

    /// One execution.
    async fn execution(&self, id: ExecutionId) -> Result<Option<Execution>, StoreError>;

    /// Executions matching a filter.
    async fn list_executions(&self, filter: &ExecutionFilter)
    -> Result<Vec<Execution>, StoreError>;

    /// One approval.
    async fn approval(&self, id: ApprovalId) -> Result<Option<Approval>, StoreError>;

    /// Pending approvals, of one session or of all, ordered by request time.
    async fn pending_approvals(
        &self,
        session: Option<SessionId>,
    ) -> Result<Vec<Approval>, StoreError>;

    /// Events after a position: of one session by `seq`, or of all by `global_seq`.
    async fn events_after(
        &self,
        session: Option<SessionId>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<EventRecord>, StoreError>;

    /// The `global_seq` of the newest committed event, 0 for an empty log. One index
    /// lookup, whatever the log's length (a live stream starts after it).
    async fn newest_global_seq(&self) -> Result<i64, StoreError>;

    /// The `seq` of a session's newest event, 0 for a session without events (or none).
    /// One index lookup, whatever the session's length.
    async fn newest_seq(&self, session: SessionId) -> Result<i64, StoreError>;

    /// AUDIT-2: stored events with their chain hashes, in `(session_id, seq)` order
    /// after a cursor, at most `limit`.
    async fn chained_events(
        &self,
        cursor: crate::chain::ChainCursor,
        limit: u32,
    ) -> Result<Vec<crate::chain::ChainedEvent>, StoreError>;

    /// Inserts or replaces an entity by slug.
    async fn upsert_entity(&self, entity: &Entity) -> Result<(), StoreError>;

    /// One entity.
    async fn entity(&self, slug: &str) -> Result<Option<Entity>, StoreError>;

    /// Entities, optionally of one kind, ordered by slug.
    async fn list_entities(&self, kind: Option<&str>) -> Result<Vec<Entity>, StoreError>;

    /// Merges `patch` (a JSON object) into an entity's attributes; `null` removes a key.
    async fn update_entity_attributes(
        &self,
        slug: &str,
        patch: &serde_json::Value,
        now: Timestamp,
    ) -> Result<Entity, StoreError>;

    /// Records a relationship (idempotent on `(from, kind, to)`); both ends must exist.
    async fn create_relationship(&self, relationship: &Relationship) -> Result<(), StoreError>;

    /// Relationships touching an entity, in either direction.
    async fn relations(&self, slug: &str) -> Result<Vec<Relationship>, StoreError>;

    /// Inserts or replaces a knowledge entry by key.
    async fn upsert_knowledge(&self, entry: &KnowledgeEntry) -> Result<(), StoreError>;

    /// One knowledge entry.
    async fn knowledge(&self, key: &str) -> Result<Option<KnowledgeEntry>, StoreError>;

    /// Full-text search over titles, contents and tags, best first.
    async fn search_knowledge(
        &self,
        query: &str,
        limit: u32,
    ) -> Result<Vec<KnowledgeHit>, StoreError>;

    /// WRITEBACK-3: the last audit of each slug, in the order given.
    async fn last_audited(&self, slugs: &[String]) -> Result<Vec<AuditMark>, StoreError>;
}
