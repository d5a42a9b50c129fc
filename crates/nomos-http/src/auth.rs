//! Who is calling: bearer tokens (static operator tokens stored as SHA-256 hashes, or OIDC
//! JWTs checked against the issuer's JWKS) mapped to a [`Role`].
//!
//! The [`require_auth`] middleware guards every route it wraps: it reads
//! `Authorization: Bearer ...` (or `?access_token=` on the two event streams, which browsers cannot
//! give headers) and puts the [`Principal`] in the request extensions; what each role may
//! do on each route is [`crate::authz`]'s (AUTHZ-1).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::oidc::{Oidc, OidcClient};

/// What a caller may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// May chat, decide approvals, resume and delete.
    Operator,
    /// May only read.
    Viewer,
    /// AUTHZ-1: an MCP client or other automation: calls tools (under the gates) and reads
    /// only the sessions it created; never decides, revokes, stops or posts a message.
    Agent,
}

impl Role {
    /// The spelling of the configuration and the wire (`operator`, `viewer`, `agent`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Role::Operator => "operator",
            Role::Viewer => "viewer",
            Role::Agent => "agent",
        }
    }
}

impl std::str::FromStr for Role {
    type Err = String;

    fn from_str(text: &str) -> Result<Role, String> {
        match text {
            "operator" => Ok(Role::Operator),
            "viewer" => Ok(Role::Viewer),
            "agent" => Ok(Role::Agent),
            other => Err(format!(
                "unknown role `{other}`; expected operator, viewer or agent"
            )),
        }
    }
}

/// An authenticated caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// Who it is: the token's name, or the JWT's `sub`.
    pub name: String,
    /// The JWT's `preferred_username`, when it has one (AUDIT-1 records it with `sub`).
    pub username: Option<String>,
    /// What it may do.
    pub role: Role,
}

impl Principal {
    /// AUDIT-1: who decides, as the core records it: the principal and the request id.
    pub fn decider(&self, headers: &axum::http::HeaderMap) -> nomos_core::record::Decider {
        nomos_core::record::Decider {
            name: self.name.clone(),
            username: self.username.clone(),
            request_id: headers
                .get(crate::REQUEST_ID)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned),
        }
    }
}

/// One static token, as the configuration holds it: its SHA-256, never the token itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticToken {
    /// A name for logs and `decided_by`.
    pub name: String,
    /// SHA-256 of the token.
    pub sha256: [u8; 32],
    /// Its role.
    pub role: Role,
}

/// Why a token hash from the configuration is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected 64 hexadecimal characters (a SHA-256), got {got:?}")]
pub struct BadTokenHash {
    /// The text given.
    pub got: String,
}

impl StaticToken {
    /// A token entry from its hex SHA-256.
    pub fn from_hex(name: &str, sha256_hex: &str, role: Role) -> Result<StaticToken, BadTokenHash> {
        let mut sha256 = [0u8; 32];
        hex::decode_to_slice(sha256_hex.trim(), &mut sha256).map_err(|_| BadTokenHash {
            got: sha256_hex.to_owned(),
        })?;
        Ok(StaticToken {
            name: name.to_owned(),
            sha256,
            role,
        })
    }

    /// A token entry for a token in clear text (hashed at once).
    pub fn from_secret(name: &str, secret: &str, role: Role) -> StaticToken {
        StaticToken {
            name: name.to_owned(),
            sha256: sha256(secret),
            role,
        }
    }
}

/// The hex SHA-256 of a token, the form the configuration stores.
pub fn token_sha256_hex(token: &str) -> String {
    hex::encode(sha256(token))
}

fn sha256(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// How callers are authenticated.
#[derive(Clone, Debug)]
pub enum Auth {
    /// Nobody is asked for a token; everybody is an operator (loopback only, by choice).
    Disabled,
    /// Bearer tokens are required.
    Required {
        /// Static tokens.
        tokens: Vec<StaticToken>,
        /// OIDC, when configured.
        oidc: Option<Arc<Oidc>>,
        /// AUTHZ-1: the named tokens of the data directory, read on every request (a
        /// revoked one stops working at once); the admin API writes them.
        store: Option<Arc<crate::tokens::TokenStore>>,
    },
}

/// How `/api/info` names the auth mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthMode {
    /// No authentication.
    None,
    /// Static tokens only.
    Token,
    /// OIDC JWTs (and possibly static tokens).
    Oidc,
}

impl Auth {
    /// The mode, for `/api/info`.
    pub fn mode(&self) -> AuthMode {
        match self {
            Auth::Disabled => AuthMode::None,
            Auth::Required { oidc: None, .. } => AuthMode::Token,
            Auth::Required { oidc: Some(_), .. } => AuthMode::Oidc,
        }
    }

    /// AUTHZ-1: the token store the admin API writes, when this server keeps one.
    pub fn token_store(&self) -> Option<&Arc<crate::tokens::TokenStore>> {
        match self {
            Auth::Required {
                store: Some(store), ..
            } => Some(store),
            _ => None,
        }
    }

