//! The repairs on both stores: every class, dry run, idempotence, interruption and
//! resumption, concurrent writers, filters.

use std::collections::HashMap;

use nomos_backfill::{Applied, Mode, RepairClass, Scope, apply_batch, plan_batch};
use nomos_core::event::DomainEvent;
use nomos_core::session::{LEFTOVER_STEP_NOTE, Session, SessionConfig};
use nomos_core::sweep::{AwaitingPolicy, STALE_REASON, TIMED_OUT_REASON, summary_from_answer};
use nomos_core::{
    ApprovalStatus, ExecutionStatus, Outcome, Role, SessionId, SessionStatus, Span, StepStatus,
};

use crate::seed::{Kind, Seeded, TRIVIAL_ANSWER, seed, seed_one_of_each};
use crate::support::{
    Backend, config, fresh, load, n_events, now, on_both_backends, run, ten_days_ago,
};

fn by_kind(seeded: &[Seeded]) -> HashMap<Kind, SessionId> {
    seeded.iter().map(|s| (s.kind, s.id)).collect()
}

// rule: BACKFILL-2
// rule: SWEEP-4
// rule: EXEC-3
// rule: PLAN-8
async fn every_class_is_repaired_with_its_event(backend: Backend) {
    let db = fresh(backend).await;
    let store = db.store.as_ref();
    let now = now();
    let ids = by_kind(&seed_one_of_each(store, ten_days_ago(now)).await);
    let before: HashMap<Kind, i64> = {
        let mut versions = HashMap::new();
        for (kind, id) in &ids {
            versions.insert(*kind, load(store, *id).await.record.version);
        }
        versions
    };

    let report = run(store, &config(Mode::Apply, 500), now).await;

    assert_eq!(report.scanned, 8);
    assert_eq!(report.sessions_changed, 4);
    assert_eq!(report.count(RepairClass::TrivialCompleted), 1);
    assert_eq!(report.count(RepairClass::IdleClosed), 2);
    assert_eq!(report.count(RepairClass::ExecutionTimedOut), 2);
    assert_eq!(report.count(RepairClass::ExecutionCancelled), 0);
    assert_eq!(report.count(RepairClass::StepsClosed), 1);
    assert_eq!(report.count(RepairClass::AwaitingInput), 1);
    assert_eq!(report.count(RepairClass::AwaitingApproval), 1);
    assert_eq!(report.count(RepairClass::NoAnswer), 1);
    assert_eq!(report.n_conflicts, 0);

    // SESSION-4 through SWEEP-4: the trivial session is done with the answer as summary.
    let trivial = load(store, ids[&Kind::Trivial]).await;
    assert_eq!(trivial.record.status, SessionStatus::Done);
    assert_eq!(trivial.record.board_outcome, Some(Outcome::Success));
    assert_eq!(
        trivial.record.summary.as_deref(),
        Some(summary_from_answer(TRIVIAL_ANSWER).as_str())
    );
    let events = store
        .events_after(Some(ids[&Kind::Trivial]), 0, 100)
        .await
        .unwrap();
    let last_status = events
        .iter()
        .rev()
        .find_map(|e| match &e.event {
            DomainEvent::TaskStatus { to, .. } => Some((*to, e.at)),
            _ => None,
        })
        .unwrap();
    assert_eq!(last_status, (SessionStatus::Done, now));

    // BACKFILL-2: the idle goal session is partial, its plan closed at `now`.
    let idle = load(store, ids[&Kind::IdleGoal]).await;
    assert_eq!(idle.record.status, SessionStatus::Partial);
    assert_eq!(
        idle.record.summary.as_deref(),
        Some("closed by backfill after 10 idle days")
    );
    let step1 = &idle.steps[0];
    let step2 = &idle.steps[1];
    assert_eq!(step1.status, StepStatus::Failed);
    assert!(
        step1.started_at.is_some_and(|at| at < now),
        "kept its real start"
    );
    assert_eq!(step1.finished_at, Some(now));
    assert_eq!(step2.status, StepStatus::Skipped);
    // PLAN-8: never a start earlier than the close.
    assert_eq!(step2.started_at, Some(now));
    assert_eq!(step2.finished_at, Some(now));

    // EXEC-3: the running execution timed out; the session is closed too.
    let running = load(store, ids[&Kind::RunningExecution]).await;
    assert_eq!(running.record.status, SessionStatus::Partial);
    let execution = &running.executions[0];
    assert_eq!(execution.status, ExecutionStatus::Failed);
    assert_eq!(execution.error.as_deref(), Some(TIMED_OUT_REASON));
    assert_eq!(execution.finished_at, Some(now));
    assert!(execution.started_at.is_some_and(|at| at < now));

    // PLAN-8 on a terminal session: the old generation's running step is closed.
    let leftovers = load(store, ids[&Kind::TerminalLeftovers]).await;
    assert_eq!(leftovers.record.status, SessionStatus::Partial);
    let old_step = leftovers
        .steps
        .iter()
        .find(|s| s.generation == 1 && s.seq == 1)
        .unwrap();
    assert_eq!(old_step.status, StepStatus::Failed);
    assert_eq!(old_step.note.as_deref(), Some(LEFTOVER_STEP_NOTE));
    assert!(leftovers.steps.iter().all(|s| s.status.is_closed()));
    assert_eq!(leftovers.executions[0].status, ExecutionStatus::Failed);
    let finished = store
        .events_after(Some(ids[&Kind::TerminalLeftovers]), 0, 100)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.at == now && matches!(e.event, DomainEvent::StepFinished { .. }))
        .count();
    assert_eq!(finished, 1);

    // SWEEP-3: sessions waiting for the operator, and the healthy one, are untouched.
    for kind in [
        Kind::AwaitingInput,
        Kind::AwaitingApproval,
        Kind::TrivialNoAnswer,
        Kind::Healthy,
    ] {
        assert_eq!(
            load(store, ids[&kind]).await.record.version,
            before[&kind],
            "{kind:?} was changed"
        );
    }
    let waiting = load(store, ids[&Kind::AwaitingApproval]).await;
    assert_eq!(
        waiting.executions[0].status,
        ExecutionStatus::PendingApproval
    );
}
on_both_backends!(every_class, every_class_is_repaired_with_its_event);

