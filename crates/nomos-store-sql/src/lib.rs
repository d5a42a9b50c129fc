//! What the SQL store adapters (`nomos-sqlite`, `nomos-postgres`) share.
//!
//! Each backend keeps its own SQL text and its own column encodings; this crate holds
//! the pieces that do not depend on either:
//!
//! - [`RecordRow`]: reading one column as a text, integer, uuid, timestamp, JSON value
//!   or spelled enum, with the error wording for bad data (it names the column and
//!   the value). Each backend implements it for its sqlx row type.
//! - [`record`]: the builders that turn a row into a core record
//!   ([`record::session`], [`record::step`], [`record::execution`], ...).
//! - [`chain`]: hashes for event rows written before the AUDIT-2 chain.
//! - [`commit`]: checks of a [`Commit`](nomos_core::ports::store::Commit) made before
//!   anything is written.
//! - [`knowledge`]: search-term splitting and attribute patches of the knowledge graph.
//! - [`snapshot`]: grouping set-based reads into session snapshots.
//! - [`schema`]: what to do with a database at a given migration.
//! - [`backend`]: the [`SqlBackend`](backend::SqlBackend) trait a backend implements
//!   (its SQL text in a [`sql::Sql`], statements run with backend-neutral
//!   [`Arg`](backend::Arg)s, and the writes whose shape is its own).
//! - [`store`]: every read and simple write of the store port, once, and
//!   [`impl_store!`], which implements the port for a backend with them.
//! - [`event_codec`]: the versioned stored form of an event (the `payload` column).
//! - [`codec`]: JSON text and integer conversions both backends bind.
//! - [`error`]: the database errors every backend maps the same way.

pub mod backend;
pub mod chain;
pub mod codec;
pub mod commit;
pub mod error;
pub mod event_codec;
pub mod knowledge;
pub mod record;
mod row;
pub mod schema;
pub mod snapshot;
pub mod sql;
pub mod store;

/// What the [`impl_store!`] expansion names; not for direct use.
#[doc(hidden)]
pub mod __private {
    pub use async_trait::async_trait;
}

pub use row::{JsonColumn, RecordRow, invalid_value, json_error};
