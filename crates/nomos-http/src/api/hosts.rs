//! The host inventory for the operator: every host the executor can reach, with its tags,
//! what the knowledge graph holds about it, when it was last audited (WRITEBACK-3) and the
//! fingerprints of the host keys known_hosts trusts for it (FLEET-4), and
//! a reachability check on demand that opens a TCP connection to the host's SSH port and
//! runs nothing. For a Proxmox node (FLEET-3), `POST /api/hosts/{slug}/discover` reads its
//! containers and VMs again, through the agent's gated `discover_guests`.

use std::time::{Duration, Instant};

use axum::Extension;
use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::{Principal, Role};
use crate::error::{ApiError, AppJson, AppPath};
use crate::state::AppState;

/// How long a reachability check waits for the connection.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// The SSH port assumed when an address names none.
const SSH_PORT: u16 = 22;

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/hosts", get(hosts))
        .route("/api/hosts/{slug}/reachability", post(reachability))
        .route("/api/hosts/{slug}/discover", post(discover))
}

/// One host of the inventory.
#[derive(Debug, Serialize, ToSchema)]
pub struct HostDto {
    /// Slug (`local`, `web1`).
    pub slug: String,
    /// Address (`local`, `user@host:port`).
    pub address: String,
    /// Inventory tags.
    pub tags: Vec<String>,
    /// The entity's attributes in the knowledge graph, when it has one.
    #[schema(value_type = Option<Object>)]
    pub attributes: Option<serde_json::Value>,
    /// The newest knowledge entry about it tagged `audit` or `update` (WRITEBACK-3).
    pub last_audited_at: Option<String>,
    /// FLEET-4: the SHA256 fingerprints (`SHA256:...`, as `ssh-keygen -lf` prints them) of
    /// the host keys the SSH executor's known_hosts trusts for it; empty for `local`.
    pub host_keys: Vec<String>,
    /// FLEET-3: whether it is a Proxmox node whose guests can be discovered.
    pub proxmox: bool,
    /// FLEET-3: for a discovered container or VM, the node it runs on.
    pub node: Option<String>,
}

/// FLEET-3: what a discovery of a Proxmox node found.
#[derive(Debug, Serialize, ToSchema)]
pub struct DiscoveryDto {
    /// The node.
    pub slug: String,
    /// The session that records the discovery's executions and call.
    pub session_id: String,
    /// `ok`, or `error` when a command failed (the node down, `pct` missing).
    pub outcome: String,
    /// The tool's result: one line per guest, or what went wrong.
    pub result: String,
    /// The node's guests as the knowledge graph now holds them.
    pub guests: Vec<GuestDto>,
}

/// One container or VM of a node.
#[derive(Debug, Serialize, ToSchema)]
pub struct GuestDto {
    /// Its slug (`lxc:NAME`, `vm:NAME`).
    pub slug: String,
    /// `lxc` or `vm`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its attributes (`vmid`, `status`, `ips`, `node`).
    #[schema(value_type = Object)]
    pub attributes: serde_json::Value,
}

/// What a reachability check found.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReachabilityDto {
    /// The host.
    pub slug: String,
    /// Whether it answered.
    pub reachable: bool,
    /// What was tried and what happened.
    pub detail: String,
    /// How long the check took.
    pub elapsed_ms: u64,
}

/// Lists the inventory.
#[utoipa::path(get, path = "/api/hosts", tag = "hosts",
    responses((status = 200, body = [HostDto])))]
pub async fn hosts(State(state): State<AppState>) -> Result<AppJson<Vec<HostDto>>, ApiError> {
    let inventory = state.agent.executor().hosts();
    let nodes = state.agent.executor().proxmox_nodes();
    let store = state.agent.store();
    let slugs: Vec<String> = inventory.iter().map(|h| h.slug.clone()).collect();
    let audits = store.last_audited(&slugs).await?;
    let mut out = Vec::with_capacity(inventory.len());
    for (host, audit) in inventory.into_iter().zip(audits) {
        let entity = store.entity(&host.slug).await?;
        let node = entity
            .as_ref()
            .filter(|e| e.attributes["source"] == "proxmox")
            .and_then(|e| e.attributes["node"].as_str().map(str::to_owned));
        out.push(HostDto {
            proxmox: nodes.contains(&host.slug),
            node,
            attributes: entity.map(|e| e.attributes),
            last_audited_at: audit.last_audited_at.map(|t| t.to_rfc3339()),
            slug: host.slug,
            address: host.address,
            tags: host.tags,
            host_keys: host.host_keys,
        });
    }
    Ok(AppJson(out))
}

/// Checks whether a host answers: `local` always does; another host must accept a TCP
/// connection on its SSH port within 5 s. No command runs.
#[utoipa::path(post, path = "/api/hosts/{slug}/reachability", tag = "hosts",
    params(("slug" = String, Path, description = "host slug")),
    responses((status = 200, body = ReachabilityDto), (status = 404, body = crate::error::ErrorBody)))]
