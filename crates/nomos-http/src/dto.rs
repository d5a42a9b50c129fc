//! The wire types of the API. Only this crate knows them; each converts from core records.
//!
//! Times are RFC 3339 strings with milliseconds; states are the core's `snake_case`
//! spellings; ids are UUIDs. Request types refuse unknown fields.

use nomos_core::activity::ActivityEntry;
use nomos_core::declared::DeclaredCommand;
use nomos_core::ports::store::KnowledgeHit;
use nomos_core::record::{
    Approval, Entity, ExecOutput, Execution, Message, PlanStep, Relationship, SessionRecord,
    ToolCallRecord,
};
use nomos_core::session::PlanDecision;
use nomos_core::{Decision, Timestamp};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::AuthMode;
use crate::oidc::OidcClient;

fn time(at: Timestamp) -> String {
    at.to_rfc3339()
}

fn opt_time(at: Option<Timestamp>) -> Option<String> {
    at.map(time)
}

/// A session (one chat, one task).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SessionDto {
    /// Its id.
    pub id: Uuid,
    /// `active`, `planning`, `executing`, `awaiting_input`, `done`, `failed` or `partial`.
    pub status: String,
    /// The goal, once set.
    pub goal: Option<String>,
    /// A title for a session without a goal: its first operator message, shortened.
    pub title: Option<String>,
    /// The completion summary.
    pub summary: Option<String>,
    /// The outcome the board shows so far (`success`, `failure`, `partial`).
    pub board_outcome: Option<String>,
    /// The current plan generation (0: no plan yet).
    pub plan_generation: u32,
    /// The plan generation the operator assented to, while the window is open.
    pub assent_generation: Option<u32>,
    /// When the assent window closes.
    pub assent_expires_at: Option<String>,
    /// MCP-2: the MCP client (`name version`) that drives this session and makes its tool
    /// calls; absent when Nomos's model drives it.
    pub client: Option<String>,
    /// AUTHZ-1: the principal that created it (a token's name or an OIDC subject), if any;
    /// for a session a client drives, the principal that drives it.
    pub owner: Option<String>,
    /// CONTROL-6: when the operator archived it (it is off the board), if archived.
    pub archived_at: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Last activity.
    pub last_activity_at: String,
}

impl From<&SessionRecord> for SessionDto {
    fn from(record: &SessionRecord) -> Self {
        SessionDto {
            id: record.id.0,
            status: record.status.as_str().to_owned(),
            goal: record.goal.clone(),
            title: None,
            summary: record.summary.clone(),
            board_outcome: record.board_outcome.map(|o| o.as_str().to_owned()),
            plan_generation: record.plan_generation,
            assent_generation: record.assent.map(|a| a.generation),
            assent_expires_at: record.assent.map(|a| time(a.expires_at)),
            client: record.client.clone(),
            owner: record.owner.clone(),
            archived_at: opt_time(record.archived_at),
            created_at: time(record.created_at),
            last_activity_at: time(record.last_activity_at),
        }
    }
}

/// An operator message (`POST /api/sessions/{id}/messages`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PostMessage {
    /// The text; not empty.
    pub text: String,
}

/// A turn was started in the background; follow it on the event stream.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TurnAccepted {
    /// The session.
    pub session_id: Uuid,
    /// Where to follow it.
    pub events: String,
}

/// One plan step.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StepDto {
    /// Plan generation.
    pub generation: u32,
    /// Position in the generation, 1..N.
    pub seq: u32,
    /// What it does.
    pub title: String,
    /// More detail.
    pub detail: Option<String>,
    /// `pending`, `running`, `done`, `failed`, `skipped` or `replaced`.
    pub status: String,
    /// The note of the last change.
    pub note: Option<String>,
    /// Start time.
    pub started_at: Option<String>,
    /// End time.
    pub finished_at: Option<String>,
    /// GATE-9: the commands the step declared, each with its class, in declared order.
    pub commands: Vec<DeclaredCommandDto>,
    /// SAFE-4: the step's read-only check and its last verdict, when it declared one.
    pub check: Option<StepCheckDto>,
}