// rule: BACKFILL-1
async fn dry_run_reports_what_apply_then_does_and_changes_nothing(backend: Backend) {
    let db = fresh(backend).await;
    let store = db.store.as_ref();
    let now = now();
    let seeded = seed(store, 20, ten_days_ago(now)).await;
    let n_before = n_events(store).await;

    let dry = run(store, &config(Mode::DryRun, 6), now).await;
    assert_eq!(n_events(store).await, n_before, "a dry run wrote events");
    for s in &seeded {
        assert!(load(store, s.id).await.record.version >= 1);
    }
    assert!(dry.sessions_changed > 0);
    assert_eq!(dry.batches, 4);
    let trivial_sample = &dry.samples[&RepairClass::TrivialCompleted][0];
    assert!(trivial_sample.reason.contains("completed as success"));

    let applied = run(store, &config(Mode::Apply, 6), now).await;
    assert_eq!(applied.counts, dry.counts);
    assert_eq!(applied.sessions_changed, dry.sessions_changed);
    assert!(n_events(store).await > n_before);
}
on_both_backends!(
    dry_run,
    dry_run_reports_what_apply_then_does_and_changes_nothing
);

// rule: BACKFILL-1
async fn a_second_run_changes_nothing(backend: Backend) {
    let db = fresh(backend).await;
    let store = db.store.as_ref();
    let now = now();
    seed(store, 16, ten_days_ago(now)).await;
    let first = run(store, &config(Mode::Apply, 5), now).await;
    assert_eq!(first.sessions_changed, 8);
    let n_after_first = n_events(store).await;

    let later = now + Span::from_mins(5);
    let second = run(store, &config(Mode::Apply, 5), later).await;
    assert_eq!(second.sessions_changed, 0);
    for class in RepairClass::ALL.iter().filter(|c| c.is_repair()) {
        assert_eq!(second.count(*class), 0, "{class:?}");
    }
    assert_eq!(n_events(store).await, n_after_first);
}
on_both_backends!(idempotent, a_second_run_changes_nothing);

