//! [`Agent`]: the runtime handle an embedder holds. It owns the ports, the bus and the
//! per-session locks, and commits every decision of the core through one path.

use std::sync::Arc;

use nomos_core::event::EventRecord;
use nomos_core::ports::chat::ChatModel;
use nomos_core::ports::exec::Executor;
use nomos_core::ports::store::{SessionSnapshot, Store, StoreError};
use nomos_core::session::{Action, Session};
use nomos_core::{SessionId, Timestamp};
use uuid::Uuid;

use crate::budget::Tools;
use crate::bus::{EventBus, LiveEvent};
use crate::cache::SessionCache;
use crate::cancel::TurnControls;
use crate::clock::{Clock, SystemClock};
use crate::config::AgentConfig;
use crate::error::AgentError;
use crate::health::WriteMonitor;
use crate::history::{CommitRows, Histories, ModelHistory};
use crate::locks::{KeyedMutexes, SessionLocks};
use crate::replica::Replication;
use crate::timers::SessionTimers;
use crate::tools::{ExtraTool, ExtraTools, builtin_specs};

/// How often a commit is retried after a version conflict with another process.
const CONFLICT_RETRIES: u32 = 3;

/// The runtime. Cheap to clone; every clone drives the same agent.
///
/// Every change it makes to a session is decided by the core and committed with its events
/// in one transaction with a version check, then published on [`Agent::bus`]; one turn at
/// a time runs per session in this process (TURN-8). Build it with [`Agent::builder`].
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub store: Arc<dyn Store>,
    pub executor: Arc<dyn Executor>,
    pub model: Arc<dyn ChatModel>,
    pub clock: Arc<dyn Clock>,
    pub config: AgentConfig,
    pub bus: EventBus,
    pub extra: ExtraTools,
    /// The built-in tools and the extra ones, as every model request offers them.
    pub tools: Tools,
    pub locks: SessionLocks,
    /// One decision-and-commit at a time per session in this process (see
    /// [`Agent::decide_and_commit`]).
    pub commits: KeyedMutexes,
    pub controls: TurnControls,
    pub cache: SessionCache,
    pub histories: Histories,
    pub writes: WriteMonitor,
    pub replication: Option<Replication>,
    pub timers: SessionTimers,
}

/// Builds an [`Agent`] from its ports.
pub struct AgentBuilder {
    store: Arc<dyn Store>,
    executor: Arc<dyn Executor>,
    model: Arc<dyn ChatModel>,
    clock: Arc<dyn Clock>,
    config: AgentConfig,
    extra: ExtraTools,
    bus_capacity: usize,
    replication: Option<Replication>,
}

impl AgentBuilder {
    /// Replaces the configuration.
    pub fn config(mut self, config: AgentConfig) -> AgentBuilder {
        self.config = config;
        self
    }

    /// Replaces the clock (tests and evals use a virtual one).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> AgentBuilder {
        self.clock = clock;
        self
    }

    /// Registers an extra tool; a later tool with the same name replaces an earlier one.
    /// Its [`ExtraToolKind`](crate::tools::ExtraToolKind) is the gate it passes: a gated
    /// tool is called only inside the operator's assent window, whatever the model asks.
    pub fn extra_tool(mut self, tool: Arc<dyn ExtraTool>) -> AgentBuilder {
        self.extra.register(tool);
        self
    }

    /// How many events a subscriber may fall behind before it lags.
    pub fn bus_capacity(mut self, capacity: usize) -> AgentBuilder {
        self.bus_capacity = capacity;
        self
    }

    /// Shares the store with other server processes (REPLICA-1, REPLICA-2): a turn takes
    /// its session's lease from the store, and the reconcile and the sweeps leave what live
    /// instances own alone. Without it this process owns the store alone (SQLite).
    pub fn replication(mut self, replication: Replication) -> AgentBuilder {
        self.replication = Some(replication);
        self
    }

    /// Builds the agent. Nothing runs in the background until [`Agent::start_workers`].
    pub fn build(self) -> Agent {
        let mut tools = builtin_specs();
        tools.extend(self.extra.specs());
        Agent {
            inner: Arc::new(Inner {
                store: self.store,
                executor: self.executor,
                model: self.model,
                clock: self.clock,
                config: self.config,
                bus: EventBus::with_capacity(self.bus_capacity),
                extra: self.extra,
                tools: Tools::new(tools),
                locks: SessionLocks::with_leases(
                    self.replication.as_ref().map(|r| r.leases.clone()),
                ),
                commits: KeyedMutexes::default(),
                controls: TurnControls::default(),
                cache: SessionCache::default(),
                histories: Histories::default(),
                writes: WriteMonitor::default(),
                replication: self.replication,
                timers: SessionTimers::default(),
            }),
        }
    }
}

