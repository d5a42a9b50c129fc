//! Test fixtures for Nomos: a throwaway PostgreSQL server, a loopback sshd and a small
//! disk that fills up.
//!
//! Failing to start a fixture is a test failure, so these helpers panic with a
//! message that says what could not be started and why.

pub mod audit;
pub mod fleet;
pub mod migrations;
pub mod postgres;
pub mod proxmox;
pub mod small_disk;
pub mod sshd;
pub mod store_checks;
pub mod store_contract;
pub mod trickle;
