//! OIDC bearer tokens: the settings ([`OidcConfig`], and the web UI's [`OidcClient`]) and
//! the verifier [`Oidc`]. The verifier and its JWT crate are the `oidc` feature; without it
//! [`Oidc`] has no values, so an [`Auth`](crate::Auth) holds static and stored tokens only.

use std::time::Duration;

#[cfg(not(feature = "oidc"))]
mod absent;
#[cfg(feature = "oidc")]
mod verifier;

#[cfg(not(feature = "oidc"))]
pub use absent::Oidc;
#[cfg(feature = "oidc")]
pub use verifier::Oidc;

/// How OIDC tokens are checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcConfig {
    /// The expected `iss`.
    pub issuer: String,
    /// The expected `aud`.
    pub audience: String,
    /// Where the issuer publishes its keys.
    pub jwks_url: String,
    /// The claim that holds the role (a string or an array of strings).
    pub role_claim: String,
    /// The claim value that makes an operator.
    pub operator_value: String,
    /// The claim value that makes a viewer.
    pub viewer_value: String,
    /// AUTHZ-1: the claim value that makes an agent; it wins over the others, so a token
    /// issued to automation never decides.
    pub agent_value: String,
    /// Allowed clock skew for `exp` and `nbf`.
    pub leeway: Duration,
    /// How long a fetched JWKS is trusted before it is fetched again.
    pub jwks_ttl: Duration,
    /// What the web UI needs to sign in at the issuer, published by `/api/info`.
    pub client: Option<OidcClient>,
}

/// The public settings of the UI's OIDC client (authorization code with PKCE). None of them
/// is a secret: a browser client has no client secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcClient {
    /// Where the browser starts a sign-in.
    pub authorization_endpoint: String,
    /// Where the code (and later the refresh token) is exchanged for tokens.
    pub token_endpoint: String,
    /// The client id registered at the issuer.
    pub client_id: String,
    /// The scopes asked for (`openid profile offline_access` when not set).
    pub scope: Option<String>,
}
