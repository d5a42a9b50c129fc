//! [`AppState`]: what every handler can reach, cheap to clone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::FromRef;
use nomos_agent::{Agent, TurnReport};
use nomos_core::SessionId;
use tokio::sync::{Notify, watch};
use tokio::task::{AbortHandle, JoinHandle};

use crate::auth::{Auth, AuthMode};
use crate::metrics::Metrics;

/// The shared state of the router.
#[derive(Clone)]
pub struct AppState {
    /// The runtime.
    pub agent: Agent,
    /// How callers authenticate.
    pub auth: Arc<Auth>,
    /// The metrics registry.
    pub metrics: Arc<Metrics>,
    /// What `/api/info` reports.
    pub info: Arc<ServerInfo>,
    /// Turns started over HTTP, for draining at shutdown.
    pub turns: Arc<TurnTracker>,
    /// Flips to `true` when the server shuts down; event streams end then.
    pub shutdown: watch::Receiver<bool>,
    /// Open event streams.
    pub streams: Arc<AtomicU64>,
}

/// What the server tells clients about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerInfo {
    /// The Nomos version.
    pub version: String,
    /// The model's name.
    pub model: String,
    /// Whether the model is the scripted demo (no model endpoint configured).
    pub demo: bool,
}

impl AppState {
    /// State over an agent; `shutdown` ends event streams when it flips to `true`.
    pub fn new(
        agent: Agent,
        auth: Auth,
        metrics: Arc<Metrics>,
        demo: bool,
        shutdown: watch::Receiver<bool>,
    ) -> AppState {
        let info = ServerInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            model: agent.model_name(),
            demo,
        };
        AppState {
            agent,
            auth: Arc::new(auth),
            metrics,
            info: Arc::new(info),
            turns: Arc::new(TurnTracker::default()),
            shutdown,
            streams: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The auth mode, for `/api/info`.
    pub fn auth_mode(&self) -> AuthMode {
        self.auth.mode()
    }
}

impl FromRef<AppState> for Arc<Auth> {
    fn from_ref(state: &AppState) -> Self {
        state.auth.clone()
    }
}

/// Counts turns running in background tasks, so shutdown can wait for them, and stops
/// those still running when the wait is over (TURN-11).
#[derive(Debug, Default)]
pub struct TurnTracker {
    running: AtomicU64,
    idle: Notify,
    next: AtomicU64,
    tasks: Mutex<HashMap<u64, (SessionId, AbortHandle)>>,
}

impl TurnTracker {
    /// Watches a spawned turn of `session` until it ends.
    pub fn track(self: &Arc<Self>, session: SessionId, handle: JoinHandle<TurnReport>) {
        self.running.fetch_add(1, Ordering::SeqCst);
        let key = self.next.fetch_add(1, Ordering::SeqCst);
        self.tasks().insert(key, (session, handle.abort_handle()));
        let tracker = self.clone();
        tokio::spawn(async move {
            match handle.await {
                Err(error) if error.is_cancelled() => {
                    tracing::warn!(session = %session, "a turn was stopped by the shutdown");
                }
                Err(error) => tracing::error!(%error, "a turn task panicked"),
                Ok(_) => {}
            }
            tracker.tasks().remove(&key);
            if tracker.running.fetch_sub(1, Ordering::SeqCst) == 1 {
                tracker.idle.notify_waiters();
            }
        });
    }

    /// Stops every turn still running and waits up to `bound` for their tasks to end;
    /// returns their sessions, for [`nomos_agent::Agent::end_interrupted_turns`].
    pub async fn stop_all(&self, bound: Duration) -> Vec<SessionId> {
        let mut sessions: Vec<SessionId> = self
            .tasks()
            .values()
            .map(|(session, task)| {
                task.abort();
                *session
            })
            .collect();
        sessions.sort();
        sessions.dedup();
        self.drain(bound).await;
        sessions
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (SessionId, AbortHandle)>> {
        match self.tasks.lock() {
            Ok(tasks) => tasks,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Turns running now.
    pub fn running(&self) -> u64 {
        self.running.load(Ordering::SeqCst)
    }

    /// Waits until no turn runs, or `bound` passes; returns how many still run.
    pub async fn drain(&self, bound: Duration) -> u64 {
        let wait = async {
            loop {
                let idle = self.idle.notified();
                if self.running() == 0 {
                    return;
                }
                idle.await;
            }
        };
        let _ = tokio::time::timeout(bound, wait).await;
        self.running()
    }
}
