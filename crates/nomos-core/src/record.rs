//! The persisted facts of a session: the rows a store keeps and the core reads back.
//!
//! These are plain data. The rules that change them live in [`crate::session`]; the
//! stores persist them verbatim (see [`crate::ports::store::Commit`]).

use serde::{Deserialize, Serialize};

use crate::declared::{DeclaredCommand, DeclaredDigest, RequestOrigin};
use crate::id::{ApprovalId, ExecutionId, MessageId, SessionId, StepId};
use crate::status::{
    ApprovalStatus, CommandClass, ExecutionStatus, Outcome, Role, SessionStatus, StepStatus,
};
use crate::time::Timestamp;

/// Whether the session touched the knowledge loop (WRITEBACK-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum KnowledgeLoop {
    /// Neither a discovery nor a write-back tool ran.
    #[default]
    Untouched,
    /// A discovery tool ran and nothing was written back yet.
    Discovered,
    /// A write-back tool ran.
    WrittenBack,
}

impl KnowledgeLoop {
    /// The stable spelling used by the stores.
    pub fn as_str(&self) -> &'static str {
        match self {
            KnowledgeLoop::Untouched => "untouched",
            KnowledgeLoop::Discovered => "discovered",
            KnowledgeLoop::WrittenBack => "written_back",
        }
    }

    /// Parses the store spelling.
    pub fn parse(text: &str) -> Option<KnowledgeLoop> {
        match text {
            "untouched" => Some(KnowledgeLoop::Untouched),
            "discovered" => Some(KnowledgeLoop::Discovered),
            "written_back" => Some(KnowledgeLoop::WrittenBack),
            _ => None,
        }
    }
}

/// GATE-4: the operator's assent to one plan generation, for a limited time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssentWindow {
    /// The plan generation the operator assented to.
    pub generation: u32,
    /// When the operator assented.
    pub opened_at: Timestamp,
    /// When the window closes by itself.
    pub expires_at: Timestamp,
    /// GATE-9: the digest of the generation's declared commands the operator assented to;
    /// a window whose plan's declared commands no longer have this digest is void.
    #[serde(default)]
    pub declared: Option<DeclaredDigest>,
}

/// AUTHZ-3: the two-person rule on a plan: fixed when the plan is proposed, counted on each
/// explicit approve decision of that plan as shown (its digest).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanApprovals {
    /// The plan generation it counts for.
    pub generation: u32,
    /// How many distinct operators must approve the plan: the most any of its declared
    /// commands needs.
    pub required: u32,
    /// The digest of the plan the approvals so far were given to; `None` before the first.
    /// A plan shown with another digest starts the count again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<crate::plan_digest::PlanDigest>,
    /// Who approved it so far, in order.
    #[serde(default)]
    pub approved_by: Vec<Decider>,
}

impl PlanApprovals {
    /// Who approved the plan of `generation` as shown with `digest` so far: nobody when
    /// these approvals were given to another generation or another digest.
    pub fn approved_by_for(
        &self,
        generation: u32,
        digest: Option<&crate::plan_digest::PlanDigest>,
    ) -> &[Decider] {
        if self.generation == generation && digest.is_some() && self.digest.as_ref() == digest {
            &self.approved_by
        } else {
            &[]
        }
    }
}

