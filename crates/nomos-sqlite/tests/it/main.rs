//! Integration tests of the SQLite store: the shared contract suite on a private
//! in-memory database and on a WAL file, plus what only a file can show.

mod contract_in_memory {
    async fn fresh() -> nomos_sqlite::SqliteStore {
        nomos_sqlite::SqliteStore::in_memory().await.unwrap()
    }
    nomos_test_support::store_contract_tests!(fresh);
}

mod contract_on_file {
    async fn fresh() -> nomos_sqlite::SqliteStore {
        // The directory must outlive the store; tests are short, so leak it to /tmp
        // and let the OS temp cleaner take it.
        let dir = tempfile::tempdir().unwrap().keep();
        nomos_sqlite::SqliteStore::open_in_data_dir(dir).await.unwrap()
    }
    nomos_test_support::store_contract_tests!(fresh);
}

mod file;
