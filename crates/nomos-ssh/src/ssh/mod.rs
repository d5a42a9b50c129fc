//! The SSH executor: runs commands on inventory hosts over pooled russh connections.
//!
//! See [`command`] for how a command is run and stopped, [`pool`] for connection
//! reuse, and [`verify`] for host-key checking.

pub mod check;
pub mod command;
pub mod config;
pub mod connect;
pub mod pool;
pub mod verify;

use std::sync::Arc;

use async_trait::async_trait;
use nomos_core::classify::Shell;
use nomos_core::ports::exec::{ExecError, ExecLimits, Executor, HostInfo, OutputSink};
use nomos_core::record::ExecOutput;
use tokio::time::Instant;

use crate::error::SshError;
use crate::inventory::{Inventory, Target};
use crate::ssh::command::{ChannelGuard, OpenFailure, open_session};
use crate::ssh::config::SshConfig;
use crate::ssh::pool::{Pool, PoolStats};

/// Runs commands on the SSH hosts of an inventory.
///
/// Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct SshExecutor {
    pool: Arc<Pool>,
}

impl std::fmt::Debug for SshExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshExecutor")
            .field("inventory", &self.pool.inventory().origin())
            .field("stats", &self.pool.stats())
            .finish()
    }
}

impl SshExecutor {
    /// An executor for the SSH hosts of `inventory`. Connections are made lazily,
    /// on the first command to each host.
    pub fn new(inventory: Arc<Inventory>, config: SshConfig) -> SshExecutor {
        SshExecutor {
            pool: Arc::new(Pool::new(config, inventory)),
        }
    }

    /// The pool's counters.
    pub fn stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// The settings in use.
    pub fn config(&self) -> &SshConfig {
        self.pool.config()
    }

    /// Closes every pooled connection (commands in flight on them fail).
    pub async fn close(&self) {
        self.pool.close_all().await;
    }

    /// Runs `command`, exactly as given, on the SSH host `slug`, as the exec request
    /// `/bin/sh -c 'COMMAND'` (or the host's pinned shell, CLASSIFY-8): the server's login
    /// shell only reads that fixed line, and the command itself is read by the shell the
    /// gate classified it for.
    ///
    /// The timeout of `limits` starts once a connection is at hand (connecting has
    /// its own bound, [`SshConfig::connect_timeout`]) and covers waiting for a free
    /// channel and the command itself.
    ///
    /// A connection that turns out dead before the command was sent is replaced
    /// once; once the command has been sent it is never sent again (EXEC-6).
    pub async fn execute(
        &self,
        slug: &str,
        command: &str,
        limits: ExecLimits,
    ) -> Result<ExecOutput, SshError> {
        self.execute_marked(slug, command, limits, None).await
    }

    /// [`SshExecutor::execute`] with the command's processes marked by `marker` (an
    /// execution's id), so [`SshExecutor::stop_marked`] finds them after a restart
    /// (EXEC-8). Without a marker the command gets a fresh one of its own.
    pub async fn execute_marked(
        &self,
        slug: &str,
        command: &str,
        limits: ExecLimits,
        marker: Option<&str>,
    ) -> Result<ExecOutput, SshError> {
        self.execute_streamed(slug, command, limits, marker, None)
            .await
    }

