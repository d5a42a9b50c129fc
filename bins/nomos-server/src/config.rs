//! Configuration in two steps: [`RawConfig`] gathers raw values from `nomos.toml`, then
//! `NOMOS_*` environment variables, then command-line flags (each later source wins);
//! [`Config::validate`] turns them into typed settings or a [`ConfigError`] naming the key,
//! the value and why. Unknown keys in the file are an error naming them and their line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nomos_core::Span;
use nomos_http::{OidcClient, OidcConfig, Role, StaticToken};
use nomos_ssh::HostKeyPolicy;
use serde::Deserialize;

/// Why the configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has an unknown key (the message names key and line).
    #[error("{path}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A value is not acceptable.
    #[error("invalid {key} = {value:?}: {reason}")]
    Invalid {
        /// The setting (`listen`, `NOMOS_LISTEN`, `auth.tokens[0].sha256`...).
        key: String,
        /// The value given.
        value: String,
        /// Why it is refused.
        reason: String,
    },
}

fn invalid(key: &str, value: impl Into<String>, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_owned(),
        value: value.into(),
        reason: reason.into(),
    }
}

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
}

/// `[gate]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGate {
    /// GATE-9: `declared` (the default) or `window`.
    pub assent_scope: Option<String>,
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
}

/// Log output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Where the data lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Database {
    /// `nomos.db` in the data directory.
    SqliteInDataDir,
    /// A SQLite file or URL.
    Sqlite(String),
    /// A PostgreSQL URL.
    Postgres(String),
}

/// How callers authenticate.
#[derive(Clone, Debug)]
pub enum AuthSetting {
    /// No authentication (loopback only).
    None,
    /// Static tokens; none configured means one is generated in the data directory.
    Tokens(Vec<StaticToken>),
    /// OIDC, plus any static tokens.
    Oidc(Box<OidcConfig>, Vec<StaticToken>),
}

/// Raw `[llm]` values that `nomos_llm::OpenAiConfig::from_env_with` reads after the
/// environment.
pub type LlmFallback = RawLlm;

