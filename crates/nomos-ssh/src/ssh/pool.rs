//! The connection pool: one authenticated connection per host, shared by
//! concurrent commands as separate channels.
//!
//! - A host's slot is locked while its connection is being made, so concurrent
//!   first commands to a host make one connection, not many.
//! - A connection whose session has ended (closed by the server, reset, keepalives
//!   unanswered) is detected on the next command and replaced.
//! - Each connection has a reaper task that closes it once no command has used it
//!   for the idle timeout. The task holds only weak references and is aborted when
//!   the connection is dropped, so nothing outlives the pool.
//! - A connection through a jump host holds a lease on the jump host's connection,
//!   which keeps that one from being reaped while the tunnel is in use.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use russh::Disconnect;
use tokio::sync::Semaphore;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::error::SshError;
use crate::inventory::{Inventory, Target};
use crate::ssh::config::SshConfig;
use crate::ssh::connect::{self, AuthMethod, SshHandle};
use crate::ssh::verify::{SeenKey, SeenSlot};

/// Counters of the pool, for tests, benches and operators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Connections made (first connections, replacements and jump hops).
    pub connects: u64,
    /// Dead connections found and replaced.
    pub replaced: u64,
    /// Connections closed by the idle timeout.
    pub idle_closed: u64,
    /// Connections open right now.
    pub open: usize,
    /// Channels opened (one per command).
    pub channels: u64,
}

#[derive(Debug, Default)]
struct Counters {
    connects: AtomicU64,
    replaced: AtomicU64,
    idle_closed: AtomicU64,
    open: AtomicUsize,
    channels: AtomicU64,
}

/// Usage accounting of one connection, shared with its leases and its reaper.
#[derive(Debug)]
struct Usage {
    active: AtomicUsize,
    last_used: Mutex<Instant>,
}

impl Usage {
    fn touch(&self) {
        if let Ok(mut last) = self.last_used.lock() {
            *last = Instant::now();
        }
    }

    fn last_used(&self) -> Instant {
        self.last_used
            .lock()
            .map(|last| *last)
            .unwrap_or_else(|_| Instant::now())
    }
}

/// Marks a connection as in use while alive.
#[derive(Debug)]
pub(crate) struct Lease {
    usage: Arc<Usage>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.usage.touch();
        self.usage.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One pooled, authenticated connection.
pub(crate) struct Connection {
    pub(crate) handle: SshHandle,
    pub(crate) auth: AuthMethod,
    pub(crate) channels: Arc<Semaphore>,
    usage: Arc<Usage>,
    counters: Arc<Counters>,
    reaper: Mutex<Option<AbortHandle>>,
    // Keeps the jump host's connection alive and un-reaped while this one lives.
    _via: Option<(Arc<Connection>, Lease)>,
}

impl Connection {
    fn lease(&self) -> Lease {
        self.usage.active.fetch_add(1, Ordering::AcqRel);
        self.usage.touch();
        Lease {
            usage: self.usage.clone(),
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.handle.is_closed()
    }

    pub(crate) fn count_channel(&self) {
        self.counters.channels.fetch_add(1, Ordering::Relaxed);
    }

    async fn disconnect(&self, reason: &str) {
        let _ = self
            .handle
            .disconnect(Disconnect::ByApplication, reason, "en")
            .await;
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.counters.open.fetch_sub(1, Ordering::AcqRel);
        if let Ok(mut reaper) = self.reaper.lock()
            && let Some(task) = reaper.take()
        {
            task.abort();
        }
    }
}

#[derive(Default)]
struct Slot {
    current: tokio::sync::Mutex<Option<Arc<Connection>>>,
    // The last failed connect: when it ended, and why.
    failure: Mutex<Option<(Instant, Arc<SshError>)>>,
    // The host key the last connect attempt saw, and its verdict.
    seen: SeenSlot,
}

/// The pool of connections, one per host slug.
pub(crate) struct Pool {
    config: SshConfig,
    inventory: Arc<Inventory>,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    counters: Arc<Counters>,
}

impl Pool {
    pub(crate) fn new(config: SshConfig, inventory: Arc<Inventory>) -> Pool {
        Pool {
            config,
            inventory,
            slots: Mutex::new(HashMap::new()),
            counters: Arc::new(Counters::default()),
        }
    }

