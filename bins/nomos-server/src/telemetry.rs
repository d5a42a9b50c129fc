//! AUTHZ-4: with `[telemetry] otlp_endpoint = "http://HOST:4318"`, every decision's
//! structured log line (the `nomos::audit` target: gate decisions, operator decisions and
//! refusals, command runs) is also exported as an OTLP log record, over HTTP with protobuf
//! bodies (`POST {endpoint}/v1/logs`), by the `opentelemetry` crates' batch exporter on a
//! thread of its own, so a collector that is slow or down never holds up a decision.
//!
//! Only `http://` endpoints: the exporter is built without a TLS stack of its own; a
//! collector on the same host or network takes plain HTTP.
//!
//! The setting is checked in every build ([`logs_url`]); the exporter is the `otlp` feature
//! (`telemetry/export.rs`).

#[cfg(feature = "otlp")]
mod export;
#[cfg(feature = "otlp")]
pub use export::{audit_layer, provider};

/// Why the OTLP endpoint is not usable.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// Not an `http://` URL with a host.
    #[error(
        "invalid telemetry.otlp_endpoint = {0:?}: expected http://HOST[:PORT][/PATH] (an OTLP/HTTP collector; https is not built in, put a local collector in front)"
    )]
    Endpoint(String),
    /// The exporter could not be built.
    #[cfg(feature = "otlp")]
    #[error("the OTLP log exporter for {endpoint}: {message}")]
    Exporter {
        /// The logs URL.
        endpoint: String,
        /// What failed.
        message: String,
    },
}

/// The logs URL of a collector's base URL: `{base}/v1/logs`, unless it names that path.
pub fn logs_url(endpoint: &str) -> Result<String, TelemetryError> {
    let endpoint = endpoint.trim();
    let bad = || TelemetryError::Endpoint(endpoint.to_owned());
    let rest = endpoint.strip_prefix("http://").ok_or_else(bad)?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') || endpoint.contains(char::is_whitespace) {
        return Err(bad());
    }
    let base = endpoint.trim_end_matches('/');
    if base.ends_with("/v1/logs") {
        Ok(base.to_owned())
    } else {
        Ok(format!("{base}/v1/logs"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: AUTHZ-4
    #[test]
    fn an_endpoint_must_be_plain_http_and_gets_the_logs_path() {
        assert_eq!(
            logs_url("http://127.0.0.1:4318").unwrap(),
            "http://127.0.0.1:4318/v1/logs"
        );
        assert_eq!(
            logs_url("http://otel:4318/v1/logs/").unwrap(),
            "http://otel:4318/v1/logs"
        );
        for bad in [
            "https://otel:4318",
            "otel:4318",
            "http://",
            "http://:4318",
            "",
        ] {
            let err = logs_url(bad).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with("invalid telemetry.otlp_endpoint"),
                "{bad}: {err}"
            );
        }
    }
}
