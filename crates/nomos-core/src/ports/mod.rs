//! The ports: small async traits the imperative shell implements.
//!
//! The core defines them (so adapters depend on the core, never on the runtime) but
//! never calls them: `nomos-agent` does. Defining an async trait needs no runtime;
//! `async-trait` is a macro and brings no executor into the core's dependency tree.

pub mod chat;
pub mod exec;
pub mod replica;
pub mod store;