pub async fn reachability(
    State(state): State<AppState>,
    AppPath(slug): AppPath<String>,
) -> Result<AppJson<ReachabilityDto>, ApiError> {
    let Some(host) = state
        .agent
        .executor()
        .hosts()
        .into_iter()
        .find(|h| h.slug == slug)
    else {
        return Err(ApiError::NotFound(format!(
            "host {slug} is not in the inventory"
        )));
    };
    let started = Instant::now();
    let (reachable, detail) = match target(&host.address) {
        Target::Local => (true, "this machine".to_owned()),
        Target::Remote(addr) => {
            match tokio::time::timeout(CHECK_TIMEOUT, tokio::net::TcpStream::connect(&addr)).await {
                Ok(Ok(_)) => (true, format!("{addr} accepted a connection")),
                Ok(Err(error)) => (false, format!("{addr}: {error}")),
                Err(_) => (
                    false,
                    format!("{addr}: no answer in {} s", CHECK_TIMEOUT.as_secs()),
                ),
            }
        }
    };
    Ok(AppJson(ReachabilityDto {
        slug: host.slug,
        reachable,
        detail,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }))
}

/// FLEET-3: discovers a Proxmox node's containers and VMs now (`pct list`, `qm list` and
/// each config, read-only, gated and recorded in the node's discovery session), adding them as
/// entities that run on the node and as hosts. Operators only; 404 for a host not in the
/// inventory, 409 for a host that is not a Proxmox node.
#[utoipa::path(post, path = "/api/hosts/{slug}/discover", tag = "hosts",
    params(("slug" = String, Path, description = "host slug of a Proxmox node")),
    responses((status = 200, body = DiscoveryDto), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn discover(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    AppPath(slug): AppPath<String>,
) -> Result<AppJson<DiscoveryDto>, ApiError> {
    if principal.role != Role::Operator {
        return Err(ApiError::Forbidden(format!(
            "{} may not discover guests; this needs the operator role",
            principal.name
        )));
    }
    let executor = state.agent.executor();
    if !executor.hosts().iter().any(|h| h.slug == slug) {
        return Err(ApiError::NotFound(format!(
            "host {slug} is not in the inventory"
        )));
    }
    let nodes = executor.proxmox_nodes();
    if !nodes.contains(&slug) {
        return Err(ApiError::Conflict(format!(
            "host {slug} is not a Proxmox node; mark it `proxmox = true` in the inventory to discover its guests{}",
            if nodes.is_empty() {
                String::new()
            } else {
                format!(" (Proxmox nodes: {})", nodes.join(", "))
            }
        )));
    }
    let found = state.agent.discover_node(&slug).await?;
    let store = state.agent.store();
    let mut guests = Vec::new();
    for relation in store.relations(&slug).await? {
        if relation.kind != nomos_core::proxmox::RUNS_ON || relation.to != slug {
            continue;
        }
        if let Some(entity) = store.entity(&relation.from).await? {
            guests.push(GuestDto {
                slug: entity.slug,
                kind: entity.kind,
                name: entity.name,
                attributes: entity.attributes,
            });
        }
    }
    Ok(AppJson(DiscoveryDto {
        slug,
        session_id: found.session_id.to_string(),
        outcome: found.reply.outcome.as_str().to_owned(),
        result: found.reply.text,
        guests,
    }))
}

/// Where a reachability check connects.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// The server's own machine.
    Local,
    /// `host:port`.
    Remote(String),
}

/// The connection target of an inventory address (`local`, `host`, `user@host`,
/// `host:port`, `user@[::1]:2222`).
fn target(address: &str) -> Target {
    if address == "local" {
        return Target::Local;
    }
    let host = address.rsplit_once('@').map_or(address, |(_, host)| host);
    let has_port = if host.starts_with('[') {
        host.contains("]:")
    } else {
        host.matches(':').count() == 1
    };
    if has_port {
        Target::Remote(host.to_owned())
    } else if host.contains(':') && !host.starts_with('[') {
        Target::Remote(format!("[{host}]:{SSH_PORT}"))
    } else {
        Target::Remote(format!("{host}:{SSH_PORT}"))
    }
}

#[cfg(test)]
mod tests {
    use super::{Target, target};

    #[test]
    fn an_address_becomes_a_host_and_port_to_connect_to() {
        assert_eq!(target("local"), Target::Local);
        assert_eq!(target("web1"), Target::Remote("web1:22".into()));
        assert_eq!(target("root@web1"), Target::Remote("web1:22".into()));
        assert_eq!(
            target("ops@127.0.0.1:2222"),
            Target::Remote("127.0.0.1:2222".into())
        );
        assert_eq!(target("[::1]:2200"), Target::Remote("[::1]:2200".into()));
        assert_eq!(target("::1"), Target::Remote("[::1]:22".into()));
    }
}
