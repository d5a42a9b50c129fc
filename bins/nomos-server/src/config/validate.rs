//! The second step: [`Config::validate`] turns raw values into typed settings, or a
//! [`ConfigError`] naming the key, the value and why. No raw type is kept in [`Config`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use nomos_core::Span;
use nomos_http::{OidcClient, OidcConfig, Role, StaticToken};
use nomos_ssh::HostKeyPolicy;

use super::raw::{RawAuth, RawConfig, RawOidc, RawSweep};
use super::{ConfigError, invalid};
use crate::features::{Built, Feature};

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
    /// OIDC, plus any static tokens (only read with the `oidc` feature; validation refuses
    /// it without).
    #[cfg_attr(not(feature = "oidc"), allow(dead_code))]
    Oidc(Box<OidcConfig>, Vec<StaticToken>),
}

/// The `[llm]` table's endpoint settings, which the `NOMOS_LLM_*` variables override.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LlmEndpoint {
    /// Base URL.
    pub base_url: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// API key.
    pub api_key: Option<String>,
    /// TURN-12: seconds one whole reply may take.
    pub reply_deadline_secs: Option<u64>,
}

/// Sweep thresholds and session timings that were set; each unset one keeps its spec
/// default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SweepSettings {
    /// SWEEP-1 idle time before a nudge.
    pub idle_after: Option<Span>,
    /// EXEC-3 running timeout.
    pub running_timeout: Option<Span>,
    /// EXEC-3 start-up staleness.
    pub startup_stale_after: Option<Span>,
    /// GATE-7 approval expiry.
    pub approval_ttl: Option<Span>,
    /// GATE-4 assent window.
    pub assent_window: Option<Span>,
    /// REPLICA-2: how old another instance's heartbeat may be before it counts as gone.
    pub heartbeat_timeout: Option<Span>,
}

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
    /// AUTHZ-3: the two-person rules (`[[gate.approvers]]`), checked against the inventory's
    /// tags at start-up.
    pub approvers: Vec<nomos_core::authz::ApproverRule>,
    /// AUTHZ-4: the channels waiting requests are sent to.
    pub channels: Vec<nomos_http::channels::Channel>,
    /// AUTHZ-4: the console's URL for the channels' card links, when set.
    pub notify_base_url: Option<String>,
    /// AUTHZ-4: the OTLP/HTTP logs URL decisions are exported to, when set.
    pub otlp_logs_url: Option<String>,
    /// Model settings from the file (the environment wins, see `env::llm_lookup`).
    pub llm: LlmEndpoint,
    /// A scripted model's YAML file; when set, it answers instead of any endpoint.
    pub model_script: Option<PathBuf>,
    /// The system prompt read from `agent.system_prompt_file`; `None` keeps the shipped one.
    pub system_prompt: Option<String>,
    /// The model's context size in tokens, when set (TURN-9).
    pub context_tokens: Option<usize>,
    /// The model's share of one tool result in bytes, when set.
    pub model_output_bytes: Option<usize>,
    /// SAFE-2: where backups go on each host and how much of them it keeps.
    pub backup: nomos_core::safety::BackupConfig,
    /// FLEET-5: the tags whose groups run a canary first (`[agent] canary_tags`).
    pub canary_tags: Vec<String>,
    /// SAFE-1: how many Nomos snapshots each Proxmox guest keeps.
    pub snapshot: nomos_core::snapshot::SnapshotConfig,
    /// Authentication.
    pub auth: AuthSetting,
    /// Sweep interval.
    pub sweep_interval: Span,
    /// Sweep thresholds and session timings, applied onto the spec defaults.
    pub sweep: SweepSettings,
}

impl Config {
    /// Checks and types every value, for this binary's optional parts.
    pub fn validate(raw: RawConfig) -> Result<Config, ConfigError> {
        Config::validate_for(raw, Built::THIS)
    }