    pub(crate) fn config(&self) -> &SshConfig {
        &self.config
    }

    pub(crate) fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    pub(crate) fn stats(&self) -> PoolStats {
        PoolStats {
            connects: self.counters.connects.load(Ordering::Relaxed),
            replaced: self.counters.replaced.load(Ordering::Relaxed),
            idle_closed: self.counters.idle_closed.load(Ordering::Relaxed),
            open: self.counters.open.load(Ordering::Relaxed),
            channels: self.counters.channels.load(Ordering::Relaxed),
        }
    }

    /// The host key the last connect attempt to `slug` saw, refused or not.
    pub(crate) fn seen_key(&self, slug: &str) -> Option<SeenKey> {
        self.slot(slug)
            .seen
            .lock()
            .ok()
            .and_then(|seen| seen.clone())
    }

    fn slot(&self, slug: &str) -> Arc<Slot> {
        match self.slots.lock() {
            Ok(mut slots) => slots.entry(slug.to_string()).or_default().clone(),
            // A poisoned map only means another thread panicked mid-insert; a fresh
            // slot still works, it just is not shared.
            Err(_) => Arc::new(Slot::default()),
        }
    }

    /// The live connection to `slug` with a lease on it, connecting if needed.
    ///
    /// Commands that queued while another one's connect attempt failed get that
    /// failure rather than each trying (and timing out) in turn.
    pub(crate) async fn acquire(&self, slug: &str) -> Result<(Arc<Connection>, Lease), SshError> {
        let slot = self.slot(slug);
        let queued = Instant::now();
        let mut current = slot.current.lock().await;
        if current.is_none()
            && let Ok(failure) = slot.failure.lock()
            && let Some((at, error)) = failure.as_ref()
            && *at >= queued
        {
            return Err(SshError::Shared(error.clone()));
        }
        if let Some(conn) = current.as_ref() {
            if !conn.is_closed() {
                let lease = conn.lease();
                return Ok((conn.clone(), lease));
            }
            tracing::info!(host = slug, "pooled connection is closed, reconnecting");
            self.counters.replaced.fetch_add(1, Ordering::Relaxed);
            *current = None;
        }
        let conn = match self.connect(slug).await {
            Ok(conn) => Arc::new(conn),
            Err(error) => {
                let error = Arc::new(error);
                if let Ok(mut failure) = slot.failure.lock() {
                    *failure = Some((Instant::now(), error.clone()));
                }
                return Err(SshError::Shared(error));
            }
        };
        let lease = conn.lease();
        self.spawn_reaper(&slot, &conn);
        *current = Some(conn.clone());
        Ok((conn, lease))
    }

    /// Drops the pooled connection to `slug` if it is still `dead` (so the next
    /// acquire makes a new one).
    pub(crate) async fn discard(&self, slug: &str, dead: &Arc<Connection>) {
        let slot = self.slot(slug);
        let mut current = slot.current.lock().await;
        if current.as_ref().is_some_and(|c| Arc::ptr_eq(c, dead)) {
            self.counters.replaced.fetch_add(1, Ordering::Relaxed);
            if let Some(conn) = current.take() {
                conn.disconnect("connection replaced").await;
            }
        }
    }

    /// Closes every pooled connection.
    pub(crate) async fn close_all(&self) {
        let slots: Vec<Arc<Slot>> = match self.slots.lock() {
            Ok(slots) => slots.values().cloned().collect(),
            Err(_) => Vec::new(),
        };
        for slot in slots {
            let conn = slot.current.lock().await.take();
            if let Some(conn) = conn {
                conn.disconnect("closing").await;
            }
        }
    }

