//! Contract checks of the session aggregate: commits, versions, plan steps,
//! transcript, batches and deletion.

use nomos_core::event::DomainEvent;
use nomos_core::ports::store::{Commit, Store, StoreError};
use nomos_core::record::{AssentWindow, KnowledgeLoop};
use nomos_core::{ExecutionStatus, Outcome, Role, SessionStatus, StepStatus};

use super::fixtures::{
    approval, at, completed_output, create, create_commit, event, events_commit, execution,
    message, session, session_id, step, tool_call,
};

/// A migrated store reports itself ready.
pub async fn check_passes_on_a_migrated_store(store: &dyn Store) {
    store.check().await.unwrap();
}

/// A new session with steps, executions and approvals loads back exactly, with
/// version 1 and every timestamp to the millisecond.
// rule: PLAN-8
pub async fn commit_then_load_round_trips(store: &dyn Store) {
    let id = session_id(1);
    let mut record = session(id, SessionStatus::Executing);
    record.summary = Some("so far so good".into());
    record.board_outcome = Some(Outcome::Partial);
    record.plan_generation = 1;
    record.assent = Some(AssentWindow {
        generation: 1,
        opened_at: at(5),
        expires_at: at(1_800_005),
        // GATE-9: the digest of the declared commands the window approved is kept.
        declared: Some(nomos_core::declared::DeclaredDigest([7; 32])),
    });
    record.knowledge = KnowledgeLoop::Discovered;
    record.nudged_at = Some(at(999));
    // MCP-2: the client that drives the session is kept.
    record.client = Some("claude-code 2.1.0".into());
    record.n_messages = 3;
    record.last_activity_at = at(1001);
    let mut first = step(id, 1, 1, StepStatus::Done);
    first.started_at = Some(at(101));
    first.finished_at = Some(at(202));
    first.note = Some("ok".into());
    // GATE-9: a step's declared commands, with their classification, are kept.
    first.commands = vec![nomos_core::declared::DeclaredCommand::new(
        "tag:web",
        vec!["web-1".into(), "web-2".into()],
        "systemctl restart nginx",
        nomos_core::classify::classify("systemctl restart nginx"),
    )];
    let second = step(id, 1, 2, StepStatus::Pending);
    let mut done = execution(id, 1, ExecutionStatus::Completed, at(50));
    done.started_at = Some(at(51));
    done.finished_at = Some(at(93));
    done.output = Some(completed_output());
    let waiting = execution(id, 2, ExecutionStatus::PendingApproval, at(60));
    let pending = approval(&waiting, at(61));
    let commit = Commit {
        expected_version: None,
        session: Some(record.clone()),
        // Out of order on purpose: the store orders by (generation, seq).
        steps: vec![second.clone(), first.clone()],
        executions: vec![waiting.clone(), done.clone()],
        approvals: vec![pending.clone()],
        events: vec![event(0, DomainEvent::SessionCreated)],
        ..Commit::default()
    };
    let receipt = store.commit(commit).await.unwrap();
    assert_eq!(receipt.version, 1);
    assert_eq!(receipt.events.len(), 1);
    assert_eq!(receipt.events[0].seq, 1);

    let snapshot = store.load_session(id).await.unwrap().unwrap();
    record.version = 1;
    assert_eq!(snapshot.record, record);
    assert_eq!(snapshot.steps, vec![first, second]);
    assert_eq!(snapshot.executions, vec![done.clone(), waiting]);
    assert_eq!(snapshot.approvals, vec![pending.clone()]);
    assert_eq!(snapshot.record.nudged_at.unwrap().as_millis() % 1000, 122);
    assert_eq!(store.execution(done.id).await.unwrap(), Some(done));
    assert_eq!(store.approval(pending.id).await.unwrap(), Some(pending));
    assert_eq!(store.load_session(session_id(404)).await.unwrap(), None);
}