impl Agent {
    /// Starts building an agent over these ports, with the spec's defaults.
    pub fn builder(
        store: Arc<dyn Store>,
        executor: Arc<dyn Executor>,
        model: Arc<dyn ChatModel>,
    ) -> AgentBuilder {
        AgentBuilder {
            store,
            executor,
            model,
            clock: Arc::new(SystemClock),
            config: AgentConfig::spec_defaults(),
            extra: ExtraTools::default(),
            bus_capacity: 4096,
            replication: None,
        }
    }

    /// The event bus: each committed event is published here after its commit, in commit
    /// order, with the model's streamed text between them. A subscriber that falls behind
    /// lags and re-reads what it missed from the store's event log.
    pub fn bus(&self) -> &EventBus {
        &self.inner.bus
    }

    /// The store every decision is committed to: the ground truth (sessions, executions,
    /// approvals, transcripts and the per-session numbered event log).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// The executor.
    pub fn executor(&self) -> &Arc<dyn Executor> {
        &self.inner.executor
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.inner.config
    }

    /// The current time by the agent's clock.
    pub fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    /// The model's name.
    pub fn model_name(&self) -> String {
        self.inner.model.name()
    }

    /// Creates a new, empty session, committed with its `session.created` event before
    /// this returns (and kept in the session cache, so its first turn loads nothing).
    pub async fn create_session(&self) -> Result<SessionId, AgentError> {
        self.create_session_by(None).await
    }

    /// [`Agent::create_session`], recording the principal that created it (AUTHZ-1: the
    /// session's owner).
    pub async fn create_session_by(&self, owner: Option<&str>) -> Result<SessionId, AgentError> {
        let id = SessionId(Uuid::new_v4());
        let mut session = Session::create(id, self.now(), self.inner.config.session);
        if let Some(owner) = owner {
            session = session.owned_by(owner);
        }
        let commit = session.take_commit();
        let receipt = self.commit_recorded(commit).await?;
        // The first decision on the session starts from this aggregate, not a load.
        session.committed(receipt.version);
        self.inner.cache.put(session);
        let history = ModelHistory::new(
            self.budget(),
            &self.inner.config.system_prompt,
            receipt.version,
        );
        let epoch = self.inner.histories.epoch(id);
        self.inner.histories.keep(id, epoch, history);
        self.publish(&receipt.events);
        Ok(id)
    }

    /// A session as stored.
    pub async fn session(&self, id: SessionId) -> Result<SessionSnapshot, AgentError> {
        self.inner
            .store
            .load_session(id)
            .await?
            .ok_or(AgentError::SessionNotFound(id))
    }

    /// Deletes a session and everything it owns. Refused with
    /// [`AgentError::TurnInProgress`] while a turn, a decision or a sweep of the session
    /// runs in this process (it holds the session); the cached aggregate and the session's
    /// timer go with it, so nothing decides on a deleted session.
    pub async fn delete_session(&self, id: SessionId) -> Result<(), AgentError> {
        let _guard = self
            .inner
            .locks
            .try_lock(id)
            .await
            .ok_or(AgentError::TurnInProgress(id))?;
        self.session(id).await?;
        self.inner.cache.forget(id);
        self.inner.timers.arm(self, id, None);
        let deleted = self.inner.store.delete_session(id).await;
        self.inner.cache.forget(id);
        Ok(deleted?)
    }

    /// Loads a session, lets `decide` change it, and commits the result atomically with
    /// its events, then publishes them. On a version conflict (another process wrote
    /// first) it reloads and decides again, a bounded number of times.
    pub(crate) async fn mutate<T>(
        &self,
        id: SessionId,
        decide: impl FnMut(&mut Session, Timestamp) -> T,
    ) -> Result<T, AgentError> {
        let (value, events) = self.mutate_unpublished(id, decide).await?;
        self.publish(&events);
        Ok(value)
    }

