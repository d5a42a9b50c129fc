//! The fixture world of a case: a simulated fleet that answers with canned outputs, and
//! the knowledge the store starts with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use nomos_core::ports::exec::{ExecError, ExecLimits, Executor, HostInfo};
use nomos_core::ports::store::{Store, StoreError};
use nomos_core::proxmox::{Guest, GuestKind};
use nomos_core::record::{Entity, ExecOutput, KnowledgeEntry, Relationship};
use nomos_core::snapshot::{GuestRef, HostSafety, SnapshotPolicy};
use nomos_core::{Span, Timestamp};
use tokio::sync::Notify;

use crate::manifest::{SnapshotFixture, World};

/// What a command not in the fixture world prints.
pub const UNKNOWN_COMMAND_STDERR: &str = "command not in the fixture world";

/// An executor that answers from the fixture world and records what ran.
#[derive(Clone)]
pub struct SimulatedExecutor {
    hosts: Vec<HostInfo>,
    /// FLEET-3: the world's Proxmox nodes, and the guests a discovery found on them (a
    /// guest answers from the canned outputs under its own slug and the inner command).
    nodes: Vec<String>,
    guests: Arc<Mutex<Vec<HostInfo>>>,
    /// SAFE-1: the nodes whose guests are snapshotted before a change, and the guests
    /// a discovery found, with their node and id.
    snapshot_nodes: Vec<String>,
    guest_refs: Arc<Mutex<Vec<(String, GuestRef)>>>,
    outputs: HashMap<(String, String), Canned>,
    ran: Arc<Mutex<Vec<(String, String)>>>,
    hung: Arc<Notify>,
}

#[derive(Clone)]
struct Canned {
    output: ExecOutput,
    hang: bool,
}

impl SimulatedExecutor {
    /// Builds the fleet of a world; `local` is always part of it.
    pub fn new(world: &World) -> SimulatedExecutor {
        let mut hosts = vec![HostInfo {
            slug: "local".to_owned(),
            address: "local".to_owned(),
            tags: Vec::new(),
            host_keys: Vec::new(),
        }];
        for host in &world.hosts {
            if host.slug != "local" {
                hosts.push(HostInfo {
                    slug: host.slug.clone(),
                    address: host.address.clone().unwrap_or_else(|| host.slug.clone()),
                    tags: host.tags.clone(),
                    host_keys: Vec::new(),
                });
            }
        }
        let outputs = world
            .outputs
            .iter()
            .map(|o| {
                let output = ExecOutput {
                    exit_code: Some(o.exit_code),
                    stdout: o.stdout.clone(),
                    stderr: o.stderr.clone(),
                    duration_ms: 5,
                    ..ExecOutput::default()
                };
                (
                    (o.host.clone(), o.command.clone()),
                    Canned {
                        output,
                        hang: o.hang,
                    },
                )
            })
            .collect();
        SimulatedExecutor {
            hosts,
            nodes: world
                .hosts
                .iter()
                .filter(|h| h.proxmox)
                .map(|h| h.slug.clone())
                .collect(),
            guests: Arc::default(),
            snapshot_nodes: world
                .hosts
                .iter()
                .filter(|h| h.proxmox && h.snapshot == Some(SnapshotFixture::BeforeChange))
                .map(|h| h.slug.clone())
                .collect(),
            guest_refs: Arc::default(),
            outputs,
            ran: Arc::default(),
            hung: Arc::new(Notify::new()),
        }
    }

    /// Every `(host, command)` that ran, in order.
    pub fn ran(&self) -> Vec<(String, String)> {
        self.ran
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Notified when a command that never returns starts.
    pub fn hung(&self) -> Arc<Notify> {
        self.hung.clone()
    }
}

#[async_trait]
impl Executor for SimulatedExecutor {
    async fn run(
        &self,
        host: &str,
        command: &str,
        _limits: ExecLimits,
    ) -> Result<ExecOutput, ExecError> {
        let hosts = self.hosts();
        if !hosts.iter().any(|h| h.slug == host) {
            return Err(ExecError::UnknownHost {
                host: host.to_owned(),
                known: hosts.into_iter().map(|h| h.slug).collect(),
            });
        }
        self.ran
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((host.to_owned(), command.to_owned()));
        match self.outputs.get(&(host.to_owned(), command.to_owned())) {
            Some(canned) if canned.hang => {
                self.hung.notify_one();
                std::future::pending::<()>().await;
                Err(ExecError::Other("unreachable".to_owned()))
            }
            Some(canned) => Ok(canned.output.clone()),
            None if self.snapshot_nodes.iter().any(|n| n == host) => {
                Ok(snapshot_verb(command).unwrap_or_else(|| unknown(command)))
            }
            None => Ok(unknown(command)),
        }
    }