/// The session row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The session's id.
    pub id: SessionId,
    /// SESSION-1 status.
    pub status: SessionStatus,
    /// The goal set by `set_goal`, if any (SWEEP-4 looks at this).
    pub goal: Option<String>,
    /// The summary written when the session completed.
    pub summary: Option<String>,
    /// What the task board shows as the outcome so far (WRITEBACK-2 shows `partial`).
    pub board_outcome: Option<Outcome>,
    /// The current plan generation; 0 while no plan was ever proposed.
    pub plan_generation: u32,
    /// The open assent window, if any.
    pub assent: Option<AssentWindow>,
    /// The knowledge-loop accounting of WRITEBACK-2.
    pub knowledge: KnowledgeLoop,
    /// When the idle sweep nudged this session (SWEEP-1), if it did since the last activity.
    pub nudged_at: Option<Timestamp>,
    /// MCP-2: the outside client that drives this session in place of Nomos's model (an
    /// MCP client's `name version`), if any. Set at creation and never changed.
    #[serde(default)]
    pub client: Option<String>,
    /// AUTHZ-1: the principal that created the session (a token's name or an OIDC
    /// subject), if one did. Set at creation and never changed.
    #[serde(default)]
    pub owner: Option<String>,
    /// CONTROL-6: when the operator archived the session (it leaves the board), if it is
    /// archived.
    #[serde(default)]
    pub archived_at: Option<Timestamp>,
    /// AUTHZ-3: how many distinct operators the current plan needs and who approved it so
    /// far; `None` when the current plan needs one (or there is no plan).
    #[serde(default)]
    pub plan_approvals: Option<PlanApprovals>,
    /// How many messages the session holds (used to derive message ids).
    pub n_messages: u64,
    /// Creation time.
    pub created_at: Timestamp,
    /// The last time anything happened in the session.
    pub last_activity_at: Timestamp,
    /// Optimistic concurrency version; the store bumps it on every commit.
    pub version: i64,
}

impl SessionRecord {
    /// AUTHZ-2: the principal whose calls make this session's requests: its owner when an
    /// outside client drives it (MCP-1), nobody when Nomos's model does (the operator who
    /// chats with the model decides what the model asks).
    pub fn requester(&self) -> Option<&str> {
        match self.client {
            Some(_) => self.owner.as_deref(),
            None => None,
        }
    }
}

/// One plan step (PLAN-1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    /// Derived from `(session, generation, seq)`.
    pub id: StepId,
    /// The owning session.
    pub session_id: SessionId,
    /// The plan generation, starting at 1.
    pub generation: u32,
    /// Position within the generation, 1..N.
    pub seq: u32,
    /// What the step does.
    pub title: String,
    /// Optional detail.
    pub detail: Option<String>,
    /// GATE-9: the commands this step declared, classified at proposal.
    #[serde(default)]
    pub commands: Vec<DeclaredCommand>,
    /// SAFE-4: the read-only check that proves the step worked, with its last verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<crate::check::StepCheck>,
    /// Status.
    pub status: StepStatus,
    /// A note left by the last status change.
    pub note: Option<String>,
    /// When it started.
    pub started_at: Option<Timestamp>,
    /// When it finished.
    pub finished_at: Option<Timestamp>,
    /// When anything last happened on this step (ACTIVITY-4).
    pub updated_at: Timestamp,
}

/// Captured output of a finished command (EXEC-5).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ExecOutput {
    /// The exit code, if the process exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the process, if one did.
    pub signal: Option<String>,
    /// Standard output, capped.
    pub stdout: String,
    /// Standard error, capped.
    pub stderr: String,
    /// How many bytes of stdout were cut by the cap.
    pub stdout_cut: u64,
    /// How many bytes of stderr were cut by the cap.
    pub stderr_cut: u64,
    /// Wall time of the command in milliseconds.
    pub duration_ms: u64,
}

/// What the approval binds to (GATE-7); any change voids it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ApprovalBinding {
    /// The exact command string that will run.
    pub command: String,
    /// The host slug it runs on.
    pub host: String,
    /// Its class.
    pub class: CommandClass,
    /// The plan generation current when it was requested.
    pub generation: u32,
    /// GATE-9: why it was asked (its class, not in the approved plan, or declared).
    #[serde(default)]
    pub origin: RequestOrigin,
    /// GATE-10: the preview shown with the request, if its command has a preview form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<crate::preview::Preview>,
    /// GATE-11: the request this one replaced when the operator edited it (what the model
    /// asked), so the card shows the difference; `None` for a request the model made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_from: Option<EditedFrom>,
}