/// SAFE-4: a step's check, as declared and classified at proposal, with its last verdict.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StepCheckDto {
    /// The host it runs on.
    pub host: String,
    /// The exact command.
    pub command: String,
    /// The exit status it must give, when one is asked for (0 unless only output is).
    pub expect_exit: Option<i32>,
    /// Text its output must contain.
    pub expect_output: Option<String>,
    /// Whether it ran, and how it went.
    pub state: CheckStateDto,
    /// Why it failed.
    pub reason: Option<String>,
    /// The execution (kind `check`) of its last run.
    pub execution_id: Option<String>,
}

/// SAFE-4: where a step's check stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStateDto {
    /// It has not run yet.
    Pending,
    /// Its last run passed.
    Passed,
    /// Its last run failed.
    Failed,
}

impl From<&nomos_core::check::StepCheck> for StepCheckDto {
    fn from(check: &nomos_core::check::StepCheck) -> Self {
        use nomos_core::check::CheckVerdict;
        let (state, reason) = match check.result.as_ref().map(|r| &r.verdict) {
            None => (CheckStateDto::Pending, None),
            Some(CheckVerdict::Passed) => (CheckStateDto::Passed, None),
            Some(CheckVerdict::Failed { reason }) => (CheckStateDto::Failed, Some(reason.clone())),
        };
        StepCheckDto {
            host: check.host.clone(),
            command: check.command.clone(),
            expect_exit: check.expected_exit(),
            expect_output: check.expect_output.clone(),
            state,
            reason,
            execution_id: check.result.as_ref().map(|r| r.execution_id.to_string()),
        }
    }
}

/// GATE-9: one command a plan step declared, as classified when the plan was proposed.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DeclaredCommandDto {
    /// The host slug, or the group (`tag:NAME`) as declared.
    pub host: String,
    /// For a group: the hosts it stood for at proposal; empty for a single host.
    pub members: Vec<String>,
    /// The command exactly as declared.
    pub command: String,
    /// `read_only`, `config_mutation` or `destructive`.
    pub class: String,
    /// Why it has that class.
    pub reason: String,
    /// GATE-10: the preview run when the plan was proposed, for a declared change with a
    /// preview form; the window the operator opens binds to it.
    pub preview: Option<PreviewDto>,
}

impl From<&DeclaredCommand> for DeclaredCommandDto {
    fn from(declared: &DeclaredCommand) -> Self {
        DeclaredCommandDto {
            host: declared.host.clone(),
            members: declared.members.clone(),
            command: declared.command.clone(),
            class: declared.class().as_str().to_owned(),
            reason: declared.classification.reason.clone(),
            preview: declared.preview.as_ref().map(PreviewDto::from),
        }
    }
}

impl From<&PlanStep> for StepDto {
    fn from(step: &PlanStep) -> Self {
        StepDto {
            generation: step.generation,
            seq: step.seq,
            title: step.title.clone(),
            detail: step.detail.clone(),
            status: step.status.as_str().to_owned(),
            note: step.note.clone(),
            started_at: opt_time(step.started_at),
            finished_at: opt_time(step.finished_at),
            commands: step.commands.iter().map(DeclaredCommandDto::from).collect(),
            check: step.check.as_ref().map(StepCheckDto::from),
        }
    }
}

/// A plan: the current generation's steps, or every generation's (PLAN-7).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PlanDto {
    /// The current generation (0: no plan yet).
    pub generation: u32,
    /// GATE-4 (rev. 3): the digest of the current generation's plan as shown (its steps,
    /// declared commands and previews, and the proposal itself); an explicit decision
    /// sends it back. `null` before any plan.
    pub digest: Option<String>,
    /// AUTHZ-3: how many distinct operators must approve the current plan (more than one
    /// when a two-person rule covers one of its declared commands).
    pub approvers_required: u32,
    /// AUTHZ-3: who approved the current plan as shown (its digest) so far.
    pub approved_by: Vec<String>,
    /// Steps ordered by generation, then seq.
    pub steps: Vec<StepDto>,
}

