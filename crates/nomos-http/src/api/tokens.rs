//! The admin API of named tokens (AUTHZ-1), operators only: list them (name and role),
//! create one (the token is in the answer once, and only its hash is kept) and revoke one,
//! which stops it at once. They write through the server's
//! [`crate::tokens::TokenStore`], the same file `nomos-server token` writes; each write is a
//! `nomos::audit` line naming who did it.

use axum::Extension;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::{Principal, Role};
use crate::error::{ApiError, AppJson, AppPath};
use crate::state::AppState;
use crate::tokens::{TokenEntry, TokenStore, TokenStoreError};

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/tokens", get(list).post(create))
        .route("/api/tokens/{name}", delete(revoke))
}

/// One named token: never the token itself.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TokenDto {
    /// Its name: the principal it authenticates as.
    pub name: String,
    /// `operator`, `viewer` or `agent`.
    pub role: Role,
}

impl From<TokenEntry> for TokenDto {
    fn from(entry: TokenEntry) -> Self {
        TokenDto {
            name: entry.name,
            role: entry.role,
        }
    }
}

/// A token to make.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateToken {
    /// Its name (1 to 64 letters, digits, `-`, `_` or `.`), unique.
    pub name: String,
    /// `operator`, `viewer` or `agent`.
    pub role: Role,
}

/// A token just made: the token is shown here once and never again.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CreatedToken {
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: Role,
    /// The bearer token itself.
    pub token: String,
}

fn store(state: &AppState) -> Result<&TokenStore, ApiError> {
    state.auth.token_store().map(|s| s.as_ref()).ok_or_else(|| {
        ApiError::Conflict(
            "this server keeps no named tokens (authentication is off, or the tokens are configured only)"
                .to_owned(),
        )
    })
}

fn store_error(error: TokenStoreError) -> ApiError {
    match error {
        TokenStoreError::BadName(_) => ApiError::Invalid(error.to_string()),
        TokenStoreError::Exists(_) => ApiError::Conflict(error.to_string()),
        TokenStoreError::NotFound(_) => ApiError::NotFound(error.to_string()),
        TokenStoreError::File { .. } => ApiError::Internal(error.to_string()),
    }
}

/// The named tokens, in the order they were made (those of the configuration file are not
/// listed). Operators only.
#[utoipa::path(get, path = "/api/tokens", tag = "tokens",
    responses((status = 200, body = [TokenDto]), (status = 403, body = crate::error::ErrorBody),
        (status = 409, body = crate::error::ErrorBody)))]
pub async fn list(State(state): State<AppState>) -> Result<AppJson<Vec<TokenDto>>, ApiError> {
    let tokens = store(&state)?.list().map_err(store_error)?;
    Ok(AppJson(tokens.into_iter().map(TokenDto::from).collect()))
}

/// Makes a named token: 201 with the token, shown once; only its hash is kept. 409 when
/// the name is taken. Operators only.
#[utoipa::path(post, path = "/api/tokens", tag = "tokens", request_body = CreateToken,
    responses((status = 201, body = CreatedToken), (status = 400, body = crate::error::ErrorBody),
        (status = 403, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    AppJson(body): AppJson<CreateToken>,
) -> Result<(StatusCode, AppJson<CreatedToken>), ApiError> {
    let role = body.role;
    let token = store(&state)?
        .create(&body.name, role)
        .map_err(store_error)?;
    let name = body.name.trim().to_owned();
    tracing::info!(
        target: "nomos::audit",
        principal = %principal.name,
        token = %name,
        role = role.as_str(),
        "token created"
    );
    Ok((
        StatusCode::CREATED,
        AppJson(CreatedToken { name, role, token }),
    ))
}

/// Revokes a named token: it stops authenticating at once. 404 when no token has the name.
/// Operators only.
#[utoipa::path(delete, path = "/api/tokens/{name}", tag = "tokens",
    params(("name" = String, Path, description = "token name")),
    responses((status = 200, body = TokenDto), (status = 403, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 409, body = crate::error::ErrorBody)))]
pub async fn revoke(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    AppPath(name): AppPath<String>,
) -> Result<AppJson<TokenDto>, ApiError> {
    let revoked = store(&state)?.revoke(&name).map_err(store_error)?;
    tracing::info!(
        target: "nomos::audit",
        principal = %principal.name,
        token = %revoked.name,
        role = revoked.role.as_str(),
        "token revoked"
    );
    Ok(AppJson(revoked.into()))
}