    fn connect<'a>(
        &'a self,
        slug: &'a str,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Connection, SshError>> + Send + 'a>> {
        Box::pin(async move {
            let host = self.inventory.host(slug).ok_or_else(|| SshError::NotSsh {
                host: slug.to_string(),
            })?;
            let Target::Ssh(target) = &host.target else {
                return Err(SshError::NotSsh {
                    host: slug.to_string(),
                });
            };
            let seen = self.slot(slug).seen.clone();
            if let Ok(mut seen) = seen.lock() {
                *seen = None;
            }
            let ((handle, auth), via) = match &target.jump {
                None => {
                    let stream =
                        connect::bounded(self.config.connect_timeout, target, connect::tcp(target))
                            .await?;
                    (
                        connect::handshake(stream, target, &self.config, seen).await?,
                        None,
                    )
                }
                Some(jump) => {
                    let as_jump = |source: SshError| SshError::Jump {
                        jump: jump.clone(),
                        source: Box::new(source),
                    };
                    let (jump_conn, lease) = self.acquire(jump).await.map_err(as_jump)?;
                    let tunnel = connect::bounded(self.config.connect_timeout, target, async {
                        jump_conn
                            .handle
                            .channel_open_direct_tcpip(
                                target.address.clone(),
                                u32::from(target.port),
                                "127.0.0.1",
                                0,
                            )
                            .await
                            .map_err(|e| SshError::Connect {
                                addr: format!("{}:{}", target.address, target.port),
                                source: std::io::Error::other(format!("tunnel via {jump}: {e}")),
                            })
                    })
                    .await?;
                    let connected =
                        connect::handshake(tunnel.into_stream(), target, &self.config, seen)
                            .await?;
                    (connected, Some((jump_conn, lease)))
                }
            };
            self.counters.connects.fetch_add(1, Ordering::Relaxed);
            self.counters.open.fetch_add(1, Ordering::AcqRel);
            tracing::debug!(host = slug, "connected");
            Ok(Connection {
                handle,
                auth,
                channels: Arc::new(Semaphore::new(self.config.max_channels.max(1))),
                usage: Arc::new(Usage {
                    active: AtomicUsize::new(0),
                    last_used: Mutex::new(Instant::now()),
                }),
                counters: self.counters.clone(),
                reaper: Mutex::new(None),
                _via: via,
            })
        })
    }

    fn spawn_reaper(&self, slot: &Arc<Slot>, conn: &Arc<Connection>) {
        let task = tokio::spawn(reap(
            Arc::downgrade(slot),
            Arc::downgrade(conn),
            self.config.idle_timeout,
            self.counters.clone(),
        ));
        if let Ok(mut reaper) = conn.reaper.lock() {
            *reaper = Some(task.abort_handle());
        }
    }
}

/// Closes `conn` once it has been idle for `idle`, then ends. Ends early when the
/// connection is replaced or dropped.
async fn reap(slot: Weak<Slot>, conn: Weak<Connection>, idle: Duration, counters: Arc<Counters>) {
    loop {
        let wake = match conn.upgrade() {
            Some(c) => c.usage.last_used() + idle,
            None => return,
        };
        tokio::time::sleep_until(wake).await;
        let Some(slot) = slot.upgrade() else { return };
        let mut current = slot.current.lock().await;
        let Some(live) = current.as_ref() else { return };
        if !std::ptr::eq(Arc::as_ptr(live), conn.as_ptr()) {
            return;
        }
        let idle_for = Instant::now().saturating_duration_since(live.usage.last_used());
        if live.usage.active.load(Ordering::Acquire) == 0 && idle_for >= idle {
            if let Some(live) = current.take() {
                drop(current);
                counters.idle_closed.fetch_add(1, Ordering::Relaxed);
                tracing::debug!("closing idle connection");
                live.disconnect("idle").await;
            }
            return;
        }
        if live.usage.active.load(Ordering::Acquire) > 0 {
            // In use: look again one idle period from now at the latest.
            live.usage.touch();
        }
    }
}