    /// [`Agent::mutate`] without publishing: the caller publishes the committed events
    /// itself (after releasing the session, so nobody hears of a turn's end while the
    /// session is still held). For decisions that queue no [`Action`].
    pub(crate) async fn mutate_unpublished<T>(
        &self,
        id: SessionId,
        decide: impl FnMut(&mut Session, Timestamp) -> T,
    ) -> Result<(T, Vec<EventRecord>), AgentError> {
        let (value, events, actions) = self.decide_and_commit(id, decide).await?;
        for action in actions {
            tracing::error!(session = %id, ?action, "an action queued where none was expected; not acting on it");
        }
        Ok((value, events))
    }

    /// [`Agent::mutate`] for a decision that may queue [`Action`]s: they are returned, in
    /// order, for the caller to act on.
    pub(crate) async fn mutate_acting<T>(
        &self,
        id: SessionId,
        decide: impl FnMut(&mut Session, Timestamp) -> T,
    ) -> Result<(T, Vec<Action>), AgentError> {
        let (value, events, actions) = self.decide_and_commit(id, decide).await?;
        self.publish(&events);
        Ok((value, actions))
    }

    /// The one commit path, in the order the core's protocol says: load, let `decide`
    /// change the session, commit what it decided with its version check, then drain the
    /// actions ([`Session::poll_action`] until `None`) and arm the session's one timer
    /// from [`Session::poll_timeout`]. On a version conflict (another process wrote first)
    /// the session and everything it queued are dropped, and it reloads and decides again,
    /// a bounded number of times.
    ///
    /// Decisions on one session in this process take turns: an operator's control (a
    /// revoke, a cancel, a stop) lands between two of a running turn's commits, on the
    /// aggregate the last one left, instead of racing it to the store and losing to a
    /// turn that commits faster than a fresh load. Only another process can conflict.
    async fn decide_and_commit<T>(
        &self,
        id: SessionId,
        mut decide: impl FnMut(&mut Session, Timestamp) -> T,
    ) -> Result<(T, Vec<EventRecord>, Vec<Action>), AgentError> {
        let _turn = self.inner.commits.lock(id).await;
        let cache = &self.inner.cache;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut session = match cache.take(id) {
                Some(session) => session,
                None => Session::from_snapshot(self.session(id).await?, self.inner.config.session),
            };
            // AUTHZ-3: new requests need the operators the policy says.
            session.set_approver_policy(self.inner.config.approvers.clone());
            let value = decide(&mut session, self.now());
            let commit = session.take_commit();
            if commit.is_empty() {
                let actions = drain_actions(&mut session);
                cache.put(session);
                return Ok((value, Vec::new(), actions));
            }
            let expected = commit.expected_version;
            let histories = &self.inner.histories;
            let rows = histories
                .tracks(id, expected)
                .then(|| CommitRows::of(&commit));
            match self.commit_recorded(commit).await {
                Ok(receipt) => {
                    histories.committed(id, expected, receipt.version, rows.as_ref());
                    session.committed(receipt.version);
                    let actions = drain_actions(&mut session);
                    self.inner.timers.arm(self, id, session.poll_timeout());
                    cache.put(session);
                    return Ok((value, receipt.events, actions));
                }
                Err(StoreError::Conflict { .. }) if attempt <= CONFLICT_RETRIES => {
                    cache.forget(id);
                    histories.forget(id);
                    tracing::debug!(session = %id, attempt, "version conflict; deciding again");
                }
                Err(error) => {
                    cache.forget(id);
                    histories.forget(id);
                    return Err(error.into());
                }
            }
        }
    }

    pub(crate) fn publish(&self, events: &[EventRecord]) {
        for event in events {
            self.inner.bus.publish(LiveEvent::Committed(event.clone()));
        }
    }
}

/// Every action the session queued, in order.
fn drain_actions(session: &mut Session) -> Vec<Action> {
    std::iter::from_fn(|| session.poll_action()).collect()
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.inner.model.name())
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}
