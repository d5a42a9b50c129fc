//! Configuration of the OpenAI-compatible model: built by hand or read from `NOMOS_LLM_*`.

use std::env::VarError;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};

use crate::error::ConfigError;
use crate::retry::RetryPolicy;
use crate::wire_log::WireLog;

/// The endpoint's base URL, for example `https://openrouter.ai/api/v1` (required).
pub const ENV_BASE_URL: &str = "NOMOS_LLM_BASE_URL";
/// The model name the endpoint knows, for example `openai/gpt-4o-mini` (required).
pub const ENV_MODEL: &str = "NOMOS_LLM_MODEL";
/// The API key, sent as `Authorization: Bearer ...` (optional: local servers need none).
pub const ENV_API_KEY: &str = "NOMOS_LLM_API_KEY";
/// Seconds to wait for the reply (and, when streaming, between two chunks). Default 120.
pub const ENV_TIMEOUT_SECS: &str = "NOMOS_LLM_TIMEOUT_SECS";
/// TURN-12: seconds a whole reply may take, however steadily it streams. Default 600.
pub const ENV_REPLY_DEADLINE_SECS: &str = "NOMOS_LLM_REPLY_DEADLINE_SECS";
/// Largest number of tokens the model may produce (optional).
pub const ENV_MAX_TOKENS: &str = "NOMOS_LLM_MAX_TOKENS";
/// Sampling temperature between 0 and 2 (optional).
pub const ENV_TEMPERATURE: &str = "NOMOS_LLM_TEMPERATURE";
/// `on`/`off` (also `true`/`false`, `1`/`0`, `yes`/`no`): stream the reply. Default on.
pub const ENV_STREAM: &str = "NOMOS_LLM_STREAM";
/// OpenRouter's `HTTP-Referer` header (optional).
pub const ENV_HTTP_REFERER: &str = "NOMOS_LLM_HTTP_REFERER";
/// OpenRouter's `X-Title` header (optional).
pub const ENV_X_TITLE: &str = "NOMOS_LLM_X_TITLE";

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// TURN-12: the overall deadline of one reply (10 minutes).
pub const DEFAULT_REPLY_DEADLINE: Duration = Duration::from_secs(600);
const CHAT_COMPLETIONS: &str = "chat/completions";

/// How the reply travels back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Server-sent events: text deltas reach the sink as they arrive, usage comes last.
    Streaming,
    /// One JSON reply; the whole text reaches the sink at once.
    Buffered,
}

/// An API key. It is sent to the endpoint and nowhere else: `Debug` prints `ApiKey(redacted)`,
/// there is no `Display`, and no error message contains it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Checks a key: not empty, no whitespace or control characters.
    pub fn new(key: impl Into<String>) -> Result<Self, ConfigError> {
        Self::parse(key.into(), "api_key")
    }

    fn parse(key: String, setting: &str) -> Result<Self, ConfigError> {
        if key.is_empty() {
            return Err(ConfigError::invalid(setting, "the key is empty"));
        }
        if key.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ConfigError::invalid(
                setting,
                "the key contains whitespace or control characters",
            ));
        }
        Ok(ApiKey(key))
    }

    pub(crate) fn header_value(&self) -> Option<HeaderValue> {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", self.0)).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(redacted)")
    }
}

/// Everything [`crate::OpenAiModel`] needs to talk to an endpoint. There is no `Default`: the
/// endpoint and model must be named. Build one with [`OpenAiConfig::builder`] or
/// [`OpenAiConfig::from_env`].
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    endpoint: Url,
    model: String,
    api_key: Option<ApiKey>,
    headers: Vec<(HeaderName, HeaderValue)>,
    timeout: Duration,
    reply_deadline: Duration,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    transport: Transport,
    retry: RetryPolicy,
    wire_log: Option<WireLog>,
}

impl OpenAiConfig {
    /// Starts a configuration for `base_url` (for example `http://127.0.0.1:11434/v1`; a URL
    /// that already ends in `/chat/completions` is used as is) and `model`.
    pub fn builder(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfigBuilder {
        OpenAiConfigBuilder {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            headers: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            reply_deadline: DEFAULT_REPLY_DEADLINE,
            max_tokens: None,
            temperature: None,
            transport: Transport::Streaming,
            retry: RetryPolicy::standard(),
            names: SettingNames::BUILDER,
        }
    }

    /// Reads the configuration from the process environment (see the `ENV_*` constants).
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_env_with(|name| std::env::var(name))
    }

