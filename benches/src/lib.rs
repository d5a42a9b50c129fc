//! Shared helpers for the Nomos benchmarks.
