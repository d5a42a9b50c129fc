//! Integration tests of the backfill on real SQLite files and a real PostgreSQL server,
//! with databases seeded through the core; CLI tests run the real binary.

// The test bodies are plain async functions shared by the per-backend tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../../../fixtures/backfill/seed.rs"]
mod seed;

mod cli;
mod repair;
mod support;
mod verify;
