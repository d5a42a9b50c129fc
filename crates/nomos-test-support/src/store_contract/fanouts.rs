//! Contract checks of fan-outs (FLEET-1): written once with their executions, read back
//! with the session, alike from a single and a set-based read.

use nomos_core::fanout::{Fanout, FanoutHost, FanoutId, FanoutLimits};
use nomos_core::ports::store::{Commit, Store};
use nomos_core::{CommandClass, ExecutionStatus, SessionStatus};

use super::fixtures::{at, create, events_commit, execution, session_id};

/// A fan-out links one execution per host; it loads back exactly, with the session and
/// in a set-based read, and a second write of the same fan-out changes nothing.
// rule: FLEET-1
pub async fn fanouts_round_trip_with_their_executions(store: &dyn Store) {
    let id = session_id(90);
    let stored = create(store, id, SessionStatus::Executing).await;
    let executions: Vec<_> = (1..=3)
        .map(|n| execution(id, n, ExecutionStatus::Approved, at(n as i64)))
        .collect();
    let fanout = Fanout {
        id: FanoutId(id.derive("fanout/1")),
        session_id: id,
        tool_call_id: Some("call_1".into()),
        group: "tag:docker".into(),
        command: "docker ps".into(),
        class: CommandClass::ReadOnly,
        hosts: executions
            .iter()
            .enumerate()
            .map(|(i, e)| FanoutHost {
                host: format!("lxc:h{i}"),
                execution_id: e.id,
            })
            .collect(),
        limits: FanoutLimits {
            max_parallel: 2,
            max_failures: 1,
        },
        created_at: at(4),
        // FLEET-5: the canary is part of the record a store keeps.
        canary: 1,
    };
    let receipt = store
        .commit(Commit {
            executions: executions.clone(),
            fanouts: vec![fanout.clone()],
            ..events_commit(&stored, 1, Vec::new())
        })
        .await
        .unwrap();
    let loaded = store.load_session(id).await.unwrap().unwrap();
    assert_eq!(loaded.fanouts, vec![fanout.clone()]);
    assert_eq!(loaded.executions.len(), 3);
    let batch = store.load_sessions(&[id]).await.unwrap();
    assert_eq!(batch[0].fanouts, vec![fanout.clone()]);
    let mut changed = fanout.clone();
    changed.command = "rm -rf /".into();
    let mut again = events_commit(&stored, 1, Vec::new());
    again.expected_version = Some(receipt.version);
    again.fanouts = vec![changed];
    store.commit(again).await.unwrap();
    let reloaded = store.load_session(id).await.unwrap().unwrap();
    assert_eq!(reloaded.fanouts, vec![fanout], "a fan-out never changes");
}