    /// The OIDC client settings the web UI signs in with, when OIDC has them.
    pub fn oidc_client(&self) -> Option<&OidcClient> {
        match self {
            Auth::Required {
                oidc: Some(oidc), ..
            } => oidc.config().client.as_ref(),
            _ => None,
        }
    }

    /// Checks a bearer token.
    pub async fn authenticate(&self, token: Option<&str>) -> Result<Principal, ApiError> {
        let (tokens, oidc, store) = match self {
            Auth::Disabled => {
                return Ok(Principal {
                    name: "operator".to_owned(),
                    username: None,
                    role: Role::Operator,
                });
            }
            Auth::Required {
                tokens,
                oidc,
                store,
            } => (tokens, oidc, store),
        };
        let Some(token) = token.map(str::trim).filter(|t| !t.is_empty()) else {
            return Err(ApiError::Unauthorized(
                "missing bearer token (Authorization: Bearer <token>)".to_owned(),
            ));
        };
        if let Some(principal) = match_static(tokens, token) {
            return Ok(principal);
        }
        if let Some(store) = store {
            let stored = store
                .tokens()
                .map_err(|e| ApiError::Internal(format!("reading the token store: {e}")))?;
            if let Some(principal) = match_static(&stored, token) {
                return Ok(principal);
            }
        }
        match oidc {
            Some(oidc) if token.matches('.').count() == 2 => oidc.verify(token).await,
            _ => Err(ApiError::Unauthorized("invalid bearer token".to_owned())),
        }
    }
}

/// Compares the token's hash with every configured hash in constant time (no early exit,
/// so timing does not say which one matched or how much of it).
fn match_static(tokens: &[StaticToken], token: &str) -> Option<Principal> {
    let presented = sha256(token);
    let mut found = None;
    for candidate in tokens {
        if bool::from(candidate.sha256.ct_eq(&presented)) {
            found = Some(Principal {
                name: candidate.name.clone(),
                username: None,
                role: candidate.role,
            });
        }
    }
    found
}

/// The middleware: authenticates; [`crate::authz::authorize`] then says what the role may do.
pub async fn require_auth(
    State(auth): State<Arc<Auth>>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let token = bearer(&request);
    let principal = auth.authenticate(token.as_deref()).await?;
    request.extensions_mut().insert(principal);
    Ok(next.run(request).await)
}

pub(crate) fn bearer(request: &Request) -> Option<String> {
    if let Some(value) = request.headers().get(header::AUTHORIZATION) {
        let value = value.to_str().ok()?;
        let (scheme, token) = value.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        return Some(token.to_owned());
    }
    // EventSource cannot send headers: the two event streams also take `?access_token=`,
    // and no other route does.
    if crate::events::is_event_stream(request.uri().path()) {
        let query = request.uri().query()?;
        return query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(key, _)| *key == "access_token")
            .map(|(_, value)| percent_decode(value));
    }
    None
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut idx = 0;
    while idx < bytes.len() {
        let decoded = match bytes[idx] {
            b'%' if idx + 2 < bytes.len() => std::str::from_utf8(&bytes[idx + 1..idx + 3])
                .ok()
                .and_then(|hex| u8::from_str_radix(hex, 16).ok()),
            _ => None,
        };
        match decoded {
            Some(byte) => {
                out.push(byte);
                idx += 3;
            }
            None => {
                out.push(if bytes[idx] == b'+' { b' ' } else { bytes[idx] });
                idx += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn required(tokens: Vec<StaticToken>) -> Auth {
        Auth::Required {
            tokens,
            oidc: None,
            store: None,
        }
    }

    #[tokio::test]
    async fn a_static_token_is_matched_by_its_hash() {
        let hash = token_sha256_hex("s3cret");
        let auth = required(vec![
            StaticToken::from_hex("ops", &hash, Role::Operator).unwrap(),
        ]);
        let principal = auth.authenticate(Some("s3cret")).await.unwrap();
        assert_eq!(principal.name, "ops");
        assert_eq!(principal.role, Role::Operator);
    }

    #[tokio::test]
    async fn a_wrong_or_missing_token_is_unauthorized() {
        let auth = required(vec![StaticToken::from_secret(
            "ops",
            "s3cret",
            Role::Operator,
        )]);
        let wrong = auth.authenticate(Some("s3cre")).await.unwrap_err();
        assert_eq!(wrong.status_code(), axum::http::StatusCode::UNAUTHORIZED);
        let missing = auth.authenticate(None).await.unwrap_err();
        assert!(
            missing.to_string().contains("missing bearer token"),
            "{missing}"
        );
    }

    #[test]
    fn a_token_hash_must_be_64_hex_characters() {
        let err = StaticToken::from_hex("ops", "abc", Role::Viewer).unwrap_err();
        assert!(err.to_string().contains("64 hexadecimal"), "{err}");
    }

    #[test]
    fn percent_encoded_access_tokens_are_decoded() {
        assert_eq!(percent_decode("a%2Bb%3D"), "a+b=");
        assert_eq!(percent_decode("plain"), "plain");
        assert_eq!(percent_decode("bad%zz"), "bad%zz");
    }
}
