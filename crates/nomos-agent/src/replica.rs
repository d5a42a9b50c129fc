//! Several processes on one store (REPLICA-1, REPLICA-2): the ports an agent asks when it
//! shares its store, the heartbeat, the one-sweeper lease, and which executions and turns
//! the reconcile and the sweeps may touch.
//!
//! What belongs to a live instance other than this one is never touched. The start-up
//! reconcile, and the pass that closes what a lapsed instance left (run by the one
//! process that sweeps, as soon as an instance's heartbeat lapses), touch only what no
//! live instance owns; the periodic sweeps touch this process's own and nobody's.

use std::sync::Arc;
use std::time::Duration;

use nomos_core::ports::replica::{InstanceId, Instances, Lease, LiveClaims, SessionLeases};
use nomos_core::sweep::SweepPhase;
use nomos_core::{ExecutionId, SessionId};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long the start-up reconcile waits for another process's sweep to end before it
/// goes ahead without the sweep lease (each session it touches is still leased).
pub(crate) const STARTUP_SWEEP_WAIT: Duration = Duration::from_secs(10);

use crate::agent::Agent;
use crate::error::AgentError;
use crate::sweeper::SweepReport;

/// What an agent that shares its store with other processes asks (REPLICA-1, REPLICA-2).
#[derive(Clone)]
pub struct Replication {
    /// Session leases (and the sweep lease) held in the store.
    pub leases: Arc<dyn SessionLeases>,
    /// This process's heartbeat and who owns what.
    pub instances: Arc<dyn Instances>,
    /// How old a heartbeat may be before its process counts as gone (SPEC default: 30 s).
    pub heartbeat_timeout: Duration,
}

impl std::fmt::Debug for Replication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replication")
            .field("instance", &self.instances.me())
            .field("heartbeat_timeout", &self.heartbeat_timeout)
            .finish_non_exhaustive()
    }
}

/// Whose things a pass may touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// What no live instance owns (start-up, and the close of lapsed instances).
    Orphans,
    /// This process's own and nobody's (the periodic sweeps).
    NotElsewhere,
}

impl From<SweepPhase> for Reach {
    fn from(phase: SweepPhase) -> Reach {
        match phase {
            SweepPhase::Startup => Reach::Orphans,
            SweepPhase::Periodic => Reach::NotElsewhere,
        }
    }
}

/// The live owners of some candidates, as one pass sees them.
#[derive(Debug, Default)]
pub(crate) struct Owners {
    claims: Option<(LiveClaims, InstanceId)>,
}

impl Owners {
    /// Whether the pass must leave this execution (and its session) alone.
    pub(crate) fn leaves_execution(&self, reach: Reach, id: ExecutionId) -> bool {
        match (&self.claims, reach) {
            (None, _) => false,
            (Some((claims, _)), Reach::Orphans) => claims.execution_live(id),
            (Some((claims, me)), Reach::NotElsewhere) => claims.execution_elsewhere(id, *me),
        }
    }

    /// Whether the pass must leave this session's turn alone.
    pub(crate) fn leaves_session(&self, reach: Reach, id: SessionId) -> bool {
        match (&self.claims, reach) {
            (None, _) => false,
            (Some((claims, _)), Reach::Orphans) => claims.session_live(id),
            (Some((claims, me)), Reach::NotElsewhere) => claims.session_elsewhere(id, *me),
        }
    }
}

/// Renews this process's heartbeat until shut down.
#[derive(Debug)]
pub struct Heartbeat {
    stop: watch::Sender<bool>,
    handle: JoinHandle<()>,
}

impl Heartbeat {
    /// Stops renewing (the heartbeat then lapses and other processes close what is left).
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.handle.await;
    }
}

impl Agent {
    fn timeout_secs(replication: &Replication) -> u64 {
        replication.heartbeat_timeout.as_secs().max(1)
    }

    /// The live owners of these executions and sessions; nothing is anyone's when the
    /// store is not shared.
    pub(crate) async fn owners(
        &self,
        executions: &[ExecutionId],
        sessions: &[SessionId],
    ) -> Result<Owners, AgentError> {
        let Some(replication) = &self.inner.replication else {
            return Ok(Owners::default());
        };
        let instances = &replication.instances;
        let claims = instances
            .live_claims(Self::timeout_secs(replication), executions, sessions)
            .await?;
        Ok(Owners {
            claims: Some((claims, instances.me())),
        })
    }

    /// REPLICA-2: registers this process and renews its heartbeat every third of the
    /// timeout. The first heartbeat is written before this returns. `None` when the store
    /// is not shared.
    pub async fn start_heartbeat(&self) -> Result<Option<Heartbeat>, AgentError> {
        let Some(replication) = self.inner.replication.clone() else {
            return Ok(None);
        };
        replication.instances.heartbeat().await?;
        let (stop, mut stopped) = watch::channel(false);
        let every = (replication.heartbeat_timeout / 3).max(Duration::from_millis(200));
        let handle = tokio::spawn(async move {
            let mut interval = tokio::time::interval(every);
            interval.tick().await;
            loop {
                tokio::select! {
                    _ = interval.tick() => {
                        if let Err(error) = replication.instances.heartbeat().await {
                            tracing::warn!(%error, "could not renew the heartbeat");
                        }
                    }
                    _ = stopped.changed() => break,
                }
            }
        });
        Ok(Some(Heartbeat { stop, handle }))
    }

    /// REPLICA-2: the lease on running the sweeps, waiting for it up to `wait`.
    /// `Ok(None)` when another process holds it all that time; a store that is not shared
    /// needs no lease (`Ok(Some(None))`).
    pub(crate) async fn sweep_lease(
        &self,
        wait: Duration,
    ) -> Result<Option<Option<Box<dyn Lease>>>, AgentError> {
        let Some(replication) = &self.inner.replication else {
            return Ok(Some(None));
        };
        let started = tokio::time::Instant::now();
        loop {
            if let Some(lease) = replication.leases.try_sweep_lease().await? {
                return Ok(Some(Some(lease)));
            }
            if started.elapsed() >= wait {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// REPLICA-2: closes what instances whose heartbeat lapsed left behind, as a restart
    /// of each would (EXEC-8, EXEC-3, TURN-11), then forgets them. Run by the sweeper only.
    pub(crate) async fn close_lapsed(&self, report: &mut SweepReport) -> Result<(), AgentError> {
        let Some(replication) = &self.inner.replication else {
            return Ok(());
        };
        let lapsed = replication
            .instances
            .lapsed(Self::timeout_secs(replication))
            .await?;
        if lapsed.is_empty() {
            return Ok(());
        }
        tracing::warn!(
            ?lapsed,
            "instances whose heartbeat lapsed; closing what they left"
        );
        let closed = self.reconcile_orphans().await?;
        report.commands_stopped += closed.commands_stopped;
        report.executions_failed += closed.executions_failed;
        report.executions_cancelled += closed.executions_cancelled;
        report.turns_closed += closed.turns_closed;
        replication.instances.forget(&lapsed).await?;
        Ok(())
    }
}