/// One line of the activity log (ACTIVITY-1..4).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ActivityDto {
    /// When it happened (a persisted time, ACTIVITY-2).
    pub at: String,
    /// Stable identity.
    pub key: String,
    /// `status`, `goal`, `plan`, `step`, `command`, `approval`, `tool` or `nudge`.
    pub kind: String,
    /// One line for the operator.
    pub title: String,
    /// More text.
    pub detail: Option<String>,
    /// `info`, `pending`, `running`, `stalled`, `waiting_approval`, `done`, `failed`,
    /// `skipped`, `replaced` or `cancelled`.
    pub state: String,
    /// Plan generation.
    pub generation: Option<u32>,
    /// Plan step seq.
    pub seq: Option<u32>,
    /// The execution it stands for.
    pub execution_id: Option<Uuid>,
    /// The approval it stands for.
    pub approval_id: Option<Uuid>,
    /// How long it took.
    pub duration_ms: Option<u64>,
}

fn spelling<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(text)) => text,
        _ => String::new(),
    }
}

impl From<&ActivityEntry> for ActivityDto {
    fn from(entry: &ActivityEntry) -> Self {
        ActivityDto {
            at: time(entry.at),
            key: entry.key.clone(),
            kind: spelling(&entry.kind),
            title: entry.title.clone(),
            detail: entry.detail.clone(),
            state: spelling(&entry.state),
            generation: entry.generation,
            seq: entry.seq,
            execution_id: entry.execution_id.map(|id| id.0),
            approval_id: entry.approval_id.map(|id| id.0),
            duration_ms: entry.duration_ms,
        }
    }
}

/// A tool call in the transcript, with its result when it has one.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TranscriptToolCall {
    /// The model's call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as the model sent them (JSON text).
    pub arguments: String,
    /// The result the model got back.
    pub result: Option<String>,
    /// `ok`, `refused`, `error` or `interrupted`.
    pub outcome: Option<String>,
    /// Start time.
    pub started_at: Option<String>,
    /// Duration.
    pub duration_ms: Option<u64>,
}

/// One transcript message.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TranscriptMessage {
    /// Its id.
    pub id: Uuid,
    /// `operator`, `assistant` or another role.
    pub role: String,
    /// Text.
    pub content: String,
    /// When it was written.
    pub created_at: String,
    /// Tool calls the assistant made in it, with their results.
    pub tool_calls: Vec<TranscriptToolCall>,
}

impl TranscriptMessage {
    /// Joins a message with the results of its tool calls.
    pub fn join(message: &Message, calls: &[ToolCallRecord]) -> TranscriptMessage {
        let tool_calls = message
            .tool_calls
            .iter()
            .map(|request| {
                let record = calls.iter().find(|c| c.call_id == request.call_id);
                TranscriptToolCall {
                    call_id: request.call_id.clone(),
                    name: request.name.clone(),
                    arguments: request.arguments.clone(),
                    result: record.map(|r| r.result.clone()),
                    outcome: record.map(|r| r.outcome.as_str().to_owned()),
                    started_at: record.map(|r| time(r.started_at)),
                    duration_ms: record.map(|r| r.duration_ms),
                }
            })
            .collect();
        TranscriptMessage {
            id: message.id.0,
            role: message.role.as_str().to_owned(),
            content: message.content.clone(),
            created_at: time(message.created_at),
            tool_calls,
        }
    }
}

/// A command's captured output (EXEC-5).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OutputDto {
    /// Exit code.
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<String>,
    /// Standard output (capped).
    pub stdout: String,
    /// Standard error (capped).
    pub stderr: String,
    /// Bytes of stdout cut.
    pub stdout_cut: u64,
    /// Bytes of stderr cut.
    pub stderr_cut: u64,
    /// Wall time.
    pub duration_ms: u64,
}

impl From<&ExecOutput> for OutputDto {
    fn from(output: &ExecOutput) -> Self {
        OutputDto {
            exit_code: output.exit_code,
            signal: output.signal.clone(),
            stdout: output.stdout.clone(),
            stderr: output.stderr.clone(),
            stdout_cut: output.stdout_cut,
            stderr_cut: output.stderr_cut,
            duration_ms: output.duration_ms,
        }
    }
}

