//! Integration tests of the SQLite store.
