//! The OTLP log exporter (feature `otlp`): the `nomos::audit` lines as OTLP log records,
//! sent by the `opentelemetry` crates' batch exporter on a thread of its own.

use opentelemetry_appender_tracing::layer::OpenTelemetryTracingBridge;
use opentelemetry_otlp::{LogExporter, Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::SdkLoggerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::filter_fn;

use super::{TelemetryError, logs_url};

/// The target whose events are decisions.
pub const AUDIT_TARGET: &str = "nomos::audit";

/// The exporter's provider (keep it: dropping or shutting it down flushes what waits).
pub fn provider(endpoint: &str) -> Result<SdkLoggerProvider, TelemetryError> {
    let url = logs_url(endpoint)?;
    // reqwest (also the exporter's) takes the process's one TLS provider, even for http.
    nomos_llm::tls::install_crypto_provider();
    let exporter = LogExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url.clone())
        .build()
        .map_err(|e| TelemetryError::Exporter {
            endpoint: url,
            message: e.to_string(),
        })?;
    Ok(SdkLoggerProvider::builder()
        .with_resource(Resource::builder().with_service_name("nomos").build())
        .with_batch_exporter(exporter)
        .build())
}

/// The layer that turns each `nomos::audit` event into a log record of `provider`.
pub fn audit_layer<S>(provider: &SdkLoggerProvider) -> impl Layer<S> + use<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    OpenTelemetryTracingBridge::new(provider)
        .with_filter(filter_fn(|meta| meta.target() == AUDIT_TARGET))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    use prost::Message;
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    fn text(value: Option<&opentelemetry_proto::tonic::common::v1::AnyValue>) -> Option<&str> {
        match value?.value.as_ref()? {
            Value::StringValue(text) => Some(text),
            _ => None,
        }
    }

    // rule: AUTHZ-4
    #[test]
    fn a_decision_line_reaches_a_collector_as_an_otlp_log_record_and_other_lines_do_not() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let (sent, received) = std::sync::mpsc::channel::<(Option<String>, Vec<u8>)>();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route(
            "/v1/logs",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                    let content_type = headers
                        .get("content-type")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    let _ = sent.send((content_type, body.to_vec()));
                    async { axum::http::StatusCode::OK }
                },
            ),
        );
        runtime.spawn(async move { axum::serve(listener, app).await });

        let provider = provider(&format!("http://{addr}")).unwrap();
        let subscriber = tracing_subscriber::registry().with(audit_layer(&provider));
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(target: "nomos::other", "not a decision");
            tracing::info!(
                target: "nomos::audit",
                session = "s-1",
                principal = "alice",
                decision = "approve",
                approvals = 1u32,
                "operator approved the plan; it needs more operators"
            );
        });
        provider.force_flush().unwrap();

        let (content_type, body) = received.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(content_type.as_deref(), Some("application/x-protobuf"));
        let request = ExportLogsServiceRequest::decode(body.as_slice()).unwrap();
        let records: Vec<_> = request
            .resource_logs
            .iter()
            .flat_map(|r| &r.scope_logs)
            .flat_map(|s| &s.log_records)
            .collect();
        assert_eq!(records.len(), 1, "{records:?}");
        let record = records[0];
        assert_eq!(
            text(record.body.as_ref()),
            Some("operator approved the plan; it needs more operators")
        );
        let attribute = |key: &str| {
            record
                .attributes
                .iter()
                .find(|kv| kv.key == key)
                .and_then(|kv| text(kv.value.as_ref()))
        };
        assert_eq!(attribute("principal"), Some("alice"));
        assert_eq!(attribute("decision"), Some("approve"));
        assert_eq!(record.severity_text, "INFO");
        let service = request.resource_logs[0]
            .resource
            .as_ref()
            .and_then(|r| r.attributes.iter().find(|kv| kv.key == "service.name"))
            .and_then(|kv| text(kv.value.as_ref()));
        assert_eq!(service, Some("nomos"));
        provider.shutdown().unwrap();
    }
}
