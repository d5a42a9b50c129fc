//! The runtime's settings. No `Default`: start from [`AgentConfig::spec_defaults`].

use std::sync::Arc;

use nomos_core::Classification;
use nomos_core::Span;
use nomos_core::classify::Shell;
use nomos_core::fanout::FanoutLimits;
use nomos_core::ports::exec::ExecLimits;
use nomos_core::resume::ResumeRetry;
use nomos_core::session::SessionConfig;
use nomos_core::sweep::SweepThresholds;

/// The system prompt shipped in `nomos/SOUL.md`.
pub const DEFAULT_SYSTEM_PROMPT: &str = include_str!("../../../nomos/SOUL.md");

/// Classifies a command for the gate (CLASSIFY-1) in the grammar of the shell that will
/// run it (CLASSIFY-8); the built-in classifier or an operator policy on top of it
/// (GATE-8).
pub type Classifier = Arc<dyn Fn(&str, Shell) -> Classification + Send + Sync>;

/// The preview table the runtime asks (GATE-10): the built-in one or an operator policy's
/// rows on top of it.
pub type Previewer = Arc<dyn Fn(&str) -> Option<nomos_core::classify::PreviewForm> + Send + Sync>;

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
    /// GATE-10: the preview table; each preview runs only if `classifier` finds it read-only.
    pub previewer: Previewer,
    /// GATE-10: a preview's own timeout and output cap (15 s and 16 KiB by default).
    pub preview_limits: ExecLimits,
    /// Who answers approval requests: an operator, or nobody (a headless embedding).
    pub approvals: ApprovalPolicy,
    /// FLEET-2: a fan-out's window size and failure limit when the call gives none.
    pub fanout: FanoutLimits,
    /// FLEET-2: the most `max_parallel` a call may ask for (`[agent] fanout_max_parallel`).
    pub fanout_max_parallel: u32,
    /// FLEET-5: a group with a host carrying one of these tags runs a canary of one host
    /// first unless the call asks for a larger one (`[agent] canary_tags`).
    pub canary_tags: Vec<String>,
    /// AUTHZ-3: how many distinct operators each request needs (`[[gate.approvers]]`; one
    /// each by default).
    pub approvers: Arc<nomos_core::authz::ApproverPolicy>,
    /// SAFE-2: where a change's files are backed up on its host, and the host's caps
    /// (`[safety] backup_root`, `backup_max_mib`, `backup_max_age_days`).
    pub backup: nomos_core::safety::BackupConfig,
    /// SAFE-1: how many Nomos snapshots each Proxmox guest keeps (`[agent] snapshot_keep`).
    pub snapshot: nomos_core::snapshot::SnapshotConfig,
}

/// Who answers approval requests (GATE-7). An embedding without an operator never waits
/// forever: it either refuses every request at once or lets requests expire by their TTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// Someone answers each request through [`Agent::decide`](crate::Agent::decide): the
    /// operator of a server, or an embedder's own code deciding by policy. A request nobody
    /// answers expires after [`SessionConfig::approval_ttl`] (expiry means deny) when the next
    /// sweep runs ([`Agent::sweep_once`](crate::Agent::sweep_once), which
    /// [`Agent::start_workers`](crate::Agent::start_workers) runs every
    /// [`AgentConfig::sweep_interval`]). The spec's default.
    AwaitOperator,
    /// Nobody answers. A request is denied in the same commit that persists it (decided by
    /// [`NO_OPERATOR`]), its execution is cancelled and never runs, and the model's `run`
    /// result says the command was refused because no operator can approve it, so the turn
    /// goes on without waiting.
    RefuseWithoutOperator,
}

/// The `decided_by` of a request denied by [`ApprovalPolicy::RefuseWithoutOperator`].
pub const NO_OPERATOR: &str = "policy: no operator";

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
            classifier: Arc::new(nomos_core::classify::classify_in),
            previewer: Arc::new(nomos_core::classify::preview_form),
            preview_limits: nomos_core::preview::default_preview_limits(),
            approvals: ApprovalPolicy::AwaitOperator,
            fanout: FanoutLimits::spec_defaults(),
            fanout_max_parallel: 100,
            canary_tags: Vec::new(),
            approvers: Arc::default(),
            backup: nomos_core::safety::BackupConfig::spec_defaults(),
            snapshot: nomos_core::snapshot::SnapshotConfig::spec_defaults(),
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
            .field("preview_limits", &self.preview_limits)
            .field("approvals", &self.approvals)
            .field("context_tokens", &self.context_tokens)
            .field("model_output_bytes", &self.model_output_bytes)
            .field("fanout", &self.fanout)
            .field("fanout_max_parallel", &self.fanout_max_parallel)
            .field("canary_tags", &self.canary_tags)
            .field("approvers", &self.approvers)
            .finish_non_exhaustive()
    }
}