// rule: BACKFILL-1
async fn a_run_stopped_at_the_limit_resumes_where_it_stopped(backend: Backend) {
    let db = fresh(backend).await;
    let store = db.store.as_ref();
    let now = now();
    let seeded = seed(store, 24, ten_days_ago(now)).await;
    let mut limited = config(Mode::Apply, 5);
    limited.limit = Some(4);
    let first = run(store, &limited, now).await;
    assert_eq!(first.sessions_changed, 4);
    assert!(first.limit_reached);

    let rest = run(store, &config(Mode::Apply, 5), now).await;
    assert_eq!(rest.sessions_changed, 12 - 4);
    assert!(!rest.limit_reached);

    let again = run(store, &config(Mode::Apply, 5), now).await;
    assert_eq!(again.sessions_changed, 0);
    for s in seeded.iter().filter(|s| s.kind == Kind::Trivial) {
        assert_eq!(load(store, s.id).await.record.status, SessionStatus::Done);
    }
}
on_both_backends!(
    resumable,
    a_run_stopped_at_the_limit_resumes_where_it_stopped
);

// rule: BACKFILL-1
async fn a_session_changed_by_another_writer_is_skipped_as_a_conflict(backend: Backend) {
    let db = fresh(backend).await;
    let store = db.store.as_ref();
    let now = now();
    let seeded = seed_one_of_each(store, ten_days_ago(now)).await;
    let ids = by_kind(&seeded);
    let mut all: Vec<SessionId> = seeded.iter().map(|s| s.id).collect();
    all.sort();
    let config = config(Mode::Apply, 500);
    let decisions = plan_batch(store, &all, now, &config).await.unwrap();

    // The operator writes to the idle session between planning and applying.
    let idle = ids[&Kind::IdleGoal];
    let mut session =
        Session::from_snapshot(load(store, idle).await, SessionConfig::spec_defaults());
    session.handle_operator_message(now, "still there? carry on with step 1");
    let receipt = store.commit(session.take_commit()).await.unwrap();

    let applied = apply_batch(store, decisions).await.unwrap();
    let outcome = |id: SessionId| {
        applied
            .iter()
            .find(|(d, _)| d.session == id)
            .and_then(|(_, outcome)| outcome.clone())
    };
    assert!(
        matches!(outcome(idle), Some(Applied::Conflict(m)) if m.contains("changed concurrently"))
    );
    assert_eq!(outcome(ids[&Kind::Trivial]), Some(Applied::Committed));
    assert_eq!(
        outcome(ids[&Kind::RunningExecution]),
        Some(Applied::Committed)
    );

    // Never overwritten: the other writer's state stands.
    let after = load(store, idle).await;
    assert_eq!(after.record.version, receipt.version);
    assert_eq!(after.record.status, SessionStatus::Executing);
    let last = store.last_messages(&[idle]).await.unwrap();
    assert_eq!(last[0].role, Role::Operator);

    // And a later run leaves the now-active session alone.
    let report = run(store, &config, now).await;
    assert_eq!(report.sessions_changed, 0);
    assert_eq!(load(store, idle).await.record.version, receipt.version);
}
on_both_backends!(
    conflict,
    a_session_changed_by_another_writer_is_skipped_as_a_conflict
);