    /// [`SshExecutor::execute_marked`] handing the output to `live` as it arrives
    /// (EXEC-10).
    pub async fn execute_streamed(
        &self,
        slug: &str,
        command: &str,
        limits: ExecLimits,
        marker: Option<&str>,
        live: Option<OutputSink>,
    ) -> Result<ExecOutput, SshError> {
        if let Some(marker) = marker {
            check_marker(marker)?;
        }
        let line = exec_request(self.shell_of(slug), command);
        let command = line.as_str();
        let timeout = limits.timeout.to_std();
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let config = self.pool.config();
        let mut deadline = None;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (conn, lease) = self.pool.acquire(slug).await?;
            let deadline = *deadline.get_or_insert_with(|| Instant::now() + timeout);
            let permit = match tokio::time::timeout_at(
                deadline,
                conn.channels.clone().acquire_owned(),
            )
            .await
            {
                Ok(Ok(permit)) => permit,
                Ok(Err(_)) => {
                    return Err(SshError::Disconnected {
                        message: "the connection is closing".into(),
                    });
                }
                Err(_) => {
                    return Err(SshError::Timeout {
                        after_ms: timeout_ms,
                    });
                }
            };
            let failure = match open_session(&conn.handle, config.connect_timeout, deadline).await {
                Ok(channel) => {
                    conn.count_channel();
                    let guard = ChannelGuard::new(
                        channel,
                        conn.clone(),
                        config.stop_grace,
                        permit,
                        lease,
                        marker,
                    );
                    return guard
                        .run(
                            command,
                            limits.output_cap,
                            deadline,
                            timeout_ms,
                            live.clone(),
                        )
                        .await;
                }
                Err(OpenFailure::Refused(reason)) => {
                    return Err(SshError::ChannelOpen {
                        reason: format!("{reason:?}"),
                    });
                }
                Err(OpenFailure::Deadline) => {
                    return Err(SshError::Timeout {
                        after_ms: timeout_ms,
                    });
                }
                Err(OpenFailure::Dead(message)) => SshError::Disconnected { message },
            };
            drop(permit);
            drop(lease);
            self.pool.discard(slug, &conn).await;
            if attempt >= 2 {
                return Err(failure);
            }
            tracing::info!(
                host = slug,
                "connection failed before the command was sent; reconnecting"
            );
        }
    }

    /// CLASSIFY-8: the interpreter commands on `slug` run under (the inventory's `shell`).
    pub fn shell_of(&self, slug: &str) -> Shell {
        self.pool
            .inventory()
            .host(slug)
            .map_or(Shell::default(), |host| host.shell)
    }

    /// EXEC-8: stops whatever still runs on `slug` of the command marked `marker`, through
    /// the clean-up script on a channel of its own (see [`command`]).
    pub async fn stop_marked(&self, slug: &str, marker: &str) -> Result<(), SshError> {
        check_marker(marker)?;
        let (conn, lease) = self.pool.acquire(slug).await?;
        let res = command::clean_up(&conn, marker, self.pool.config().stop_grace).await;
        drop(lease);
        res.map_err(|message| SshError::Disconnected { message })
    }
}

#[async_trait]
impl Executor for SshExecutor {
    async fn run(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
    ) -> Result<ExecOutput, ExecError> {
        let inventory = self.pool.inventory();
        let entry = inventory.require(host)?;
        if entry.target == Target::Local {
            return Err(SshError::NotSsh {
                host: host.to_string(),
            }
            .into_exec_error(host));
        }
        self.execute(host, command, limits)
            .await
            .map_err(|e| e.into_exec_error(host))
    }

    async fn run_streamed(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
        marker: &str,
        live: OutputSink,
    ) -> Result<ExecOutput, ExecError> {
        let inventory = self.pool.inventory();
        if inventory.require(host)?.target == Target::Local {
            return Err(SshError::NotSsh {
                host: host.to_string(),
            }
            .into_exec_error(host));
        }
        self.execute_streamed(host, command, limits, Some(marker), Some(live))
            .await
            .map_err(|e| e.into_exec_error(host))
    }

    fn shell(&self, host: &str) -> Shell {
        self.shell_of(host)
    }

    fn hosts(&self) -> Vec<HostInfo> {
        let known_hosts = &self.pool.config().known_hosts;
        self.pool
            .inventory()
            .hosts()
            .iter()
            .filter_map(|host| match &host.target {
                Target::Ssh(ssh) => Some(HostInfo {
                    host_keys: verify::recorded_fingerprints(&ssh.address, ssh.port, known_hosts),
                    ..host.info()
                }),
                Target::Local => None,
            })
            .collect()
    }
}

/// CLASSIFY-8: the exec request that runs `command` under `shell` whatever the login shell
/// of the server's user is: the login shell reads only `/bin/sh -c 'COMMAND'`, with
/// `command` as one single-quoted word, and `/bin/sh` reads `command` itself.
pub fn exec_request(shell: Shell, command: &str) -> String {
    shell.wrap(command)
}

/// A marker goes into a shell script unquoted: only hex digits and `-` (a UUID) pass.
pub(crate) fn check_marker(marker: &str) -> Result<(), SshError> {
    if marker.is_empty() || !marker.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return Err(SshError::BadMarker {
            marker: marker.to_owned(),
        });
    }
    Ok(())
}
