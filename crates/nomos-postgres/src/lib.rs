//! PostgreSQL store adapter for Nomos.
