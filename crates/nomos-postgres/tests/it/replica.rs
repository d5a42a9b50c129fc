//! Two stores as two server processes on one database (REPLICA-1, REPLICA-3): a session's
//! lease is held by one of them at a time and comes back when given back or dropped, and
//! each hears the other's events from the log, never its own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use nomos_core::ports::replica::{InstanceId, SessionLeases};
use nomos_core::ports::store::Store;
use nomos_core::session::{Session, SessionConfig};
use nomos_core::{SessionId, Timestamp};
use nomos_postgres::{PgStore, PgStoreOptions};
use uuid::Uuid;

async fn two_instances() -> (PgStore, PgStore) {
    let url = nomos_test_support::postgres::fresh_database().await;
    let open = |url: String| async move {
        PgStore::connect_instance(&url, PgStoreOptions::standard(), InstanceId(Uuid::new_v4()))
            .await
            .unwrap_or_else(|e| panic!("cannot connect: {e}"))
    };
    let a = open(url.clone()).await;
    let b = open(url).await;
    (a, b)
}

async fn create_session(store: &PgStore) -> SessionId {
    let id = SessionId(Uuid::new_v4());
    let mut session = Session::create(
        id,
        Timestamp::from_millis(1_700_000_000_000),
        SessionConfig::spec_defaults(),
    );
    store.commit(session.take_commit()).await.unwrap();
    id
}

// rule: REPLICA-1
#[tokio::test]
async fn a_session_lease_is_held_by_one_process_at_a_time_and_comes_back_when_released_or_dropped()
{
    let (a, b) = two_instances().await;
    let (a, b) = (a.leases(2), b.leases(2));
    let id = SessionId(Uuid::new_v4());
    let held = a
        .try_lease(id)
        .await
        .unwrap()
        .expect("a free session is leased");
    assert!(
        b.try_lease(id).await.unwrap().is_none(),
        "busy in the other process"
    );
    let other = SessionId(Uuid::new_v4());
    assert!(
        b.try_lease(other).await.unwrap().is_some(),
        "another session is free"
    );
    held.release().await;
    let taken = b.try_lease(id).await.unwrap().expect("released, so free");
    assert!(a.try_lease(id).await.unwrap().is_none());
    // Dropped without a release (a task that panicked): given back a moment later.
    drop(taken);
    let mut again = None;
    for _ in 0..100 {
        again = a.try_lease(id).await.unwrap();
        if again.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(again.is_some(), "a dropped lease came back");
}

// rule: REPLICA-2
#[tokio::test]
async fn one_process_at_a_time_holds_the_sweep_lease() {
    let (a, b) = two_instances().await;
    let (a, b) = (a.leases(2), b.leases(2));
    let sweeping = a
        .try_sweep_lease()
        .await
        .unwrap()
        .expect("nobody sweeps yet");
    assert!(b.try_sweep_lease().await.unwrap().is_none());
    sweeping.release().await;
    assert!(b.try_sweep_lease().await.unwrap().is_some());
}

// rule: REPLICA-3
#[tokio::test]
async fn each_process_hears_the_other_processes_events_in_order_and_never_its_own() {
    let (a, b) = two_instances().await;
    let heard: Arc<Mutex<Vec<(SessionId, i64)>>> = Arc::default();
    let sink = heard.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let feed = a.event_feed().expect("a store of an instance has a feed");
    let listening = tokio::spawn(async move {
        feed.run(
            move |record| {
                sink.lock()
                    .unwrap()
                    .push((record.session_id, record.global_seq))
            },
            async move {
                let _ = stopped.await;
            },
        )
        .await
    });
    // Wait until the listener hears the other process: it misses what was committed before
    // it listened, so commit probes until one is heard. Delivery is in commit order, so
    // nothing committed before the probe heard can arrive after it.
    let mut probes = Vec::new();
    let skip = 'listening: loop {
        assert!(
            probes.len() < 100,
            "the listener heard none of {} probes",
            probes.len()
        );
        probes.push(create_session(&b).await);
        for _ in 0..50 {
            let n_heard = {
                let heard = heard.lock().unwrap();
                heard
                    .iter()
                    .any(|(id, _)| probes.contains(id))
                    .then_some(heard.len())
            };
            if let Some(n_heard) = n_heard {
                break 'listening n_heard;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let own = create_session(&a).await;
    // A storm: many commits of the other process at once.
    let mut theirs = Vec::new();
    for _ in 0..50 {
        theirs.push(create_session(&b).await);
    }
    let mut complete = false;
    for _ in 0..200 {
        if heard.lock().unwrap().len() >= skip + theirs.len() {
            complete = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = stop.send(());
    listening.await.unwrap().unwrap();
    assert!(
        complete,
        "heard {} of {}",
        heard.lock().unwrap().len() - skip,
        theirs.len()
    );
    let heard = heard.lock().unwrap()[skip..].to_vec();
    let sessions: Vec<SessionId> = heard.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        sessions, theirs,
        "the other's events, once each, in commit order"
    );
    assert!(!sessions.contains(&own), "never its own");
    assert!(heard.windows(2).all(|w| w[0].1 < w[1].1));
}
