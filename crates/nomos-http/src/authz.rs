//! Who may do what over HTTP (AUTHZ-1): one table, [`ROUTES`], names every authenticated
//! route with the [`Need`] it has and the action it takes, and [`authorize`] enforces it.
//!
//! Three roles: an operator decides, a viewer reads, and an agent (an MCP client or other
//! automation) calls tools and reads only the sessions it created; it never assents,
//! decides, revokes, stops a turn, posts an operator message or reads another principal's
//! session or the grants. A route missing from the table is refused to every role, so a new
//! route does nothing until it is listed; the table test walks the table and the OpenAPI
//! document (generated from the handlers) and checks they name the same routes. Every
//! refusal is a 403 naming the role and the action, and one `nomos::audit` line.

use axum::extract::{MatchedPath, OriginalUri, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use nomos_core::SessionId;
use uuid::Uuid;

use crate::auth::{Principal, Role};
use crate::error::ApiError;
use crate::state::AppState;

/// What a route needs of its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Operators only: a decision or a change.
    Operate,
    /// Operators only, reads included: who may sign in (the named tokens of the Admin
    /// page).
    Administer,
    /// Operators and viewers: reads across every principal's sessions.
    ReadAll,
    /// Operators and viewers; an agent only for a session it created (the `{id}` in the
    /// path).
    ReadOwn,
    /// Every role; the handler shows an agent only the sessions it created.
    ListOwn,
    /// Every role: the context an agent's tools read too (inventory, knowledge, the API's
    /// own description).
    Shared,
}

/// One route of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteRule {
    /// Its method.
    pub method: Method,
    /// Its path as the router spells it (`/api/sessions/{id}`).
    pub path: &'static str,
    /// What it needs.
    pub need: Need,
    /// What it does, as a refusal names it ("decide an approval").
    pub action: &'static str,
}

const fn rule(method: Method, path: &'static str, need: Need, action: &'static str) -> RouteRule {
    RouteRule {
        method,
        path,
        need,
        action,
    }
}