/// GATE-11: what the model asked before the operator's edit.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EditedFrom {
    /// The request the edit closed.
    pub approval_id: crate::id::ApprovalId,
    /// The command the model asked for.
    pub command: String,
    /// The host (or host set, FLEET-1) it covered.
    pub host: String,
    /// Its class.
    pub class: CommandClass,
}

impl EditedFrom {
    /// The text the binding hash covers.
    pub fn binding_text(&self) -> String {
        format!(
            "edited_from:{}\n{}\n{}\n{}",
            self.approval_id, self.command, self.host, self.class
        )
    }
}

/// What an execution is (GATE-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionKind {
    /// A command the model asked to run.
    #[default]
    Command,
    /// A read-only preview Nomos ran before showing a request: it needs no approval and
    /// is not discovery.
    Preview,
    /// SAFE-4: a step's read-only check, run when the step is marked done; it needs no
    /// approval, is not discovery, and its verdict decides the step.
    Check,
    /// SAFE-1, SAFE-2: a safety net Nomos ran around a change (a backup before it, a
    /// restore the operator approved); the core builds its script.
    Safety,
}

impl ExecutionKind {
    /// The stable spelling used by the stores.
    pub fn as_str(&self) -> &'static str {
        match self {
            ExecutionKind::Command => "command",
            ExecutionKind::Preview => "preview",
            ExecutionKind::Check => "check",
            ExecutionKind::Safety => "safety",
        }
    }

    /// Parses the store spelling.
    pub fn parse(text: &str) -> Option<ExecutionKind> {
        match text {
            "command" => Some(ExecutionKind::Command),
            "preview" => Some(ExecutionKind::Preview),
            "check" => Some(ExecutionKind::Check),
            "safety" => Some(ExecutionKind::Safety),
            _ => None,
        }
    }
}

/// One command the agent asked to run (EXEC-1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// Derived from the session and a counter.
    pub id: ExecutionId,
    /// The owning session.
    pub session_id: SessionId,
    /// The model's tool-call id that asked for it, if any.
    pub tool_call_id: Option<String>,
    /// A command, or a preview Nomos ran (GATE-10).
    #[serde(default)]
    pub kind: ExecutionKind,
    /// Host slug.
    pub host: String,
    /// The exact command string (EXEC-7).
    pub command: String,
    /// Its class.
    pub class: CommandClass,
    /// Why it has that class.
    pub reason: String,
    /// The plan generation current when it was requested (0: no plan).
    pub generation: u32,
    /// The plan step running when it was requested, if any.
    pub step_seq: Option<u32>,
    /// Status.
    pub status: ExecutionStatus,
    /// When it was requested.
    pub created_at: Timestamp,
    /// When it was dispatched.
    pub started_at: Option<Timestamp>,
    /// When it reached a terminal status.
    pub finished_at: Option<Timestamp>,
    /// Output, once completed.
    pub output: Option<ExecOutput>,
    /// Error text, when failed or cancelled.
    pub error: Option<String>,
}

/// AUDIT-1: who made a decision (a static token's name or the OIDC subject) and the
/// id of the request that carried it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decider {
    /// The principal's name.
    pub name: String,
    /// The OIDC `preferred_username`, recorded alongside the subject in `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The request id (`x-request-id`), when the decision came over HTTP.
    pub request_id: Option<String>,
}

impl Decider {
    /// A decider known by name only.
    pub fn named(name: &str) -> Decider {
        Decider {
            name: name.to_owned(),
            username: None,
            request_id: None,
        }
    }
}

