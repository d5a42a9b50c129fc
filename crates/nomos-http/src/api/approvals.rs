//! Executions and approvals: list them, and decide an approval by its id (GATE-7, EXEC-4).

use axum::Extension;
use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use nomos_core::ports::store::ExecutionFilter;
use nomos_core::{ApprovalId, ExecutionStatus, SessionId};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::auth::Principal;
use crate::dto::{ApprovalDto, DecideRequest, DecisionResult, ExecutionDto};
use crate::error::{ApiError, AppJson, AppPath, AppQuery};
use crate::state::AppState;

/// The routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/executions", get(executions))
        .route("/api/sessions/{id}/executions", get(session_executions))
        .route("/api/approvals", get(pending))
        .route("/api/approvals/{id}/decision", post(decide))
}

/// Query of `GET /api/executions`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ExecutionQuery {
    /// Only these statuses, comma-separated (`running,pending_approval`).
    pub status: Option<String>,
    /// Only this session's.
    pub session_id: Option<Uuid>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<u32>,
}

/// Query of `GET /api/approvals`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ApprovalQuery {
    /// Only this session's.
    pub session_id: Option<Uuid>,
}

/// Lists executions, oldest first.
#[utoipa::path(get, path = "/api/executions", tag = "executions", params(ExecutionQuery),
    responses((status = 200, body = [ExecutionDto]), (status = 400, body = crate::error::ErrorBody)))]
pub async fn executions(
    State(state): State<AppState>,
    AppQuery(query): AppQuery<ExecutionQuery>,
) -> Result<AppJson<Vec<ExecutionDto>>, ApiError> {
    let mut statuses = Vec::new();
    for part in query.status.iter().flat_map(|s| s.split(',')) {
        if part.trim().is_empty() {
            continue;
        }
        let status: ExecutionStatus = part
            .trim()
            .parse()
            .map_err(|e| ApiError::BadQuery(format!("status: {e}")))?;
        statuses.push(status);
    }
    let limit = query.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::BadQuery(format!(
            "limit: must be between 1 and 1000, got {limit}"
        )));
    }
    let filter = ExecutionFilter {
        statuses,
        session: query.session_id.map(SessionId),
        limit: Some(limit),
        ..ExecutionFilter::default()
    };
    let executions = state.agent.store().list_executions(&filter).await?;
    Ok(AppJson(executions.iter().map(ExecutionDto::from).collect()))
}

/// The executions of one session.
#[utoipa::path(get, path = "/api/sessions/{id}/executions", tag = "executions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 200, body = [ExecutionDto]), (status = 404, body = crate::error::ErrorBody)))]
pub async fn session_executions(
    State(state): State<AppState>,
    AppPath(id): AppPath<Uuid>,
) -> Result<AppJson<Vec<ExecutionDto>>, ApiError> {
    let snapshot = state.agent.session(SessionId(id)).await?;
    Ok(AppJson(
        snapshot.executions.iter().map(ExecutionDto::from).collect(),
    ))
}

/// Pending approvals, of one session or all, oldest first, each with its execution's
/// `reason` and plan step.
#[utoipa::path(get, path = "/api/approvals", tag = "approvals", params(ApprovalQuery),
    responses((status = 200, body = [ApprovalDto])))]
pub async fn pending(
    State(state): State<AppState>,
    AppQuery(query): AppQuery<ApprovalQuery>,
) -> Result<AppJson<Vec<ApprovalDto>>, ApiError> {
    let store = state.agent.store();
    let approvals = store
        .pending_approvals(query.session_id.map(SessionId))
        .await?;
    let mut out = Vec::with_capacity(approvals.len());
    for approval in &approvals {
        // Pending approvals are few; one lookup each keeps the store port unchanged. An
        // execution that is gone was deleted with its session since the first read: so is
        // the approval, and it is left out.
        if let Some(execution) = store.execution(approval.execution_id).await? {
            out.push(ApprovalDto::join(approval, &execution));
        }
    }
    Ok(AppJson(out))
}

/// Decides an approval by its id (GATE-7): an operator only; a decision on an approval
/// that is not pending (decided, expired, void) is a 409. When approved, the command runs
/// and the session resumes with the outcome in the background (EXEC-4).
#[utoipa::path(post, path = "/api/approvals/{id}/decision", tag = "approvals",
    params(("id" = Uuid, Path, description = "approval id")), request_body = DecideRequest,
    responses((status = 200, body = DecisionResult), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn decide(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    AppPath(id): AppPath<Uuid>,
    AppJson(body): AppJson<DecideRequest>,
) -> Result<AppJson<DecisionResult>, ApiError> {
    // The auth middleware already refuses viewers on every write; this keeps the rule
    // next to the action it guards.
    if principal.role != crate::auth::Role::Operator {
        return Err(ApiError::Forbidden(format!(
            "{} may not decide approvals; this needs the operator role",
            principal.name
        )));
    }
    let (report, handle) = state
        .agent
        .spawn_decide(ApprovalId(id), body.decision.into(), Some(&principal.name))
        .await?;
    state.turns.track(handle);
    Ok(AppJson(DecisionResult {
        session_id: report.session_id.0,
        execution_id: report.execution_id.0,
        dispatched: report.dispatched,
    }))
}
