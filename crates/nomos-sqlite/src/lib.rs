//! Embedded SQLite store adapter for Nomos.
