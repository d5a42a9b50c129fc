//! [`Oidc`] in a build without the `oidc` feature: a type with no values, so no code path
//! can hold a verifier, and the methods callers name still type-check.

use crate::auth::Principal;
use crate::error::ApiError;

use super::OidcConfig;

/// The OIDC verifier, not built in (enable the `oidc` feature): no value of it exists.
#[derive(Debug)]
pub enum Oidc {}

impl Oidc {
    /// Its configuration (never called: there is no verifier).
    pub fn config(&self) -> &OidcConfig {
        match *self {}
    }

    /// Verifies a JWT (never called: there is no verifier).
    pub async fn verify(&self, _token: &str) -> Result<Principal, ApiError> {
        match *self {}
    }
}
