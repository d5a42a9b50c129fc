//! Read-only context for the client: the host inventory and a session's plan, of the
//! sessions the client may reach only (AUTHZ-1, MCP-2 rev. 3).

use nomos_agent::{Agent, AgentError};
use nomos_core::SessionId;
use nomos_core::ports::store::{ArchiveFilter, ListOrder, SessionFilter};
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

/// Which sessions a client reaches (MCP-2 rev. 3: only the sessions it made).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// The sessions this principal created (a client over HTTP, by its token).
    Principal(String),
    /// Only this MCP session's (stdio, where no token names a principal).
    Session(Option<SessionId>),
}

impl Reach {
    /// Whether the client reaches session `id`, created by `owner`.
    pub fn reaches(&self, id: SessionId, owner: Option<&str>) -> bool {
        match self {
            Reach::Principal(name) => owner == Some(name.as_str()),
            Reach::Session(session) => *session == Some(id),
        }
    }
}

/// Most sessions `resources/list` lists.
const LISTED_SESSIONS: u32 = 200;

/// The resources listed: the inventory, and the plan of each session the client reaches
/// (this MCP session's first, once there is one).
pub async fn list(
    agent: &Agent,
    reach: &Reach,
    current: Option<SessionId>,
) -> Result<Vec<Resource>, AgentError> {
    let mut resources = vec![
        Resource::new(HOSTS_URI, "hosts")
            .with_description("The hosts Nomos can run commands on.")
            .with_mime_type("application/json"),
    ];
    let mut sessions: Vec<SessionId> = current.into_iter().collect();
    if let Reach::Principal(name) = reach {
        let filter = SessionFilter {
            owner: Some(name.clone()),
            limit: Some(LISTED_SESSIONS),
            order: ListOrder::NewestFirst,
            archived: ArchiveFilter::Listed,
            ..SessionFilter::default()
        };
        for record in agent.store().list_sessions(&filter).await? {
            if !sessions.contains(&record.id) {
                sessions.push(record.id);
            }
        }
    }
    for id in sessions {
        let description = if Some(id) == current {
            "The current plan of this session, with each step's status."
        } else {
            "The current plan of another session this client made."
        };
        resources.push(
            Resource::new(plan_uri(id), "plan")
                .with_description(description)
                .with_mime_type("application/json"),
        );
    }
    Ok(resources)
}

/// The resource templates: the plan of a session the client made.
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

/// Reads one resource; a session the client does not reach is not found (MCP-2).
pub async fn read(
    agent: &Agent,
    reach: &Reach,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
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
        plan(agent, reach, SessionId(id), uri).await?
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

async fn plan(
    agent: &Agent,
    reach: &Reach,
    id: SessionId,
    uri: &str,
) -> Result<serde_json::Value, ErrorData> {
    let snapshot = match agent.session(id).await {
        Ok(snapshot) if reach.reaches(id, snapshot.record.owner.as_deref()) => snapshot,
        Ok(_) => {
            tracing::warn!(target: "nomos::audit", session = %id, ?reach, "refused: an MCP client read another principal's session");
            return Err(ErrorData::resource_not_found(
                format!(
                    "no session at {uri} that this client made; a client reads only its own sessions"
                ),
                None,
            ));
        }
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
