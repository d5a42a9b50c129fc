//! Contract checks of the event log: per-session numbering without gaps, a global
//! order across sessions, and replay from a position.

use nomos_core::event::DomainEvent;
use nomos_core::ports::store::Store;
use nomos_core::{SessionStatus, StepStatus};

use super::fixtures::{create, event, events_commit, session_id};

fn step_started(seq: u32) -> DomainEvent {
    DomainEvent::StepStarted { generation: 1, seq }
}

/// Each session's events are numbered 1, 2, 3... with no gaps, and `global_seq`
/// increases across sessions in commit order.
pub async fn events_are_numbered_without_gaps_and_globally_ordered(store: &dyn Store) {
    let a = create(store, session_id(30), SessionStatus::Executing).await;
    let b = create(store, session_id(31), SessionStatus::Executing).await;
    let mut receipts = Vec::new();
    receipts.push(
        store
            .commit(events_commit(
                &a,
                1,
                vec![event(1, step_started(1)), event(2, step_started(2))],
            ))
            .await
            .unwrap(),
    );
    receipts.push(
        store
            .commit(events_commit(&b, 1, vec![event(3, step_started(1))]))
            .await
            .unwrap(),
    );
    receipts.push(
        store
            .commit(events_commit(
                &a,
                2,
                vec![
                    event(
                        4,
                        DomainEvent::StepFinished {
                            generation: 1,
                            seq: 2,
                            status: StepStatus::Done,
                        },
                    ),
                    event(5, DomainEvent::Nudged),
                ],
            ))
            .await
            .unwrap(),
    );
    // An empty event list still commits and numbers nothing.
    assert!(
        store
            .commit(events_commit(&b, 2, Vec::new()))
            .await
            .unwrap()
            .events
            .is_empty()
    );

    let a_seqs: Vec<i64> = receipts[0]
        .events
        .iter()
        .chain(&receipts[2].events)
        .map(|e| e.seq)
        .collect();
    assert_eq!(a_seqs, [2, 3, 4, 5]);
    assert_eq!(receipts[1].events[0].seq, 2);

    let a_log = store.events_after(Some(a.id), 0, 100).await.unwrap();
    assert_eq!(
        a_log.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert_eq!(a_log[0].event, DomainEvent::SessionCreated);
    assert_eq!(a_log[4].event, DomainEvent::Nudged);
    assert_eq!(a_log[1].at, super::fixtures::at(1));
    assert!(a_log.iter().all(|e| e.session_id == a.id));

    let all = store.events_after(None, 0, 100).await.unwrap();
    assert_eq!(all.len(), 7);
    assert!(
        all.windows(2).all(|w| w[0].global_seq < w[1].global_seq),
        "{all:?}"
    );
    let committed: Vec<i64> = receipts
        .iter()
        .flat_map(|r| r.events.iter().map(|e| e.global_seq))
        .collect();
    assert!(committed.windows(2).all(|w| w[0] < w[1]));
    let order: Vec<(nomos_core::SessionId, i64)> =
        all.iter().map(|e| (e.session_id, e.seq)).collect();
    assert_eq!(
        order,
        [
            (a.id, 1),
            (b.id, 1),
            (a.id, 2),
            (a.id, 3),
            (b.id, 2),
            (a.id, 4),
            (a.id, 5)
        ]
    );
    // The global log holds each session's events in its own order.
    let a_in_global: Vec<i64> = all
        .iter()
        .filter(|e| e.session_id == a.id)
        .map(|e| e.seq)
        .collect();
    assert_eq!(a_in_global, [1, 2, 3, 4, 5]);
    let b_in_global: Vec<i64> = all
        .iter()
        .filter(|e| e.session_id == b.id)
        .map(|e| e.seq)
        .collect();
    assert_eq!(b_in_global, [1, 2]);
    // The returned records are the stored ones.
    assert_eq!(receipts[2].events[..], a_log[3..]);
}

/// A reconnecting reader resumes from the last seq it saw: per session by `seq`,
/// across sessions by `global_seq`, with a limit.
pub async fn events_after_replays_from_a_position(store: &dyn Store) {
    let a = create(store, session_id(32), SessionStatus::Executing).await;
    let b = create(store, session_id(33), SessionStatus::Executing).await;
    let events: Vec<_> = (1..=6).map(|n| event(n, step_started(n as u32))).collect();
    store.commit(events_commit(&a, 1, events)).await.unwrap();
    store
        .commit(events_commit(&b, 1, vec![event(9, DomainEvent::Nudged)]))
        .await
        .unwrap();

    let page = store.events_after(Some(a.id), 3, 2).await.unwrap();
    assert_eq!(page.iter().map(|e| e.seq).collect::<Vec<_>>(), [4, 5]);
    let rest = store.events_after(Some(a.id), 5, 100).await.unwrap();
    assert_eq!(rest.iter().map(|e| e.seq).collect::<Vec<_>>(), [6, 7]);
    assert!(
        store
            .events_after(Some(a.id), 7, 100)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .events_after(Some(session_id(404)), 0, 100)
            .await
            .unwrap()
            .is_empty()
    );

    let all = store.events_after(None, 0, 100).await.unwrap();
    assert_eq!(all.len(), 9);
    let cursor = all[3].global_seq;
    let tail = store.events_after(None, cursor, 100).await.unwrap();
    assert_eq!(tail, all[4..]);
    let limited = store.events_after(None, cursor, 2).await.unwrap();
    assert_eq!(limited, all[4..6]);
    assert!(
        store
            .events_after(None, all[8].global_seq, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

/// The newest positions are those of the last committed event: 0 on an empty log and
/// for a session without events, then the last `global_seq` and each session's last
/// `seq` (what a live stream starts after).
pub async fn newest_positions_are_those_of_the_last_committed_event(store: &dyn Store) {
    assert_eq!(store.newest_global_seq().await.unwrap(), 0);
    assert_eq!(store.newest_seq(session_id(34)).await.unwrap(), 0);
    let a = create(store, session_id(34), SessionStatus::Executing).await;
    let b = create(store, session_id(35), SessionStatus::Executing).await;
    let events: Vec<_> = (1..=3).map(|n| event(n, step_started(n as u32))).collect();
    store.commit(events_commit(&a, 1, events)).await.unwrap();
    let receipt = store
        .commit(events_commit(&b, 1, vec![event(9, DomainEvent::Nudged)]))
        .await
        .unwrap();

    let all = store.events_after(None, 0, 100).await.unwrap();
    let last = all.last().unwrap().global_seq;
    assert_eq!(receipt.events[0].global_seq, last);
    assert_eq!(store.newest_global_seq().await.unwrap(), last);
    assert_eq!(store.newest_seq(a.id).await.unwrap(), 4);
    assert_eq!(store.newest_seq(b.id).await.unwrap(), 2);
    assert_eq!(store.newest_seq(session_id(404)).await.unwrap(), 0);
    assert!(store.events_after(None, last, 10).await.unwrap().is_empty());
}

/// An event of every kind is stored in a versioned envelope (`"v": 1` beside the event's
/// fields in its payload, covered by its hash) and reads back as it was committed.
pub async fn events_are_stored_in_a_versioned_envelope(store: &dyn Store) {
    let (id, log) = super::fixtures::committed_every_event(store).await;
    let committed: Vec<DomainEvent> = super::fixtures::every_event();
    let read: Vec<DomainEvent> = log.iter().skip(1).map(|e| e.event.clone()).collect();
    assert_eq!(read, committed);
    let chained = store
        .chained_events(
            nomos_core::chain::ChainCursor::Session {
                session: id,
                after_seq: 0,
            },
            100,
        )
        .await
        .unwrap();
    assert_eq!(chained.len(), log.len());
    for (row, record) in chained.iter().zip(&log) {
        assert_eq!(row.payload["v"], 1, "{}", row.payload);
        assert_eq!(row.payload["type"], record.event.kind(), "{}", row.payload);
        assert_eq!(row.kind, record.event.kind());
    }
    assert_eq!(
        nomos_core::chain::verify_store(store, 10)
            .await
            .unwrap()
            .broken,
        None
    );
}
