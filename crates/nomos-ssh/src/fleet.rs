//! The fleet executor: routes each command by host slug, `local` to the local
//! executor and every other inventory host over SSH.

use std::sync::Arc;

use async_trait::async_trait;
use nomos_core::ports::exec::{ExecError, ExecLimits, Executor, HostInfo, OutputSink};
use nomos_core::record::ExecOutput;

use crate::inventory::{Inventory, Target};
use crate::local::LocalExecutor;
use crate::ssh::SshExecutor;
use crate::ssh::config::SshConfig;

/// Runs commands on any host of an inventory.
#[derive(Clone, Debug)]
pub struct FleetExecutor {
    inventory: Arc<Inventory>,
    local: LocalExecutor,
    ssh: SshExecutor,
}

impl FleetExecutor {
    /// An executor for every host of `inventory`.
    pub fn new(inventory: Inventory, config: SshConfig) -> FleetExecutor {
        let inventory = Arc::new(inventory);
        FleetExecutor {
            ssh: SshExecutor::new(inventory.clone(), config),
            local: LocalExecutor::new(),
            inventory,
        }
    }

    /// Replaces the local executor (another shell, grace period).
    pub fn with_local(mut self, local: LocalExecutor) -> FleetExecutor {
        self.local = local;
        self
    }

    /// The inventory it routes by.
    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// The SSH side (for its pool counters).
    pub fn ssh(&self) -> &SshExecutor {
        &self.ssh
    }
}

#[async_trait]
impl Executor for FleetExecutor {
    async fn run(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
    ) -> Result<ExecOutput, ExecError> {
        let result = match &self.inventory.require(host)?.target {
            Target::Local => self.local.execute(command, limits).await,
            Target::Ssh(_) => self.ssh.execute(host, command, limits).await,
        };
        result.map_err(|e| e.into_exec_error(host))
    }

    async fn run_marked(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
        marker: &str,
    ) -> Result<ExecOutput, ExecError> {
        let result = match &self.inventory.require(host)?.target {
            Target::Local => {
                self.local
                    .execute_marked(command, limits, Some(marker))
                    .await
            }
            Target::Ssh(_) => {
                self.ssh
                    .execute_marked(host, command, limits, Some(marker))
                    .await
            }
        };
        result.map_err(|e| e.into_exec_error(host))
    }

    async fn run_streamed(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
        marker: &str,
        live: OutputSink,
    ) -> Result<ExecOutput, ExecError> {
        let result = match &self.inventory.require(host)?.target {
            Target::Local => {
                self.local
                    .execute_streamed(command, limits, Some(marker), Some(live))
                    .await
            }
            Target::Ssh(_) => {
                self.ssh
                    .execute_streamed(host, command, limits, Some(marker), Some(live))
                    .await
            }
        };
        result.map_err(|e| e.into_exec_error(host))
    }

    async fn stop_marked(&self, host: &str, marker: &str) -> Result<(), ExecError> {
        let result = match &self.inventory.require(host)?.target {
            Target::Local => self.local.stop_marked(marker).await,
            Target::Ssh(_) => self.ssh.stop_marked(host, marker).await,
        };
        result.map_err(|e| e.into_exec_error(host))
    }

    fn hosts(&self) -> Vec<HostInfo> {
        // Inventory order; an SSH host carries the fingerprints known_hosts trusts for it.
        let mut remote: std::collections::HashMap<String, HostInfo> = self
            .ssh
            .hosts()
            .into_iter()
            .map(|info| (info.slug.clone(), info))
            .collect();
        self.inventory
            .host_infos()
            .into_iter()
            .map(|info| remote.remove(&info.slug).unwrap_or(info))
            .collect()
    }
}
