//! The REST resources, one module each with its own `router()`.

pub mod approvals;
pub mod control;
pub mod hosts;
pub mod knowledge;
pub mod safety;
pub mod sessions;
pub mod system;
pub mod tokens;