    /// Reads the configuration through `var`, which has the signature of [`std::env::var`]
    /// (tests pass a map instead of touching the process environment).
    pub fn from_env_with(
        var: impl Fn(&str) -> Result<String, VarError>,
    ) -> Result<Self, ConfigError> {
        let lookup = |name: &str| -> Result<Option<String>, ConfigError> {
            match var(name) {
                Ok(value) => Ok(Some(value)),
                Err(VarError::NotPresent) => Ok(None),
                Err(VarError::NotUnicode(_)) => {
                    Err(ConfigError::invalid(name, "the value is not valid UTF-8"))
                }
            }
        };
        let required = |name: &str| -> Result<String, ConfigError> {
            match lookup(name)? {
                Some(value) if !value.trim().is_empty() => Ok(value.trim().to_owned()),
                Some(_) => Err(ConfigError::invalid(name, "the value is empty")),
                None => Err(ConfigError::Missing {
                    setting: name.to_owned(),
                }),
            }
        };
        let mut builder = OpenAiConfig::builder(required(ENV_BASE_URL)?, required(ENV_MODEL)?);
        builder.names = SettingNames::ENV;
        if let Some(key) = lookup(ENV_API_KEY)? {
            builder.api_key = Some(ApiKey::parse(key, ENV_API_KEY)?);
        }
        if let Some(secs) = lookup(ENV_TIMEOUT_SECS)? {
            let secs: u64 = secs.trim().parse().map_err(|_| {
                ConfigError::invalid(
                    ENV_TIMEOUT_SECS,
                    format!("expected a whole number of seconds, got {secs:?}"),
                )
            })?;
            builder = builder.timeout(Duration::from_secs(secs));
        }
        if let Some(secs) = lookup(ENV_REPLY_DEADLINE_SECS)? {
            let secs: u64 = secs.trim().parse().map_err(|_| {
                ConfigError::invalid(
                    ENV_REPLY_DEADLINE_SECS,
                    format!("expected a whole number of seconds, got {secs:?}"),
                )
            })?;
            builder = builder.reply_deadline(Duration::from_secs(secs));
        }
        if let Some(tokens) = lookup(ENV_MAX_TOKENS)? {
            let tokens: u32 = tokens.trim().parse().map_err(|_| {
                ConfigError::invalid(
                    ENV_MAX_TOKENS,
                    format!("expected a positive whole number, got {tokens:?}"),
                )
            })?;
            builder = builder.max_tokens(tokens);
        }
        if let Some(temperature) = lookup(ENV_TEMPERATURE)? {
            let parsed: f32 = temperature.trim().parse().map_err(|_| {
                ConfigError::invalid(
                    ENV_TEMPERATURE,
                    format!("expected a number between 0 and 2, got {temperature:?}"),
                )
            })?;
            builder = builder.temperature(parsed);
        }
        if let Some(stream) = lookup(ENV_STREAM)? {
            let transport = match stream.trim().to_ascii_lowercase().as_str() {
                "on" | "true" | "1" | "yes" => Transport::Streaming,
                "off" | "false" | "0" | "no" => Transport::Buffered,
                _ => {
                    return Err(ConfigError::invalid(
                        ENV_STREAM,
                        format!("expected on or off, got {stream:?}"),
                    ));
                }
            };
            builder = builder.transport(transport);
        }
        if let Some(referer) = lookup(ENV_HTTP_REFERER)? {
            builder.push_header(ENV_HTTP_REFERER, "HTTP-Referer", &referer)?;
        }
        if let Some(title) = lookup(ENV_X_TITLE)? {
            builder.push_header(ENV_X_TITLE, "X-Title", &title)?;
        }
        builder.build()
    }

    /// The full URL requests go to (`.../chat/completions`).
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// The model name sent with every request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Whether an API key is configured (the key itself is not readable).
    pub fn has_api_key(&self) -> bool {
        self.api_key.is_some()
    }