/// One execution (EXEC-1).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ExecutionDto {
    /// Its id.
    pub id: Uuid,
    /// The session.
    pub session_id: Uuid,
    /// `command`, or `preview` for a read-only preview Nomos ran before a request (GATE-10).
    pub kind: String,
    /// Host slug.
    pub host: String,
    /// The exact command.
    pub command: String,
    /// `read_only`, `config_mutation` or `destructive`.
    pub class: String,
    /// Why it has that class.
    pub reason: String,
    /// `pending_approval`, `approved`, `running`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// Plan generation.
    pub generation: u32,
    /// Plan step.
    pub step_seq: Option<u32>,
    /// Requested at.
    pub created_at: String,
    /// Dispatched at.
    pub started_at: Option<String>,
    /// Ended at.
    pub finished_at: Option<String>,
    /// Output.
    pub output: Option<OutputDto>,
    /// Error text.
    pub error: Option<String>,
}

impl From<&Execution> for ExecutionDto {
    fn from(execution: &Execution) -> Self {
        ExecutionDto {
            id: execution.id.0,
            session_id: execution.session_id.0,
            kind: execution.kind.as_str().to_owned(),
            host: execution.host.clone(),
            command: execution.command.clone(),
            class: execution.class.as_str().to_owned(),
            reason: execution.reason.clone(),
            status: execution.status.as_str().to_owned(),
            generation: execution.generation,
            step_seq: execution.step_seq,
            created_at: time(execution.created_at),
            started_at: opt_time(execution.started_at),
            finished_at: opt_time(execution.finished_at),
            output: execution.output.as_ref().map(OutputDto::from),
            error: execution.error.clone(),
        }
    }
}

/// One approval request (GATE-7), joined with the execution it guards.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApprovalDto {
    /// Its id; decisions name it.
    pub id: Uuid,
    /// The session.
    pub session_id: Uuid,
    /// The execution it guards.
    pub execution_id: Uuid,
    /// The exact command.
    pub command: String,
    /// Host slug; for a group, every host of it, one per line.
    pub host: String,
    /// FLEET-1: the exact host set the approval covers (one host unless it is a group).
    pub hosts: Vec<String>,
    /// Command class.
    pub class: String,
    /// Why the command has that class (the execution's reason).
    pub reason: String,
    /// Plan generation it binds to.
    pub generation: u32,
    /// The plan step the command belongs to (the execution's step), if any.
    pub step_seq: Option<u32>,
    /// `pending`, `approved`, `denied`, `expired`, `cancelled`...
    pub status: String,
    /// Requested at.
    pub requested_at: String,
    /// Expires at (expiry means deny).
    pub expires_at: String,
    /// Decided at.
    pub decided_at: Option<String>,
    /// Decided by.
    pub decided_by: Option<String>,
    /// AUTHZ-3: how many distinct operators must approve it (1 unless a policy rule says
    /// more).
    pub approvers_required: u32,
    /// AUTHZ-3: who approved it so far, in order (the card's "alice approved").
    pub approved_by: Vec<String>,
    /// GATE-9: what the card says about the plan, beyond the class: "not in the approved
    /// plan" (with the step it ran under) for an undeclared change, or that the approved
    /// plan declared it for a destructive or unknown command; absent otherwise.
    pub plan_note: Option<String>,
    /// GATE-10: the read-only preview run before the request was shown, if the command
    /// has a preview form; it is part of what the approval binds to.
    pub preview: Option<PreviewDto>,
}