/// Inserting a session whose id exists is a duplicate and changes nothing.
pub async fn inserting_an_existing_session_is_a_duplicate(store: &dyn Store) {
    let id = session_id(2);
    let stored = create(store, id, SessionStatus::Active).await;
    let mut again = session(id, SessionStatus::Done);
    again.goal = None;
    let err = store.commit(create_commit(again)).await.unwrap_err();
    assert!(matches!(err, StoreError::Duplicate { .. }), "{err:?}");
    assert_eq!(
        store.load_session(id).await.unwrap().unwrap().record,
        stored
    );
}

/// A commit against a stale version is a conflict naming both versions, and writes nothing.
pub async fn stale_version_is_a_conflict_and_writes_nothing(store: &dyn Store) {
    let id = session_id(3);
    let stored = create(store, id, SessionStatus::Active).await;
    let mut changed = stored.clone();
    changed.status = SessionStatus::Planning;
    store
        .commit(events_commit(
            &changed,
            1,
            vec![event(1, DomainEvent::Nudged)],
        ))
        .await
        .unwrap();

    let mut stale = stored.clone();
    stale.status = SessionStatus::Failed;
    let commit = Commit {
        steps: vec![step(id, 1, 1, StepStatus::Pending)],
        messages: vec![message(id, 1, Role::Operator, "hello")],
        ..events_commit(&stale, 1, vec![event(2, DomainEvent::Nudged)])
    };
    let err = store.commit(commit).await.unwrap_err();
    assert_eq!(
        err,
        StoreError::Conflict {
            session: id,
            expected: 1,
            found: 2
        }
    );
    let snapshot = store.load_session(id).await.unwrap().unwrap();
    assert_eq!(snapshot.record.status, SessionStatus::Planning);
    assert_eq!(snapshot.record.version, 2);
    assert!(snapshot.steps.is_empty());
    assert!(store.messages(id).await.unwrap().is_empty());
    assert_eq!(store.events_after(Some(id), 0, 100).await.unwrap().len(), 2);

    // A commit on a session that does not exist reports found = 0.
    let ghost = session(session_id(33), SessionStatus::Active);
    let err = store
        .commit(events_commit(&ghost, 4, Vec::new()))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        StoreError::Conflict {
            session: ghost.id,
            expected: 4,
            found: 0
        }
    );
}

/// Any commit bumps the version, even one that carries no session row.
pub async fn commit_without_a_session_row_still_bumps_the_version(store: &dyn Store) {
    let id = session_id(4);
    let stored = create(store, id, SessionStatus::Planning).await;
    let commit = Commit {
        expected_version: Some(1),
        steps: vec![step(id, 1, 1, StepStatus::Pending)],
        ..Commit::default()
    };
    assert_eq!(store.commit(commit).await.unwrap().version, 2);
    let snapshot = store.load_session(id).await.unwrap().unwrap();
    assert_eq!(
        snapshot.record,
        nomos_core::record::SessionRecord {
            version: 2,
            ..stored
        }
    );
    assert_eq!(snapshot.steps.len(), 1);
}

/// A commit must name its session through its rows, and only one session.
pub async fn commit_naming_no_single_session_is_invalid(store: &dyn Store) {
    let err = store
        .commit(Commit {
            expected_version: Some(1),
            ..Commit::default()
        })
        .await;
    assert!(matches!(err, Err(StoreError::Invalid(_))), "{err:?}");
    let a = create(store, session_id(5), SessionStatus::Active).await;
    let mixed = Commit {
        steps: vec![step(session_id(6), 1, 1, StepStatus::Pending)],
        ..events_commit(&a, 1, Vec::new())
    };
    let err = store.commit(mixed).await.unwrap_err();
    assert!(
        matches!(err, StoreError::Invalid(ref m) if m.contains("mixes")),
        "{err:?}"
    );
    let new_without_row = Commit {
        expected_version: None,
        steps: vec![step(session_id(7), 1, 1, StepStatus::Pending)],
        ..Commit::default()
    };
    assert!(matches!(
        store.commit(new_without_row).await,
        Err(StoreError::Invalid(_))
    ));
}