    /// The per-request timeout (when streaming, also the longest silence between chunks).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// TURN-12: how long one whole reply may take, streamed or not, besides the timeout
    /// between chunks.
    pub fn reply_deadline(&self) -> Duration {
        self.reply_deadline
    }

    /// The token limit sent as `max_tokens`, if any.
    pub fn max_tokens(&self) -> Option<u32> {
        self.max_tokens
    }

    /// The sampling temperature, if any.
    pub fn temperature(&self) -> Option<f32> {
        self.temperature
    }

    /// Streaming or one JSON reply.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The retry policy for retryable failures.
    pub fn retry(&self) -> &RetryPolicy {
        &self.retry
    }

    /// Replaces the retry policy (tests use tiny delays).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Keeps the exact bytes of every exchange in `dir` (created when first written): the
    /// request body, the response body (a whole reply or the raw event stream) and their
    /// status and content type, in files named by the hash of the request. For recording
    /// what a real server sends, so a test can serve the same bytes.
    pub fn with_wire_log(mut self, dir: impl Into<PathBuf>) -> Self {
        self.wire_log = Some(WireLog::new(dir));
        self
    }

    /// Where exchanges are kept, if they are.
    pub fn wire_log_dir(&self) -> Option<&Path> {
        self.wire_log.as_ref().map(WireLog::dir)
    }

    pub(crate) fn wire_log(&self) -> Option<&WireLog> {
        self.wire_log.as_ref()
    }

    pub(crate) fn api_key(&self) -> Option<&ApiKey> {
        self.api_key.as_ref()
    }

    pub(crate) fn headers(&self) -> &[(HeaderName, HeaderValue)] {
        &self.headers
    }
}

/// Which names errors use: environment variables or builder fields.
#[derive(Clone, Copy, Debug)]
struct SettingNames {
    base_url: &'static str,
    model: &'static str,
    timeout: &'static str,
    reply_deadline: &'static str,
    max_tokens: &'static str,
    temperature: &'static str,
}

impl SettingNames {
    const BUILDER: SettingNames = SettingNames {
        base_url: "base_url",
        model: "model",
        timeout: "timeout",
        reply_deadline: "reply_deadline",
        max_tokens: "max_tokens",
        temperature: "temperature",
    };
    const ENV: SettingNames = SettingNames {
        base_url: ENV_BASE_URL,
        model: ENV_MODEL,
        timeout: ENV_TIMEOUT_SECS,
        reply_deadline: ENV_REPLY_DEADLINE_SECS,
        max_tokens: ENV_MAX_TOKENS,
        temperature: ENV_TEMPERATURE,
    };
}

/// Collects settings for an [`OpenAiConfig`]; [`OpenAiConfigBuilder::build`] checks them all.
#[derive(Clone, Debug)]
pub struct OpenAiConfigBuilder {
    base_url: String,
    model: String,
    api_key: Option<ApiKey>,
    headers: Vec<(HeaderName, HeaderValue)>,
    timeout: Duration,
    reply_deadline: Duration,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    transport: Transport,
    retry: RetryPolicy,
    names: SettingNames,
}

impl OpenAiConfigBuilder {
    /// Sets the API key.
    pub fn api_key(mut self, key: ApiKey) -> Self {
        self.api_key = Some(key);
        self
    }

    /// Adds a header sent with every request (OpenRouter's `HTTP-Referer`, `X-Title`).
    /// `Authorization` and `Content-Type` are refused: the key goes through [`Self::api_key`].
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, ConfigError> {
        self.push_header("header", name, value)?;
        Ok(self)
    }