    /// Checks and types every value; a setting that needs a part `built` lacks is refused,
    /// naming the setting and the feature.
    pub fn validate_for(raw: RawConfig, built: Built) -> Result<Config, ConfigError> {
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
                built.require(Feature::Postgres, "database_url")?;
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
        let mut approvers = Vec::new();
        for (idx, rule) in raw.gate.approvers.iter().enumerate() {
            let class = match rule.class.as_deref() {
                None => None,
                Some(text) => Some(text.parse().map_err(|_| {
                    invalid(
                        &format!("gate.approvers[{idx}].class"),
                        text,
                        "expected config_mutation, destructive or unknown",
                    )
                })?),
            };
            approvers.push(nomos_core::authz::ApproverRule {
                class,
                tag: rule.tag.clone(),
                rule: rule.rule.clone(),
                approvers: rule.approvers,
            });
        }
        let otlp_logs_url = match raw.telemetry.otlp_endpoint.as_deref() {
            None => None,
            Some(endpoint) => {
                let url = crate::telemetry::logs_url(endpoint).map_err(|_| {
                    invalid(
                        "telemetry.otlp_endpoint",
                        endpoint,
                        "expected http://HOST[:PORT][/PATH] (an OTLP/HTTP collector; https is not built in, put a local collector in front)",
                    )
                })?;
                built.require(Feature::Otlp, "telemetry.otlp_endpoint")?;
                Some(url)
            }
        };
        let mut channels = Vec::new();
        for (idx, channel) in raw.notify.channels.iter().enumerate() {
            let key = |field: &str| format!("notify.channels[{idx}].{field}");
            let url = http_url(&key("url"), channel.url.clone())?;
            channels.push(match channel.kind.as_str() {
                "webhook" => nomos_http::channels::Channel::Webhook {
                    url,
                    secret: channel
                        .secret
                        .clone()
                        .filter(|s| !s.is_empty())
                        .ok_or_else(|| invalid(&key("secret"), "", "a webhook needs a secret"))?,
                },
                "ntfy" => nomos_http::channels::Channel::Ntfy {
                    server: url,
                    topic: channel
                        .topic
                        .clone()
                        .filter(|t| !t.is_empty())
                        .ok_or_else(|| invalid(&key("topic"), "", "ntfy needs a topic"))?,
                },
                "slack" => nomos_http::channels::Channel::Slack { url },
                other => {
                    return Err(invalid(
                        &key("kind"),
                        other,
                        "expected webhook, ntfy or slack",
                    ));
                }
            });
        }
        let known_hosts = match raw.known_hosts {
            Some(path) => PathBuf::from(path),
            None => data_dir.join("known_hosts"),
        };
        let auth = auth_setting(raw.auth, listen, built)?;
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
        let mut backup = nomos_core::safety::BackupConfig::spec_defaults();
        if let Some(root) = raw.agent.backup_root.filter(|r| !r.trim().is_empty()) {
            if !root.starts_with('/') {
                return Err(invalid(
                    "agent.backup_root",
                    root,
                    "must be an absolute path".to_owned(),
                ));
            }
            backup.root = root;
        }
        if let Some(mib) = at_least("agent.backup_max_mib", raw.agent.backup_max_mib, 1)? {
            backup.max_kib = (mib as u64).saturating_mul(1024);
        }
        if let Some(days) = raw.agent.backup_max_age_days {
            backup.max_age_days = days;
        }
        let mut canary_tags = Vec::with_capacity(raw.agent.canary_tags.len());
        for (at, tag) in raw.agent.canary_tags.into_iter().enumerate() {
            let tag = tag.trim().trim_start_matches("tag:").to_owned();
            if tag.is_empty() {
                return Err(invalid(
                    &format!("agent.canary_tags[{at}]"),
                    "\"\"",
                    "a tag name must not be empty".to_owned(),
                ));
            }
            canary_tags.push(tag);
        }
        let mut snapshot = nomos_core::snapshot::SnapshotConfig::spec_defaults();
        if let Some(keep) = at_least("agent.snapshot_keep", raw.agent.snapshot_keep, 1)? {
            snapshot.keep = keep;
        }
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
            approvers,
            channels,
            notify_base_url: raw.notify.base_url,
            otlp_logs_url,
            llm: LlmEndpoint {
                base_url: raw.llm.base_url,
                model: raw.llm.model,
                api_key: raw.llm.api_key,
                reply_deadline_secs: raw.llm.reply_deadline_secs,
            },
            model_script: raw
                .model
                .script
                .filter(|path| !path.trim().is_empty())
                .map(PathBuf::from),
            system_prompt,
            context_tokens,
            model_output_bytes,
            backup,
            canary_tags,
            snapshot,
            auth,
            sweep_interval: Span::from_secs(interval as i64),
            sweep: sweep_settings(&raw.sweep),
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

fn auth_setting(
    raw: RawAuth,
    listen: SocketAddr,
    built: Built,
) -> Result<AuthSetting, ConfigError> {
    let mut tokens = Vec::new();
    for (idx, token) in raw.tokens.iter().enumerate() {
        // AUTHZ-1: operator, viewer or agent.
        let role: Role = token
            .role
            .as_deref()
            .unwrap_or("operator")
            .parse()
            .map_err(|e: String| {
                invalid(
                    &format!("auth.tokens[{idx}].role"),
                    token.role.as_deref().unwrap_or_default(),
                    e,
                )
            })?;
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
            built.require(Feature::Oidc, "auth.mode = \"oidc\"")?;
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
        agent_value: oidc.agent_value.unwrap_or_else(|| "nomos-agent".to_owned()),
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

/// The sweep settings that were set, as spans.
fn sweep_settings(sweep: &RawSweep) -> SweepSettings {
    let span = |secs: Option<u64>| secs.map(|s| Span::from_secs(s as i64));
    SweepSettings {
        idle_after: span(sweep.idle_secs),
        running_timeout: span(sweep.running_timeout_secs),
        startup_stale_after: span(sweep.startup_stale_secs),
        approval_ttl: span(sweep.approval_ttl_secs),
        assent_window: span(sweep.assent_window_secs),
        heartbeat_timeout: span(sweep.heartbeat_timeout_secs.map(|s| s.max(1))),
    }
}