/// Two writers racing from the same version: exactly one wins; the loser gets a
/// conflict and succeeds after reloading.
pub async fn concurrent_committers_one_wins_the_other_reloads(store: &dyn Store) {
    let id = session_id(8);
    let stored = create(store, id, SessionStatus::Planning).await;
    let mut turn = stored.clone();
    turn.status = SessionStatus::Executing;
    let mut approval_writer = stored.clone();
    approval_writer.summary = Some("decided".into());
    let (a, b) = tokio::join!(
        store.commit(events_commit(&turn, 1, vec![event(1, DomainEvent::Nudged)])),
        store.commit(events_commit(
            &approval_writer,
            1,
            vec![event(2, DomainEvent::Nudged)]
        )),
    );
    let (won, lost) = match (a, b) {
        (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => (won, lost),
        other => panic!("expected exactly one winner, got {other:?}"),
    };
    assert_eq!(won.version, 2);
    assert_eq!(
        lost,
        StoreError::Conflict {
            session: id,
            expected: 1,
            found: 2
        }
    );

    let reloaded = store.load_session(id).await.unwrap().unwrap().record;
    let mut retry = reloaded.clone();
    retry.summary = Some("decided after reload".into());
    let receipt = store
        .commit(events_commit(
            &retry,
            reloaded.version,
            vec![event(3, DomainEvent::Nudged)],
        ))
        .await
        .unwrap();
    assert_eq!(receipt.version, 3);
    let seqs: Vec<i64> = store
        .events_after(Some(id), 0, 10)
        .await
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
}

/// Many writers hammering one session: versions and event seqs stay dense.
pub async fn racing_writers_with_retries_lose_no_commit(store: &dyn Store) {
    let id = session_id(9);
    create(store, id, SessionStatus::Executing).await;
    let writer = |n: i64| async move {
        for attempt in 0.. {
            assert!(attempt < 200, "writer {n} starved");
            let record = store.load_session(id).await.unwrap().unwrap().record;
            let commit =
                events_commit(&record, record.version, vec![event(n, DomainEvent::Nudged)]);
            match store.commit(commit).await {
                Ok(_) => return,
                Err(StoreError::Conflict { .. }) => continue,
                Err(other) => panic!("writer {n}: {other}"),
            }
        }
    };
    let writers: Vec<_> = (1..=4).map(writer).collect();
    futures::future::join_all(writers).await;
    let record = store.load_session(id).await.unwrap().unwrap().record;
    assert_eq!(record.version, 5);
    let seqs: Vec<i64> = store
        .events_after(Some(id), 0, 100)
        .await
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
}

/// Step seq is unique per (session, generation): a second step with another id at a
/// taken seq fails the whole commit and leaves nothing.
// rule: PLAN-1
pub async fn duplicate_step_seq_fails_and_leaves_nothing(store: &dyn Store) {
    let id = session_id(10);
    let stored = create(store, id, SessionStatus::Planning).await;
    let first = step(id, 1, 1, StepStatus::Pending);
    store
        .commit(Commit {
            steps: vec![first.clone()],
            ..events_commit(&stored, 1, Vec::new())
        })
        .await
        .unwrap();
    let mut impostor = step(id, 1, 2, StepStatus::Pending);
    impostor.seq = 1;
    let mut changed = stored.clone();
    changed.status = SessionStatus::Executing;
    let commit = Commit {
        steps: vec![step(id, 1, 3, StepStatus::Pending), impostor],
        messages: vec![message(id, 1, Role::Operator, "go")],
        ..events_commit(&changed, 2, vec![event(5, DomainEvent::Nudged)])
    };
    let err = store.commit(commit).await.unwrap_err();
    assert!(matches!(err, StoreError::Duplicate { .. }), "{err:?}");
    let snapshot = store.load_session(id).await.unwrap().unwrap();
    assert_eq!(snapshot.steps, vec![first]);
    assert_eq!(snapshot.record.version, 2);
    assert_eq!(snapshot.record.status, SessionStatus::Planning);
    assert!(store.messages(id).await.unwrap().is_empty());
    assert_eq!(store.events_after(Some(id), 0, 10).await.unwrap().len(), 1);
}

/// Every generation is read back, ordered by (generation, seq), replaced steps included.
// rule: PLAN-7
pub async fn all_plan_generations_are_read_back_in_order(store: &dyn Store) {
    let id = session_id(11);
    let stored = create(store, id, SessionStatus::Executing).await;
    let steps = vec![
        step(id, 2, 2, StepStatus::Pending),
        step(id, 1, 2, StepStatus::Replaced),
        step(id, 2, 1, StepStatus::Running),
        step(id, 1, 1, StepStatus::Done),
        step(id, 3, 1, StepStatus::Pending),
    ];
    store
        .commit(Commit {
            steps,
            ..events_commit(&stored, 1, Vec::new())
        })
        .await
        .unwrap();
    let order: Vec<(u32, u32, StepStatus)> = store
        .load_session(id)
        .await
        .unwrap()
        .unwrap()
        .steps
        .iter()
        .map(|s| (s.generation, s.seq, s.status))
        .collect();
    assert_eq!(
        order,
        [
            (1, 1, StepStatus::Done),
            (1, 2, StepStatus::Replaced),
            (2, 1, StepStatus::Running),
            (2, 2, StepStatus::Pending),
            (3, 1, StepStatus::Pending),
        ]
    );
}

/// A revision before execution deletes removed steps and updates the kept ones by id.
// rule: PLAN-2
pub async fn removed_steps_are_deleted_and_kept_ones_updated(store: &dyn Store) {
    let id = session_id(12);
    let stored = create(store, id, SessionStatus::Planning).await;
    let steps: Vec<_> = (1..=3)
        .map(|seq| step(id, 1, seq, StepStatus::Pending))
        .collect();
    store
        .commit(Commit {
            steps,
            ..events_commit(&stored, 1, Vec::new())
        })
        .await
        .unwrap();
    let mut revised = step(id, 1, 1, StepStatus::Pending);
    revised.title = "check disk first".into();
    let commit = Commit {
        steps: vec![revised.clone()],
        removed_steps: vec![id.step_id(1, 2), id.step_id(1, 3)],
        ..events_commit(&stored, 2, Vec::new())
    };
    store.commit(commit).await.unwrap();
    assert_eq!(
        store.load_session(id).await.unwrap().unwrap().steps,
        vec![revised]
    );
}

/// Closing steps stores started and finished times exactly as given, to the millisecond.
// rule: PLAN-8
pub async fn step_close_times_round_trip_to_the_millisecond(store: &dyn Store) {
    let id = session_id(13);
    let stored = create(store, id, SessionStatus::Executing).await;
    let mut closed = step(id, 1, 1, StepStatus::Running);
    closed.started_at = Some(at(1));
    store
        .commit(Commit {
            steps: vec![closed.clone()],
            ..events_commit(&stored, 1, Vec::new())
        })
        .await
        .unwrap();
    closed.status = StepStatus::Done;
    closed.finished_at = Some(at(86_400_000 + 7));
    closed.updated_at = at(86_400_000 + 7);
    let mut never_started = step(id, 1, 2, StepStatus::Skipped);
    never_started.started_at = Some(at(86_400_000 + 7));
    never_started.finished_at = Some(at(86_400_000 + 7));
    let finished = vec![
        event(
            86_400_007,
            DomainEvent::StepFinished {
                generation: 1,
                seq: 1,
                status: StepStatus::Done,
            },
        ),
        event(
            86_400_007,
            DomainEvent::StepFinished {
                generation: 1,
                seq: 2,
                status: StepStatus::Skipped,
            },
        ),
    ];
    store
        .commit(Commit {
            steps: vec![closed.clone(), never_started.clone()],
            ..events_commit(&stored, 2, finished)
        })
        .await
        .unwrap();
    let steps = store.load_session(id).await.unwrap().unwrap().steps;
    assert_eq!(steps, vec![closed, never_started]);
    assert_eq!(
        steps[0].finished_at.unwrap().as_millis(),
        super::fixtures::BASE_MILLIS + 86_400_007
    );
    let events = store.events_after(Some(id), 1, 10).await.unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].at, at(86_400_007));
}

