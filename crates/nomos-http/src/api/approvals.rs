//! Executions and approvals: list them, and decide an approval by its id (GATE-7, EXEC-4).

use axum::Extension;
use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use nomos_core::ports::store::{ExecutionCursor, ExecutionFilter, ListOrder, Store};
use nomos_core::{ApprovalId, ExecutionId, ExecutionStatus, SessionId, Timestamp};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
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
    /// `asc` (oldest first, the default) or `desc` (newest first).
    pub order: Option<Order>,
    /// Only executions older than this cursor: an execution id (the last one of the
    /// previous page) or an RFC 3339 time (those requested strictly before it).
    pub before: Option<String>,
}

/// The order of a list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Oldest first.
    #[default]
    Asc,
    /// Newest first.
    Desc,
}

/// The default page size of `GET /api/executions`.
pub const EXECUTIONS_DEFAULT_LIMIT: u32 = 100;

/// The largest page `GET /api/executions` returns.
pub const EXECUTIONS_MAX_LIMIT: u32 = 1000;

/// Where a page of executions ends: before an execution (its position in
/// `(created_at, id)` order), or before a request time.
#[derive(Clone, Copy, Debug)]
enum Cursor {
    Execution(ExecutionCursor),
    Time(Timestamp),
}

/// Query of `GET /api/approvals`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ApprovalQuery {
    /// Only this session's.
    pub session_id: Option<Uuid>,
}

/// Lists executions, oldest first or (`order=desc`) newest first, in pages: `before` takes
/// the last execution id of the previous page (or a time).
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
    let limit = query.limit.unwrap_or(EXECUTIONS_DEFAULT_LIMIT);
    if !(1..=EXECUTIONS_MAX_LIMIT).contains(&limit) {
        return Err(ApiError::BadQuery(format!(
            "limit: must be between 1 and {EXECUTIONS_MAX_LIMIT}, got {limit}"
        )));
    }
    let store = state.agent.store();
    let cursor = match query.before.as_deref().map(str::trim) {
        None => None,
        Some(text) => Some(cursor(store.as_ref(), text).await?),
    };
    let filter = ExecutionFilter {
        statuses,
        session: query.session_id.map(SessionId),
        created_before: match cursor {
            Some(Cursor::Time(time)) => Some(time),
            _ => None,
        },
        before: match cursor {
            Some(Cursor::Execution(position)) => Some(position),
            _ => None,
        },
        order: match query.order.unwrap_or_default() {
            Order::Asc => ListOrder::OldestFirst,
            Order::Desc => ListOrder::NewestFirst,
        },
        limit: Some(limit),
        ..ExecutionFilter::default()
    };
    let executions = store.list_executions(&filter).await?;
    let page: Vec<ExecutionDto> = executions.iter().map(ExecutionDto::from).collect();
    Ok(AppJson(page))
}

async fn cursor(store: &dyn Store, text: &str) -> Result<Cursor, ApiError> {
    if let Ok(id) = text.parse::<Uuid>() {
        let Some(execution) = store.execution(ExecutionId(id)).await? else {
            return Err(ApiError::BadQuery(format!(
                "before: no execution has the id {id}"
            )));
        };
        return Ok(Cursor::Execution(ExecutionCursor::of(&execution)));
    }
    match serde_json::from_value::<Timestamp>(serde_json::Value::String(text.to_owned())) {
        Ok(created_at) => Ok(Cursor::Time(created_at)),
        Err(_) => Err(ApiError::BadQuery(format!(
            "before: expected an execution id or an RFC 3339 time such as \
             2026-11-30T09:00:00Z, got {text:?}"
        ))),
    }
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
    headers: axum::http::HeaderMap,
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
    // AUDIT-1: who decided and the request that carried it.
    let decider = principal.decider(&headers);
    let (report, handle) = state
        .agent
        .spawn_decide_with(
            ApprovalId(id),
            body.decision.into(),
            Some(&decider),
            body.reason.as_deref(),
        )
        .await?;
    state.turns.track(report.session_id, handle);
    Ok(AppJson(DecisionResult {
        session_id: report.session_id.0,
        execution_id: report.execution_id.0,
        dispatched: report.dispatched,
        awaiting: report.awaiting.map(|a| crate::dto::AwaitingDto {
            approvals: a.approvals,
            required: a.required,
        }),
    }))
}
