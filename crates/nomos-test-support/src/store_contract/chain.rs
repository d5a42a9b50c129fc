//! Contract checks of AUDIT-2: every committed event carries the hash chaining it on
//! its session's previous event, and a walk of all chains verifies.

use nomos_core::SessionStatus;
use nomos_core::chain::{ChainCursor, Chainer, verify_store};
use nomos_core::event::DomainEvent;
use nomos_core::ports::store::Store;

use super::fixtures::{create, event, events_commit, session_id};

fn status(reason: &str) -> DomainEvent {
    DomainEvent::TaskStatus {
        from: SessionStatus::Planning,
        to: SessionStatus::Executing,
        reason: Some(reason.to_owned()),
    }
}

// rule: AUDIT-2
/// Events committed one by one and in a batch form one chain per session, each hash
/// `SHA-256(prev || canonical event)` from 32 zero bytes, and the walk of every chain
/// (in pages smaller than a session) finds no broken link.
pub async fn the_event_log_is_a_hash_chain_per_session(store: &dyn Store) {
    let a = create(store, session_id(60), SessionStatus::Planning).await;
    let b = create(store, session_id(61), SessionStatus::Planning).await;
    store
        .commit(events_commit(
            &a,
            1,
            vec![
                event(1, status("naïve \"quoted\" ✓ \\ \n tab\t")),
                event(2, DomainEvent::Nudged),
            ],
        ))
        .await
        .unwrap();
    let results = store
        .commit_batch(vec![
            events_commit(&a, 2, vec![event(3, status("second"))]),
            events_commit(&b, 1, vec![event(4, DomainEvent::Nudged)]),
        ])
        .await
        .unwrap();
    assert!(results.iter().all(Result::is_ok), "{results:?}");

    let chained = store
        .chained_events(
            ChainCursor::Session {
                session: a.id,
                after_seq: 0,
            },
            100,
        )
        .await
        .unwrap();
    assert_eq!(
        chained.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    let mut chainer = Chainer::after(None);
    for e in &chained {
        let expected = chainer.next(e.session_id, e.seq, e.at, &e.kind, &e.payload);
        assert_eq!(
            e.hash.as_deref(),
            Some(expected.as_str()),
            "event {}",
            e.seq
        );
    }
    let after_two = store
        .chained_events(
            ChainCursor::Session {
                session: a.id,
                after_seq: 2,
            },
            1,
        )
        .await
        .unwrap();
    assert_eq!(after_two, chained[2..3]);

    let report = verify_store(store, 3).await.unwrap();
    assert_eq!(report.broken, None);
    assert_eq!((report.sessions, report.events), (2, 6));
}
