//! Background work of a server: the start-up reconcile (EXEC-3, EXEC-6), the periodic
//! sweeps (EXEC-3, SWEEP-1..3, GATE-7 expiry) and the metrics observer of the event bus.
//! Sweep reports feed the `nomos_sweep_actions_total` counters.

use std::sync::Arc;

use nomos_agent::{Agent, AgentError, SweepReport};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::metrics::Metrics;

/// The running background tasks.
#[derive(Debug)]
pub struct Background {
    stop: watch::Sender<bool>,
    handles: Vec<JoinHandle<()>>,
}

impl Background {
    /// Stops the tasks and waits until they did.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for handle in self.handles {
            let _ = handle.await;
        }
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

/// Starts the metrics observer and the periodic sweeps (every `sweep_interval` of the
/// agent's configuration).
pub fn start(agent: &Agent, metrics: Arc<Metrics>) -> Background {
    let (stop, stopped) = watch::channel(false);
    let observer = tokio::spawn(observe(agent.clone(), metrics.clone(), stopped.clone()));
    let sweeps = tokio::spawn(sweep(agent.clone(), metrics, stopped));
    Background {
        stop,
        handles: vec![observer, sweeps],
    }
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

async fn sweep(agent: Agent, metrics: Arc<Metrics>, mut stopped: watch::Receiver<bool>) {
    let period = agent.config().sweep_interval.to_std();
    let mut interval = tokio::time::interval(period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    interval.tick().await;
    loop {
        tokio::select! {
            _ = interval.tick() => match agent.sweep_once().await {
                Ok(report) => {
                    if report != SweepReport::default() {
                        tracing::info!(?report, "sweep");
                    }
                    metrics.record_sweep(&report);
                }
                Err(error) => tracing::error!(%error, "sweep failed"),
            },
            _ = until_stopped(&mut stopped) => return,
        }
    }
}
