//! SAFE-2: the operator's Restore of a backup, and SAFE-1: the Rollback of a Proxmox guest
//! to the snapshot taken before a change. Each request only files the action: it waits for
//! its own approval (destructive) with its preview (a diff of each current file against
//! its copy; the guest's snapshot listing), and runs when an operator approves it like any
//! other request.

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use nomos_agent::{RestoreRequestError, RollbackRequestError};
use nomos_core::session::RestoreError;
use nomos_core::{ExecutionId, SessionId};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::{ApiError, AppJson, AppPath};
use crate::state::AppState;

/// The routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/api/sessions/{id}/executions/{execution_id}/restore",
            post(restore),
        )
        .route(
            "/api/sessions/{id}/executions/{execution_id}/rollback",
            post(rollback),
        )
}

/// The filed restore: the approval it waits for.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RestoreRequested {
    /// The approval request to decide (`POST /api/approvals/{id}/decision`).
    pub approval_id: Uuid,
}

/// SAFE-2: asks to restore the files a backup (an execution of kind `safety`) copied. 404
/// for an execution that is not a completed backup of the session, 409 for one that holds
/// no file.
#[utoipa::path(post, path = "/api/sessions/{id}/executions/{execution_id}/restore",
    tag = "approvals",
    params(("id" = Uuid, Path, description = "session id"),
        ("execution_id" = Uuid, Path, description = "the backup's execution id")),
    responses((status = 200, body = RestoreRequested), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn restore(
    State(state): State<AppState>,
    AppPath((id, execution_id)): AppPath<(Uuid, Uuid)>,
) -> Result<AppJson<RestoreRequested>, ApiError> {
    let approval_id = state
        .agent
        .request_restore(SessionId(id), ExecutionId(execution_id))
        .await
        .map_err(|error| match error {
            RestoreRequestError::Refused(refused @ RestoreError::NotABackup(_)) => {
                ApiError::NotFound(refused.to_string())
            }
            RestoreRequestError::Refused(refused @ RestoreError::Empty(_)) => {
                ApiError::Conflict(refused.to_string())
            }
            RestoreRequestError::Agent(error) => error.into(),
        })?;
    Ok(AppJson(RestoreRequested {
        approval_id: approval_id.0,
    }))
}

/// SAFE-1: asks to roll a Proxmox guest back to the snapshot a net (an execution of kind
/// `safety`) took before a change. 404 for an execution that is not a completed snapshot of
/// the session.
#[utoipa::path(post, path = "/api/sessions/{id}/executions/{execution_id}/rollback",
    tag = "approvals",
    params(("id" = Uuid, Path, description = "session id"),
        ("execution_id" = Uuid, Path, description = "the snapshot's execution id")),
    responses((status = 200, body = RestoreRequested), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody)))]
pub async fn rollback(
    State(state): State<AppState>,
    AppPath((id, execution_id)): AppPath<(Uuid, Uuid)>,
) -> Result<AppJson<RestoreRequested>, ApiError> {
    let approval_id = state
        .agent
        .request_rollback(SessionId(id), ExecutionId(execution_id))
        .await
        .map_err(|error| match error {
            RollbackRequestError::Refused(refused) => ApiError::NotFound(refused.to_string()),
            RollbackRequestError::Agent(error) => error.into(),
        })?;
    Ok(AppJson(RestoreRequested {
        approval_id: approval_id.0,
    }))
}
