//! The streaming driver: sessions are read a batch at a time by id (keyset pagination),
//! decided in memory by the core, and each batch's repairs are committed in one
//! transaction with the version check. Memory stays flat in the number of sessions;
//! a run stopped anywhere resumes cleanly because repaired sessions decide to nothing.

use std::collections::HashMap;
use std::time::Instant;

use nomos_core::ports::store::{SessionFilter, Store, StoreError};
use nomos_core::record::Message;
use nomos_core::{SessionId, Timestamp};

use crate::config::{BackfillConfig, Mode, Scope};
use crate::decide::{SessionDecision, decide_session};
use crate::report::Report;

/// Why a run stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum BackfillError {
    /// Reading a batch failed.
    #[error("reading the batch of sessions after {after}: {source}")]
    Read {
        /// The last session id of the previous batch (`start` for the first one).
        after: String,
        /// The store's error.
        source: StoreError,
    },
    /// Committing a batch failed as a whole; nothing of it was written.
    #[error("committing the batch of {n} session(s) from {first}: {source}")]
    Commit {
        /// How many sessions the batch held.
        n: usize,
        /// Its first session.
        first: SessionId,
        /// The store's error.
        source: StoreError,
    },
}

/// How a planned repair ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Committed.
    Committed,
    /// Another writer committed to the session since it was read; skipped, not
    /// overwritten.
    Conflict(String),
    /// The store refused this session's commit for another reason.
    Failed(String),
}

/// Runs the backfill over the store. `on_batch` sees the report after every batch (for
/// a progress display).
pub async fn run_backfill(
    store: &dyn Store,
    config: &BackfillConfig,
    now: Timestamp,
    on_batch: &mut dyn FnMut(&Report),
) -> Result<Report, BackfillError> {
    let started = Instant::now();
    let older_than = config.thresholds.backfill_idle_after;
    let mut report = Report::new(
        config.mode,
        now,
        older_than.as_millis() / 1000,
        config.sample_size,
    );
    let batch_size = config.batch_size.max(1);
    let mut requested: Vec<SessionId> = match &config.scope {
        Scope::All => Vec::new(),
        Scope::Sessions(ids) => ids.clone(),
    };
    requested.sort();
    requested.dedup();
    let mut next_requested = 0;
    let mut after: Option<SessionId> = None;
    let mut n_attempted: u64 = 0;
    loop {
        let ids: Vec<SessionId> = match &config.scope {
            Scope::All => {
                let filter = SessionFilter {
                    idle_since: Some(now - older_than),
                    after,
                    limit: Some(batch_size),
                    ..SessionFilter::default()
                };
                store
                    .list_sessions(&filter)
                    .await
                    .map_err(|source| BackfillError::Read {
                        after: after.map_or("start".to_owned(), |a| a.to_string()),
                        source,
                    })?
                    .into_iter()
                    .map(|s| s.id)
                    .collect()
            }
            Scope::Sessions(_) => {
                let end = (next_requested + batch_size as usize).min(requested.len());
                let ids = requested[next_requested..end].to_vec();
                next_requested = end;
                ids
            }
        };
        let Some(last) = ids.last().copied() else {
            break;
        };
        let full_batch = ids.len() >= batch_size as usize;
        let decisions = plan_batch(store, &ids, now, config)
            .await
            .map_err(|source| BackfillError::Read {
                after: after.map_or("start".to_owned(), |a| a.to_string()),
                source,
            })?;
        if matches!(config.scope, Scope::Sessions(_)) {
            report.missing.extend(
                ids.iter()
                    .filter(|id| !decisions.iter().any(|d| d.session == **id)),
            );
        }
        // --limit: at most that many sessions are changed; the run stops at the first
        // session that would go over it.
        let mut kept = Vec::with_capacity(decisions.len());
        for decision in decisions {
            if decision.changes() {
                if config.limit.is_some_and(|limit| n_attempted >= limit) {
                    report.limit_reached = true;
                    break;
                }
                n_attempted += 1;
            }
            kept.push(decision);
        }
        match config.mode {
            Mode::DryRun => {
                for decision in &kept {
                    report.record(decision, decision.changes());
                }
            }
            Mode::Apply => {
                let first = kept.first().map_or(last, |d| d.session);
                let n = kept.len();
                let applied = apply_batch(store, kept)
                    .await
                    .map_err(|source| BackfillError::Commit { n, first, source })?;
                for (decision, outcome) in applied {
                    match outcome {
                        None | Some(Applied::Committed) => {
                            report.record(&decision, outcome.is_some());
                        }
                        Some(Applied::Conflict(message)) => {
                            report.record_conflict(&decision, message);
                        }
                        Some(Applied::Failed(message)) => report.record_error(&decision, message),
                    }
                }
            }
        }
        report.batches += 1;
        report.elapsed_ms = elapsed_ms(started);
        on_batch(&report);
        let more = match config.scope {
            Scope::All => full_batch,
            Scope::Sessions(_) => next_requested < requested.len(),
        };
        if report.limit_reached || !more {
            break;
        }
        after = Some(last);
    }
    report.elapsed_ms = elapsed_ms(started);
    Ok(report)
}

/// Reads and decides one batch of sessions, in id order: one read of the aggregates and
/// one of the last messages of the sessions that need it (those without a goal).
/// Sessions that no longer exist are left out.
pub async fn plan_batch(
    store: &dyn Store,
    ids: &[SessionId],
    now: Timestamp,
    config: &BackfillConfig,
) -> Result<Vec<SessionDecision>, StoreError> {
    let snapshots = store.load_sessions(ids).await?;
    let trivial: Vec<SessionId> = snapshots
        .iter()
        .filter(|s| s.record.goal.is_none() && !s.record.status.is_terminal())
        .map(|s| s.record.id)
        .collect();
    let last_messages: HashMap<SessionId, Message> = if trivial.is_empty() {
        HashMap::new()
    } else {
        store
            .last_messages(&trivial)
            .await?
            .into_iter()
            .map(|m| (m.session_id, m))
            .collect()
    };
    Ok(snapshots
        .into_iter()
        .map(|snapshot| {
            let last = last_messages.get(&snapshot.record.id);
            decide_session(snapshot, last, now, config)
        })
        .collect())
}

/// Commits the repairs of one batch in one transaction (`commit_batch`). Each decision
/// comes back with how its commit ended (`None`: it had nothing to commit). A session
/// another writer changed since it was read is skipped by the version check.
pub async fn apply_batch(
    store: &dyn Store,
    decisions: Vec<SessionDecision>,
) -> Result<Vec<(SessionDecision, Option<Applied>)>, StoreError> {
    let commits: Vec<_> = decisions.iter().filter_map(|d| d.commit.clone()).collect();
    let mut results = if commits.is_empty() {
        Vec::new()
    } else {
        store.commit_batch(commits).await?
    }
    .into_iter();
    let mut out = Vec::with_capacity(decisions.len());
    for decision in decisions {
        let outcome = if decision.changes() {
            Some(match results.next() {
                Some(Ok(_)) => Applied::Committed,
                Some(Err(conflict @ StoreError::Conflict { .. })) => {
                    Applied::Conflict(conflict.to_string())
                }
                Some(Err(other)) => Applied::Failed(other.to_string()),
                None => Applied::Failed("the store returned no result for this commit".into()),
            })
        } else {
            None
        };
        out.push((decision, outcome));
    }
    Ok(out)
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
