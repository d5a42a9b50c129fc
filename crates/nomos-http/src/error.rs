//! [`ApiError`]: every way a request can fail, one HTTP status each, and the JSON body
//! `{"error": {"code": "...", "message": "..."}}` it is sent as. [`AppJson`] and
//! [`AppPath`] turn axum's extractor rejections into an [`ApiError`] too.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use nomos_agent::AgentError;
use nomos_core::ports::store::StoreError;
use serde::Serialize;
use utoipa::ToSchema;

/// Why a request failed. [`ApiError::status_code`] is the one place statuses are chosen.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body is not the JSON the endpoint takes (syntax, unknown field, wrong type).
    #[error("invalid request body: {0}")]
    BadJson(String),
    /// The body's content type is not `application/json`.
    #[error("expected a JSON body (content-type: application/json)")]
    NotJson,
    /// The body is larger than the limit.
    #[error("request body is larger than {limit} bytes")]
    BodyTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A path segment is not what the route takes (an id that is not a UUID).
    #[error("invalid path: {0}")]
    BadPath(String),
    /// A query parameter is malformed.
    #[error("invalid query: {0}")]
    BadQuery(String),
    /// The request is well formed but its content is not acceptable.
    #[error("{0}")]
    Invalid(String),
    /// No bearer token, or one that is not valid.
    #[error("{0}")]
    Unauthorized(String),
    /// The caller is known but may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The thing asked for does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The route exists, but not with this method.
    #[error("method not allowed on this path")]
    MethodNotAllowed,
    /// The request conflicts with the current state (TURN-8, GATE-7).
    #[error("{0}")]
    Conflict(String),
    /// The request line is longer than the HTTP parser takes (a huge query string).
    #[error("the request line is too long; send large values in a JSON body")]
    UriTooLong,
    /// The request's headers are larger than the HTTP parser takes.
    #[error("the request headers are too large")]
    HeadersTooLarge,
    /// The request is not valid HTTP (a bad method, header or version).
    #[error("the request is not valid HTTP")]
    MalformedRequest,
    /// The server is not ready (database unreachable or not migrated).
    #[error("{0}")]
    Unavailable(String),
    /// A failure on our side; its text is logged, never sent.
    #[error("internal error")]
    Internal(String),
}

/// The JSON body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// A stable machine-readable code (`bad_json`, `turn_in_progress`...).
    pub code: String,
    /// What was wrong, for a person.
    pub message: String,
}