    fn push_header(&mut self, setting: &str, name: &str, value: &str) -> Result<(), ConfigError> {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            ConfigError::invalid(setting, format!("{name:?} is not a valid header name"))
        })?;
        if header == AUTHORIZATION || header == CONTENT_TYPE {
            return Err(ConfigError::invalid(
                setting,
                format!("the {name} header is set by the client itself"),
            ));
        }
        let value = HeaderValue::from_str(value.trim()).map_err(|_| {
            ConfigError::invalid(
                setting,
                format!("the value of header {name} has characters a header cannot carry"),
            )
        })?;
        self.headers.push((header, value));
        Ok(())
    }

    /// Sets the request timeout (default 120 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// TURN-12: sets the overall deadline of one reply (default 10 minutes).
    pub fn reply_deadline(mut self, deadline: Duration) -> Self {
        self.reply_deadline = deadline;
        self
    }

    /// Sets `max_tokens`.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the sampling temperature (0 to 2).
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Chooses streaming (the default) or one JSON reply.
    pub fn transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    /// Sets the retry policy (default [`RetryPolicy::standard`]).
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Checks every setting and returns the configuration.
    pub fn build(self) -> Result<OpenAiConfig, ConfigError> {
        let names = self.names;
        let endpoint = parse_endpoint(names.base_url, &self.base_url)?;
        let model = self.model.trim().to_owned();
        if model.is_empty() {
            return Err(ConfigError::invalid(names.model, "the model name is empty"));
        }
        if self.timeout.is_zero() {
            return Err(ConfigError::invalid(
                names.timeout,
                "the timeout must be above zero",
            ));
        }
        if self.reply_deadline.is_zero() {
            return Err(ConfigError::invalid(
                names.reply_deadline,
                "the reply deadline must be above zero",
            ));
        }
        if self.max_tokens == Some(0) {
            return Err(ConfigError::invalid(names.max_tokens, "must be above zero"));
        }
        if let Some(t) = self.temperature
            && !(t.is_finite() && (0.0..=2.0).contains(&t))
        {
            return Err(ConfigError::invalid(
                names.temperature,
                format!("expected a number between 0 and 2, got {t}"),
            ));
        }
        self.retry.check()?;
        Ok(OpenAiConfig {
            endpoint,
            model,
            api_key: self.api_key,
            headers: self.headers,
            timeout: self.timeout,
            reply_deadline: self.reply_deadline,
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            transport: self.transport,
            retry: self.retry,
            wire_log: None,
        })
    }
}

