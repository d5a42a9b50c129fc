//! The one-off repair of stuck sessions and stale executions (BACKFILL-1, BACKFILL-2).
//!
//! # Brief overview
//!
//! * [`config`]: what a run does ([`BackfillConfig`]: dry run or apply, which sessions,
//!   how old, batch size, limit) and [`parse_age`] for `--older-than`.
//! * [`decide`]: the pure decision for one session, [`decide_session`], made by the same
//!   core functions the runtime uses (SWEEP-4 `classify_session`, EXEC-3
//!   `classify_execution`, PLAN-8 `close_leftover_steps`) and drained into one commit.
//! * [`run`]: the streaming driver, [`run_backfill`]: keyset pages of sessions, one
//!   `commit_batch` transaction per page, version-checked, idempotent.
//! * [`report`]: counts per class, samples with reasons, conflicts; text or JSON.
//! * [`open`]: picks SQLite or Postgres from the URL and refuses a database without the
//!   current schema unless asked to migrate.

pub mod config;
pub mod decide;
pub mod open;
pub mod report;
pub mod run;

pub use config::{BackfillConfig, Mode, Scope, parse_age};
pub use decide::{Finding, RepairClass, SessionDecision, decide_session};
pub use open::{Backend, DEFAULT_DATABASE_URL, OpenError, SchemaPolicy, open_store};
pub use report::Report;
pub use run::{Applied, BackfillError, apply_batch, plan_batch, run_backfill};
