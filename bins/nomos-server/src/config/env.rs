//! The environment: `NOMOS_*` variables over the file's raw values, and the one place
//! the `NOMOS_LLM_*` variables are read (the endpoint's settings, which
//! `nomos_llm::OpenAiConfig::from_env_with` takes by name, over the `[llm]` table).

use std::env::VarError;

use super::raw::{RawConfig, RawOidc};
use super::validate::LlmEndpoint;

/// The variables that name a model endpoint; with neither set (nor `[llm]`), the demo
/// model answers.
const LLM_ENDPOINT: [&str; 2] = ["NOMOS_LLM_BASE_URL", "NOMOS_LLM_MODEL"];

impl RawConfig {
    /// Applies `NOMOS_*` variables read through `var`.
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) {
        let pairs: [(&str, &mut Option<String>); 10] = [
            ("NOMOS_LISTEN", &mut self.listen),
            ("NOMOS_DATA_DIR", &mut self.data_dir),
            ("NOMOS_DATABASE_URL", &mut self.database_url),
            ("NOMOS_LOG_FORMAT", &mut self.log_format),
            ("NOMOS_INVENTORY", &mut self.inventory),
            ("NOMOS_KNOWN_HOSTS", &mut self.known_hosts),
            ("NOMOS_POLICY_FILE", &mut self.policy_file),
            ("NOMOS_AUTH_MODE", &mut self.auth.mode),
            ("NOMOS_MODEL_SCRIPT", &mut self.model.script),
            (
                "NOMOS_SYSTEM_PROMPT_FILE",
                &mut self.agent.system_prompt_file,
            ),
        ];
        for (name, slot) in pairs {
            if let Some(value) = var(name) {
                *slot = Some(value);
            }
        }
        let oidc_names = [
            "NOMOS_OIDC_ISSUER",
            "NOMOS_OIDC_AUDIENCE",
            "NOMOS_OIDC_JWKS_URL",
            "NOMOS_OIDC_CLIENT_ID",
            "NOMOS_OIDC_AUTHORIZATION_ENDPOINT",
            "NOMOS_OIDC_TOKEN_ENDPOINT",
            "NOMOS_OIDC_SCOPE",
        ];
        if oidc_names.iter().all(|name| var(name).is_none()) {
            return;
        }
        let oidc = self.auth.oidc.get_or_insert_with(RawOidc::default);
        let pairs: [(&str, &mut Option<String>); 7] = [
            ("NOMOS_OIDC_ISSUER", &mut oidc.issuer),
            ("NOMOS_OIDC_AUDIENCE", &mut oidc.audience),
            ("NOMOS_OIDC_JWKS_URL", &mut oidc.jwks_url),
            ("NOMOS_OIDC_CLIENT_ID", &mut oidc.client_id),
            (
                "NOMOS_OIDC_AUTHORIZATION_ENDPOINT",
                &mut oidc.authorization_endpoint,
            ),
            ("NOMOS_OIDC_TOKEN_ENDPOINT", &mut oidc.token_endpoint),
            ("NOMOS_OIDC_SCOPE", &mut oidc.scope),
        ];
        for (name, slot) in pairs {
            if let Some(value) = var(name) {
                *slot = Some(value);
            }
        }
    }
}

/// The `NOMOS_LLM_*` settings through `var` (the environment), each falling back to the
/// `[llm]` table's value: what `OpenAiConfig::from_env_with` reads.
pub fn llm_lookup(
    file: &LlmEndpoint,
    var: impl Fn(&str) -> Option<String>,
) -> impl Fn(&str) -> Result<String, VarError> {
    move |name: &str| {
        if let Some(value) = var(name) {
            return Ok(value);
        }
        let fallback = match name {
            "NOMOS_LLM_BASE_URL" => file.base_url.clone(),
            "NOMOS_LLM_MODEL" => file.model.clone(),
            "NOMOS_LLM_API_KEY" => file.api_key.clone(),
            "NOMOS_LLM_REPLY_DEADLINE_SECS" => file.reply_deadline_secs.map(|s| s.to_string()),
            _ => None,
        };
        fallback.ok_or(VarError::NotPresent)
    }
}

/// Whether a model endpoint is configured (its URL or model, from either source).
pub fn llm_configured(lookup: &impl Fn(&str) -> Result<String, VarError>) -> bool {
    LLM_ENDPOINT.iter().any(|name| lookup(name).is_ok())
}