/// GATE-10: a preview shown with a request or a declared command.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PreviewDto {
    /// How the output is read: `apt_simulation`, `unit_status`, `sed_diff` or `raw`.
    pub parser: String,
    /// `shown`, or `failed` when a preview command failed, was cut or could not run.
    pub outcome: String,
    /// Each preview command's run, in order.
    pub runs: Vec<PreviewRunDto>,
    /// The packages an apt simulation says would change.
    pub packages: Vec<PackageChangeDto>,
    /// For `sed -i`: the unified diff of the file against what sed would write.
    pub diff: Option<String>,
    /// For `sed -i`: the file.
    pub file: Option<String>,
    /// FLEET-6: for a fan-out, its hosts grouped by what their previews say, the smallest
    /// group first (the fields above are the first group's); empty for one host.
    #[serde(default)]
    pub groups: Vec<PreviewGroupDto>,
}

/// FLEET-6: hosts of a fan-out whose previews read the same.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PreviewGroupDto {
    /// The hosts, in the fan-out's order.
    pub hosts: Vec<String>,
    /// One line: how many hosts, and what their preview says ("18 hosts: 3 package(s) upgraded").
    pub summary: String,
    /// `shown` or `failed`.
    pub outcome: String,
    /// The first host's runs.
    pub runs: Vec<PreviewRunDto>,
    /// The packages an apt simulation says would change.
    pub packages: Vec<PackageChangeDto>,
    /// For `sed -i`: the diff.
    pub diff: Option<String>,
}

/// One preview command's run.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PreviewRunDto {
    /// The preview command.
    pub command: String,
    /// `ran`, `failed` or `not_run`.
    pub status: String,
    /// The execution of kind `preview` that recorded it.
    pub execution_id: Option<Uuid>,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// Standard output, capped.
    pub stdout: String,
    /// Standard error, capped.
    pub stderr: String,
    /// Bytes the cap cut.
    pub cut: u64,
    /// Why it failed or did not run.
    pub error: Option<String>,
}

/// One package an apt simulation would change.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PackageChangeDto {
    /// `install`, `upgrade`, `remove` or `purge`.
    pub action: String,
    /// The package.
    pub name: String,
    /// The installed version.
    pub from: Option<String>,
    /// The version it would get.
    pub to: Option<String>,
}

fn outcome_text(outcome: nomos_core::preview::PreviewOutcome) -> String {
    use nomos_core::preview::PreviewOutcome;
    match outcome {
        PreviewOutcome::Shown => "shown",
        PreviewOutcome::Failed => "failed",
    }
    .to_owned()
}

fn run_dtos(runs: &[nomos_core::preview::PreviewRun]) -> Vec<PreviewRunDto> {
    use nomos_core::preview::PreviewRunStatus;
    runs.iter()
        .map(|run| PreviewRunDto {
            command: run.command.clone(),
            status: match run.status {
                PreviewRunStatus::Ran => "ran",
                PreviewRunStatus::Failed => "failed",
                PreviewRunStatus::NotRun => "not_run",
            }
            .to_owned(),
            execution_id: run.execution_id.map(|id| id.0),
            exit_code: run.exit_code,
            stdout: run.stdout.clone(),
            stderr: run.stderr.clone(),
            cut: run.cut,
            error: run.error.clone(),
        })
        .collect()
}

fn package_dtos(packages: &[nomos_core::classify::PackageChange]) -> Vec<PackageChangeDto> {
    use nomos_core::classify::PackageAction;
    packages
        .iter()
        .map(|p| PackageChangeDto {
            action: match p.action {
                PackageAction::Install => "install",
                PackageAction::Upgrade => "upgrade",
                PackageAction::Remove => "remove",
                PackageAction::Purge => "purge",
            }
            .to_owned(),
            name: p.name.clone(),
            from: p.from.clone(),
            to: p.to.clone(),
        })
        .collect()
}

impl From<&nomos_core::preview::Preview> for PreviewDto {
    fn from(preview: &nomos_core::preview::Preview) -> Self {
        PreviewDto {
            parser: preview.parser.as_str().to_owned(),
            outcome: outcome_text(preview.outcome),
            runs: run_dtos(&preview.runs),
            packages: package_dtos(&preview.packages),
            diff: preview.diff.clone(),
            file: preview.file.clone(),
            groups: preview
                .groups
                .iter()
                .map(|group| PreviewGroupDto {
                    hosts: group.hosts.clone(),
                    summary: group.summary.clone(),
                    outcome: outcome_text(group.outcome),
                    runs: run_dtos(&group.runs),
                    packages: package_dtos(&group.packages),
                    diff: group.diff.clone(),
                })
                .collect(),
        }
    }
}

