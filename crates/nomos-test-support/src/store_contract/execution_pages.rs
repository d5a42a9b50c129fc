//! Contract checks of the execution list's order and keyset cursor: newest first with
//! ties in one millisecond broken by id, and pages that neither skip nor repeat.

use nomos_core::ports::store::{ExecutionCursor, ExecutionFilter, ListOrder, Store};
use nomos_core::record::Execution;
use nomos_core::{ExecutionStatus, SessionId, SessionStatus};

use super::fixtures::{at, create_commit, events_commit, execution, session, session_id};

/// Creation offsets (ms) of the executions of the two sessions: many share a millisecond.
const FIRST_OFFSETS: [i64; 8] = [0, 0, 0, 5, 5, 9, 12, 12];
const SECOND_OFFSETS: [i64; 7] = [0, 5, 5, 5, 9, 20, 20];

/// Statuses handed out in turn.
const STATUSES: [ExecutionStatus; 4] = [
    ExecutionStatus::Completed,
    ExecutionStatus::PendingApproval,
    ExecutionStatus::Running,
    ExecutionStatus::Failed,
];

/// Commits a session with executions created at `offsets`, and returns them.
async fn seed(store: &dyn Store, id: SessionId, offsets: &[i64]) -> Vec<Execution> {
    let record = session(id, SessionStatus::Executing);
    store.commit(create_commit(record.clone())).await.unwrap();
    let executions: Vec<Execution> = offsets
        .iter()
        .enumerate()
        .map(|(i, offset)| {
            let status = STATUSES[i % STATUSES.len()];
            let mut e = execution(id, i + 1, status, at(*offset));
            if matches!(
                status,
                ExecutionStatus::Running | ExecutionStatus::Completed | ExecutionStatus::Failed
            ) {
                e.started_at = Some(at(*offset + 1));
            }
            e
        })
        .collect();
    store
        .commit(nomos_core::ports::store::Commit {
            executions: executions.clone(),
            ..events_commit(&record, 1, Vec::new())
        })
        .await
        .unwrap();
    executions
}

/// Both sessions' executions, sorted newest first by `(created_at, id)`.
async fn seed_both(store: &dyn Store) -> Vec<Execution> {
    let mut all = seed(store, session_id(70), &FIRST_OFFSETS).await;
    all.extend(seed(store, session_id(71), &SECOND_OFFSETS).await);
    all.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.id)));
    all
}

/// Reads every page of `filter` newest first, `page` at a time, following the cursor.
async fn all_pages(store: &dyn Store, filter: &ExecutionFilter, page: u32) -> Vec<Execution> {
    let mut seen = Vec::new();
    let mut before = filter.before;
    loop {
        let batch = store
            .list_executions(&ExecutionFilter {
                before,
                order: ListOrder::NewestFirst,
                limit: Some(page),
                ..filter.clone()
            })
            .await
            .unwrap();
        assert!(batch.len() <= page as usize, "a page longer than its limit");
        let Some(last) = batch.last() else {
            break;
        };
        before = Some(ExecutionCursor::of(last));
        seen.extend(batch);
    }
    seen
}

/// Newest first lists by descending `(created_at, id)`: executions created in the same
/// millisecond come in descending id order, and the list is the oldest-first one reversed.
pub async fn executions_are_listed_newest_first_with_ties_broken_by_id(store: &dyn Store) {
    let expected = seed_both(store).await;
    let newest = store
        .list_executions(&ExecutionFilter {
            order: ListOrder::NewestFirst,
            ..ExecutionFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(newest, expected);
    let mut oldest = store
        .list_executions(&ExecutionFilter::default())
        .await
        .unwrap();
    oldest.reverse();
    assert_eq!(oldest, expected);

    // The limit keeps the newest ones.
    let top = store
        .list_executions(&ExecutionFilter {
            order: ListOrder::NewestFirst,
            limit: Some(4),
            ..ExecutionFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(top, expected[..4]);
}

/// Paging newest first with the cursor of each page's last execution yields exactly the
/// reversed oldest-first list, with no skips and no repeats, whatever the page size; the
/// same cursor bounds an oldest-first list from above.
pub async fn executions_page_newest_first_without_skips_or_repeats(store: &dyn Store) {
    let expected = seed_both(store).await;
    for page in [1, 2, 3, 4, 7, 15, 100] {
        let seen = all_pages(store, &ExecutionFilter::default(), page).await;
        assert_eq!(seen, expected, "page size {page}");
    }

    // A cursor in the middle of a millisecond tie: the rest of the tie comes next.
    let tied = expected.iter().position(|e| e.created_at == at(5)).unwrap();
    let cursor = ExecutionCursor::of(&expected[tied + 1]);
    let rest = store
        .list_executions(&ExecutionFilter {
            before: Some(cursor),
            order: ListOrder::NewestFirst,
            ..ExecutionFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(rest, expected[tied + 2..]);

    // Oldest first, the cursor keeps those before it, oldest first.
    let older = store
        .list_executions(&ExecutionFilter {
            before: Some(cursor),
            limit: Some(3),
            ..ExecutionFilter::default()
        })
        .await
        .unwrap();
    let mut ascending = expected[tied + 2..].to_vec();
    ascending.reverse();
    assert_eq!(older, ascending[..3]);
}

/// Status and session filters combine with the newest-first order and the cursor: pages
/// of a filtered list are the filtered list, in order, and `created_before` still bounds it.
pub async fn execution_filters_combine_with_order_and_cursor(store: &dyn Store) {
    let expected = seed_both(store).await;
    let second = session_id(71);
    let statuses = vec![ExecutionStatus::PendingApproval, ExecutionStatus::Running];

    let by_status = ExecutionFilter {
        statuses: statuses.clone(),
        ..ExecutionFilter::default()
    };
    let want: Vec<Execution> = expected
        .iter()
        .filter(|e| statuses.contains(&e.status))
        .cloned()
        .collect();
    assert!(
        want.len() >= 4,
        "the fixture has enough matching executions"
    );
    assert_eq!(all_pages(store, &by_status, 2).await, want);

    let by_session = ExecutionFilter {
        session: Some(second),
        ..ExecutionFilter::default()
    };
    let want: Vec<Execution> = expected
        .iter()
        .filter(|e| e.session_id == second)
        .cloned()
        .collect();
    assert_eq!(want.len(), SECOND_OFFSETS.len());
    assert_eq!(all_pages(store, &by_session, 2).await, want);

    let both = ExecutionFilter {
        statuses: statuses.clone(),
        session: Some(second),
        created_before: Some(at(20)),
        ..ExecutionFilter::default()
    };
    let want: Vec<Execution> = expected
        .iter()
        .filter(|e| e.session_id == second && statuses.contains(&e.status))
        .filter(|e| e.created_at < at(20))
        .cloned()
        .collect();
    assert!(!want.is_empty());
    assert_eq!(all_pages(store, &both, 1).await, want);

    // A cursor taken from another session's execution still positions the list.
    let first_newest = expected
        .iter()
        .find(|e| e.session_id == session_id(70))
        .unwrap();
    let after_cursor: Vec<Execution> = expected
        .iter()
        .filter(|e| e.session_id == second)
        .filter(|e| (e.created_at, e.id) < (first_newest.created_at, first_newest.id))
        .cloned()
        .collect();
    let listed = store
        .list_executions(&ExecutionFilter {
            before: Some(ExecutionCursor::of(first_newest)),
            order: ListOrder::NewestFirst,
            ..by_session
        })
        .await
        .unwrap();
    assert_eq!(listed, after_cursor);
}
