//! PostgreSQL store adapter for Nomos.
//!
//! [`PgStore`] implements [`nomos_core::ports::store::Store`] on a connection pool.
//! The schema lives in `migrations/postgres/`, embedded at build time and applied at
//! connect; every connection gets a `statement_timeout`. A commit is one transaction
//! of a handful of round trips (rows go in through `UNNEST` arrays, one statement per
//! table), run again a bounded number of times on a serialization failure or deadlock.
//! Event appends take a transaction-scoped advisory lock just before commit, so the
//! global event order is the commit order.
//!
//! Several server processes can share one database (REPLICA-1..3): [`PgLeases`] holds a
//! session's turn in one process at a time, [`PgInstances`] keeps the heartbeats and who
//! owns what, and [`PgEventFeed`] brings the events other processes commit to this one.

#![deny(missing_docs)]

mod backend;
mod codec;
mod commit;
mod error;
mod fanout;
mod instance;
mod knowledge;
mod lease;
pub mod notify;
mod open;

pub use error::redact_url;
pub use instance::PgInstances;
pub use lease::{PgLeases, session_key};
pub use notify::PgEventFeed;
pub use open::{PgStore, PgStoreOptions};