impl ApprovalDto {
    /// Joins an approval with the execution it guards.
    pub fn join(approval: &Approval, execution: &Execution) -> ApprovalDto {
        ApprovalDto {
            id: approval.id.0,
            session_id: approval.session_id.0,
            execution_id: approval.execution_id.0,
            command: approval.binding.command.clone(),
            host: approval.binding.host.clone(),
            hosts: approval.binding.host.lines().map(str::to_owned).collect(),
            class: approval.binding.class.as_str().to_owned(),
            reason: execution.reason.clone(),
            generation: approval.binding.generation,
            step_seq: execution.step_seq,
            status: approval.status.as_str().to_owned(),
            requested_at: time(approval.requested_at),
            expires_at: time(approval.expires_at),
            decided_at: opt_time(approval.decided_at),
            decided_by: approval.decided_by.clone(),
            approvers_required: approval.approvers_required,
            approved_by: approval
                .approved_by
                .iter()
                .map(|d| d.name.clone())
                .collect(),
            plan_note: approval.binding.origin.card_note(),
            preview: approval.binding.preview.as_ref().map(PreviewDto::from),
        }
    }
}

/// The operator's decision on an approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionDto {
    /// Run the command.
    Approve,
    /// Do not run it.
    Deny,
}

impl From<DecisionDto> for Decision {
    fn from(decision: DecisionDto) -> Self {
        match decision {
            DecisionDto::Approve => Decision::Approve,
            DecisionDto::Deny => Decision::Deny,
        }
    }
}

/// `POST /api/approvals/{id}/decision`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecideRequest {
    /// `approve` or `deny`.
    pub decision: DecisionDto,
    /// CONTROL-4: why the operator denies (deny only, at most 1000 characters); the
    /// model is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a decision did; the continuation turn runs in the background.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DecisionResult {
    /// The session.
    pub session_id: Uuid,
    /// The execution.
    pub execution_id: Uuid,
    /// Whether the command was dispatched (approved) or not (denied, or still waiting for
    /// other operators).
    pub dispatched: bool,
    /// AUTHZ-3: set when this approval counted but the request needs more distinct
    /// operators: it still waits, and nothing ran.
    pub awaiting: Option<AwaitingDto>,
}

/// AUTHZ-3: how far a request that needs several operators got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AwaitingDto {
    /// Distinct operators who approved it so far.
    pub approvals: u32,
    /// How many it needs.
    pub required: u32,
}

/// The operator's explicit decision on a waiting plan (GATE-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanDecisionDto {
    /// Approve the plan: the assent window opens for its generation.
    Approve,
    /// Reject it: nothing of that generation runs.
    Reject,
}

impl From<PlanDecisionDto> for PlanDecision {
    fn from(decision: PlanDecisionDto) -> Self {
        match decision {
            PlanDecisionDto::Approve => PlanDecision::Approve,
            PlanDecisionDto::Reject => PlanDecision::Reject,
        }
    }
}

/// `POST /api/sessions/{id}/plan/decision`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanDecisionRequest {
    /// The plan generation decided: the one the operator saw. Not the current one: 409.
    pub generation: u32,
    /// GATE-4 (rev. 3): the `digest` of the plan the operator saw (`GET
    /// /api/sessions/{id}/plan`). Required: a missing one, or one that is not the current
    /// plan's (the plan was proposed again since), is a 409 with the current plan.
    #[serde(default)]
    #[schema(required = true)]
    pub digest: Option<String>,
    /// `approve` or `reject`.
    pub decision: PlanDecisionDto,
    /// Why, in the operator's words; the model reads it.
    #[serde(default)]
    pub reason: Option<String>,
}

