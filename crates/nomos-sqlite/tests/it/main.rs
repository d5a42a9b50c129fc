//! Integration tests of the SQLite store: the shared contract suite on a private
//! in-memory database and on a WAL file, plus what only a file can show.

mod contract_in_memory {
    async fn fresh() -> nomos_sqlite::SqliteStore {
        nomos_sqlite::SqliteStore::in_memory()
            .await
            .unwrap_or_else(|e| panic!("cannot open an in-memory store: {e}"))
    }
    nomos_test_support::store_contract_tests!(fresh);
}

mod contract_on_file {
    async fn fresh() -> (nomos_sqlite::SqliteStore, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("cannot make a temp dir: {e}"));
        let store = nomos_sqlite::SqliteStore::open_in_data_dir(dir.path())
            .await
            .unwrap_or_else(|e| panic!("cannot open a store file: {e}"));
        (store, dir)
    }
    nomos_test_support::store_contract_tests!(fresh, guarded);
}

mod disk_full;
mod file;

mod chain;

mod format;