fn parse_endpoint(setting: &str, base_url: &str) -> Result<Url, ConfigError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let url = Url::parse(trimmed)
        .map_err(|err| ConfigError::invalid(setting, format!("{trimmed:?} is not a URL: {err}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ConfigError::invalid(
            setting,
            format!(
                "expected an http or https URL, got scheme {:?}",
                url.scheme()
            ),
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ConfigError::invalid(
            setting,
            format!("{trimmed:?} has no host"),
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ConfigError::invalid(
            setting,
            "the base URL must not carry a query or a fragment",
        ));
    }
    if url.path().ends_with(CHAT_COMPLETIONS) {
        return Ok(url);
    }
    Url::parse(&format!("{trimmed}/{CHAT_COMPLETIONS}"))
        .map_err(|err| ConfigError::invalid(setting, format!("{trimmed:?} is not a URL: {err}")))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn from_vars(vars: &[(&str, &str)]) -> Result<OpenAiConfig, ConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        OpenAiConfig::from_env_with(|name| map.get(name).cloned().ok_or(VarError::NotPresent))
    }

    fn base() -> Vec<(&'static str, &'static str)> {
        vec![
            (ENV_BASE_URL, "https://openrouter.ai/api/v1/"),
            (ENV_MODEL, "openai/gpt-4o-mini"),
        ]
    }

    #[test]
    fn env_config_appends_chat_completions_to_the_base_url() {
        let config = from_vars(&base()).unwrap();
        assert_eq!(
            config.endpoint().as_str(),
            "https://openrouter.ai/api/v1/chat/completions"
        );
        assert_eq!(config.model(), "openai/gpt-4o-mini");
        assert_eq!(config.transport(), Transport::Streaming);
        assert!(!config.has_api_key());
    }

    #[test]
    fn a_full_endpoint_url_is_kept_as_is() {
        let config = OpenAiConfig::builder("http://127.0.0.1:8080/v1/chat/completions", "m")
            .build()
            .unwrap();
        assert_eq!(
            config.endpoint().as_str(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
    }

    #[test]
    fn missing_model_names_the_variable() {
        let err = from_vars(&[(ENV_BASE_URL, "http://localhost:11434/v1")]).unwrap_err();
        assert_eq!(err.to_string(), "NOMOS_LLM_MODEL is not set");
    }

    #[test]
    fn bad_values_name_the_variable_and_the_problem() {
        let cases = [
            (
                ENV_BASE_URL,
                "localhost:11434",
                "NOMOS_LLM_BASE_URL is invalid: expected an http",
            ),
            (
                ENV_BASE_URL,
                "ftp://host/v1",
                "NOMOS_LLM_BASE_URL is invalid: expected an http",
            ),
            (
                ENV_TIMEOUT_SECS,
                "soon",
                "NOMOS_LLM_TIMEOUT_SECS is invalid: expected a whole",
            ),
            (
                ENV_TIMEOUT_SECS,
                "0",
                "NOMOS_LLM_TIMEOUT_SECS is invalid: the timeout must be",
            ),
            (
                ENV_REPLY_DEADLINE_SECS,
                "0",
                "NOMOS_LLM_REPLY_DEADLINE_SECS is invalid: the reply deadline must be",
            ),
            (
                ENV_REPLY_DEADLINE_SECS,
                "later",
                "NOMOS_LLM_REPLY_DEADLINE_SECS is invalid: expected a whole",
            ),
            (
                ENV_MAX_TOKENS,
                "-5",
                "NOMOS_LLM_MAX_TOKENS is invalid: expected a positive",
            ),
            (
                ENV_TEMPERATURE,
                "hot",
                "NOMOS_LLM_TEMPERATURE is invalid: expected a number",
            ),
            (
                ENV_TEMPERATURE,
                "3.5",
                "NOMOS_LLM_TEMPERATURE is invalid: expected a number",
            ),
            (
                ENV_STREAM,
                "maybe",
                "NOMOS_LLM_STREAM is invalid: expected on or off",
            ),
            (
                ENV_X_TITLE,
                "a\nb",
                "NOMOS_LLM_X_TITLE is invalid: the value of header X-Title",
            ),
            (
                ENV_MODEL,
                "  ",
                "NOMOS_LLM_MODEL is invalid: the value is empty",
            ),
        ];
        for (name, value, expected) in cases {
            let mut vars = base();
            vars.retain(|(k, _)| *k != name);
            vars.push((name, value));
            let err = from_vars(&vars).unwrap_err().to_string();
            assert!(err.starts_with(expected), "{name}={value:?} gave {err:?}");
        }
    }

    #[test]
    fn the_api_key_never_appears_in_debug_output_or_errors() {
        let mut vars = base();
        vars.push((ENV_API_KEY, "sk-secret-123"));
        let config = from_vars(&vars).unwrap();
        assert!(config.has_api_key());
        let debug = format!("{config:?}");
        assert!(!debug.contains("sk-secret-123"), "{debug}");
        assert!(debug.contains("ApiKey(redacted)"), "{debug}");

        let mut bad = base();
        bad.push((ENV_API_KEY, "sk-secret 123"));
        let err = from_vars(&bad).unwrap_err().to_string();
        assert!(!err.contains("secret"), "{err}");
        assert!(err.starts_with("NOMOS_LLM_API_KEY is invalid"), "{err}");
    }

    #[test]
    fn openrouter_headers_and_stream_switch_are_read_from_the_environment() {
        let mut vars = base();
        vars.extend([
            (ENV_HTTP_REFERER, "https://nomos.example"),
            (ENV_X_TITLE, "Nomos"),
            (ENV_STREAM, "off"),
            (ENV_MAX_TOKENS, "2048"),
            (ENV_TEMPERATURE, "0.2"),
            (ENV_TIMEOUT_SECS, "30"),
        ]);
        let config = from_vars(&vars).unwrap();
        let names: Vec<&str> = config.headers().iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["http-referer", "x-title"]);
        assert_eq!(config.transport(), Transport::Buffered);
        assert_eq!(config.max_tokens(), Some(2048));
        assert_eq!(config.temperature(), Some(0.2));
        assert_eq!(config.timeout(), Duration::from_secs(30));
    }

    #[test]
    fn builder_refuses_an_authorization_header() {
        let err = OpenAiConfig::builder("http://localhost/v1", "m")
            .header("Authorization", "Bearer x")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "header is invalid: the Authorization header is set by the client itself"
        );
    }
}
