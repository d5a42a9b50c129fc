//! `/mcp` in a build without the `mcp` feature: every request gets a 404 whose message
//! names the feature, so an MCP client's operator learns why and what to rebuild.

use axum::Router;
use axum::routing::any;

use crate::error::ApiError;
use crate::state::AppState;

use super::MCP_PATH;

/// What `/mcp` answers when MCP is not built in.
pub const NOT_BUILT: &str = "this server was built without MCP: rebuild it with the `mcp` feature (cargo run --release -p nomos-server --features mcp)";

/// The `/mcp` route that says MCP is not built in.
pub fn router(_state: &AppState) -> Router<AppState> {
    Router::new().route(MCP_PATH, any(not_built))
}

async fn not_built() -> ApiError {
    ApiError::NotFound(NOT_BUILT.to_owned())
}
