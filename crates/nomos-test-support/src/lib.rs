//! Test fixtures for Nomos: a throwaway PostgreSQL server and a loopback sshd.
//!
//! Failing to start a fixture is a test failure, so these helpers panic with a
//! message that says what could not be started and why.

pub mod migrations;
pub mod postgres;
pub mod sshd;
pub mod store_contract;