/// GATE-4 (rev. 3): a plan decision refused because the plan it names is not the current
/// one (409): why, and the plan as it is now, to show and decide again.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlanConflict {
    /// Why (`code` is `conflict`).
    pub error: crate::error::ErrorDetail,
    /// The current plan, with its digest.
    pub plan: PlanDto,
}

/// What a plan decision did; the turn it starts runs in the background.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PlanDecided {
    /// The session.
    pub session_id: Uuid,
    /// The generation decided.
    pub generation: u32,
    /// `approve` or `reject`.
    pub decision: PlanDecisionDto,
    /// Where to follow the turn it started.
    pub events: String,
    /// AUTHZ-3: set when this approval counted but the plan needs more distinct operators:
    /// it still waits, nothing of it runs and no turn started.
    pub awaiting: Option<AwaitingDto>,
}

/// A knowledge-graph entity.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EntityDto {
    /// Slug (`host:hubris`, `lxc:nextcloud`).
    pub slug: String,
    /// Kind.
    pub kind: String,
    /// Display name.
    pub name: String,
    /// Attributes (a JSON object).
    #[schema(value_type = Object)]
    pub attributes: serde_json::Value,
    /// Last update.
    pub updated_at: String,
}

impl From<&Entity> for EntityDto {
    fn from(entity: &Entity) -> Self {
        EntityDto {
            slug: entity.slug.clone(),
            kind: entity.kind.clone(),
            name: entity.name.clone(),
            attributes: entity.attributes.clone(),
            updated_at: time(entity.updated_at),
        }
    }
}

/// A relationship between two entities.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RelationDto {
    /// Source slug.
    pub from: String,
    /// Kind (`runs_on`...).
    pub kind: String,
    /// Target slug.
    pub to: String,
    /// When it was recorded.
    pub created_at: String,
}

impl From<&Relationship> for RelationDto {
    fn from(relation: &Relationship) -> Self {
        RelationDto {
            from: relation.from.clone(),
            kind: relation.kind.clone(),
            to: relation.to.clone(),
            created_at: time(relation.created_at),
        }
    }
}

/// A knowledge entry found by search.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct KnowledgeHitDto {
    /// Key.
    pub key: String,
    /// Title.
    pub title: String,
    /// Body.
    pub content: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Entity slugs it is about.
    pub about: Vec<String>,
    /// Last update.
    pub updated_at: String,
    /// Relevance (higher is better).
    pub rank: f64,
}

impl From<&KnowledgeHit> for KnowledgeHitDto {
    fn from(hit: &KnowledgeHit) -> Self {
        KnowledgeHitDto {
            key: hit.entry.key.clone(),
            title: hit.entry.title.clone(),
            content: hit.entry.content.clone(),
            tags: hit.entry.tags.clone(),
            about: hit.entry.about.clone(),
            updated_at: time(hit.entry.updated_at),
            rank: hit.rank,
        }
    }
}

/// `GET /api/info`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct InfoDto {
    /// Nomos version.
    pub version: String,
    /// The model's name.
    pub model: String,
    /// Whether the model is the scripted demo (no model endpoint configured).
    pub demo: bool,
    /// A notice to show when `demo` is true.
    pub notice: Option<String>,
    /// How callers authenticate.
    pub auth: AuthMode,
    /// With OIDC sign-in configured: the public client settings for the login page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcClientDto>,
}

/// The OIDC client settings of `GET /api/info` (public, no secret).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OidcClientDto {
    /// Where the browser starts a sign-in.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged for tokens.
    pub token_endpoint: String,
    /// The client id.
    pub client_id: String,
    /// The scopes to ask for; absent means `openid profile offline_access`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl From<&OidcClient> for OidcClientDto {
    fn from(client: &OidcClient) -> Self {
        OidcClientDto {
            authorization_endpoint: client.authorization_endpoint.clone(),
            token_endpoint: client.token_endpoint.clone(),
            client_id: client.client_id.clone(),
            scope: client.scope.clone(),
        }
    }
}

/// `GET /readyz`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReadyDto {
    /// `ready` or `not_ready`.
    pub status: String,
    /// Why it is not ready.
    pub reason: Option<String>,
}
