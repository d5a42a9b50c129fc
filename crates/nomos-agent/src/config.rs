//! The runtime's settings. No `Default`: start from [`AgentConfig::spec_defaults`].

use std::sync::Arc;

use nomos_core::Classification;
use nomos_core::Span;
use nomos_core::ports::exec::ExecLimits;
use nomos_core::resume::ResumeRetry;
use nomos_core::session::SessionConfig;
use nomos_core::sweep::SweepThresholds;

/// The system prompt shipped in `nomos/SOUL.md`.
pub const DEFAULT_SYSTEM_PROMPT: &str = include_str!("../../../nomos/SOUL.md");

/// Classifies a command for the gate (CLASSIFY-1); the built-in classifier or an operator
/// policy on top of it (GATE-8).
pub type Classifier = Arc<dyn Fn(&str) -> Classification + Send + Sync>;

/// Settings of the runtime.
#[derive(Clone)]
pub struct AgentConfig {
    /// Session rules: assent window and approval expiry (GATE-4, GATE-7).
    pub session: SessionConfig,
    /// Sweep thresholds (EXEC-3, SWEEP-1).
    pub sweep: SweepThresholds,
    /// How often the sweeps run (EXEC-3, SWEEP-1: 5 minutes).
    pub sweep_interval: Span,
    /// TURN-6: tool calls per turn.
    pub step_limit: u32,
    /// TURN-3: how many times an empty model reply is retried within a turn.
    pub empty_reply_retries: u32,
    /// EXEC-5: timeout and output caps of one command.
    pub exec_limits: ExecLimits,
    /// RESUME-2: attempts and back-off of a resume.
    pub resume: ResumeRetry,
    /// TURN-9: the model's context size in tokens (`[llm] context_tokens`); each request is
    /// fitted to it.
    pub context_tokens: usize,
    /// The most of one tool result the model reads, in bytes (`[agent] model_output_bytes`);
    /// the store and the operator keep the whole capped output.
    pub model_output_bytes: usize,
    /// The system prompt.
    pub system_prompt: String,
    /// The classifier the gate trusts.
    pub classifier: Classifier,
}

impl AgentConfig {
    /// The values SPEC.md names, the built-in classifier and the shipped system prompt.
    pub fn spec_defaults() -> AgentConfig {
        AgentConfig {
            session: SessionConfig::spec_defaults(),
            sweep: SweepThresholds::spec_defaults(),
            sweep_interval: Span::from_mins(5),
            step_limit: 40,
            empty_reply_retries: 2,
            exec_limits: ExecLimits {
                timeout: Span::from_mins(5),
                output_cap: 64 * 1024,
            },
            resume: ResumeRetry::spec_defaults(),
            context_tokens: 128_000,
            model_output_bytes: 8 * 1024,
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
            classifier: Arc::new(nomos_core::classify::classify),
        }
    }
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("session", &self.session)
            .field("sweep", &self.sweep)
            .field("sweep_interval", &self.sweep_interval)
            .field("step_limit", &self.step_limit)
            .field("empty_reply_retries", &self.empty_reply_retries)
            .field("exec_limits", &self.exec_limits)
            .field("context_tokens", &self.context_tokens)
            .field("model_output_bytes", &self.model_output_bytes)
            .finish_non_exhaustive()
    }
}