/// The validated configuration.
#[derive(Debug)]
pub struct Config {
    /// Listen address.
    pub listen: SocketAddr,
    /// Data directory.
    pub data_dir: PathBuf,
    /// Database.
    pub database: Database,
    /// Log format.
    pub log_format: LogFormat,
    /// Inventory file, if any (else only `local`).
    pub inventory: Option<PathBuf>,
    /// known_hosts file.
    pub known_hosts: PathBuf,
    /// What to do with unknown host keys.
    pub host_key_policy: HostKeyPolicy,
    /// Policy file (GATE-8).
    pub policy_file: Option<PathBuf>,
    /// GATE-9: what assent approves.
    pub assent_scope: nomos_core::declared::AssentScope,
    /// Model settings from the file (the environment wins).
    pub llm: LlmFallback,
    /// A scripted model's YAML file; when set, it answers instead of any endpoint.
    pub model_script: Option<PathBuf>,
    /// The system prompt read from `agent.system_prompt_file`; `None` keeps the shipped one.
    pub system_prompt: Option<String>,
    /// The model's context size in tokens, when set (TURN-9).
    pub context_tokens: Option<usize>,
    /// The model's share of one tool result in bytes, when set.
    pub model_output_bytes: Option<usize>,
    /// Authentication.
    pub auth: AuthSetting,
    /// Sweep interval.
    pub sweep_interval: Span,
    /// Sweep thresholds and session timings, applied onto the spec defaults.
    pub sweep: RawSweep,
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

impl Config {
    /// Checks and types every value.
    pub fn validate(raw: RawConfig) -> Result<Config, ConfigError> {
        let listen_text = raw.listen.unwrap_or_else(|| "127.0.0.1:8092".to_owned());
        let listen: SocketAddr = listen_text.parse().map_err(|_| {
            invalid(
                "listen",
                &listen_text,
                "expected IP:PORT such as 127.0.0.1:8092",
            )
        })?;
        let data_dir = PathBuf::from(raw.data_dir.unwrap_or_else(|| "./data".to_owned()));
        let database = match raw.database_url.filter(|u| !u.trim().is_empty()) {
            None => Database::SqliteInDataDir,
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Database::Postgres(url)
            }
            Some(url) if url.starts_with("sqlite:") => Database::Sqlite(url),
            Some(url) => {
                let shown = url.split('@').next_back().unwrap_or_default().to_owned();
                return Err(invalid(
                    "database_url",
                    shown,
                    "expected postgres://..., postgresql://... or sqlite:...",
                ));
            }
        };
        let log_format = match raw.log_format.as_deref().unwrap_or("text") {
            "text" => LogFormat::Text,
            "json" => LogFormat::Json,
            other => return Err(invalid("log_format", other, "expected text or json")),
        };
        let host_key_policy = match raw.host_key_policy.as_deref().unwrap_or("strict") {
            "strict" => HostKeyPolicy::Strict,
            "accept_new" => HostKeyPolicy::AcceptNew,
            other => {
                return Err(invalid(
                    "host_key_policy",
                    other,
                    "expected strict or accept_new",
                ));
            }
        };
        let assent_scope = match raw.gate.assent_scope.as_deref() {
            None => nomos_core::declared::AssentScope::Declared,
            Some(text) => match nomos_core::declared::AssentScope::parse(text) {
                Some(scope) => scope,
                None => {
                    return Err(invalid(
                        "gate.assent_scope",
                        text,
                        "expected declared or window",
                    ));
                }
            },
        };
        let known_hosts = match raw.known_hosts {
            Some(path) => PathBuf::from(path),
            None => data_dir.join("known_hosts"),
        };
        let auth = auth_setting(raw.auth, listen)?;
        let system_prompt = match raw.agent.system_prompt_file {
            Some(path) => Some(system_prompt(&path)?),
            None => None,
        };
        let context_tokens = at_least("llm.context_tokens", raw.llm.context_tokens, 2048)?;
        let model_output_bytes = at_least(
            "agent.model_output_bytes",
            raw.agent.model_output_bytes,
            1024,
        )?;
        let interval = raw.sweep.interval_secs.unwrap_or(300);
        if interval == 0 {
            return Err(invalid(
                "sweep.interval_secs",
                "0",
                "must be at least 1 second",
            ));
        }
        Ok(Config {
            listen,
            data_dir,
            database,
            log_format,
            inventory: raw.inventory.map(PathBuf::from),
            known_hosts,
            host_key_policy,
            policy_file: raw.policy_file.map(PathBuf::from),
            assent_scope,
            llm: raw.llm,
            model_script: raw
                .model
                .script
                .filter(|path| !path.trim().is_empty())
                .map(PathBuf::from),
            system_prompt,
            context_tokens,
            model_output_bytes,
            auth,
            sweep_interval: Span::from_secs(interval as i64),
            sweep: raw.sweep,
        })
    }
}

/// A size that must be at least `min` when it is set.
fn at_least(key: &str, value: Option<u64>, min: u64) -> Result<Option<usize>, ConfigError> {
    match value {
        None => Ok(None),
        Some(n) if n < min => Err(invalid(
            key,
            n.to_string(),
            format!("must be at least {min}"),
        )),
        Some(n) => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
    }
}

fn auth_setting(raw: RawAuth, listen: SocketAddr) -> Result<AuthSetting, ConfigError> {
    let mut tokens = Vec::new();
    for (idx, token) in raw.tokens.iter().enumerate() {
        let role = match token.role.as_deref().unwrap_or("operator") {
            "operator" => Role::Operator,
            "viewer" => Role::Viewer,
            other => {
                return Err(invalid(
                    &format!("auth.tokens[{idx}].role"),
                    other,
                    "expected operator or viewer",
                ));
            }
        };
        let parsed = StaticToken::from_hex(&token.name, &token.sha256, role).map_err(|e| {
            invalid(
                &format!("auth.tokens[{idx}].sha256"),
                &token.sha256,
                e.to_string(),
            )
        })?;
        tokens.push(parsed);
    }
    match raw.mode.as_deref().unwrap_or("token") {
        "none" => {
            if !listen.ip().is_loopback() {
                return Err(invalid(
                    "auth.mode",
                    "none",
                    format!(
                        "running without auth is only allowed on a loopback address, not {listen}"
                    ),
                ));
            }
            Ok(AuthSetting::None)
        }
        "token" => Ok(AuthSetting::Tokens(tokens)),
        "oidc" => {
            let Some(oidc) = raw.oidc else {
                return Err(invalid("auth.mode", "oidc", "needs an [auth.oidc] table"));
            };
            Ok(AuthSetting::Oidc(Box::new(oidc_config(oidc)?), tokens))
        }
        other => Err(invalid("auth.mode", other, "expected token, oidc or none")),
    }
}

