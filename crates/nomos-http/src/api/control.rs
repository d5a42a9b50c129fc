//! The operator's controls (CONTROL-1..3, 5, 6): stop a running turn, revoke an assent
//! window, cancel a pending approval, decide the waiting plan (GATE-4), list what is
//! granted or waiting, close a denied or stuck task, and archive a session off the board.
//! Every control needs the operator role and records who used it and the request id
//! (AUDIT-1).

use axum::Extension;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use nomos_agent::AgentError;
use nomos_core::plan_digest::PlanDigest;
use nomos_core::record::Decider;
use nomos_core::session::PlanDecisionError;
use nomos_core::{ApprovalId, SessionId};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::{Principal, Role};
use crate::dto::{ApprovalDto, PlanConflict, PlanDecided, PlanDecisionRequest, SessionDto};
use crate::error::{ApiError, AppJson, AppPath, ErrorDetail};
use crate::state::AppState;

/// The routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/sessions/{id}/stop", post(stop))
        .route("/api/sessions/{id}/assent/revoke", post(revoke_assent))
        .route("/api/sessions/{id}/plan/decision", post(decide_plan))
        .route("/api/approvals/{id}/cancel", post(cancel_approval))
        .route("/api/grants", get(grants))
        .route("/api/sessions/{id}/approvals", get(session_approvals))
        .route("/api/sessions/{id}/close", post(close))
        .route("/api/sessions/{id}/archive", post(archive))
        .route("/api/sessions/{id}/unarchive", post(unarchive))
}

/// How the operator closes a task (CONTROL-5): success is the model's to claim.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseOutcome {
    /// It failed (status `failed`).
    Failure,
    /// Part of it was done (status `partial`).
    Partial,
}

/// `POST /api/sessions/{id}/close`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseRequest {
    /// `failure` or `partial`.
    pub outcome: CloseOutcome,
    /// The operator's note (at most 2000 characters); the summary and the model read it.
    #[serde(default)]
    pub note: Option<String>,
}

/// The answer to a close.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Closed {
    /// The session.
    pub session_id: Uuid,
    /// The terminal status it ended in (`failed` or `partial`).
    pub status: String,
    /// How many pending approvals the close cancelled.
    pub cancelled_approvals: usize,
}

/// The answer to a stop: recorded; the turn ends with its `turn.done` a moment later.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StopAccepted {
    /// The session.
    pub session_id: Uuid,
    /// The executions that were running and are being stopped.
    pub stopping: Vec<Uuid>,
    /// The generation whose assent window the stop closed, if one was open.
    pub closed_generation: Option<u32>,
}

/// The answer to a revoke of an assent window.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Revoked {
    /// The session.
    pub session_id: Uuid,
    /// The plan generation the window covered.
    pub generation: u32,
}

/// The answer to a cancel of a pending approval.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Cancelled {
    /// The session.
    pub session_id: Uuid,
    /// The execution it guarded, now cancelled.
    pub execution_id: Uuid,
}

/// One open assent window (CONTROL-3).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WindowDto {
    /// The session.
    pub session_id: Uuid,
    /// The session's goal, if set.
    pub goal: Option<String>,
    /// The plan generation it covers.
    pub generation: u32,
    /// When the operator assented.
    pub opened_at: String,
    /// When it closes by itself.
    pub expires_at: String,
    /// AUDIT-1: who granted it.
    pub granted_by: Option<String>,
    /// AUDIT-1: the request that carried the assent.
    pub request_id: Option<String>,
}

/// What the operator has granted and what waits for the operator (CONTROL-3).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct GrantsDto {
    /// The time of the answer, for expiry countdowns.
    pub now: String,
    /// Open assent windows, oldest grant first.
    pub windows: Vec<WindowDto>,
    /// Pending approvals, oldest first.
    pub approvals: Vec<ApprovalDto>,
}

/// AUDIT-1: the principal and the request id of a control.
fn decider(principal: &Principal, headers: &HeaderMap, what: &str) -> Result<Decider, ApiError> {
    // The auth middleware already refuses viewers on every write; this keeps the rule
    // next to the action it guards.
    if principal.role != Role::Operator {
        return Err(ApiError::Forbidden(format!(
            "{} may not {what}; this needs the operator role",
            principal.name
        )));
    }
    Ok(principal.decider(headers))
}