/// Messages (with the assistant's tool calls) and tool-call records round trip in order.
// rule: TURN-4
pub async fn messages_and_tool_calls_round_trip_in_order(store: &dyn Store) {
    let id = session_id(14);
    let stored = create(store, id, SessionStatus::Active).await;
    let messages = vec![
        message(id, 1, Role::Operator, "how is hubris?"),
        message(id, 2, Role::Assistant, "checking — “quotes” and ünïcode"),
        message(id, 3, Role::Note, "resumed"),
    ];
    let mut refused = tool_call(id, "call-2");
    refused.outcome = nomos_core::record::ToolCallOutcome::Refused;
    refused.result = "propose a plan first".into();
    let calls = vec![tool_call(id, "call-1"), refused];
    store
        .commit(Commit {
            messages: messages[..2].to_vec(),
            tool_calls: calls.clone(),
            ..events_commit(&stored, 1, Vec::new())
        })
        .await
        .unwrap();
    store
        .commit(Commit {
            messages: messages[2..].to_vec(),
            ..events_commit(&stored, 2, Vec::new())
        })
        .await
        .unwrap();
    assert_eq!(store.messages(id).await.unwrap(), messages);
    assert_eq!(store.tool_calls(id).await.unwrap(), calls);
    assert!(store.messages(session_id(404)).await.unwrap().is_empty());
}