/// Every authenticated route (the public ones, `/healthz`, `/readyz`, `/api/info` and the
/// UI, and `/mcp`, which has its own check, are not here).
pub const ROUTES: &[RouteRule] = &[
    // Sessions.
    rule(
        Method::POST,
        "/api/sessions",
        Need::Operate,
        "create a session",
    ),
    rule(Method::GET, "/api/sessions", Need::ListOwn, "list sessions"),
    rule(
        Method::GET,
        "/api/sessions/{id}",
        Need::ReadOwn,
        "read a session",
    ),
    rule(
        Method::DELETE,
        "/api/sessions/{id}",
        Need::Operate,
        "delete a session",
    ),
    rule(
        Method::POST,
        "/api/sessions/{id}/messages",
        Need::Operate,
        "post an operator message",
    ),
    rule(
        Method::POST,
        "/api/sessions/{id}/resume",
        Need::Operate,
        "resume a session",
    ),
    rule(
        Method::GET,
        "/api/sessions/{id}/plan",
        Need::ReadOwn,
        "read a session's plan",
    ),
    rule(
        Method::GET,
        "/api/sessions/{id}/activity",
        Need::ReadOwn,
        "read a session's activity",
    ),
    rule(
        Method::GET,
        "/api/sessions/{id}/transcript",
        Need::ReadOwn,
        "read a session's transcript",
    ),
    rule(
        Method::GET,
        "/api/sessions/{id}/export",
        Need::ReadOwn,
        "export a session",
    ),
    // Executions and approvals.
    rule(
        Method::GET,
        "/api/executions",
        Need::ReadAll,
        "list every session's executions",
    ),
    rule(
        Method::GET,
        "/api/sessions/{id}/executions",
        Need::ReadOwn,
        "read a session's executions",
    ),
    rule(
        Method::GET,
        "/api/approvals",
        Need::ReadAll,
        "list every session's approvals",
    ),
    rule(
        Method::POST,
        "/api/approvals/{id}/decision",
        Need::Operate,
        "decide an approval",
    ),
    // The operator's controls.
    rule(
        Method::POST,
        "/api/sessions/{id}/stop",
        Need::Operate,
        "stop a turn",
    ),
    rule(
        Method::POST,
        "/api/sessions/{id}/assent/revoke",
        Need::Operate,
        "revoke an assent",
    ),
    rule(
        Method::POST,
        "/api/sessions/{id}/plan/decision",
        Need::Operate,
        "decide a plan",
    ),
    rule(
        Method::POST,
        "/api/approvals/{id}/cancel",
        Need::Operate,
        "cancel an approval",
    ),
    rule(
        Method::POST,
        "/api/sessions/{id}/executions/{execution_id}/restore",
        Need::Operate,
        "restore a backup",
    ),
    rule(
        Method::POST,
        "/api/sessions/{id}/executions/{execution_id}/rollback",
        Need::Operate,
        "roll a guest back to a snapshot",
    ),
    rule(Method::GET, "/api/grants", Need::ReadAll, "read the grants"),
    rule(
        Method::GET,
        "/api/sessions/{id}/approvals",
        Need::ReadOwn,
        "read a session's approvals",
    ),
    rule(
        Method::POST,
        "/api/sessions/{id}/close",
        Need::Operate,
        "close a task",
    ),
    rule(
        Method::POST,
        "/api/sessions/{id}/archive",
        Need::Operate,
        "archive a session",
    ),
    rule(
        Method::POST,
        "/api/sessions/{id}/unarchive",
        Need::Operate,
        "unarchive a session",
    ),
    // Knowledge and hosts.
    rule(Method::GET, "/api/entities", Need::Shared, "list entities"),
    rule(
        Method::GET,
        "/api/entities/{slug}",
        Need::Shared,
        "read an entity",
    ),
    rule(
        Method::GET,
        "/api/entities/{slug}/relations",
        Need::Shared,
        "read relations",
    ),
    rule(
        Method::GET,
        "/api/knowledge",
        Need::Shared,
        "search knowledge",
    ),
    rule(Method::GET, "/api/hosts", Need::Shared, "list hosts"),
    rule(
        Method::POST,
        "/api/hosts/{slug}/reachability",
        Need::Operate,
        "check a host's reachability",
    ),
    rule(
        Method::POST,
        "/api/hosts/{slug}/discover",
        Need::Operate,
        "discover guests",
    ),
    // Named tokens (the admin page).
    rule(Method::GET, "/api/tokens", Need::Administer, "list tokens"),
    rule(
        Method::POST,
        "/api/tokens",
        Need::Administer,
        "create a token",
    ),
    rule(
        Method::DELETE,
        "/api/tokens/{name}",
        Need::Administer,
        "revoke a token",
    ),
    // Event streams.
    rule(
        Method::GET,
        "/api/sessions/{id}/events",
        Need::ReadOwn,
        "follow a session's events",
    ),
    rule(
        Method::GET,
        "/api/events",
        Need::ReadAll,
        "follow every session's events",
    ),
    // The system.
    rule(Method::GET, "/metrics", Need::ReadAll, "read the metrics"),
    rule(
        Method::GET,
        "/api/openapi.json",
        Need::Shared,
        "read the API description",
    ),
];

/// The table's rule for a request's method and matched path (`HEAD` is `GET`'s).
pub fn rule_for(method: &Method, path: &str) -> Option<&'static RouteRule> {
    let method = if method == Method::HEAD {
        &Method::GET
    } else {
        method
    };
    ROUTES
        .iter()
        .find(|rule| rule.method == *method && rule.path == path)
}

/// Whether `role` may take a route that needs `need` at all (an agent's [`Need::ReadOwn`]
/// still depends on whose session it is).
pub fn allows(role: Role, need: Need) -> bool {
    match (role, need) {
        (_, Need::Shared | Need::ListOwn) => true,
        (Role::Operator, _) => true,
        (Role::Viewer, Need::Operate | Need::Administer) => false,
        (Role::Viewer, _) => true,
        (Role::Agent, Need::ReadOwn) => true,
        (Role::Agent, Need::Operate | Need::Administer | Need::ReadAll) => false,
    }
}

/// The refusal of `action` to `principal`, logged on `nomos::audit`.
pub fn refuse(principal: &Principal, action: &str, method: &Method, path: &str) -> ApiError {
    let message = match principal.role {
        Role::Viewer => format!(
            "{} is a viewer (read-only); to {action} needs the operator role",
            principal.name
        ),
        Role::Agent => format!(
            "{} has the agent role, which may not {action}; an operator does that in Nomos",
            principal.name
        ),
        Role::Operator => format!("{} may not {action}", principal.name),
    };
    tracing::warn!(
        target: "nomos::audit",
        principal = %principal.name,
        role = principal.role.as_str(),
        action,
        method = %method,
        path,
        "refused"
    );
    ApiError::Forbidden(message)
}