/// CONTROL-1: stops the session's running turn: the model request is aborted, its
/// commands are stopped and cancelled, the assent window closes, and the turn ends with
/// one `turn.done` (error "stopped by the operator"). 409 when no turn runs.
#[utoipa::path(post, path = "/api/sessions/{id}/stop", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 202, body = StopAccepted), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn stop(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    AppPath(id): AppPath<Uuid>,
) -> Result<(StatusCode, AppJson<StopAccepted>), ApiError> {
    let by = decider(&principal, &headers, "stop a turn")?;
    let id = SessionId(id);
    state.agent.session(id).await?;
    let report = state.agent.stop_turn(id, Some(&by)).await?;
    Ok((
        StatusCode::ACCEPTED,
        AppJson(StopAccepted {
            session_id: report.session_id.0,
            stopping: report.running.iter().map(|e| e.0).collect(),
            closed_generation: report.closed_generation,
        }),
    ))
}

/// CONTROL-2: closes the session's open assent window before it expires. 409 when none
/// is open.
#[utoipa::path(post, path = "/api/sessions/{id}/assent/revoke", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 200, body = Revoked), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn revoke_assent(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    AppPath(id): AppPath<Uuid>,
) -> Result<AppJson<Revoked>, ApiError> {
    let by = decider(&principal, &headers, "revoke an assent")?;
    let generation = state.agent.revoke_assent(SessionId(id), Some(&by)).await?;
    Ok(AppJson(Revoked {
        session_id: id,
        generation,
    }))
}

/// GATE-4 (rev. 2): approves or rejects the session's waiting plan, naming the generation
/// the operator saw and (rev. 3) the digest of the plan as shown. Approve opens the assent
/// window as chat assent does; reject closes the generation so nothing of it runs. Either
/// starts a turn in which the model reads the decision. 409, saying why, when that
/// generation does not wait (already approved, rejected, finished, or the session ended);
/// 409 with the current plan (`PlanConflict`) when the generation is stale or the digest
/// is missing or not the current plan's (it was proposed again since it was shown); 403
/// for a viewer. AUTHZ-3: an approval short of the distinct operators the plan needs is
/// 202 with `awaiting` and starts no turn; the same operator twice is a 403.
#[utoipa::path(post, path = "/api/sessions/{id}/plan/decision", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    request_body = PlanDecisionRequest,
    responses((status = 202, body = PlanDecided), (status = 400, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody),
        (status = 409, body = PlanConflict)))]
pub async fn decide_plan(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    AppPath(id): AppPath<Uuid>,
    AppJson(body): AppJson<PlanDecisionRequest>,
) -> Result<Response, ApiError> {
    let by = decider(&principal, &headers, "decide a plan")?;
    let digest = PlanDigest::from_client(body.digest.as_deref().unwrap_or_default());
    let decided = state
        .agent
        .spawn_decide_plan(
            SessionId(id),
            body.generation,
            &digest,
            body.decision.into(),
            body.reason.as_deref(),
            Some(&by),
        )
        .await;
    let (report, turn) = match decided {
        Ok(decided) => decided,
        Err(AgentError::PlanDecision(
            refused @ (PlanDecisionError::Changed { .. } | PlanDecisionError::Stale { .. }),
        )) => {
            // The operator decided on a plan that is no longer the current one: show it.
            let snapshot = state.agent.session(SessionId(id)).await?;
            let conflict = PlanConflict {
                error: ErrorDetail {
                    code: "conflict".to_owned(),
                    message: refused.to_string(),
                },
                plan: crate::api::sessions::plan_dto(&snapshot, false),
            };
            return Ok((StatusCode::CONFLICT, AppJson(conflict)).into_response());
        }
        Err(other) => return Err(other.into()),
    };
    if let Some(turn) = turn {
        state.turns.track(report.session_id, turn);
    }
    Ok((
        StatusCode::ACCEPTED,
        AppJson(PlanDecided {
            session_id: id,
            generation: report.generation,
            decision: body.decision,
            events: format!("/api/sessions/{id}/events"),
            awaiting: report.awaiting.map(|a| crate::dto::AwaitingDto {
                approvals: a.approvals,
                required: a.required,
            }),
        }),
    )
        .into_response())
}

