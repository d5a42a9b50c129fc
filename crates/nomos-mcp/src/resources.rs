//! Read-only context for the client: the host inventory and a session's plan.

use nomos_agent::Agent;
use nomos_core::SessionId;
use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::json;
use uuid::Uuid;

/// The host inventory.
pub const HOSTS_URI: &str = "nomos://hosts";

const PLAN_PREFIX: &str = "nomos://sessions/";
const PLAN_SUFFIX: &str = "/plan";

/// The URI of a session's plan.
pub fn plan_uri(id: SessionId) -> String {
    format!("{PLAN_PREFIX}{id}{PLAN_SUFFIX}")
}

/// The resources listed: the inventory, and this MCP session's plan once there is one.
pub fn list(session: Option<SessionId>) -> Vec<Resource> {
    let mut resources = vec![
        Resource::new(HOSTS_URI, "hosts")
            .with_description("The hosts Nomos can run commands on.")
            .with_mime_type("application/json"),
    ];
    if let Some(id) = session {
        resources.push(
            Resource::new(plan_uri(id), "plan")
                .with_description("The current plan of this session, with each step's status.")
                .with_mime_type("application/json"),
        );
    }
    resources
}

/// The resource templates: any session's plan.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(
            format!("{PLAN_PREFIX}{{session_id}}{PLAN_SUFFIX}"),
            "session-plan",
        )
        .with_description("The current plan of a Nomos session.")
        .with_mime_type("application/json"),
    ]
}

/// Reads one resource.
pub async fn read(agent: &Agent, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let value = if uri == HOSTS_URI {
        let hosts: Vec<_> = agent
            .executor()
            .hosts()
            .into_iter()
            .map(|h| json!({ "slug": h.slug, "address": h.address, "tags": h.tags }))
            .collect();
        json!({ "hosts": hosts })
    } else if let Some(id) = uri
        .strip_prefix(PLAN_PREFIX)
        .and_then(|rest| rest.strip_suffix(PLAN_SUFFIX))
    {
        let id = Uuid::parse_str(id).map_err(|_| {
            ErrorData::invalid_params(
                format!("`{id}` in {uri} is not a session id (a UUID)"),
                None,
            )
        })?;
        plan(agent, SessionId(id), uri).await?
    } else {
        return Err(ErrorData::resource_not_found(
            format!(
                "no resource at {uri}; there are {HOSTS_URI} and {PLAN_PREFIX}{{session_id}}{PLAN_SUFFIX}"
            ),
            None,
        ));
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(value.to_string(), uri).with_mime_type("application/json"),
    ]))
}

async fn plan(agent: &Agent, id: SessionId, uri: &str) -> Result<serde_json::Value, ErrorData> {
    let snapshot = match agent.session(id).await {
        Ok(snapshot) => snapshot,
        Err(nomos_agent::AgentError::SessionNotFound(_)) => {
            return Err(ErrorData::resource_not_found(
                format!("no session at {uri}"),
                None,
            ));
        }
        Err(error) => return Err(ErrorData::internal_error(error.to_string(), None)),
    };
    let generation = snapshot.record.plan_generation;
    let steps: Vec<_> = snapshot
        .steps
        .iter()
        .filter(|s| s.generation == generation)
        .map(|s| {
            json!({
                "seq": s.seq,
                "title": s.title,
                "detail": s.detail,
                "status": s.status.as_str(),
                "note": s.note,
            })
        })
        .collect();
    Ok(json!({
        "session_id": id.to_string(),
        "status": snapshot.record.status.as_str(),
        "goal": snapshot.record.goal,
        "generation": generation,
        "steps": steps,
    }))
}