impl ApiError {
    /// The HTTP status of this error.
    pub fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadJson(_) => StatusCode::BAD_REQUEST,
            ApiError::NotJson => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::BodyTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BadPath(_) | ApiError::BadQuery(_) | ApiError::Invalid(_) => {
                StatusCode::BAD_REQUEST
            }
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::UriTooLong => StatusCode::URI_TOO_LONG,
            ApiError::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ApiError::MalformedRequest => StatusCode::BAD_REQUEST,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable code in the body.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadJson(_) => "bad_json",
            ApiError::NotJson => "not_json",
            ApiError::BodyTooLarge { .. } => "body_too_large",
            ApiError::BadPath(_) => "bad_path",
            ApiError::BadQuery(_) => "bad_query",
            ApiError::Invalid(_) => "invalid",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) => "not_found",
            ApiError::MethodNotAllowed => "method_not_allowed",
            ApiError::UriTooLong => "uri_too_long",
            ApiError::HeadersTooLarge => "headers_too_large",
            ApiError::MalformedRequest => "malformed_request",
            ApiError::Conflict(_) => "conflict",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Internal(_) => "internal",
        }
    }

    /// The message sent to the client: 5xx errors carry no internals.
    pub(crate) fn public_message(&self) -> String {
        match self {
            ApiError::Internal(_) => "internal error; see the server log".to_owned(),
            ApiError::Unavailable(_) => {
                "a service the server depends on is unavailable; see the server log".to_owned()
            }
            other => other.to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status_code();
        match &self {
            ApiError::Internal(detail) | ApiError::Unavailable(detail) => {
                tracing::error!(status = status.as_u16(), error = %detail, "request failed");
            }
            other => tracing::debug!(status = status.as_u16(), error = %other, "request refused"),
        }
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code().to_owned(),
                message: self.public_message(),
            },
        };
        (status, axum::Json(body)).into_response()
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound { what } => ApiError::NotFound(format!("{what} not found")),
            StoreError::Conflict { .. } | StoreError::Duplicate { .. } => {
                ApiError::Conflict(error.to_string())
            }
            StoreError::Invalid(text) => ApiError::Invalid(text),
            StoreError::Unavailable(_)
            | StoreError::NotMigrated
            | StoreError::SchemaTooNew { .. } => ApiError::Unavailable(error.to_string()),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<AgentError> for ApiError {
    fn from(error: AgentError) -> Self {
        match error {
            AgentError::SessionNotFound(_) | AgentError::ApprovalNotFound(_) => {
                ApiError::NotFound(error.to_string())
            }
            // CONTROL-4: a reason the core refuses is bad input, not a conflict.
            AgentError::Decision(
                nomos_core::session::DecisionError::ReasonWithApproval
                | nomos_core::session::DecisionError::ReasonTooLong(_),
            ) => ApiError::Invalid(error.to_string()),
            // AUTHZ-2, AUTHZ-3: refused because of who decided (recorded by the core).
            AgentError::Decision(nomos_core::session::DecisionError::Decider(_))
            | AgentError::PlanDecision(nomos_core::session::PlanDecisionError::Decider(_)) => {
                ApiError::Forbidden(error.to_string())
            }
            AgentError::TurnInProgress(_)
            | AgentError::Decision(_)
            | AgentError::PlanDecision(_) => ApiError::Conflict(error.to_string()),
            AgentError::Execution(_) => ApiError::Conflict(error.to_string()),
            // CONTROL-1/2: nothing to stop or revoke is a conflict with the session's state.
            AgentError::NoRunningTurn(_)
            | AgentError::AlreadyStopping(_)
            | AgentError::Revoke(_) => ApiError::Conflict(error.to_string()),
            // CONTROL-5: a close of a terminal task or while a command runs is a conflict
            // with the session's state; a bad outcome or note is bad input.
            AgentError::Close(
                nomos_core::session::CloseError::Outcome(_)
                | nomos_core::session::CloseError::NoteTooLong(_),
            ) => ApiError::Invalid(error.to_string()),
            AgentError::Close(_) => ApiError::Conflict(error.to_string()),
            AgentError::EmptyMessage => ApiError::Invalid(error.to_string()),
            AgentError::Store(store) => store.into(),
            AgentError::ShuttingDown => ApiError::Unavailable(error.to_string()),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::MissingJsonContentType(_) => ApiError::NotJson,
            JsonRejection::BytesRejection(bytes) => {
                if bytes.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::BodyTooLarge {
                        limit: crate::BODY_LIMIT,
                    }
                } else {
                    ApiError::Invalid(bytes.body_text())
                }
            }
            other => ApiError::BadJson(other.body_text()),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        ApiError::BadPath(rejection.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        ApiError::BadQuery(rejection.body_text())
    }
}

/// `axum::Json`, whose rejections are [`ApiError`]s.
#[derive(Debug, Clone, Copy, Default, FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub struct AppJson<T>(pub T);

impl<T: Serialize> IntoResponse for AppJson<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

/// `axum::extract::Path`, whose rejections are [`ApiError`]s.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct AppPath<T>(pub T);

/// `axum::extract::Query`, whose rejections are [`ApiError`]s.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct AppQuery<T>(pub T);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_do_not_leak_their_detail() {
        let error = ApiError::Internal("password=hunter2 at db.rs:12".into());
        assert_eq!(error.status_code(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!error.public_message().contains("hunter2"));
    }

    #[test]
    fn a_turn_in_progress_is_a_conflict() {
        let id = nomos_core::SessionId(uuid::Uuid::nil());
        let error = ApiError::from(AgentError::TurnInProgress(id));
        assert_eq!(error.status_code(), StatusCode::CONFLICT);
        assert!(error.to_string().contains("already running"));
    }
}
