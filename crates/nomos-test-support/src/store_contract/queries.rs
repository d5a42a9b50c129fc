//! Contract checks of the queries the sweeps and the operations view run:
//! sessions by status, idle time and goal; executions by status and age; pending
//! approvals.

use nomos_core::ports::store::{
    ArchiveFilter, Commit, ExecutionFilter, GoalFilter, ListOrder, SessionCursor, SessionFilter,
    Store,
};
use nomos_core::record::SessionRecord;
use nomos_core::{ApprovalStatus, ExecutionStatus, SessionId, SessionStatus};

use super::fixtures::{approval, at, create_commit, events_commit, execution, session, session_id};

async fn put(
    store: &dyn Store,
    n: u128,
    status: SessionStatus,
    idle_at: i64,
    goal: bool,
) -> SessionRecord {
    let mut record = session(session_id(n), status);
    record.last_activity_at = at(idle_at);
    if !goal {
        record.goal = None;
    }
    store.commit(create_commit(record.clone())).await.unwrap();
    record.version = 1;
    record
}

fn ids(records: &[SessionRecord]) -> Vec<SessionId> {
    records.iter().map(|r| r.id).collect()
}

/// The idle sweep finds sessions by status, idle time and goal; `awaiting_input`
/// sessions are not among the statuses it asks for.
// rule: SWEEP-1
// rule: SWEEP-2
// rule: SWEEP-3
pub async fn sessions_are_listed_by_status_idle_time_and_goal(store: &dyn Store) {
    let idle_planning = put(store, 40, SessionStatus::Planning, 0, true).await;
    let idle_executing = put(store, 41, SessionStatus::Executing, 100, true).await;
    let _fresh = put(store, 42, SessionStatus::Executing, 20 * 60_000, true).await;
    let _waiting = put(store, 43, SessionStatus::AwaitingInput, 0, true).await;
    let goalless = put(store, 44, SessionStatus::Active, 0, false).await;
    let _done = put(store, 45, SessionStatus::Done, 0, true).await;
    let idle_active_goal = put(store, 46, SessionStatus::Active, 0, true).await;

    let sweep = SessionFilter {
        statuses: vec![
            SessionStatus::Active,
            SessionStatus::Planning,
            SessionStatus::Executing,
        ],
        idle_since: Some(at(15 * 60_000)),
        goal: GoalFilter::Set,
        ..SessionFilter::default()
    };
    let found = store.list_sessions(&sweep).await.unwrap();
    assert_eq!(
        ids(&found),
        [idle_planning.id, idle_executing.id, idle_active_goal.id]
    );
    assert_eq!(found[0], idle_planning);

    let unset = SessionFilter {
        goal: GoalFilter::Unset,
        ..SessionFilter::default()
    };
    assert_eq!(
        ids(&store.list_sessions(&unset).await.unwrap()),
        [goalless.id]
    );

    // Idle is strict: a session whose last activity is exactly the cut-off is not idle.
    let exact = SessionFilter {
        idle_since: Some(at(100)),
        ..SessionFilter::default()
    };
    let found = store.list_sessions(&exact).await.unwrap();
    assert!(!ids(&found).contains(&idle_executing.id));
    assert_eq!(found.len(), 5);

    let all = store
        .list_sessions(&SessionFilter::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 7);
    assert!(all.windows(2).all(|w| w[0].id < w[1].id));
}

/// Sessions page by id: `after` and `limit` walk the whole list once.
pub async fn sessions_page_by_id(store: &dyn Store) {
    for n in [57u128, 51, 55, 53, 59] {
        put(store, n, SessionStatus::Active, 0, true).await;
    }
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = store
            .list_sessions(&SessionFilter {
                after,
                limit: Some(2),
                ..SessionFilter::default()
            })
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 2);
        after = page.last().map(|r| r.id);
        seen.extend(ids(&page));
    }
    let expected: Vec<SessionId> = [51u128, 53, 55, 57, 59]
        .into_iter()
        .map(session_id)
        .collect();
    assert_eq!(seen, expected);
}