/// The middleware: looks the request up in [`ROUTES`] and refuses what the caller's role
/// may not do. Runs after [`crate::auth::require_auth`], which put the [`Principal`] there.
pub async fn authorize(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let Some(principal) = request.extensions().get::<Principal>().cloned() else {
        return Err(ApiError::Internal(
            "authorization ran before authentication".into(),
        ));
    };
    let method = request.method().clone();
    let path = route_pattern(&request);
    let Some(rule) = rule_for(&method, &path) else {
        tracing::error!(%method, path, "a route has no access rule; refused to every role");
        return Err(refuse(
            &principal,
            &format!("{method} {path}"),
            &method,
            &path,
        ));
    };
    if !allows(principal.role, rule.need) {
        return Err(refuse(&principal, rule.action, &method, &path));
    }
    if principal.role == Role::Agent && rule.need == Need::ReadOwn {
        let owned = match session_in(request.uri().path()) {
            Some(id) => owner_of(&state, id).await?.as_deref() == Some(principal.name.as_str()),
            None => false,
        };
        if !owned {
            let action = format!("{}: it is another principal's session", rule.action);
            return Err(refuse(&principal, &action, &method, &path));
        }
    }
    Ok(next.run(request).await)
}

/// The pattern of the route the request matched, as this crate's router declares it.
/// [`MatchedPath`] names the whole pattern the application matched, with the prefix an
/// embedding application nested the router under (`/ops/api/sessions`); the request's own
/// path inside the nested router has it stripped, so the prefix is what the original path
/// has before it.
fn route_pattern(request: &Request) -> String {
    let matched = request
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str)
        .unwrap_or_default();
    let prefix = request
        .extensions()
        .get::<OriginalUri>()
        .and_then(|original| original.path().strip_suffix(request.uri().path()))
        .unwrap_or_default();
    matched.strip_prefix(prefix).unwrap_or(matched).to_owned()
}

/// The session id of a `/api/sessions/{id}/...` path.
fn session_in(path: &str) -> Option<SessionId> {
    let rest = path.strip_prefix("/api/sessions/")?;
    let id = rest.split('/').next()?;
    Uuid::parse_str(id).ok().map(SessionId)
}

/// The principal that created a session (none for a session that does not exist).
async fn owner_of(state: &AppState, id: SessionId) -> Result<Option<String>, ApiError> {
    let snapshot = state.agent.store().load_session(id).await?;
    Ok(snapshot.and_then(|s| s.record.owner))
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: AUTHZ-1
    #[test]
    fn an_agent_may_read_only_what_is_shared_or_its_own() {
        for rule in ROUTES {
            let agent = allows(Role::Agent, rule.need);
            match rule.need {
                Need::Operate | Need::Administer | Need::ReadAll => assert!(!agent, "{rule:?}"),
                Need::ReadOwn | Need::ListOwn | Need::Shared => assert!(agent, "{rule:?}"),
            }
            assert!(allows(Role::Operator, rule.need), "{rule:?}");
            assert_eq!(
                allows(Role::Viewer, rule.need),
                !matches!(rule.need, Need::Operate | Need::Administer),
                "{rule:?}"
            );
            if rule.need == Need::Operate {
                assert!(
                    rule.method != Method::GET,
                    "a read that needs to operate: {rule:?}"
                );
            }
        }
    }

    #[test]
    fn each_route_is_listed_once_and_head_reads_like_get() {
        for (idx, rule) in ROUTES.iter().enumerate() {
            assert_eq!(
                ROUTES
                    .iter()
                    .position(|r| r.method == rule.method && r.path == rule.path),
                Some(idx),
                "{rule:?} is listed twice"
            );
        }
        assert_eq!(
            rule_for(&Method::HEAD, "/api/sessions/{id}").map(|r| r.need),
            Some(Need::ReadOwn)
        );
        assert_eq!(rule_for(&Method::PUT, "/api/sessions"), None);
    }

    #[test]
    fn the_session_of_a_path_is_its_third_segment() {
        let id = Uuid::new_v4();
        assert_eq!(
            session_in(&format!("/api/sessions/{id}/plan")),
            Some(SessionId(id))
        );
        assert_eq!(
            session_in(&format!("/api/sessions/{id}")),
            Some(SessionId(id))
        );
        assert_eq!(session_in("/api/sessions/not-a-uuid"), None);
    }
}