/// A second record of the same tool call is refused, and the commit that carried it
/// (whose first tool call was fine) leaves no partial rows.
// rule: TURN-4
pub async fn duplicate_tool_call_is_refused_and_leaves_no_partial_rows(store: &dyn Store) {
    let id = session_id(15);
    let stored = create(store, id, SessionStatus::Active).await;
    let mut changed = stored.clone();
    changed.n_messages = 1;
    let commit = Commit {
        messages: vec![message(id, 1, Role::Assistant, "running it")],
        tool_calls: vec![tool_call(id, "call-1"), tool_call(id, "call-1")],
        steps: vec![step(id, 1, 1, StepStatus::Pending)],
        executions: vec![execution(id, 1, ExecutionStatus::Running, at(5))],
        ..events_commit(&changed, 1, vec![event(9, DomainEvent::Nudged)])
    };
    let err = store.commit(commit).await.unwrap_err();
    assert!(
        matches!(err, StoreError::Duplicate { ref what } if what.contains("call-1")),
        "{err:?}"
    );
    let snapshot = store.load_session(id).await.unwrap().unwrap();
    assert_eq!(snapshot.record, stored);
    assert!(snapshot.steps.is_empty() && snapshot.executions.is_empty());
    assert!(store.messages(id).await.unwrap().is_empty());
    assert!(store.tool_calls(id).await.unwrap().is_empty());
    assert_eq!(store.events_after(Some(id), 0, 10).await.unwrap().len(), 1);

    // Across commits too.
    store
        .commit(Commit {
            tool_calls: vec![tool_call(id, "call-1")],
            ..events_commit(&stored, 1, Vec::new())
        })
        .await
        .unwrap();
    let again = Commit {
        tool_calls: vec![tool_call(id, "call-1")],
        ..events_commit(&stored, 2, Vec::new())
    };
    assert!(matches!(
        store.commit(again).await,
        Err(StoreError::Duplicate { .. })
    ));
    assert_eq!(store.tool_calls(id).await.unwrap().len(), 1);
}

