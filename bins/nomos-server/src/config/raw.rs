//! The first step: raw values as `nomos.toml` writes them, every table and key optional,
//! unknown keys refused naming them and their line. Nothing here is checked yet.

use std::path::Path;

use serde::Deserialize;

use super::ConfigError;

/// Raw values, as written (file, then environment, then flags).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// Listen address.
    pub listen: Option<String>,
    /// Data directory.
    pub data_dir: Option<String>,
    /// Database URL (`postgres://...` or `sqlite:...`).
    pub database_url: Option<String>,
    /// `text` or `json`.
    pub log_format: Option<String>,
    /// The host inventory (TOML).
    pub inventory: Option<String>,
    /// known_hosts for SSH.
    pub known_hosts: Option<String>,
    /// `strict` or `accept_new`.
    pub host_key_policy: Option<String>,
    /// The operator policy file (GATE-8).
    pub policy_file: Option<String>,
    /// The model endpoint.
    #[serde(default)]
    pub llm: RawLlm,
    /// A scripted model instead of an endpoint.
    #[serde(default)]
    pub model: RawModel,
    /// The agent's settings.
    #[serde(default)]
    pub agent: RawAgent,
    /// Authentication.
    #[serde(default)]
    pub auth: RawAuth,
    /// Sweep thresholds, in seconds.
    #[serde(default)]
    pub sweep: RawSweep,
    /// The gate.
    #[serde(default)]
    pub gate: RawGate,
    /// AUTHZ-4: where waiting requests are sent.
    #[serde(default)]
    pub notify: RawNotify,
    /// AUTHZ-4: where decisions are exported as OTLP log records.
    #[serde(default)]
    pub telemetry: RawTelemetry,
}

/// `[telemetry]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTelemetry {
    /// An OTLP/HTTP collector (`http://HOST:4318`); decisions go to `{it}/v1/logs`.
    pub otlp_endpoint: Option<String>,
}

/// `[notify]`: the console's public URL (for the card links) and `[[notify.channels]]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNotify {
    /// The console's URL as operators reach it (default `http://<listen>`).
    pub base_url: Option<String>,
    /// The channels.
    #[serde(default)]
    pub channels: Vec<RawChannel>,
}

/// `[[notify.channels]]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawChannel {
    /// `webhook`, `ntfy` or `slack`.
    pub kind: String,
    /// The webhook's URL, or the ntfy server's.
    pub url: String,
    /// `webhook`: the HMAC key of the body's signature.
    pub secret: Option<String>,
    /// `ntfy`: the topic.
    pub topic: Option<String>,
}

/// `[gate]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGate {
    /// GATE-9: `declared` (the default) or `window`.
    pub assent_scope: Option<String>,
    /// AUTHZ-3: `[[gate.approvers]]`, the two-person rules.
    #[serde(default)]
    pub approvers: Vec<RawApprovers>,
}

/// `[[gate.approvers]]`: requests of `class` on hosts tagged `tag` for commands the policy
/// rule named `rule` matches (any of them may be left out) need `approvers` distinct
/// operators.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApprovers {
    /// `config_mutation`, `destructive` or `unknown`; any class when absent.
    pub class: Option<String>,
    /// A host tag (FLEET-1); any host when absent.
    pub tag: Option<String>,
    /// The `name` of a `[[rule]]` of the policy file: only the commands it matches; any
    /// command when absent.
    pub rule: Option<String>,
    /// How many distinct operators (2 to 5).
    pub approvers: u32,
}

/// `[llm]`: an OpenAI-compatible endpoint; without one the demo model answers.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLlm {
    /// Base URL.
    pub base_url: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// API key (prefer `NOMOS_LLM_API_KEY`).
    pub api_key: Option<String>,
    /// The model's context size in tokens (TURN-9; default 128000).
    pub context_tokens: Option<u64>,
    /// TURN-12: seconds one whole reply may take (`NOMOS_LLM_REPLY_DEADLINE_SECS`,
    /// default 600).
    pub reply_deadline_secs: Option<u64>,
}

