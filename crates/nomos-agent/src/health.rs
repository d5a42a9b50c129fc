//! EXEC-9: the store's write health as the runtime saw it, for `/readyz`.
//!
//! Every commit the runtime makes records whether the store took it. A failure of the
//! store itself (unreachable, a full disk, an I/O error) makes the store unhealthy; a
//! refusal of the data (a version conflict, a duplicate, an invalid row) shows the store
//! works. When the last outcome is a failure, or older than [`STALE_AFTER`], readiness
//! asks the store to prove a write with [`Store::probe_write`] and records that instead.

use std::sync::Mutex;
use std::time::Duration;

use nomos_core::ports::store::{Store, StoreError};
use tokio::time::Instant;

use crate::agent::Agent;

/// How long a successful write vouches for the store before readiness probes again.
pub const STALE_AFTER: Duration = Duration::from_secs(30);

/// What the last write (or probe) showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteHealth {
    /// Nothing was written yet.
    Unknown,
    /// The store took the last write.
    Healthy,
    /// The store failed the last write, with its error.
    Failing(String),
}

/// The last outcome and when it was seen.
#[derive(Debug)]
pub(crate) struct WriteMonitor {
    last: Mutex<(WriteHealth, Option<Instant>)>,
}

impl Default for WriteMonitor {
    fn default() -> Self {
        WriteMonitor {
            last: Mutex::new((WriteHealth::Unknown, None)),
        }
    }
}

impl WriteMonitor {
    /// Records the outcome of a write.
    pub(crate) fn record<T>(&self, res: &Result<T, StoreError>) {
        let health = match res {
            Ok(_) => WriteHealth::Healthy,
            Err(error) if store_failed(error) => WriteHealth::Failing(error.to_string()),
            // The store answered: it works, the data was refused.
            Err(_) => WriteHealth::Healthy,
        };
        let mut last = match self.last.lock() {
            Ok(last) => last,
            Err(poisoned) => poisoned.into_inner(),
        };
        *last = (health, Some(Instant::now()));
    }

    fn last(&self) -> (WriteHealth, Option<Instant>) {
        match self.last.lock() {
            Ok(last) => last.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

/// Whether an error is the store's own failure rather than a refusal of the data.
fn store_failed(error: &StoreError) -> bool {
    !matches!(
        error,
        StoreError::Conflict { .. }
            | StoreError::NotFound { .. }
            | StoreError::Duplicate { .. }
            | StoreError::Invalid(_)
    )
}

impl Agent {
    /// The store's write health as last seen, without probing.
    pub fn write_health(&self) -> WriteHealth {
        self.inner.writes.last().0
    }

    /// EXEC-9: whether the store takes writes now. A recent successful write answers at
    /// once; after a failure, or when the last write is old or there was none, the store
    /// is probed with a write that changes nothing.
    pub async fn check_writes(&self) -> Result<(), StoreError> {
        let (health, at) = self.inner.writes.last();
        let fresh = at.is_some_and(|at| at.elapsed() < STALE_AFTER);
        if health == WriteHealth::Healthy && fresh {
            return Ok(());
        }
        let res = self.inner.store.probe_write().await;
        self.inner.writes.record(&res);
        res
    }

    /// Commits through the store and records the outcome (every runtime write).
    pub(crate) async fn commit_recorded(
        &self,
        commit: nomos_core::ports::store::Commit,
    ) -> Result<nomos_core::ports::store::CommitReceipt, StoreError> {
        let res = Store::commit(&*self.inner.store, commit).await;
        self.inner.writes.record(&res);
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: EXEC-9
    #[test]
    fn only_failures_of_the_store_itself_make_writes_unhealthy() {
        let monitor = WriteMonitor::default();
        assert_eq!(monitor.last().0, WriteHealth::Unknown);
        monitor.record::<()>(&Err(StoreError::Unavailable("disk full".into())));
        assert_eq!(
            monitor.last().0,
            WriteHealth::Failing("cannot reach the database: disk full".into())
        );
        monitor.record::<()>(&Err(StoreError::Duplicate { what: "x".into() }));
        assert_eq!(monitor.last().0, WriteHealth::Healthy);
        monitor.record::<()>(&Err(StoreError::Backend("io".into())));
        assert!(matches!(monitor.last().0, WriteHealth::Failing(_)));
        monitor.record(&Ok(()));
        assert_eq!(monitor.last().0, WriteHealth::Healthy);
    }
}
