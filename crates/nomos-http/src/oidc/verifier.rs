//! The OIDC verifier (feature `oidc`): JWTs signed by the issuer, checked against its JWKS
//! (fetched with reqwest and cached), with issuer, audience, expiry and clock skew, and a
//! role claim mapped to [`Role::Operator`], [`Role::Viewer`] or [`Role::Agent`] (AUTHZ-1).

use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};
use tokio::sync::RwLock;

use crate::auth::{Principal, Role};
use crate::error::ApiError;

use super::OidcConfig;

/// Asymmetric algorithms only: a JWKS never holds a shared secret, and `none` is refused.
const ALLOWED: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// A JWKS fetched for a key id we do not know is refetched at most this often.
const REFETCH_AFTER: Duration = Duration::from_secs(30);

/// The OIDC verifier with its JWKS cache.
#[derive(Debug)]
pub struct Oidc {
    config: OidcConfig,
    client: reqwest::Client,
    cache: RwLock<Option<Cached>>,
}

#[derive(Debug)]
struct Cached {
    keys: JwkSet,
    fetched: Instant,
}

impl Oidc {
    /// A verifier; the JWKS is fetched on first use.
    pub fn new(config: OidcConfig) -> Oidc {
        let client = nomos_llm::tls::http_client_builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        Oidc {
            config,
            client,
            cache: RwLock::new(None),
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// Verifies a JWT and maps its role claim.
    pub async fn verify(&self, token: &str) -> Result<Principal, ApiError> {
        let header = decode_header(token)
            .map_err(|e| ApiError::Unauthorized(format!("invalid bearer token: {e}")))?;
        if !ALLOWED.contains(&header.alg) {
            return Err(ApiError::Unauthorized(format!(
                "invalid bearer token: algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let key = self.key_for(header.kid.as_deref()).await?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.leeway = self.config.leeway.as_secs();
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| ApiError::Unauthorized(format!("invalid bearer token: {e}")))?;
        let claims = data.claims;
        let name = claims
            .get("sub")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned();
        let role = self.role_of(&claims).ok_or_else(|| {
            ApiError::Forbidden(format!(
                "token of {name} has no Nomos role: claim `{}` must contain `{}`, `{}` or `{}`",
                self.config.role_claim,
                self.config.operator_value,
                self.config.viewer_value,
                self.config.agent_value
            ))
        })?;
        // AUDIT-1: the readable name recorded alongside the subject.
        let username = claims
            .get("preferred_username")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(Principal {
            name,
            username,
            role,
        })
    }

    fn role_of(&self, claims: &Map<String, Value>) -> Option<Role> {
        let values: Vec<&str> = match claims.get(&self.config.role_claim)? {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => return None,
        };
        if values.contains(&self.config.agent_value.as_str()) {
            Some(Role::Agent)
        } else if values.contains(&self.config.operator_value.as_str()) {
            Some(Role::Operator)
        } else if values.contains(&self.config.viewer_value.as_str()) {
            Some(Role::Viewer)
        } else {
            None
        }
    }

    async fn key_for(&self, kid: Option<&str>) -> Result<DecodingKey, ApiError> {
        {
            let cache = self.cache.read().await;
            if let Some(cached) = cache.as_ref() {
                let fresh = cached.fetched.elapsed() < self.config.jwks_ttl;
                match find(&cached.keys, kid) {
                    Some(key) if fresh => return key,
                    // An unknown key id may mean the issuer rotated: refetch, but not in a loop.
                    None if cached.fetched.elapsed() < REFETCH_AFTER => {
                        return Err(unknown_key(kid));
                    }
                    _ => {}
                }
            }
        }
        let keys = self.fetch().await?;
        let key = find(&keys, kid);
        *self.cache.write().await = Some(Cached {
            keys,
            fetched: Instant::now(),
        });
        key.unwrap_or_else(|| Err(unknown_key(kid)))
    }

    async fn fetch(&self) -> Result<JwkSet, ApiError> {
        let url = &self.config.jwks_url;
        let response =
            self.client.get(url).send().await.map_err(|e| {
                ApiError::Unavailable(format!("cannot fetch the JWKS from {url}: {e}"))
            })?;
        let status = response.status();
        if !status.is_success() {
            return Err(ApiError::Unavailable(format!(
                "cannot fetch the JWKS from {url}: HTTP {status}"
            )));
        }
        response
            .json::<JwkSet>()
            .await
            .map_err(|e| ApiError::Unavailable(format!("the JWKS at {url} is not valid: {e}")))
    }
}

fn find(keys: &JwkSet, kid: Option<&str>) -> Option<Result<DecodingKey, ApiError>> {
    let jwk = match kid {
        Some(kid) => keys.find(kid)?,
        None if keys.keys.len() == 1 => &keys.keys[0],
        None => return None,
    };
    Some(DecodingKey::from_jwk(jwk).map_err(|e| {
        ApiError::Unauthorized(format!("invalid bearer token: unusable signing key: {e}"))
    }))
}

fn unknown_key(kid: Option<&str>) -> ApiError {
    ApiError::Unauthorized(format!(
        "invalid bearer token: no signing key {} in the issuer's JWKS",
        kid.unwrap_or("(no kid)")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oidc() -> Oidc {
        Oidc::new(OidcConfig {
            issuer: "https://issuer.example".into(),
            audience: "nomos".into(),
            jwks_url: "http://127.0.0.1:9/jwks".into(),
            role_claim: "roles".into(),
            operator_value: "nomos-operator".into(),
            viewer_value: "nomos-viewer".into(),
            agent_value: "nomos-agent".into(),
            leeway: Duration::from_secs(30),
            jwks_ttl: Duration::from_secs(300),
            client: None,
        })
    }

    #[test]
    fn the_operator_role_wins_over_viewer_in_an_array_claim() {
        let claims: Map<String, Value> =
            serde_json::from_str(r#"{"roles": ["nomos-viewer", "nomos-operator"]}"#).unwrap();
        assert_eq!(oidc().role_of(&claims), Some(Role::Operator));
        let claims: Map<String, Value> =
            serde_json::from_str(r#"{"roles": "nomos-viewer"}"#).unwrap();
        assert_eq!(oidc().role_of(&claims), Some(Role::Viewer));
    }

    // rule: AUTHZ-1
    #[test]
    fn an_agent_role_claim_maps_to_the_agent_role_and_wins() {
        let claims: Map<String, Value> =
            serde_json::from_str(r#"{"roles": ["nomos-operator", "nomos-agent"]}"#).unwrap();
        assert_eq!(oidc().role_of(&claims), Some(Role::Agent));
        let claims: Map<String, Value> =
            serde_json::from_str(r#"{"roles": "nomos-agent"}"#).unwrap();
        assert_eq!(oidc().role_of(&claims), Some(Role::Agent));
        let claims: Map<String, Value> = serde_json::from_str(r#"{"roles": 3}"#).unwrap();
        assert_eq!(oidc().role_of(&claims), None);
    }

    #[tokio::test]
    async fn a_token_that_is_not_a_jwt_is_unauthorized() {
        let err = oidc().verify("a.b.c").await.unwrap_err();
        assert_eq!(err.status_code(), axum::http::StatusCode::UNAUTHORIZED);
    }
}