fn oidc_config(oidc: RawOidc) -> Result<OidcConfig, ConfigError> {
    let required = |key: &str, value: Option<String>| {
        value
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| invalid(key, "", "is required when auth.mode = \"oidc\""))
    };
    let issuer = required("auth.oidc.issuer", oidc.issuer)?;
    let audience = required("auth.oidc.audience", oidc.audience)?;
    let jwks_url = http_url(
        "auth.oidc.jwks_url",
        required("auth.oidc.jwks_url", oidc.jwks_url)?,
    )?;
    let client = match (
        oidc.client_id,
        oidc.authorization_endpoint,
        oidc.token_endpoint,
    ) {
        (None, None, None) => None,
        (Some(client_id), Some(authorization), Some(token)) => Some(OidcClient {
            authorization_endpoint: http_url("auth.oidc.authorization_endpoint", authorization)?,
            token_endpoint: http_url("auth.oidc.token_endpoint", token)?,
            client_id,
            scope: oidc.scope,
        }),
        (client_id, authorization, token) => {
            let missing: Vec<&str> = [
                ("client_id", client_id.is_none()),
                ("authorization_endpoint", authorization.is_none()),
                ("token_endpoint", token.is_none()),
            ]
            .into_iter()
            .filter_map(|(key, absent)| if absent { Some(key) } else { None })
            .collect();
            return Err(invalid(
                "auth.oidc",
                format!("missing {}", missing.join(", ")),
                "single sign-on in the web UI needs client_id, authorization_endpoint and \
                 token_endpoint together (or none of them)",
            ));
        }
    };
    Ok(OidcConfig {
        issuer,
        audience,
        jwks_url,
        role_claim: oidc.role_claim.unwrap_or_else(|| "roles".to_owned()),
        operator_value: oidc
            .operator_value
            .unwrap_or_else(|| "nomos-operator".to_owned()),
        viewer_value: oidc
            .viewer_value
            .unwrap_or_else(|| "nomos-viewer".to_owned()),
        leeway: Duration::from_secs(oidc.leeway_secs.unwrap_or(60)),
        jwks_ttl: Duration::from_secs(300),
        client,
    })
}

/// Reads the system prompt override; a missing, unreadable or empty file is refused.
fn system_prompt(path: &str) -> Result<String, ConfigError> {
    const KEY: &str = "agent.system_prompt_file";
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Err(invalid(KEY, path, "the file is empty")),
        Ok(text) => Ok(text),
        Err(error) => Err(invalid(KEY, path, format!("cannot read it: {error}"))),
    }
}