/// CONTROL-2: cancels a pending approval before it expires; its command never runs. 409
/// when it is no longer pending (decided, expired, voided).
#[utoipa::path(post, path = "/api/approvals/{id}/cancel", tag = "approvals",
    params(("id" = Uuid, Path, description = "approval id")),
    responses((status = 200, body = Cancelled), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn cancel_approval(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    AppPath(id): AppPath<Uuid>,
) -> Result<AppJson<Cancelled>, ApiError> {
    let by = decider(&principal, &headers, "cancel approvals")?;
    let (session_id, execution_id) = state
        .agent
        .cancel_approval(ApprovalId(id), Some(&by))
        .await?;
    Ok(AppJson(Cancelled {
        session_id: session_id.0,
        execution_id: execution_id.0,
    }))
}

/// Every approval of one session, newest first, decided ones with who decided (AUDIT-1).
#[utoipa::path(get, path = "/api/sessions/{id}/approvals", tag = "approvals",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 200, body = [ApprovalDto]), (status = 404, body = crate::error::ErrorBody)))]
pub async fn session_approvals(
    State(state): State<AppState>,
    AppPath(id): AppPath<Uuid>,
) -> Result<AppJson<Vec<ApprovalDto>>, ApiError> {
    let snapshot = state.agent.session(SessionId(id)).await?;
    let mut approvals: Vec<ApprovalDto> = snapshot
        .approvals
        .iter()
        .filter_map(|approval| {
            let execution = snapshot
                .executions
                .iter()
                .find(|e| e.id == approval.execution_id)?;
            Some(ApprovalDto::join(approval, execution))
        })
        .collect();
    approvals.sort_by(|a, b| b.requested_at.cmp(&a.requested_at));
    Ok(AppJson(approvals))
}

/// CONTROL-3: every open assent window (session, generation, who granted it, expiry) and
/// every pending approval.
#[utoipa::path(get, path = "/api/grants", tag = "approvals",
    responses((status = 200, body = GrantsDto)))]
pub async fn grants(State(state): State<AppState>) -> Result<AppJson<GrantsDto>, ApiError> {
    let now = state.agent.now();
    let windows = state
        .agent
        .open_windows()
        .await?
        .into_iter()
        .map(|w| WindowDto {
            session_id: w.session_id.0,
            goal: w.goal,
            generation: w.window.generation,
            opened_at: w.window.opened_at.to_rfc3339(),
            expires_at: w.window.expires_at.to_rfc3339(),
            granted_by: w.granted_by,
            request_id: w.request_id,
        })
        .collect();
    let store = state.agent.store();
    let mut approvals = Vec::new();
    for approval in store.pending_approvals(None).await? {
        if let Some(execution) = store.execution(approval.execution_id).await? {
            approvals.push(ApprovalDto::join(&approval, &execution));
        }
    }
    Ok(AppJson(GrantsDto {
        now: now.to_rfc3339(),
        windows,
        approvals,
    }))
}

/// CONTROL-5: the operator closes a denied or stuck task as `failure` or `partial` with a
/// note: pending approvals are cancelled, open steps closed, the assent window closed
/// (SESSION-5). 409 when the session already ended, a turn or a command runs.
#[utoipa::path(post, path = "/api/sessions/{id}/close", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")), request_body = CloseRequest,
    responses((status = 200, body = Closed), (status = 400, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody), (status = 404, body = crate::error::ErrorBody),
        (status = 409, body = crate::error::ErrorBody)))]
pub async fn close(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    AppPath(id): AppPath<Uuid>,
    AppJson(body): AppJson<CloseRequest>,
) -> Result<AppJson<Closed>, ApiError> {
    let by = decider(&principal, &headers, "close a task")?;
    let outcome = match body.outcome {
        CloseOutcome::Failure => nomos_core::Outcome::Failure,
        CloseOutcome::Partial => nomos_core::Outcome::Partial,
    };
    let effect = state
        .agent
        .close_session(SessionId(id), outcome, body.note.as_deref(), Some(&by))
        .await?;
    Ok(AppJson(Closed {
        session_id: id,
        status: effect.status.as_str().to_owned(),
        cancelled_approvals: effect.n_cancelled,
    }))
}

/// CONTROL-6: archives a session: it leaves the board, and History lists it with
/// `archived=only`. 409 while a turn runs.
#[utoipa::path(post, path = "/api/sessions/{id}/archive", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 200, body = SessionDto), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn archive(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    AppPath(id): AppPath<Uuid>,
) -> Result<AppJson<SessionDto>, ApiError> {
    set_archived(state, principal, headers, id, true).await
}

/// CONTROL-6: brings an archived session back to the board. 409 while a turn runs.
#[utoipa::path(post, path = "/api/sessions/{id}/unarchive", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 200, body = SessionDto), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn unarchive(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    AppPath(id): AppPath<Uuid>,
) -> Result<AppJson<SessionDto>, ApiError> {
    set_archived(state, principal, headers, id, false).await
}

async fn set_archived(
    state: AppState,
    principal: Principal,
    headers: HeaderMap,
    id: Uuid,
    archived: bool,
) -> Result<AppJson<SessionDto>, ApiError> {
    let by = decider(&principal, &headers, "archive sessions")?;
    let id = SessionId(id);
    state.agent.archive_session(id, archived, Some(&by)).await?;
    let snapshot = state.agent.session(id).await?;
    Ok(AppJson(SessionDto::from(&snapshot.record)))
}