    fn host_safety(&self, host: &str) -> HostSafety {
        let guest = self
            .guest_refs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(slug, _)| slug == host)
            .map(|(_, guest)| guest.clone());
        let snapshot = match &guest {
            Some(guest) if self.snapshot_nodes.contains(&guest.node) => {
                SnapshotPolicy::BeforeChange
            }
            _ => SnapshotPolicy::Never,
        };
        HostSafety { snapshot, guest }
    }

    fn hosts(&self) -> Vec<HostInfo> {
        let mut hosts = self.hosts.clone();
        for guest in self
            .guests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            if !hosts.iter().any(|h| h.slug == guest.slug) {
                hosts.push(guest.clone());
            }
        }
        hosts
    }

    fn proxmox_nodes(&self) -> Vec<String> {
        self.nodes.clone()
    }

    fn set_guests(&self, node: &str, guests: &[Guest]) -> Result<Vec<String>, ExecError> {
        if !self.nodes.iter().any(|n| n == node) {
            return Err(ExecError::Other(format!("{node} is not a Proxmox node")));
        }
        let mut refs = self
            .guest_refs
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        refs.retain(|(_, guest)| guest.node != node);
        refs.extend(guests.iter().map(|guest| {
            (
                guest.slug(),
                GuestRef {
                    node: node.to_owned(),
                    vmid: guest.vmid,
                    kind: guest.kind,
                },
            )
        }));
        drop(refs);
        let mut known = self.guests.lock().unwrap_or_else(PoisonError::into_inner);
        for guest in guests {
            let slug = guest.slug();
            if !known.iter().any(|h| h.slug == slug) {
                known.push(HostInfo {
                    slug,
                    address: guest
                        .ips
                        .first()
                        .cloned()
                        .unwrap_or_else(|| node.to_owned()),
                    tags: Vec::new(),
                    host_keys: Vec::new(),
                });
            }
        }
        Ok(guests
            .iter()
            .filter(|g| g.kind == GuestKind::Lxc)
            .map(Guest::slug)
            .filter(|slug| !self.hosts.iter().any(|h| &h.slug == slug))
            .collect())
    }
}

/// What a command not in the fixture world prints.
fn unknown(command: &str) -> ExecOutput {
    ExecOutput {
        exit_code: Some(127),
        stderr: format!("{UNKNOWN_COMMAND_STDERR}: {command}"),
        duration_ms: 1,
        ..ExecOutput::default()
    }
}

/// SAFE-1: a simulated node answers its snapshot commands (a snapshot and the listing
/// that follows it, a deletion, a rollback) with success.
fn snapshot_verb(command: &str) -> Option<ExecOutput> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let stdout = match words.as_slice() {
        [tool, "snapshot", _, name, ..] if *tool == "pct" || *tool == "qm" => {
            format!("`-> {name} 2026-12-01 10:00:00 no-description\n `-> current You are here!\n")
        }
        [tool, "delsnapshot" | "rollback", _, _] if *tool == "pct" || *tool == "qm" => {
            String::new()
        }
        _ => return None,
    };
    Some(ExecOutput {
        exit_code: Some(0),
        stdout,
        duration_ms: 5,
        ..ExecOutput::default()
    })
}

/// Writes the world's entities, relationships and knowledge into a fresh store.
pub async fn seed(store: &dyn Store, world: &World, now: Timestamp) -> Result<(), StoreError> {
    for host in &world.hosts {
        let entity = Entity {
            slug: host.slug.clone(),
            kind: prefix(&host.slug, "host"),
            name: suffix(&host.slug),
            attributes: serde_json::json!({}),
            updated_at: now,
        };
        store.upsert_entity(&entity).await?;
    }
    for fixture in &world.entities {
        let attributes = serde_json::to_value(&fixture.attributes)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        let entity = Entity {
            slug: fixture.slug.clone(),
            kind: fixture
                .kind
                .clone()
                .unwrap_or_else(|| prefix(&fixture.slug, "entity")),
            name: fixture
                .name
                .clone()
                .unwrap_or_else(|| suffix(&fixture.slug)),
            attributes,
            updated_at: now,
        };
        store.upsert_entity(&entity).await?;
    }
    for fixture in &world.relationships {
        let relationship = Relationship {
            from: fixture.from.clone(),
            kind: fixture.kind.clone(),
            to: fixture.to.clone(),
            created_at: now,
        };
        store.create_relationship(&relationship).await?;
    }
    for fixture in &world.knowledge {
        let at = now - Span::from_mins(fixture.age_days * 24 * 60);
        let entry = KnowledgeEntry {
            key: fixture.key.clone(),
            title: fixture.title.clone(),
            content: fixture.content.clone(),
            tags: fixture.tags.clone(),
            about: fixture.about.clone(),
            created_at: at,
            updated_at: at,
        };
        store.upsert_knowledge(&entry).await?;
    }
    Ok(())
}

fn prefix(slug: &str, default: &str) -> String {
    match slug.split_once(':') {
        Some((kind, _)) => kind.to_owned(),
        None => default.to_owned(),
    }
}

fn suffix(slug: &str) -> String {
    slug.rsplit(':').next().unwrap_or(slug).to_owned()
}
