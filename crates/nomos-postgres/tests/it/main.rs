//! Integration tests of the Postgres store: the shared contract suite, each test on
//! its own fresh database of a throwaway server, plus connection-level behaviour.

mod contract {
    async fn fresh() -> nomos_postgres::PgStore {
        let url = nomos_test_support::postgres::fresh_database().await;
        nomos_postgres::PgStore::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect: {e}"))
    }
    nomos_test_support::store_contract_tests!(fresh);
}

mod connection;

mod chain;

mod format;

mod replica;
