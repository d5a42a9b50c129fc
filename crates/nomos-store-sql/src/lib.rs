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

pub mod chain;
pub mod commit;
pub mod knowledge;
pub mod record;
mod row;
pub mod schema;
pub mod snapshot;

pub use row::{JsonColumn, RecordRow, invalid_value, json_error};