// rule: SWEEP-3
// rule: EXEC-3
async fn include_awaiting_closes_waiting_sessions_and_cancels_their_approvals(backend: Backend) {
    let db = fresh(backend).await;
    let store = db.store.as_ref();
    let now = now();
    let ids = by_kind(&seed_one_of_each(store, ten_days_ago(now)).await);
    let mut config = config(Mode::Apply, 500);
    config.awaiting = AwaitingPolicy::Include;
    let report = run(store, &config, now).await;
    assert_eq!(report.count(RepairClass::AwaitingInput), 0);
    assert_eq!(report.count(RepairClass::AwaitingApproval), 0);
    assert_eq!(report.count(RepairClass::IdleClosed), 4);
    assert_eq!(report.count(RepairClass::ExecutionCancelled), 1);

    let waiting = load(store, ids[&Kind::AwaitingApproval]).await;
    assert_eq!(waiting.record.status, SessionStatus::Partial);
    assert_eq!(waiting.executions[0].status, ExecutionStatus::Cancelled);
    assert_eq!(waiting.executions[0].error.as_deref(), Some(STALE_REASON));
    assert_eq!(waiting.approvals[0].status, ApprovalStatus::Cancelled);
    let asked = load(store, ids[&Kind::AwaitingInput]).await;
    assert_eq!(asked.record.status, SessionStatus::Partial);
}
on_both_backends!(
    include_awaiting,
    include_awaiting_closes_waiting_sessions_and_cancels_their_approvals
);

// rule: BACKFILL-1
async fn filters_limit_the_run_to_named_and_old_enough_sessions(backend: Backend) {
    let db = fresh(backend).await;
    let store = db.store.as_ref();
    let now = now();
    let ids = by_kind(&seed_one_of_each(store, ten_days_ago(now)).await);

    let mut too_young = config(Mode::Apply, 500);
    too_young.thresholds.backfill_idle_after = Span::from_mins(30 * 24 * 60);
    let report = run(store, &too_young, now).await;
    assert_eq!((report.scanned, report.sessions_changed), (0, 0));

    let missing = SessionId(uuid::Uuid::new_v4());
    let mut named = config(Mode::Apply, 500);
    named.scope = Scope::Sessions(vec![ids[&Kind::Trivial], missing]);
    let report = run(store, &named, now).await;
    assert_eq!(report.sessions_changed, 1);
    assert_eq!(report.missing, vec![missing]);
    assert_eq!(
        load(store, ids[&Kind::Trivial]).await.record.status,
        SessionStatus::Done
    );
    assert_eq!(
        load(store, ids[&Kind::IdleGoal]).await.record.status,
        SessionStatus::Executing
    );
}
on_both_backends!(
    filters,
    filters_limit_the_run_to_named_and_old_enough_sessions
);

async fn page_reads_match_one_by_one_reads(backend: Backend) {
    let db = fresh(backend).await;
    let store = db.store.as_ref();
    let seeded = seed(store, 12, ten_days_ago(now())).await;
    let mut ids: Vec<SessionId> = seeded.iter().map(|s| s.id).collect();
    ids.push(SessionId(uuid::Uuid::new_v4()));
    let page = store.load_sessions(&ids).await.unwrap();
    assert_eq!(page.len(), 12);
    assert!(page.windows(2).all(|w| w[0].record.id < w[1].record.id));
    for snapshot in &page {
        assert_eq!(snapshot, &load(store, snapshot.record.id).await);
    }
    let last = store.last_messages(&ids).await.unwrap();
    let mut expected = Vec::new();
    let mut sorted = ids.clone();
    sorted.sort();
    for id in sorted {
        let messages = store.messages(id).await.unwrap();
        if let Some(m) = messages.into_iter().rev().find(|m| m.role != Role::Note) {
            expected.push(m);
        }
    }
    assert_eq!(last, expected);
    assert!(!last.is_empty());
}
on_both_backends!(page_reads, page_reads_match_one_by_one_reads);
