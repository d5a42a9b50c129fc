//! Embedded SQLite store adapter for Nomos.
//!
//! [`SqliteStore`] implements [`nomos_core::ports::store::Store`] on one SQLite file in
//! WAL mode (or a private in-memory database for tests and evals). The schema lives in
//! `migrations/sqlite/`, embedded at build time and applied at open; timestamps are
//! INTEGER milliseconds (UTC), ids are UUID text, states are CHECK-listed text.
//!
//! Writes are serialized by SQLite's write lock (`BEGIN IMMEDIATE`, with a busy timeout):
//! commits run on a connection of their own, called on the committing task's thread,
//! other writes on the driver's single writer connection; reads use a pool of
//! read-only connections. Concurrent writers queue rather than deadlock or fail with
//! `SQLITE_BUSY`.

#![deny(missing_docs)]

mod backend;
mod codec;
mod commit;
mod error;
mod fanout;
mod knowledge;
mod open;
mod script;
mod writer;

pub use open::{DATABASE_FILE, SqliteStore};
