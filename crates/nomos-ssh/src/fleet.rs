//! The fleet executor: routes each command by host slug, `local` to the local
//! executor and every other inventory host over SSH.
//!
//! FLEET-3: the guests a discovery found on a Proxmox node are hosts too. A container
//! the inventory does not list (so it has no SSH address of its own) is reached through
//! its node: the node runs `pct exec VMID -- /bin/sh -c 'COMMAND'`, written here around the
//! command given (fixed code, never the model's input), so the string classified, shown
//! and recorded is the inner command (EXEC-7). A VM is not reached through its node.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use nomos_core::classify::Shell;
use nomos_core::ports::exec::{ExecError, ExecLimits, Executor, HostInfo, OutputSink};
use nomos_core::proxmox::{Guest, GuestKind, pct_exec};
use nomos_core::record::ExecOutput;
use nomos_core::snapshot::{GuestRef, HostSafety, SnapshotPolicy};

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
    /// FLEET-3: the guests each node's last discovery found, by node slug.
    guests: Arc<RwLock<BTreeMap<String, Vec<Guest>>>>,
}

/// Where a command for one slug goes.
enum Route {
    /// An inventory host: the command as given.
    Direct(Target),
    /// A container reached through its node: the command wrapped in `pct exec`.
    ThroughNode {
        node: String,
        target: Target,
        vmid: u32,
    },
}