/// `[model]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawModel {
    /// A YAML script of replies (`nomos_llm::ScriptedModel`); set, it wins over `[llm]`.
    pub script: Option<String>,
}

/// `[agent]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAgent {
    /// A file whose text replaces the shipped system prompt (`nomos/SOUL.md`).
    pub system_prompt_file: Option<String>,
    /// The most of one tool result the model reads, in bytes (default 8192).
    pub model_output_bytes: Option<u64>,
    /// SAFE-2: where a change's files are backed up on its host (default
    /// `/var/lib/nomos/backup`).
    pub backup_root: Option<String>,
    /// SAFE-2: the most a host keeps under `backup_root`, in MiB (default 512).
    pub backup_max_mib: Option<u64>,
    /// SAFE-2: backups older than this many days are removed (default 30).
    pub backup_max_age_days: Option<u32>,
    /// FLEET-5: a group with a host carrying one of these tags runs on one host first
    /// and waits for the operator before the rest.
    #[serde(default)]
    pub canary_tags: Vec<String>,
    /// SAFE-1: how many Nomos snapshots each Proxmox guest keeps (default 3).
    pub snapshot_keep: Option<u64>,
}

/// `[auth]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAuth {
    /// `token` (default), `oidc` or `none`.
    pub mode: Option<String>,
    /// Static tokens, stored as SHA-256 hex.
    #[serde(default)]
    pub tokens: Vec<RawToken>,
    /// OIDC settings.
    pub oidc: Option<RawOidc>,
}

/// `[[auth.tokens]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawToken {
    /// A name for logs.
    pub name: String,
    /// SHA-256 hex of the token (`printf %s TOKEN | sha256sum`).
    pub sha256: String,
    /// `operator` (default) or `viewer`.
    pub role: Option<String>,
}

/// `[auth.oidc]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOidc {
    /// Expected `iss` (required).
    pub issuer: Option<String>,
    /// Expected `aud` (required).
    pub audience: Option<String>,
    /// The issuer's JWKS URL (required).
    pub jwks_url: Option<String>,
    /// The web UI's client id at the issuer; with both endpoints, the login page offers
    /// single sign-on.
    pub client_id: Option<String>,
    /// The issuer's authorization endpoint (for the web UI).
    pub authorization_endpoint: Option<String>,
    /// The issuer's token endpoint (for the web UI).
    pub token_endpoint: Option<String>,
    /// Scopes the web UI asks for (default `openid profile offline_access`).
    pub scope: Option<String>,
    /// Claim holding the role (default `roles`).
    pub role_claim: Option<String>,
    /// Value that makes an operator (default `nomos-operator`).
    pub operator_value: Option<String>,
    /// Value that makes a viewer (default `nomos-viewer`).
    pub viewer_value: Option<String>,
    /// AUTHZ-1: value that makes an agent (default `nomos-agent`).
    pub agent_value: Option<String>,
    /// Allowed clock skew in seconds (default 60).
    pub leeway_secs: Option<u64>,
}

/// `[sweep]`, in seconds.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    /// How often the sweeps run (300).
    pub interval_secs: Option<u64>,
    /// SWEEP-1 idle time before a nudge (900).
    pub idle_secs: Option<u64>,
    /// EXEC-3 running timeout (600).
    pub running_timeout_secs: Option<u64>,
    /// EXEC-3 start-up staleness (3600).
    pub startup_stale_secs: Option<u64>,
    /// GATE-7 approval expiry (1800).
    pub approval_ttl_secs: Option<u64>,
    /// GATE-4 assent window (1800).
    pub assent_window_secs: Option<u64>,
    /// REPLICA-2: how old another instance's heartbeat may be before it counts as gone (30).
    pub heartbeat_timeout_secs: Option<u64>,
}

impl RawConfig {
    /// Reads a TOML file.
    pub fn from_file(path: &Path) -> Result<RawConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        RawConfig::parse(&text, path)
    }

    /// Parses TOML text.
    pub fn parse(text: &str, path: &Path) -> Result<RawConfig, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Syntax {
            path: path.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })
    }
}
