//! Prometheus metrics in the text exposition format (version 0.0.4), kept by hand: a few
//! counter families with labels, one histogram, and gauges read at scrape time.
//!
//! Most values come from the event bus ([`Metrics::observe`]), so they count what was
//! committed, not what a handler hoped for; model latency and tokens come from
//! [`MeteredModel`]; sweep actions from [`Metrics::record_sweep`].

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use async_trait::async_trait;
use nomos_agent::{LiveEvent, SweepReport};
use nomos_core::event::DomainEvent;
use nomos_core::ports::chat::{ChatModel, ChatRequest, ChatResponse, DeltaSink, ModelError};
use nomos_core::{CommandClass, ExecutionId};

/// Upper bounds of the model latency histogram, in seconds.
const LATENCY_BUCKETS: [f64; 11] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0];

/// Executions whose class is remembered until they end; beyond this the oldest are dropped.
const MAX_TRACKED_EXECUTIONS: usize = 10_000;

/// The metrics registry. Cheap to share behind an `Arc`.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    turns: BTreeMap<&'static str, u64>,
    tool_calls: BTreeMap<(String, &'static str), u64>,
    executions: BTreeMap<(&'static str, &'static str), u64>,
    execution_class: HashMap<ExecutionId, CommandClass>,
    model_requests: BTreeMap<&'static str, u64>,
    model_latency: Histogram,
    model_tokens: BTreeMap<&'static str, u64>,
    sweep_actions: BTreeMap<&'static str, u64>,
    events_lost: u64,
}

#[derive(Debug, Default)]
struct Histogram {
    counts: [u64; LATENCY_BUCKETS.len()],
    sum: f64,
    count: u64,
}

/// Values read at scrape time rather than counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gauges {
    /// Approvals waiting for a decision.
    pub approvals_pending: u64,
    /// Open event streams.
    pub sse_subscribers: u64,
    /// Turns running now.
    pub turns_running: u64,
}

impl Metrics {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(inner) => inner,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Counts one event from the bus.
    pub fn observe(&self, event: &LiveEvent) {
        let LiveEvent::Committed(record) = event else {
            return;
        };
        let mut inner = self.lock();
        match &record.event {
            DomainEvent::TurnDone { error, .. } => {
                let result = if error.is_some() { "error" } else { "ok" };
                *inner.turns.entry(result).or_default() += 1;
            }
            DomainEvent::ToolCalled { name, outcome, .. } => {
                *inner
                    .tool_calls
                    .entry((name.clone(), outcome.as_str()))
                    .or_default() += 1;
            }
            DomainEvent::ExecutionCreated {
                execution_id,
                class,
                ..
            } => {
                if inner.execution_class.len() >= MAX_TRACKED_EXECUTIONS {
                    inner.execution_class.clear();
                }
                inner.execution_class.insert(*execution_id, *class);
            }
            DomainEvent::ExecutionStatusChanged {
                execution_id,
                status,
                ..
            } if status.is_terminal() => {
                let class = inner
                    .execution_class
                    .remove(execution_id)
                    .map_or("unknown", |c| c.as_str());
                *inner
                    .executions
                    .entry((class, status.as_str()))
                    .or_default() += 1;
            }
            _ => {}
        }
    }

    /// Counts events a slow observer missed (the bus lagged).
    pub fn record_lost_events(&self, n: u64) {
        self.lock().events_lost += n;
    }

    /// Counts what a sweep (or the start-up reconcile) changed.
    pub fn record_sweep(&self, report: &SweepReport) {
        let mut inner = self.lock();
        for (action, n) in [
            ("execution_failed", report.executions_failed),
            ("execution_cancelled", report.executions_cancelled),
            ("approval_expired", report.approvals_expired),
            ("session_nudged", report.sessions_nudged),
            ("session_completed", report.sessions_completed),
            ("session_closed", report.sessions_closed),
            ("command_stopped", report.commands_stopped),
            ("turn_closed", report.turns_closed),
        ] {
            *inner.sweep_actions.entry(action).or_default() += u64::from(n);
        }
    }