/// `commit_batch` commits all its commits in one transaction, skipping one whose
/// version check fails.
pub async fn commit_batch_skips_the_conflicting_commit(store: &dyn Store) {
    let a = create(store, session_id(16), SessionStatus::Executing).await;
    let b = create(store, session_id(17), SessionStatus::Executing).await;
    let c = create(store, session_id(18), SessionStatus::Executing).await;
    let mut a2 = a.clone();
    a2.status = SessionStatus::Partial;
    let mut b2 = b.clone();
    b2.status = SessionStatus::Partial;
    let mut c2 = c.clone();
    c2.status = SessionStatus::Partial;
    let nudge = || vec![event(10, DomainEvent::Nudged)];
    let results = store
        .commit_batch(vec![
            events_commit(&a2, 1, nudge()),
            Commit {
                steps: vec![step(b.id, 1, 1, StepStatus::Pending)],
                ..events_commit(&b2, 7, nudge())
            },
            events_commit(&c2, 1, nudge()),
        ])
        .await
        .unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].as_ref().unwrap().version, 2);
    assert_eq!(
        results[1],
        Err(StoreError::Conflict {
            session: b.id,
            expected: 7,
            found: 1
        })
    );
    assert_eq!(results[2].as_ref().unwrap().events[0].seq, 2);
    assert_eq!(
        store
            .load_session(a.id)
            .await
            .unwrap()
            .unwrap()
            .record
            .status,
        SessionStatus::Partial
    );
    let untouched = store.load_session(b.id).await.unwrap().unwrap();
    assert_eq!(untouched.record, b);
    assert!(untouched.steps.is_empty());
    assert_eq!(
        store
            .load_session(c.id)
            .await
            .unwrap()
            .unwrap()
            .record
            .version,
        2
    );

    // Any other error aborts the whole batch.
    let results = store
        .commit_batch(vec![
            events_commit(&a2, 2, nudge()),
            create_commit(session(b.id, SessionStatus::Active)),
        ])
        .await;
    assert!(
        matches!(results, Err(StoreError::Duplicate { .. })),
        "{results:?}"
    );
    assert_eq!(
        store
            .load_session(a.id)
            .await
            .unwrap()
            .unwrap()
            .record
            .version,
        2
    );
    assert!(store.commit_batch(Vec::new()).await.unwrap().is_empty());
}

/// Deleting a session removes everything it owns; deleting it again is `NotFound`.
pub async fn delete_session_cascades_to_everything_it_owns(store: &dyn Store) {
    let id = session_id(19);
    let other = create(store, session_id(20), SessionStatus::Active).await;
    let stored = create(store, id, SessionStatus::Executing).await;
    let waiting = execution(id, 1, ExecutionStatus::PendingApproval, at(3));
    let pending = approval(&waiting, at(4));
    store
        .commit(Commit {
            steps: vec![step(id, 1, 1, StepStatus::Running)],
            executions: vec![waiting.clone()],
            approvals: vec![pending.clone()],
            messages: vec![message(id, 1, Role::Operator, "hi")],
            tool_calls: vec![tool_call(id, "call-1")],
            ..events_commit(&stored, 1, vec![event(5, DomainEvent::Nudged)])
        })
        .await
        .unwrap();
    store.delete_session(id).await.unwrap();
    assert_eq!(store.load_session(id).await.unwrap(), None);
    assert_eq!(store.execution(waiting.id).await.unwrap(), None);
    assert_eq!(store.approval(pending.id).await.unwrap(), None);
    assert!(store.messages(id).await.unwrap().is_empty());
    assert!(store.tool_calls(id).await.unwrap().is_empty());
    assert!(
        store
            .events_after(Some(id), 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.pending_approvals(None).await.unwrap().is_empty());
    assert_eq!(
        store.load_session(other.id).await.unwrap().unwrap().record,
        other
    );
    let err = store.delete_session(id).await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
    // The id can be used again after deletion.
    create(store, id, SessionStatus::Active).await;
}

/// A step whose id belongs to another session is refused.
pub async fn rows_of_another_session_are_not_overwritten(store: &dyn Store) {
    let a = create(store, session_id(21), SessionStatus::Planning).await;
    let b = create(store, session_id(22), SessionStatus::Planning).await;
    let owned = step(a.id, 1, 1, StepStatus::Pending);
    store
        .commit(Commit {
            steps: vec![owned.clone()],
            ..events_commit(&a, 1, Vec::new())
        })
        .await
        .unwrap();
    let mut stolen = owned.clone();
    stolen.session_id = b.id;
    stolen.title = "hijacked".into();
    let err = store
        .commit(Commit {
            steps: vec![stolen],
            ..events_commit(&b, 1, Vec::new())
        })
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Invalid(_) | StoreError::Duplicate { .. }),
        "{err:?}"
    );
    assert_eq!(
        store.load_session(a.id).await.unwrap().unwrap().steps,
        vec![owned]
    );
}

