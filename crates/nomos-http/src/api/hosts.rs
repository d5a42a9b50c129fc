//! The host inventory for the operator: every host the executor can reach, with its tags,
//! what the knowledge graph holds about it, when it was last audited (WRITEBACK-3) and the
//! fingerprints of the host keys known_hosts trusts for it (FLEET-4), and
//! a reachability check on demand that opens a TCP connection to the host's SSH port and
//! runs nothing.

use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use serde::Serialize;
use utoipa::ToSchema;

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
    let store = state.agent.store();
    let slugs: Vec<String> = inventory.iter().map(|h| h.slug.clone()).collect();
    let audits = store.last_audited(&slugs).await?;
    let mut out = Vec::with_capacity(inventory.len());
    for (host, audit) in inventory.into_iter().zip(audits) {
        let entity = store.entity(&host.slug).await?;
        out.push(HostDto {
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