    /// Records one model call.
    pub fn record_model_call(&self, seconds: f64, result: &Result<ChatResponse, ModelError>) {
        let mut inner = self.lock();
        let outcome = if result.is_ok() { "ok" } else { "error" };
        *inner.model_requests.entry(outcome).or_default() += 1;
        let histogram = &mut inner.model_latency;
        for (idx, bound) in LATENCY_BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                histogram.counts[idx] += 1;
            }
        }
        histogram.sum += seconds;
        histogram.count += 1;
        if let Ok(response) = result {
            *inner.model_tokens.entry("prompt").or_default() += response.usage.prompt_tokens;
            *inner.model_tokens.entry("completion").or_default() +=
                response.usage.completion_tokens;
        }
    }

    /// The text exposition.
    pub fn render(&self, gauges: Gauges) -> String {
        let inner = self.lock();
        let mut out = String::new();
        family(
            &mut out,
            "nomos_turns_total",
            "counter",
            "Turns ended, by result.",
        );
        for result in ["ok", "error"] {
            let n = inner.turns.get(result).copied().unwrap_or(0);
            let _ = writeln!(out, "nomos_turns_total{{result=\"{result}\"}} {n}");
        }
        family(
            &mut out,
            "nomos_tool_calls_total",
            "counter",
            "Tool calls persisted, by tool name and outcome.",
        );
        for ((name, outcome), n) in &inner.tool_calls {
            let name = escape(name);
            let _ = writeln!(
                out,
                "nomos_tool_calls_total{{name=\"{name}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        family(
            &mut out,
            "nomos_executions_total",
            "counter",
            "Executions that reached a terminal status, by class and outcome.",
        );
        for ((class, outcome), n) in &inner.executions {
            let _ = writeln!(
                out,
                "nomos_executions_total{{class=\"{class}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        gauge(
            &mut out,
            "nomos_approvals_pending",
            "Approvals waiting for a decision.",
            gauges.approvals_pending,
        );
        gauge(
            &mut out,
            "nomos_turns_running",
            "Turns running now.",
            gauges.turns_running,
        );
        gauge(
            &mut out,
            "nomos_sse_subscribers",
            "Open event streams.",
            gauges.sse_subscribers,
        );
        family(
            &mut out,
            "nomos_model_requests_total",
            "counter",
            "Model calls, by result.",
        );
        for result in ["ok", "error"] {
            let n = inner.model_requests.get(result).copied().unwrap_or(0);
            let _ = writeln!(out, "nomos_model_requests_total{{result=\"{result}\"}} {n}");
        }
        family(
            &mut out,
            "nomos_model_latency_seconds",
            "histogram",
            "Model call latency.",
        );
        let histogram = &inner.model_latency;
        for (idx, bound) in LATENCY_BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "nomos_model_latency_seconds_bucket{{le=\"{bound}\"}} {}",
                histogram.counts[idx]
            );
        }
        let _ = writeln!(
            out,
            "nomos_model_latency_seconds_bucket{{le=\"+Inf\"}} {}",
            histogram.count
        );
        let _ = writeln!(out, "nomos_model_latency_seconds_sum {}", histogram.sum);
        let _ = writeln!(out, "nomos_model_latency_seconds_count {}", histogram.count);
        family(
            &mut out,
            "nomos_model_tokens_total",
            "counter",
            "Tokens the model reported, by kind.",
        );
        for kind in ["prompt", "completion"] {
            let n = inner.model_tokens.get(kind).copied().unwrap_or(0);
            let _ = writeln!(out, "nomos_model_tokens_total{{kind=\"{kind}\"}} {n}");
        }
        family(
            &mut out,
            "nomos_sweep_actions_total",
            "counter",
            "Changes made by the sweeps and the start-up reconcile, by action.",
        );
        for (action, n) in &inner.sweep_actions {
            let _ = writeln!(out, "nomos_sweep_actions_total{{action=\"{action}\"}} {n}");
        }
        family(
            &mut out,
            "nomos_metrics_events_lost_total",
            "counter",
            "Bus events the metrics observer missed because it lagged.",
        );
        let _ = writeln!(out, "nomos_metrics_events_lost_total {}", inner.events_lost);
        out
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn gauge(out: &mut String, name: &str, help: &str, value: u64) {
    family(out, name, "gauge", help);
    let _ = writeln!(out, "{name} {value}");
}

/// Escapes a label value (backslash, double quote, newline).
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A chat model that records latency, result and tokens of every call it forwards.
pub struct MeteredModel {
    model: Arc<dyn ChatModel>,
    metrics: Arc<Metrics>,
}

impl MeteredModel {
    /// Wraps `model`.
    pub fn new(model: Arc<dyn ChatModel>, metrics: Arc<Metrics>) -> MeteredModel {
        MeteredModel { model, metrics }
    }
}

#[async_trait]
impl ChatModel for MeteredModel {
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        let started = Instant::now();
        let result = self.model.complete(request, sink).await;
        self.metrics
            .record_model_call(started.elapsed().as_secs_f64(), &result);
        result
    }

    fn name(&self) -> String {
        self.model.name()
    }
}

#[cfg(test)]
mod tests {
    use nomos_core::event::EventRecord;
    use nomos_core::{ExecutionStatus, SessionId, Timestamp};

    use super::*;

    fn committed(event: DomainEvent) -> LiveEvent {
        LiveEvent::Committed(EventRecord {
            global_seq: 1,
            session_id: SessionId(uuid::Uuid::nil()),
            seq: 1,
            at: Timestamp::EPOCH,
            event,
        })
    }

    #[test]
    fn executions_are_counted_by_class_and_outcome() {
        let metrics = Metrics::default();
        let execution_id = ExecutionId(uuid::Uuid::nil());
        metrics.observe(&committed(DomainEvent::ExecutionCreated {
            execution_id,
            host: "local".into(),
            command: "uptime".into(),
            class: CommandClass::ReadOnly,
            status: ExecutionStatus::Running,
        }));
        metrics.observe(&committed(DomainEvent::ExecutionStatusChanged {
            execution_id,
            status: ExecutionStatus::Completed,
            exit_code: Some(0),
            error: None,
        }));
        let text = metrics.render(Gauges::default());
        assert!(
            text.contains("nomos_executions_total{class=\"read_only\",outcome=\"completed\"} 1"),
            "{text}"
        );
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn histogram_buckets_are_cumulative() {
        let metrics = Metrics::default();
        let error = Err(ModelError::Connect("refused".into()));
        metrics.record_model_call(0.3, &error);
        let text = metrics.render(Gauges::default());
        assert!(
            text.contains("nomos_model_latency_seconds_bucket{le=\"0.25\"} 0"),
            "{text}"
        );
        assert!(
            text.contains("nomos_model_latency_seconds_bucket{le=\"0.5\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("nomos_model_latency_seconds_bucket{le=\"120\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("nomos_model_requests_total{result=\"error\"} 1"),
            "{text}"
        );
    }
}
