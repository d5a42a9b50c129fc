//! Ports for several processes on one store (REPLICA-1, REPLICA-2): the lease a turn holds
//! on its session, and the instances that heartbeat and own executions and turns.
//!
//! A store one process owns (SQLite) implements neither; the runtime then keeps its
//! in-process lock alone and treats everything it finds as its own.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use uuid::Uuid;

use crate::id::{ExecutionId, SessionId};
use crate::ports::store::StoreError;

/// One running server process sharing the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstanceId(pub Uuid);

impl std::fmt::Display for InstanceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A lease held in the store; [`Lease::release`] gives it back. Dropping it without
/// releasing gives it back too, a little later.
#[async_trait]
pub trait Lease: Send + Sync {
    /// Gives the lease back; the next taker in any process gets it at once.
    async fn release(self: Box<Self>);
}

/// REPLICA-1: one turn at a time per session across every process sharing the store.
#[async_trait]
pub trait SessionLeases: Send + Sync {
    /// Takes the session's lease now, or `Ok(None)` when another holder has it.
    async fn try_lease(&self, id: SessionId) -> Result<Option<Box<dyn Lease>>, StoreError>;

    /// Takes the lease on running the sweeps now (one process at a time, REPLICA-2), or
    /// `Ok(None)` when another process runs them.
    async fn try_sweep_lease(&self) -> Result<Option<Box<dyn Lease>>, StoreError>;
}

/// What live instances own among some candidates: the executions they dispatched and the
/// sessions whose last turn they ran. Something owned by no live instance (its owner's heartbeat lapsed, or it
/// was written before owners were recorded) is nobody's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveClaims {
    /// Executions and their live owners.
    pub executions: HashMap<ExecutionId, InstanceId>,
    /// Sessions and the live instance that wrote them last.
    pub sessions: HashMap<SessionId, InstanceId>,
}

impl LiveClaims {
    /// Whether `id` belongs to a live instance other than `me`.
    pub fn execution_elsewhere(&self, id: ExecutionId, me: InstanceId) -> bool {
        self.executions.get(&id).is_some_and(|owner| *owner != me)
    }

    /// Whether session `id` belongs to a live instance other than `me`.
    pub fn session_elsewhere(&self, id: SessionId, me: InstanceId) -> bool {
        self.sessions.get(&id).is_some_and(|owner| *owner != me)
    }

    /// Whether `id` belongs to any live instance, `me` included.
    pub fn execution_live(&self, id: ExecutionId) -> bool {
        self.executions.contains_key(&id)
    }

    /// Whether session `id` belongs to any live instance, `me` included.
    pub fn session_live(&self, id: SessionId) -> bool {
        self.sessions.contains_key(&id)
    }
}

/// REPLICA-2: the processes sharing the store, each with a heartbeat. Time is the
/// store's clock, so the hosts' clocks need not agree.
#[async_trait]
pub trait Instances: Send + Sync {
    /// This process.
    fn me(&self) -> InstanceId;

    /// Registers this process, or renews its heartbeat.
    async fn heartbeat(&self) -> Result<(), StoreError>;

    /// Instances whose last heartbeat is older than `lapse_secs` seconds.
    async fn lapsed(&self, lapse_secs: u64) -> Result<HashSet<InstanceId>, StoreError>;

    /// Which of these executions and sessions belong to an instance whose heartbeat is
    /// fresher than `lapse_secs` seconds, and to which.
    async fn live_claims(
        &self,
        lapse_secs: u64,
        executions: &[ExecutionId],
        sessions: &[SessionId],
    ) -> Result<LiveClaims, StoreError>;

    /// Forgets lapsed instances once what they owned is closed.
    async fn forget(&self, ids: &HashSet<InstanceId>) -> Result<(), StoreError>;
}