impl FleetExecutor {
    /// An executor for every host of `inventory`.
    pub fn new(inventory: Inventory, config: SshConfig) -> FleetExecutor {
        let inventory = Arc::new(inventory);
        let local_shell = inventory
            .host(crate::inventory::LOCAL_SLUG)
            .map_or(Shell::default(), |host| host.shell);
        FleetExecutor {
            ssh: SshExecutor::new(inventory.clone(), config),
            local: LocalExecutor::new().pinned(local_shell),
            inventory,
            guests: Arc::default(),
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

impl FleetExecutor {
    /// The guests discovered on `node`, as its last discovery found them.
    pub fn guests(&self, node: &str) -> Vec<Guest> {
        self.read_guests().get(node).cloned().unwrap_or_default()
    }

    fn read_guests(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Vec<Guest>>> {
        self.guests.read().unwrap_or_else(|e| e.into_inner())
    }

    /// A discovered guest the inventory does not list itself.
    fn guest(&self, slug: &str) -> Option<Guest> {
        if self.inventory.host(slug).is_some() {
            return None;
        }
        self.read_guests()
            .values()
            .flatten()
            .find(|guest| guest.slug() == slug)
            .cloned()
    }

    fn route(&self, host: &str) -> Result<Route, ExecError> {
        if let Some(found) = self.inventory.host(host) {
            return Ok(Route::Direct(found.target.clone()));
        }
        let Some(guest) = self.guest(host) else {
            return Err(self.unknown(host));
        };
        match guest.kind {
            GuestKind::Lxc => {
                let node = self.inventory.require(&guest.node)?;
                Ok(Route::ThroughNode {
                    node: guest.node.clone(),
                    target: node.target.clone(),
                    vmid: guest.vmid,
                })
            }
            GuestKind::Vm => Err(ExecError::Other(format!(
                "{host} is a VM on {node} with no SSH address of its own, and a VM is not \
                 reached through its node; add it to the inventory with an address \
                 (slug `{host}`) to run commands on it",
                node = guest.node
            ))),
        }
    }

    fn unknown(&self, host: &str) -> ExecError {
        ExecError::UnknownHost {
            host: host.to_owned(),
            known: self.hosts().into_iter().map(|h| h.slug).collect(),
        }
    }

    async fn on(
        &self,
        target: &Target,
        slug: &str,
        command: &str,
        limits: ExecLimits,
        marker: Option<&str>,
        live: Option<OutputSink>,
    ) -> Result<ExecOutput, crate::SshError> {
        match target {
            Target::Local => {
                self.local
                    .execute_streamed(command, limits, marker, live)
                    .await
            }
            Target::Ssh(_) => {
                self.ssh
                    .execute_streamed(slug, command, limits, marker, live)
                    .await
            }
        }
    }

    async fn run_routed(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
        marker: Option<&str>,
        live: Option<OutputSink>,
    ) -> Result<ExecOutput, ExecError> {
        match self.route(host)? {
            Route::Direct(target) => self
                .on(&target, host, command, limits, marker, live)
                .await
                .map_err(|e| e.into_exec_error(host)),
            Route::ThroughNode { node, target, vmid } => {
                // EXEC-7: the transport is fixed; `command` arrives intact in the container.
                let wrapped = pct_exec(vmid, command);
                self.on(&target, &node, &wrapped, limits, marker, live)
                    .await
                    .map_err(|e| e.into_exec_error(&node))
            }
        }
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
        self.run_routed(host, command, limits, None, None).await
    }

    async fn run_marked(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
        marker: &str,
    ) -> Result<ExecOutput, ExecError> {
        self.run_routed(host, command, limits, Some(marker), None)
            .await
    }

    async fn run_streamed(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
        marker: &str,
        live: OutputSink,
    ) -> Result<ExecOutput, ExecError> {
        // The same route as any run: a container without SSH streams through its node.
        self.run_routed(host, command, limits, Some(marker), Some(live))
            .await
    }

    async fn stop_marked(&self, host: &str, marker: &str) -> Result<(), ExecError> {
        let (slug, target) = match self.route(host)? {
            Route::Direct(target) => (host.to_owned(), target),
            // The marked process is the node's `pct exec`.
            Route::ThroughNode { node, target, .. } => (node, target),
        };
        let result = match &target {
            Target::Local => self.local.stop_marked(marker).await,
            Target::Ssh(_) => self.ssh.stop_marked(&slug, marker).await,
        };
        result.map_err(|e| e.into_exec_error(&slug))
    }

    fn shell(&self, host: &str) -> Shell {
        match self.route(host) {
            Ok(Route::Direct(Target::Local)) => Executor::shell(&self.local, host),
            Ok(Route::Direct(Target::Ssh(_))) => self.ssh.shell_of(host),
            // `pct exec VMID -- /bin/sh -c '...'`: the container's POSIX sh reads it.
            Ok(Route::ThroughNode { .. }) | Err(_) => Shell::Sh,
        }
    }

    fn hosts(&self) -> Vec<HostInfo> {
        // Inventory order; an SSH host carries the fingerprints known_hosts trusts for it.
        let mut remote: std::collections::HashMap<String, HostInfo> = self
            .ssh
            .hosts()
            .into_iter()
            .map(|info| (info.slug.clone(), info))
            .collect();
        let mut hosts: Vec<HostInfo> = self
            .inventory
            .host_infos()
            .into_iter()
            .map(|info| remote.remove(&info.slug).unwrap_or(info))
            .collect();
        let guests = self.read_guests();
        for guest in guests.values().flatten() {
            let slug = guest.slug();
            if hosts.iter().any(|h| h.slug == slug) {
                continue;
            }
            // A container is reached at its node's address; a VM has only its own.
            let address = match guest.kind {
                GuestKind::Lxc => self
                    .inventory
                    .host(&guest.node)
                    .map(|node| node.address().to_owned())
                    .unwrap_or_default(),
                GuestKind::Vm => guest.ips.first().cloned().unwrap_or_default(),
            };
            hosts.push(HostInfo {
                slug,
                address,
                tags: Vec::new(),
                host_keys: Vec::new(),
            });
        }
        hosts
    }

    fn proxmox_nodes(&self) -> Vec<String> {
        self.inventory.proxmox_nodes()
    }

    fn host_safety(&self, host: &str) -> HostSafety {
        // SAFE-1: a guest the inventory lists keeps its own policy; one reached through its
        // node has the node's.
        let guest = self
            .read_guests()
            .values()
            .flatten()
            .find(|guest| guest.slug() == host)
            .cloned();
        let snapshot = match (&guest, self.inventory.host(host)) {
            (_, Some(_)) => self.inventory.snapshot_policy(host),
            (Some(guest), None) => self.inventory.snapshot_policy(&guest.node),
            (None, None) => SnapshotPolicy::Never,
        };
        HostSafety {
            snapshot,
            guest: guest.map(|guest| GuestRef {
                node: guest.node,
                vmid: guest.vmid,
                kind: guest.kind,
            }),
        }
    }

    fn set_guests(&self, node: &str, guests: &[Guest]) -> Result<Vec<String>, ExecError> {
        if !self.inventory.proxmox_nodes().iter().any(|n| n == node) {
            return Err(ExecError::Other(format!(
                "{node} is not a Proxmox node of the inventory (`proxmox = true`)"
            )));
        }
        let mut all = self.guests.write().unwrap_or_else(|e| e.into_inner());
        all.insert(node.to_owned(), guests.to_vec());
        Ok(guests
            .iter()
            .filter(|guest| guest.kind == GuestKind::Lxc)
            .map(Guest::slug)
            .filter(|slug| self.inventory.host(slug).is_none())
            .collect())
    }
}