/// One approval request (GATE-7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// Its id; decisions name it.
    pub id: ApprovalId,
    /// The owning session.
    pub session_id: SessionId,
    /// The execution it guards.
    pub execution_id: ExecutionId,
    /// What it binds to.
    pub binding: ApprovalBinding,
    /// Hex SHA-256 of the binding.
    pub binding_hash: String,
    /// Status.
    pub status: ApprovalStatus,
    /// When it was requested.
    pub requested_at: Timestamp,
    /// When it expires (expiry means deny).
    pub expires_at: Timestamp,
    /// When it was decided.
    pub decided_at: Option<Timestamp>,
    /// Who decided it, when known.
    pub decided_by: Option<String>,
    /// AUTHZ-3: how many distinct operators must approve it (1 unless a rule says more).
    #[serde(default = "one_approver")]
    pub approvers_required: u32,
    /// AUTHZ-3: the operators who approved it so far, in order.
    #[serde(default)]
    pub approved_by: Vec<Decider>,
}

fn one_approver() -> u32 {
    1
}

/// One transcript message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Derived from the session and its message count.
    pub id: MessageId,
    /// The owning session.
    pub session_id: SessionId,
    /// Who wrote it.
    pub role: Role,
    /// Its text (never empty: TURN-3).
    pub content: String,
    /// The tool calls the assistant made in this message, in order.
    pub tool_calls: Vec<ToolCallRequest>,
    /// When it was written.
    pub created_at: Timestamp,
}

/// A tool call as the model made it, kept with its assistant message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The model's call id.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model sent them (JSON text, possibly malformed).
    pub arguments: String,
}

/// How a tool call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallOutcome {
    /// The tool did what was asked.
    Ok,
    /// The rules refused the call; the result says why and what to do.
    Refused,
    /// The tool failed (bad arguments, unknown host, transport error).
    Error,
    /// The call was left without a result by a crash and closed (TURN-7).
    Interrupted,
}

impl ToolCallOutcome {
    /// The stable spelling used by the stores.
    pub fn as_str(&self) -> &'static str {
        match self {
            ToolCallOutcome::Ok => "ok",
            ToolCallOutcome::Refused => "refused",
            ToolCallOutcome::Error => "error",
            ToolCallOutcome::Interrupted => "interrupted",
        }
    }

    /// Parses the store spelling.
    pub fn parse(text: &str) -> Option<ToolCallOutcome> {
        match text {
            "ok" => Some(ToolCallOutcome::Ok),
            "refused" => Some(ToolCallOutcome::Refused),
            "error" => Some(ToolCallOutcome::Error),
            "interrupted" => Some(ToolCallOutcome::Interrupted),
            _ => None,
        }
    }
}

/// One tool call with its result, persisted exactly once (TURN-4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The owning session.
    pub session_id: SessionId,
    /// The model's call id (unique within the session).
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: String,
    /// The result text the model got back.
    pub result: String,
    /// How it ended.
    pub outcome: ToolCallOutcome,
    /// When it started.
    pub started_at: Timestamp,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
}

/// A knowledge-graph entity (a host, a container, a service...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    /// Unique slug such as `lxc:nextcloud` or `host:hubris`.
    pub slug: String,
    /// Its kind (`host`, `lxc`, `vm`, `service`...).
    pub kind: String,
    /// Display name.
    pub name: String,
    /// Free-form attributes (a JSON object).
    pub attributes: serde_json::Value,
    /// Last update.
    pub updated_at: Timestamp,
}

/// A directed relationship between two entities.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relationship {
    /// Source entity slug.
    pub from: String,
    /// Relationship kind (`runs_on`, `depends_on`...).
    pub kind: String,
    /// Target entity slug.
    pub to: String,
    /// When it was recorded.
    pub created_at: Timestamp,
}

/// A knowledge entry: a note about one or more entities.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnowledgeEntry {
    /// Unique key chosen by the writer (for upserts).
    pub key: String,
    /// Title.
    pub title: String,
    /// Body text.
    pub content: String,
    /// Tags (`audit`, `update` mark audits: WRITEBACK-3).
    pub tags: Vec<String>,
    /// Slugs of the entities it is about.
    pub about: Vec<String>,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last update.
    pub updated_at: Timestamp,
}
