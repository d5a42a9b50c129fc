//! The server itself: `/healthz` (liveness), `/readyz` (database reachable, migrated and
//! taking writes),
//! `/metrics` (Prometheus text), `/api/info` and `/api/openapi.json`.
//!
//! `/api/info` is public: the login page reads the auth mode (and the OIDC client settings)
//! from it before anyone signs in, so it carries nothing secret.

use std::sync::atomic::Ordering;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::dto::{InfoDto, OidcClientDto, ReadyDto};
use crate::error::{ApiError, AppJson};
use crate::metrics::Gauges;
use crate::state::AppState;

/// The notice shown while the scripted demo model answers.
pub const DEMO_NOTICE: &str = "Demo mode: no model endpoint is configured, so a scripted demo model answers. Set NOMOS_LLM_BASE_URL and NOMOS_LLM_MODEL (or [llm] in nomos.toml) to use a real model.";

/// Routes that need no token.
pub fn public_router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/api/info", get(info))
}

/// Routes that need a token.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/api/openapi.json", get(openapi))
}

/// Liveness: the process serves requests.
#[utoipa::path(get, path = "/healthz", tag = "system", security(()), responses((status = 200, body = String)))]
pub async fn healthz() -> &'static str {
    "ok"
}

/// Readiness: the database is reachable and migrated, and takes writes (EXEC-9: the last
/// write succeeded recently, or a probe write succeeds now).
#[utoipa::path(get, path = "/readyz", tag = "system", security(()),
    responses((status = 200, body = ReadyDto), (status = 503, body = ReadyDto)))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, AppJson<ReadyDto>) {
    if let Err(error) = state.agent.store().check().await {
        tracing::warn!(%error, "not ready");
        return not_ready("the database is unreachable or not migrated");
    }
    if let Err(error) = state.agent.check_writes().await {
        tracing::warn!(%error, "not ready: writes fail");
        return not_ready(
            "writes to the database fail (a full disk, an I/O error or a lost connection); see the server log",
        );
    }
    (
        StatusCode::OK,
        AppJson(ReadyDto {
            status: "ready".into(),
            reason: None,
        }),
    )
}

fn not_ready(reason: &str) -> (StatusCode, AppJson<ReadyDto>) {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        AppJson(ReadyDto {
            status: "not_ready".into(),
            reason: Some(reason.into()),
        }),
    )
}

/// Prometheus metrics.
#[utoipa::path(get, path = "/metrics", tag = "system",
    responses((status = 200, body = String, content_type = "text/plain")))]
pub async fn metrics(State(state): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    let approvals_pending = state.agent.store().pending_approvals(None).await?.len() as u64;
    let gauges = Gauges {
        approvals_pending,
        sse_subscribers: state.streams.load(Ordering::Relaxed),
        turns_running: state.turns.running(),
    };
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.render(gauges),
    ))
}

/// The version, the model, whether it is the demo model, the auth mode and, with OIDC, the
/// public client settings the login page signs in with. Needs no token; reveals no secret.
#[utoipa::path(get, path = "/api/info", tag = "system", security(()),
    responses((status = 200, body = InfoDto)))]
pub async fn info(State(state): State<AppState>) -> AppJson<InfoDto> {
    AppJson(InfoDto {
        version: state.info.version.clone(),
        model: state.info.model.clone(),
        demo: state.info.demo,
        notice: if state.info.demo {
            Some(DEMO_NOTICE.to_owned())
        } else {
            None
        },
        auth: state.auth_mode(),
        oidc: state.auth.oidc_client().map(OidcClientDto::from),
    })
}

/// This API's OpenAPI document.
#[utoipa::path(get, path = "/api/openapi.json", tag = "system",
    responses((status = 200, body = Object)))]
pub async fn openapi() -> impl IntoResponse {
    AppJson(crate::openapi::document())
}