/// Several aggregates load at once, in id order, equal to loading each one; unknown
/// ids are left out.
pub async fn load_sessions_matches_loading_each_one(store: &dyn Store) {
    let ids = [session_id(82), session_id(80), session_id(81)];
    for (n, id) in ids.iter().enumerate() {
        let stored = create(store, *id, SessionStatus::Executing).await;
        let waiting = execution(*id, 1, ExecutionStatus::PendingApproval, at(n as i64));
        store
            .commit(Commit {
                steps: (1..=n as u32 + 1)
                    .map(|seq| step(*id, 1, seq, StepStatus::Pending))
                    .collect(),
                executions: vec![waiting.clone()],
                approvals: vec![approval(&waiting, at(n as i64 + 1))],
                ..events_commit(&stored, 1, Vec::new())
            })
            .await
            .unwrap();
    }
    let asked = [
        session_id(82),
        session_id(404),
        session_id(80),
        session_id(81),
    ];
    let loaded = store.load_sessions(&asked).await.unwrap();
    let mut expected = Vec::new();
    for n in [80, 81, 82] {
        expected.push(store.load_session(session_id(n)).await.unwrap().unwrap());
    }
    assert_eq!(loaded, expected);
    assert!(store.load_sessions(&[]).await.unwrap().is_empty());
}

/// The newest message other than a note, per session, in session id order: the message
/// the core's `sweep::last_word` picks from each transcript.
pub async fn last_messages_skip_notes_and_follow_id_order(store: &dyn Store) {
    let talkative = create(store, session_id(83), SessionStatus::Active).await;
    let notes_only = create(store, session_id(84), SessionStatus::Active).await;
    let quiet = create(store, session_id(85), SessionStatus::Active).await;
    let answer = message(talkative.id, 2, Role::Assistant, "all good");
    store
        .commit(Commit {
            messages: vec![
                message(talkative.id, 1, Role::Operator, "status?"),
                answer.clone(),
                message(talkative.id, 3, Role::Note, "nudged"),
            ],
            ..events_commit(&talkative, 1, Vec::new())
        })
        .await
        .unwrap();
    store
        .commit(Commit {
            messages: vec![message(notes_only.id, 1, Role::Note, "resumed")],
            ..events_commit(&notes_only, 1, Vec::new())
        })
        .await
        .unwrap();
    let question = message(quiet.id, 1, Role::Operator, "anyone there?");
    store
        .commit(Commit {
            messages: vec![question.clone()],
            ..events_commit(&quiet, 1, Vec::new())
        })
        .await
        .unwrap();
    let last = store
        .last_messages(&[quiet.id, notes_only.id, talkative.id, talkative.id])
        .await
        .unwrap();
    assert_eq!(last, vec![answer, question]);
    // The core owns what "the last word" is: the store's query picks what it picks.
    let mut by_the_core = Vec::new();
    for id in [talkative.id, notes_only.id, quiet.id] {
        let transcript = store.messages(id).await.unwrap();
        by_the_core.extend(nomos_core::sweep::last_word(&transcript).cloned());
    }
    assert_eq!(last, by_the_core);
    assert!(store.last_messages(&[]).await.unwrap().is_empty());
}