/// Sessions page newest first by `(created_at, id)`, ties broken by id, filtered by
/// status and by text in the goal or summary (ASCII case ignored), without skips or
/// repeats.
pub async fn sessions_page_newest_first_filtered_by_status_and_text(store: &dyn Store) {
    // (n, created at, status, goal)
    let rows = [
        (71u128, 300, SessionStatus::Done, "Free DISK space on web1"),
        (72, 100, SessionStatus::Done, "Rotate nginx logs"),
        (73, 300, SessionStatus::Failed, "Check disk health"),
        (74, 200, SessionStatus::Done, "Disk usage report"),
        (75, 400, SessionStatus::Active, "Restart the backup job"),
    ];
    for (n, created, status, goal) in rows {
        let mut record = session(session_id(n), status);
        record.created_at = at(created);
        record.goal = Some(goal.to_owned());
        store.commit(create_commit(record)).await.unwrap();
    }
    let mut seen = Vec::new();
    let mut before: Option<SessionCursor> = None;
    loop {
        let page = store
            .list_sessions(&SessionFilter {
                order: ListOrder::NewestFirst,
                before,
                limit: Some(2),
                ..SessionFilter::default()
            })
            .await
            .unwrap();
        let Some(last) = page.last() else { break };
        before = Some(SessionCursor {
            created_at: last.created_at,
            id: last.id,
        });
        seen.extend(ids(&page));
    }
    let expected: Vec<SessionId> = [75u128, 73, 71, 74, 72]
        .into_iter()
        .map(session_id)
        .collect();
    assert_eq!(seen, expected);

    let disk_done = store
        .list_sessions(&SessionFilter {
            order: ListOrder::NewestFirst,
            statuses: vec![SessionStatus::Done],
            text: Some("disk".to_owned()),
            ..SessionFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(ids(&disk_done), [session_id(71), session_id(74)]);
    // Text is matched as text, not as a pattern.
    let pattern = store
        .list_sessions(&SessionFilter {
            text: Some("%".to_owned()),
            ..SessionFilter::default()
        })
        .await
        .unwrap();
    assert!(pattern.is_empty(), "{pattern:?}");
}

/// CONTROL-6: a session's archive time round-trips (to the millisecond), is cleared again,
/// and the list keeps archived sessions out, shows only them, or both.
// rule: CONTROL-6
pub async fn archived_sessions_round_trip_and_filter(store: &dyn Store) {
    let listed = put(store, 81, SessionStatus::Done, 100, true).await;
    let mut archived = put(store, 82, SessionStatus::Failed, 100, true).await;
    archived.archived_at = Some(at(12_345));
    let commit = Commit {
        expected_version: Some(archived.version),
        session: Some(archived.clone()),
        ..Commit::default()
    };
    store.commit(commit).await.unwrap();
    let loaded = store.load_session(archived.id).await.unwrap().unwrap();
    assert_eq!(loaded.record.archived_at, Some(at(12_345)));
    let list = |archived| SessionFilter {
        archived,
        ..SessionFilter::default()
    };
    let on_board = store
        .list_sessions(&list(ArchiveFilter::Listed))
        .await
        .unwrap();
    assert_eq!(ids(&on_board), [listed.id]);
    let only = store
        .list_sessions(&list(ArchiveFilter::Archived))
        .await
        .unwrap();
    assert_eq!(ids(&only), [archived.id]);
    let both = store
        .list_sessions(&list(ArchiveFilter::Any))
        .await
        .unwrap();
    assert_eq!(ids(&both), [listed.id, archived.id]);
    // Unarchived, it is listed again.
    let mut back = loaded.record.clone();
    back.archived_at = None;
    store
        .commit(Commit {
            expected_version: Some(back.version),
            session: Some(back),
            ..Commit::default()
        })
        .await
        .unwrap();
    let on_board = store
        .list_sessions(&list(ArchiveFilter::Listed))
        .await
        .unwrap();
    assert_eq!(ids(&on_board), [listed.id, archived.id]);
}

/// The execution sweep finds executions running since before a time; the start-up
/// clean-up finds non-terminal ones created before a time.
// rule: EXEC-3
pub async fn executions_are_listed_for_the_stale_execution_sweeps(store: &dyn Store) {
    let id = session_id(60);
    let record = session(id, SessionStatus::Executing);
    store.commit(create_commit(record.clone())).await.unwrap();
    let minute = 60_000;
    let mut old_running = execution(id, 1, ExecutionStatus::Running, at(0));
    old_running.started_at = Some(at(minute));
    let mut new_running = execution(id, 2, ExecutionStatus::Running, at(0));
    new_running.started_at = Some(at(20 * minute));
    let old_pending = execution(id, 3, ExecutionStatus::PendingApproval, at(2 * minute));
    let old_approved = execution(id, 4, ExecutionStatus::Approved, at(3 * minute));
    let mut old_done = execution(id, 5, ExecutionStatus::Completed, at(minute));
    old_done.started_at = Some(at(minute));
    old_done.finished_at = Some(at(minute + 5));
    let young_pending = execution(id, 6, ExecutionStatus::PendingApproval, at(90 * minute));
    let all = vec![
        old_running.clone(),
        new_running.clone(),
        old_pending.clone(),
        old_approved.clone(),
        old_done.clone(),
        young_pending.clone(),
    ];
    store
        .commit(Commit {
            executions: all,
            ..events_commit(&record, 1, Vec::new())
        })
        .await
        .unwrap();

    let sweep = ExecutionFilter {
        statuses: vec![ExecutionStatus::Running],
        started_before: Some(at(10 * minute)),
        ..ExecutionFilter::default()
    };
    assert_eq!(
        store.list_executions(&sweep).await.unwrap(),
        vec![old_running.clone()]
    );

    let startup = ExecutionFilter {
        statuses: vec![
            ExecutionStatus::PendingApproval,
            ExecutionStatus::Approved,
            ExecutionStatus::Running,
        ],
        created_before: Some(at(60 * minute)),
        ..ExecutionFilter::default()
    };
    let stale: Vec<_> = store
        .list_executions(&startup)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    // Ordered by created_at, then id.
    let mut same_time = [old_running.id, new_running.id];
    same_time.sort();
    assert_eq!(
        stale,
        [same_time[0], same_time[1], old_pending.id, old_approved.id]
    );

    let of_session = ExecutionFilter {
        session: Some(id),
        limit: Some(3),
        ..ExecutionFilter::default()
    };
    assert_eq!(store.list_executions(&of_session).await.unwrap().len(), 3);
    let other = ExecutionFilter {
        session: Some(session_id(404)),
        ..ExecutionFilter::default()
    };
    assert!(store.list_executions(&other).await.unwrap().is_empty());
    assert_eq!(
        store
            .list_executions(&ExecutionFilter::default())
            .await
            .unwrap()
            .len(),
        6
    );
}

/// Pending approvals are listed by request time, per session or across all; decided
/// ones are not.
pub async fn pending_approvals_are_listed_by_request_time(store: &dyn Store) {
    let a = session(session_id(70), SessionStatus::Executing);
    let b = session(session_id(71), SessionStatus::Executing);
    store.commit(create_commit(a.clone())).await.unwrap();
    store.commit(create_commit(b.clone())).await.unwrap();
    let a1 = execution(a.id, 1, ExecutionStatus::PendingApproval, at(1));
    let a2 = execution(a.id, 2, ExecutionStatus::Cancelled, at(2));
    let b1 = execution(b.id, 1, ExecutionStatus::PendingApproval, at(3));
    let late = approval(&a1, at(500));
    let mut decided = approval(&a2, at(10));
    decided.status = ApprovalStatus::Denied;
    decided.decided_at = Some(at(20));
    decided.decided_by = Some("operator".into());
    let early = approval(&b1, at(100));
    store
        .commit(Commit {
            executions: vec![a1, a2],
            approvals: vec![late.clone(), decided.clone()],
            ..events_commit(&a, 1, Vec::new())
        })
        .await
        .unwrap();
    store
        .commit(Commit {
            executions: vec![b1],
            approvals: vec![early.clone()],
            ..events_commit(&b, 1, Vec::new())
        })
        .await
        .unwrap();
    assert_eq!(
        store.pending_approvals(None).await.unwrap(),
        vec![early.clone(), late.clone()]
    );
    assert_eq!(
        store.pending_approvals(Some(a.id)).await.unwrap(),
        vec![late.clone()]
    );
    assert_eq!(store.approval(decided.id).await.unwrap(), Some(decided));

    // Deciding it takes it off the list.
    let mut approved = late.clone();
    approved.status = ApprovalStatus::Approved;
    approved.decided_at = Some(at(600));
    store
        .commit(Commit {
            approvals: vec![approved.clone()],
            ..events_commit(&a, 2, Vec::new())
        })
        .await
        .unwrap();
    assert_eq!(store.pending_approvals(None).await.unwrap(), vec![early]);
    assert_eq!(store.approval(late.id).await.unwrap(), Some(approved));
}

/// AUTHZ-1, AUTHZ-3: a session's owner round-trips and filters the list; an approval keeps
/// how many operators it needs and who approved it so far, in order, through an update.
// rule: AUTHZ-1
// rule: AUTHZ-3
pub async fn owners_and_approvers_round_trip_and_filter(store: &dyn Store) {
    let unowned = put(store, 91, SessionStatus::Active, 100, true).await;
    let mut record = session(session_id(92), SessionStatus::Executing);
    record.client = Some("claude-code 1.0".to_owned());
    record.owner = Some("claude-code".to_owned());
    let waiting = execution(record.id, 1, ExecutionStatus::PendingApproval, at(60));
    let mut pending = approval(&waiting, at(61));
    pending.approvers_required = 2;
    store
        .commit(Commit {
            executions: vec![waiting],
            approvals: vec![pending.clone()],
            ..create_commit(record.clone())
        })
        .await
        .unwrap();
    let loaded = store.load_session(record.id).await.unwrap().unwrap();
    assert_eq!(loaded.record.owner.as_deref(), Some("claude-code"));
    assert_eq!(loaded.approvals, vec![pending.clone()]);

    let mine = store
        .list_sessions(&SessionFilter {
            owner: Some("claude-code".to_owned()),
            ..SessionFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(ids(&mine), [record.id]);
    let nobody = store
        .list_sessions(&SessionFilter {
            owner: Some("claude".to_owned()),
            ..SessionFilter::default()
        })
        .await
        .unwrap();
    assert!(nobody.is_empty(), "{nobody:?}");
    let all = store
        .list_sessions(&SessionFilter::default())
        .await
        .unwrap();
    assert_eq!(ids(&all), [unowned.id, record.id]);

    pending.approved_by = vec![
        nomos_core::record::Decider {
            name: "alice".to_owned(),
            username: Some("alice.a".to_owned()),
            request_id: Some("req-1".to_owned()),
        },
        nomos_core::record::Decider::named("bob"),
    ];
    store
        .commit(Commit {
            expected_version: Some(1),
            approvals: vec![pending.clone()],
            ..Commit::default()
        })
        .await
        .unwrap();
    assert_eq!(store.approval(pending.id).await.unwrap(), Some(pending));
}
