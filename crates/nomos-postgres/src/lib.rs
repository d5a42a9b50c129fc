//! PostgreSQL store adapter for Nomos.
//!
//! [`PgStore`] implements [`nomos_core::ports::store::Store`] on a connection pool.
//! The schema lives in `migrations/postgres/`, embedded at build time and applied at
//! connect; every connection gets a `statement_timeout`. A commit is one transaction
//! of a handful of round trips (rows go in through `UNNEST` arrays, one statement per
//! table), run again a bounded number of times on a serialization failure or deadlock.
//! Event appends take a transaction-scoped advisory lock just before commit, so the
//! global event order is the commit order.

#![deny(missing_docs)]

mod backend;
mod codec;
mod commit;
mod error;
mod knowledge;
mod open;

pub use error::redact_url;
pub use open::{PgStore, PgStoreOptions};
