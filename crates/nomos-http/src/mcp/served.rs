//! `/mcp` served (feature `mcp`): Nomos's tools over MCP's streamable HTTP transport
//! (MCP-1), behind the bearer auth of the API. Unlike the REST routes, a viewer may POST
//! here (every MCP message is a POST): its role travels with the request and the agent
//! refuses what it may not do.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use nomos_agent::Access;
use nomos_mcp::{Caller, HostCheck, HttpOptions};

use crate::auth::{Auth, AuthMode, Role, bearer};
use crate::error::ApiError;
use crate::state::AppState;

use super::MCP_PATH;

/// The MCP route, authenticated (no request timeout: streams and waits last longer).
pub fn router(state: &AppState) -> Router<AppState> {
    let hosts = match state.auth_mode() {
        AuthMode::None => HostCheck::Loopback,
        AuthMode::Token | AuthMode::Oidc => HostCheck::Any,
    };
    let options = HttpOptions {
        hosts,
        shutdown: state.shutdown.clone(),
    };
    let service = nomos_mcp::http_service(state.agent.clone(), options);
    Router::new()
        .route_service(MCP_PATH, service)
        .route_layer(middleware::from_fn_with_state(
            state.auth.clone(),
            authenticate,
        ))
}

/// Authenticates the bearer token and hands the caller's access to the MCP server.
async fn authenticate(
    State(auth): State<Arc<Auth>>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let token = bearer(&request);
    let principal = auth.authenticate(token.as_deref()).await?;
    let access = match principal.role {
        // AUTHZ-1: an agent calls tools under the gates like an operator's client; no MCP
        // tool decides anything (MCP-2), and its resources reach only its own sessions.
        Role::Operator | Role::Agent => Access::Operate,
        Role::Viewer => Access::ReadOnly,
    };
    request.extensions_mut().insert(Caller {
        name: principal.name.clone(),
        access,
    });
    request.extensions_mut().insert(principal);
    Ok(next.run(request).await)
}
