//! The Nomos HTTP API as a library: an axum [`Router`] over a [`nomos_agent::Agent`].
//!
//! # Brief overview
//!
//! * [`app`] builds the router from an [`AppState`]; the binary only binds and serves it.
//! * REST resources under `/api` live in [`api`], one module each; live events (SSE) in
//!   [`events`], whose frames carry [`event_dto::EventRecordDto`]; the wire types in [`dto`];
//!   every failure is an [`ApiError`].
//! * [`auth`] and [`oidc`] authenticate bearer tokens; [`metrics`] keeps the Prometheus
//!   counters; [`static_ui`] serves the embedded web UI.
//! * [`mcp`] mounts the MCP server of `nomos-mcp` at `/mcp` (MCP-1; feature `mcp`).
//! * [`openapi::document`] is the OpenAPI description, generated from the handlers.
//!
//! Public without a token: `/healthz`, `/readyz`, `/api/info` (what the login page needs,
//! nothing secret) and the static UI. Everything else needs a bearer token unless auth is
//! [`Auth::Disabled`].

#![deny(missing_docs)]

pub mod api;
pub mod auth;
pub mod authz;
pub mod channels;
pub mod conn;
pub mod dto;
pub mod error;
pub mod event_dto;
pub mod events;
pub mod mcp;
pub mod metrics;
pub mod oidc;
pub mod openapi;
pub mod state;
pub mod static_ui;
pub mod tokens;
pub mod workers;

use std::any::Any;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

pub use auth::{Auth, AuthMode, Principal, Role, StaticToken};
pub use conn::JsonErrorListener;
pub use error::{ApiError, AppJson};
pub use metrics::{MeteredModel, Metrics};
pub use oidc::{Oidc, OidcClient, OidcConfig};
pub use state::{AppState, ServerInfo};

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 256 * 1024;

/// How long a (non-streaming) request may take before it gets a 408.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The request-id header, set when missing and echoed on the response.
pub const REQUEST_ID: &str = "x-request-id";

/// Builds the whole router.
pub fn app(state: AppState) -> Router {
    let auth = middleware::from_fn_with_state(state.auth.clone(), auth::require_auth);
    // AUTHZ-1: the inner layer, so it runs after authentication.
    let authz = middleware::from_fn_with_state(state.clone(), authz::authorize);
    let timed = Router::new()
        .merge(api::sessions::router())
        .merge(api::approvals::router())
        .merge(api::control::router())
        .merge(api::safety::router())
        .merge(api::knowledge::router())
        .merge(api::hosts::router())
        .merge(api::system::router())
        .merge(api::tokens::router())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        .route_layer(authz.clone())
        .route_layer(auth.clone());
    // Event streams live as long as the client wants: no timeout.
    let streams = events::router().route_layer(authz).route_layer(auth);
    let mcp = mcp::router(&state);
    let request_id = HeaderName::from_static(REQUEST_ID);
    Router::new()
        .merge(api::system::public_router())
        .merge(timed)
        .merge(streams)
        .merge(mcp)
        .fallback(static_ui::serve)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
                .layer(TraceLayer::new_for_http())
                .layer(PropagateRequestIdLayer::new(request_id))
                .layer(CatchPanicLayer::custom(panic_response))
                .layer(DefaultBodyLimit::max(BODY_LIMIT)),
        )
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

fn panic_response(_panic: Box<dyn Any + Send + 'static>) -> Response {
    ApiError::Internal("a handler panicked".into()).into_response()
}