fn http_url(key: &str, url: String) -> Result<String, ConfigError> {
    if url.starts_with("https://") || url.starts_with("http://") {
        Ok(url)
    } else {
        Err(invalid(key, url, "expected an http(s) URL"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(toml: &str) -> Result<Config, ConfigError> {
        Config::validate(RawConfig::parse(toml, Path::new("nomos.toml"))?)
    }

    #[test]
    fn the_example_file_is_valid_and_gives_the_defaults() {
        let config = check(include_str!("../../../nomos.example.toml")).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8092");
        assert_eq!(config.sweep_interval, Span::from_mins(5));
    }

    // rule: TURN-9
    #[test]
    fn the_context_size_and_the_models_share_of_a_result_are_read_and_bounded() {
        let config =
            check("[llm]\ncontext_tokens = 32768\n[agent]\nmodel_output_bytes = 4096\n").unwrap();
        assert_eq!(config.context_tokens, Some(32768));
        assert_eq!(config.model_output_bytes, Some(4096));
        let err = check("[llm]\ncontext_tokens = 100\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid llm.context_tokens = \"100\": must be at least 2048"
        );
    }

    // rule: GATE-9
    #[test]
    fn the_assent_scope_defaults_to_declared_and_a_bad_one_is_named() {
        use nomos_core::declared::AssentScope;
        assert_eq!(check("").unwrap().assent_scope, AssentScope::Declared);
        let config = check("[gate]\nassent_scope = \"window\"\n").unwrap();
        assert_eq!(config.assent_scope, AssentScope::Window);
        let err = check("[gate]\nassent_scope = \"loose\"\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid gate.assent_scope = \"loose\": expected declared or window"
        );
    }

    // rule: TURN-12
    #[test]
    fn the_reply_deadline_is_read_from_the_llm_table() {
        let config = check("[llm]\nreply_deadline_secs = 30").unwrap();
        assert_eq!(config.llm.reply_deadline_secs, Some(30));
        assert_eq!(check("").unwrap().llm.reply_deadline_secs, None);
    }

    #[test]
    fn an_empty_file_gives_the_defaults() {
        let config = check("").unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8092");
        assert_eq!(config.data_dir, PathBuf::from("./data"));
        assert_eq!(config.database, Database::SqliteInDataDir);
        assert!(matches!(config.auth, AuthSetting::Tokens(ref t) if t.is_empty()));
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let err = check("listen = \"127.0.0.1:1\"\nlisten_adress = \"x\"\n").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("listen_adress"), "{text}");
        assert!(text.contains("line 2"), "{text}");
    }

    #[test]
    fn a_bad_value_names_key_value_and_reason() {
        let err = check("listen = \"localhost\"").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid listen = \"localhost\": expected IP:PORT such as 127.0.0.1:8092"
        );
    }

    #[test]
    fn no_auth_is_refused_on_a_non_loopback_address() {
        let err = check("listen = \"0.0.0.0:8092\"\n[auth]\nmode = \"none\"").unwrap_err();
        assert!(err.to_string().contains("loopback"), "{err}");
        assert!(check("[auth]\nmode = \"none\"").is_ok());
    }

    #[test]
    fn a_token_hash_that_is_not_sha256_is_refused() {
        let err = check("[[auth.tokens]]\nname = \"a\"\nsha256 = \"abc\"").unwrap_err();
        assert!(err.to_string().contains("auth.tokens[0].sha256"), "{err}");
    }

    #[test]
    fn environment_overrides_the_file() {
        let mut raw = RawConfig::parse("listen = \"127.0.0.1:1\"", Path::new("f")).unwrap();
        raw.apply_env(|name| (name == "NOMOS_LISTEN").then(|| "127.0.0.1:2".to_owned()));
        assert_eq!(Config::validate(raw).unwrap().listen.port(), 2);
    }

    #[test]
    fn a_postgres_url_switches_the_store() {
        let config = check("database_url = \"postgres://u@localhost/db\"").unwrap();
        assert!(matches!(config.database, Database::Postgres(_)));
        let err = check("database_url = \"mysql://u:pw@host/db\"").unwrap_err();
        assert!(!err.to_string().contains("pw"), "{err}");
    }

    const OIDC: &str = "[auth]\nmode = \"oidc\"\n[auth.oidc]\nissuer = \"https://id.example\"\n\
                        audience = \"nomos\"\njwks_url = \"https://id.example/jwks\"\n";

    #[test]
    fn oidc_client_settings_come_from_the_file() {
        let text = format!(
            "{OIDC}client_id = \"nomos-web\"\nauthorization_endpoint = \"https://id.example/auth\"\n\
             token_endpoint = \"https://id.example/token\"\nscope = \"openid\"\n"
        );
        let config = check(&text).unwrap();
        let AuthSetting::Oidc(oidc, _) = config.auth else {
            panic!("expected oidc, got {:?}", config.auth);
        };
        let client = oidc.client.unwrap();
        assert_eq!(client.client_id, "nomos-web");
        assert_eq!(client.authorization_endpoint, "https://id.example/auth");
        assert_eq!(client.token_endpoint, "https://id.example/token");
        assert_eq!(client.scope.as_deref(), Some("openid"));
    }

    #[test]
    fn oidc_without_client_settings_has_no_sign_in_client() {
        let AuthSetting::Oidc(oidc, _) = check(OIDC).unwrap().auth else {
            panic!("expected oidc");
        };
        assert_eq!(oidc.client, None);
    }

    #[test]
    fn a_partial_oidc_client_names_what_is_missing() {
        let err = check(&format!("{OIDC}client_id = \"nomos-web\"\n")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("authorization_endpoint, token_endpoint"),
            "{text}"
        );
        let err = check(&format!(
            "{OIDC}client_id = \"c\"\nauthorization_endpoint = \"id.example/auth\"\n\
             token_endpoint = \"https://id.example/token\"\n"
        ))
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid auth.oidc.authorization_endpoint = \"id.example/auth\""),
            "{err}"
        );
    }

    #[test]
    fn oidc_settings_come_from_the_environment() {
        let mut raw = RawConfig::parse("[auth]\nmode = \"oidc\"", Path::new("f")).unwrap();
        raw.apply_env(|name| {
            let value = match name {
                "NOMOS_OIDC_ISSUER" => "https://id.example",
                "NOMOS_OIDC_AUDIENCE" => "nomos",
                "NOMOS_OIDC_JWKS_URL" => "https://id.example/jwks",
                "NOMOS_OIDC_CLIENT_ID" => "from-env",
                "NOMOS_OIDC_AUTHORIZATION_ENDPOINT" => "https://id.example/auth",
                "NOMOS_OIDC_TOKEN_ENDPOINT" => "https://id.example/token",
                _ => return None,
            };
            Some(value.to_owned())
        });
        let AuthSetting::Oidc(oidc, _) = Config::validate(raw).unwrap().auth else {
            panic!("expected oidc");
        };
        assert_eq!(oidc.issuer, "https://id.example");
        assert_eq!(oidc.client.unwrap().client_id, "from-env");
    }

    #[test]
    fn oidc_without_an_issuer_names_the_key() {
        let err = check("[auth]\nmode = \"oidc\"\n[auth.oidc]\naudience = \"n\"").unwrap_err();
        assert!(
            err.to_string().starts_with("invalid auth.oidc.issuer"),
            "{err}"
        );
    }

    #[test]
    fn a_model_script_comes_from_the_file_or_the_environment() {
        let config = check("[model]\nscript = \"replies.yaml\"").unwrap();
        assert_eq!(config.model_script, Some(PathBuf::from("replies.yaml")));
        assert_eq!(check("").unwrap().model_script, None);
        let mut raw = RawConfig::parse("[model]\nscript = \"a.yaml\"", Path::new("f")).unwrap();
        raw.apply_env(|name| (name == "NOMOS_MODEL_SCRIPT").then(|| "b.yaml".to_owned()));
        let config = Config::validate(raw).unwrap();
        assert_eq!(config.model_script, Some(PathBuf::from("b.yaml")));
    }

    #[test]
    fn a_system_prompt_file_replaces_the_shipped_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("soul.md");
        std::fs::write(&path, "You are a careful operator.\n").unwrap();
        let text = format!(
            "[agent]\nsystem_prompt_file = {:?}",
            path.display().to_string()
        );
        let config = check(&text).unwrap();
        assert_eq!(
            config.system_prompt.as_deref(),
            Some("You are a careful operator.\n")
        );
        assert_eq!(check("").unwrap().system_prompt, None);
    }

    #[test]
    fn a_missing_system_prompt_file_stops_start_up_naming_it() {
        let mut raw = RawConfig::default();
        raw.apply_env(|name| {
            (name == "NOMOS_SYSTEM_PROMPT_FILE").then(|| "/nonexistent/soul.md".to_owned())
        });
        let err = Config::validate(raw).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "invalid agent.system_prompt_file = \"/nonexistent/soul.md\": cannot read it:"
            ),
            "{err}"
        );
    }

    #[test]
    fn an_empty_or_unreadable_system_prompt_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.md");
        std::fs::write(&empty, "  \n").unwrap();
        let text = format!(
            "[agent]\nsystem_prompt_file = {:?}",
            empty.display().to_string()
        );
        let err = check(&text).unwrap_err().to_string();
        assert!(err.ends_with("the file is empty"), "{err}");
        // A directory cannot be read as text.
        let text = format!(
            "[agent]\nsystem_prompt_file = {:?}",
            dir.path().display().to_string()
        );
        let err = check(&text).unwrap_err().to_string();
        assert!(err.contains("cannot read it"), "{err}");
    }
}
