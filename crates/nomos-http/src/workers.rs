//! Background work of a server: the start-up reconcile (EXEC-3, EXEC-6), the agent's
//! workers (periodic sweeps, EXEC-3, SWEEP-1..3, and session timers, GATE-4, GATE-7) and
//! the metrics observer of the event bus. Sweep reports feed the
//! `nomos_sweep_actions_total` counters. At start-up the guests of each Proxmox node are
//! discovered again (FLEET-3), in the background, so serving does not wait for them.

use std::sync::Arc;

use nomos_agent::{Agent, AgentError, SweepReport, Workers};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::metrics::Metrics;

/// The running background tasks.
#[derive(Debug)]
pub struct Background {
    stop: watch::Sender<bool>,
    observer: JoinHandle<()>,
    workers: Workers,
}

impl Background {
    /// Stops the tasks and waits until they did.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.observer.await;
        self.workers.shutdown().await;
    }
}

/// EXEC-3, EXEC-6: reconciles executions left over by a previous run; call before serving.
pub async fn reconcile_startup(
    agent: &Agent,
    metrics: &Metrics,
) -> Result<SweepReport, AgentError> {
    let report = agent.reconcile_startup().await?;
    metrics.record_sweep(&report);
    Ok(report)
}

/// Starts the metrics observer and the agent's own workers ([`Agent::start_workers_with`]:
/// the periodic sweeps every `sweep_interval` of the agent's configuration, and the
/// session timers), with each sweep's report counted.
pub fn start(agent: &Agent, metrics: Arc<Metrics>) -> Background {
    let (stop, stopped) = watch::channel(false);
    let observer = tokio::spawn(observe(agent.clone(), metrics.clone(), stopped));
    let workers = agent.start_workers_with(move |report| metrics.record_sweep(report));
    Background {
        stop,
        observer,
        workers,
    }
}

/// FLEET-3: discovers the guests of every Proxmox node of the inventory, one node after
/// another, each in the node's discovery session ([`Agent::discover_node`]); a node that fails is
/// logged and the next one still runs. Returns the task, which ends when all are done.
pub fn discover_guests_at_startup(agent: &Agent) -> JoinHandle<()> {
    let agent = agent.clone();
    tokio::spawn(async move {
        for node in agent.executor().proxmox_nodes() {
            match agent.discover_node(&node).await {
                Ok(found) => tracing::info!(
                    node = %node,
                    session = %found.session_id,
                    outcome = found.reply.outcome.as_str(),
                    "guests discovered: {}",
                    found.reply.text.lines().next().unwrap_or_default()
                ),
                Err(error) => tracing::warn!(node = %node, %error, "guest discovery failed"),
            }
        }
    })
}

/// Waits until `stopped` holds `true` (or its sender is gone).
pub(crate) async fn until_stopped(stopped: &mut watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}

async fn observe(agent: Agent, metrics: Arc<Metrics>, mut stopped: watch::Receiver<bool>) {
    let mut receiver = agent.bus().subscribe();
    loop {
        let received = tokio::select! {
            received = receiver.recv() => received,
            _ = until_stopped(&mut stopped) => return,
        };
        match received {
            Ok(event) => metrics.observe(&event),
            Err(RecvError::Lagged(n)) => metrics.record_lost_events(n),
            Err(RecvError::Closed) => return,
        }
    }
}
