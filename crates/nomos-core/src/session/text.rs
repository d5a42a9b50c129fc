//! The directive texts the model reads in tool results. Short, imperative, no hedging.

use crate::record::PlanStep;
use crate::status::{CommandClass, SessionStatus, StepStatus};

/// GATE-4, as stated to the model in the plan result (F.3 of the seeds).
pub const APPROVAL_VOCABULARY: &str = "Approval vocabulary: \"approved\", \"yes\", \"go\", \"go ahead\", \"proceed\", \"continue\", \"ok\", \"lgtm\".";

/// PLAN-6: the title of the write-back step appended to a plan that lacks one.
pub const WRITEBACK_STEP_TITLE: &str = "Write back what was learned";

/// PLAN-6: the detail of the appended write-back step.
pub const WRITEBACK_STEP_DETAIL: &str = "Call update_entity_attributes for every entity you inspected (versions, states, addresses) and create_relationship for every edge you discovered, then upsert_knowledge about the affected entities.";

/// GATE-2: the refusal names the classifier's reason, so a model that can make the
/// command read-only (a simulation option, a narrower form) knows how.
pub fn propose_plan_first(class: CommandClass, reason: &str) -> String {
    format!(
        "Refused: this command is {class} ({reason}) and no plan exists. Propose a plan first with propose_plan, then STOP and wait for the operator's approval. Read-only commands may run at any time."
    )
}

/// PLAN-8: the note on a step closed by `complete_task`.
pub const STEP_CLOSED_AT_COMPLETION: &str = "closed at task completion";

/// SESSION-5: the note on a step that was running when its plan was revised.
pub const STEP_CLOSED_BY_REVISION: &str =
    "closed unfinished: the plan was revised while this step ran";

/// GATE-7: why a pending approval died with its plan.
pub const APPROVAL_VOID_REPLACED: &str =
    "approval void: the plan it belonged to was replaced; ask again under the new plan";

/// GATE-7: why a pending approval died with its plan.
pub const APPROVAL_VOID_REVISED: &str =
    "approval void: the plan it belonged to was revised; ask again under the new plan";

/// SESSION-2: `propose_plan` before `set_goal`.
pub const SET_GOAL_FIRST: &str = "Refused: no goal is set. Call set_goal first, then propose_plan.";

/// The result of `set_goal`.
pub fn goal_set(reopened: bool) -> String {
    let prefix = if reopened {
        "Goal set; the completed task is reopened as a new task. "
    } else {
        "Goal set. "
    };
    format!(
        "{prefix}NEXT: gather facts with read-only commands if needed, then propose_plan. Do not run commands that change anything before the plan is approved."
    )
}

/// PLAN-2: the result of a plan proposal, enumerating the steps and stating the contract.
pub fn plan_set(steps: &[&PlanStep], generation: u32, revised: bool) -> String {
    let list = steps
        .iter()
        .map(|s| format!("{}={}", s.seq, s.title))
        .collect::<Vec<_>>()
        .join("; ");
    let what = if revised {
        format!("Plan revised (generation {generation})")
    } else {
        "Plan set".to_owned()
    };
    format!(
        "{what} ({n} steps): {list}. STOP. Present the plan and wait for the operator's approval. \
Read-only commands may run at once; anything else waits for the operator's approval. {APPROVAL_VOCABULARY} \
On approval, advance with update_plan_step + run. Do NOT call propose_plan again.",
        n = steps.len()
    )
}

/// GATE-9: the declared commands of a proposed plan with their classes, and what assent
/// will and will not cover. Empty under `assent_scope = "window"` with nothing declared.
pub fn declared_commands(steps: &[&PlanStep], scope: crate::declared::AssentScope) -> String {
    use crate::declared::AssentScope;
    let declared: Vec<String> = steps
        .iter()
        .flat_map(|s| {
            s.commands
                .iter()
                .map(move |c| format!("step {}: [{}] {}: {}", s.seq, c.class(), c.host, c.command))
        })
        .collect();
    match (scope, declared.is_empty()) {
        (AssentScope::Window, true) => String::new(),
        (AssentScope::Declared, true) => " No step declared its commands: once approved, every command that is not read-only will still need its own approval. Declare them on each step as commands: [{host, command}].".to_owned(),
        (AssentScope::Window, false) => format!(" Declared commands: {}.", declared.join("; ")),
        (AssentScope::Declared, false) => format!(
            " Declared commands: {}. The operator's approval covers exactly these; a change that is not declared will need its own approval, and destructive or unknown commands always do.",
            declared.join("; ")
        ),
    }
}

/// PLAN-3: `propose_plan` while the plan is in flight.
pub fn plan_in_flight(n_steps: usize) -> String {
    format!(
        "Refused: plan already in flight - advance it with update_plan_step and run; do not call propose_plan again. \
Steps 1..{n_steps} exist and at least one has started. To advance, call update_plan_step(seq=K, status=running), then run for step K. \
Only if the operator explicitly asks to revise the whole plan, call propose_plan with revise=true and a reason."
    )
}

/// PLAN-3: `revise: true` without a reason.
pub const REVISION_NEEDS_REASON: &str = "Refused: revise=true needs a reason. Say why the plan must change, or advance the current plan with update_plan_step and run.";

/// PLAN-4: a seq outside the current generation.
pub fn step_not_found(seq: u32, generation: u32, n_steps: usize) -> String {
    if n_steps == 0 {
        return format!(
            "Refused: step {seq} not found - there is no plan. Propose one with propose_plan."
        );
    }
    format!(
        "Refused: step {seq} not found in the current plan (generation {generation} has steps 1..{n_steps}). Use a seq from the current plan."
    )
}

/// PLAN-4: a replaced step never changes.
pub fn step_replaced(seq: u32) -> String {
    format!(
        "Refused: step {seq} was replaced by a revised plan and can never change. Use the current plan's steps."
    )
}

/// A closed step cannot change again.
pub fn step_closed(seq: u32, status: StepStatus) -> String {
    format!("Refused: step {seq} is already {status}. Move on to the next step.")
}

/// PLAN-5: an earlier step is still pending.
pub fn earlier_step_pending(seq: u32, earlier: u32) -> String {
    format!(
        "Refused: step {earlier} is still pending; steps advance in order. Finish step {earlier} first, or mark it skipped with update_plan_step(seq={earlier}, status=skipped), then start step {seq}."
    )
}

/// A status the model may not set.
pub fn step_status_not_settable(status: StepStatus) -> String {
    format!("Refused: a step cannot be set to {status}. Use running, done, failed or skipped.")
}

/// The result of a step update.
pub fn step_updated(seq: u32, status: StepStatus) -> String {
    format!("Step {seq} -> {status}. Use update_plan_step to advance; do not re-propose.")
}

/// SESSION-3 and other tools on a terminal session.
pub fn task_complete_refusal(tool: &str, status: SessionStatus) -> String {
    if tool == "complete_task" {
        return format!(
            "Refused: already complete (status={status}) - do not call complete_task again; use update_plan_step and run to keep working."
        );
    }
    format!(
        "Refused: the task is already complete (status={status}). To start a new task in this session, call set_goal first."
    )
}

/// WRITEBACK-2.
pub const WRITEBACK_REQUIRED: &str = "Refused: this session ran discovery (run/get_entity/get_relations/list_hosts/list_entities) but did not call update_entity_attributes or create_relationship. Call those now to persist what you learned, then call complete_task again. The task board shows the outcome as partial until you do.";

/// The result of a completion.
pub fn task_completed(status: SessionStatus, n_closed_steps: usize, n_cancelled: usize) -> String {
    let mut out = format!("Task complete (status={status}).");
    if n_closed_steps > 0 {
        out.push_str(&format!(" Closed {n_closed_steps} open plan step(s)."));
    }
    if n_cancelled > 0 {
        out.push_str(&format!(" Cancelled {n_cancelled} pending approval(s)."));
    }
    out.push_str(" Do not call complete_task again.");
    out
}

/// The result of `ask_operator`.
pub const QUESTION_ASKED: &str = "Question sent to the operator. STOP now and wait for the answer; do not call more tools this turn.";

/// GATE-3: a state-changing command without the operator's assent.
pub fn wait_for_assent(class: CommandClass, reason: &str) -> String {
    format!(
        "Refused: this command is {class} ({reason}) and the operator has not approved the plan yet. STOP and wait for approval; do not call run for it again until the operator approves the plan. Read-only commands may still run."
    )
}

/// GATE-5: a destructive command became an approval request.
pub fn approval_requested(approval_id: &str, expires_at: &str) -> String {
    format!(
        "Approval requested (id {approval_id}): this command is destructive and needs the operator's explicit approval. STOP and wait; do not call run for it again. The request expires at {expires_at}; no answer means denied."
    )
}

/// SECRET-1: a command that reads a secret path waits for the operator's own approval.
pub fn secret_read_requested(approval_id: &str, expires_at: &str, path: &str) -> String {
    format!(
        "Approval requested (id {approval_id}): this command reads `{path}`, a secret path, and its output would reach you, so it needs the operator's own approval. STOP and wait; do not call run for it again, and do not read the file another way. The request expires at {expires_at}; no answer means denied."
    )
}

/// FLEET-1: a fan-out's command became one approval request for all its hosts.
pub fn fanout_approval_requested(approval_id: &str, hosts: usize, expires_at: &str) -> String {
    format!(
        "Approval requested (id {approval_id}): this command needs the operator's explicit approval; one request covers all {hosts} hosts. STOP and wait; do not call run for it again. The request expires at {expires_at}; no answer means denied."
    )
}

/// FLEET-5: a fan-out with a canary needs the operator's approval to start it.
pub fn canary_approval_requested(
    approval_id: &str,
    canary: usize,
    rest: usize,
    expires_at: &str,
) -> String {
    format!(
        "Approval requested (id {approval_id}): this command needs the operator's explicit approval; this request covers the canary ({canary} host(s)), and the other {rest} host(s) run only after the canary passed and the operator approved them too. STOP and wait; do not call run for it again. The request expires at {expires_at}; no answer means denied."
    )
}

/// FLEET-5: the command waits on this host for the operator's approval of the rest of a
/// fan-out after its canary; running it again is refused.
pub fn held_for_canary(approval_id: &str, host: &str) -> String {
    format!(
        "Refused: `{host}` is one of the hosts that wait for the operator's approval {approval_id} of the rest after the canary, for this same command. It did not run. STOP and wait for the operator's decision; do not run it again, on this host or in another group."
    )
}

/// GATE-5, GATE-9: an approval request, saying why it was asked.
pub fn approval_requested_for(
    approval_id: &str,
    expires_at: &str,
    class: CommandClass,
    origin: crate::declared::RequestOrigin,
) -> String {
    use crate::declared::RequestOrigin;
    match origin {
        RequestOrigin::OwnClass => approval_requested(approval_id, expires_at),
        RequestOrigin::NotInPlan { .. } => format!(
            "Approval requested (id {approval_id}): this command is {class} and it is not in the approved plan (no step declared it), so it needs the operator's own approval. STOP and wait; do not call run for it again. The request expires at {expires_at}; no answer means denied."
        ),
        RequestOrigin::Declared { step_seq } => format!(
            "Approval requested (id {approval_id}): step {step_seq} declared this command, and as {class} it still needs the operator's own approval. STOP and wait; do not call run for it again. The request expires at {expires_at}; no answer means denied."
        ),
        RequestOrigin::AfterCanary { hosts } => format!(
            "Approval requested (id {approval_id}): the canary ({hosts} host(s)) passed, and the rest of the group waits for the operator's approval. STOP and wait; do not call run for it again. The request expires at {expires_at}; no answer means denied."
        ),
    }
}

/// An identical request is already waiting.
pub fn approval_already_pending(approval_id: &str) -> String {
    format!(
        "Approval already requested (id {approval_id}) for exactly this command. STOP and wait for the operator; do not ask again."
    )
}

/// TURN-6: the result of every tool call of a reply after the turn reached its limit.
pub fn step_limit_result(limit: u32) -> String {
    format!(
        "Refused: this turn reached its limit of {limit} tool calls. Stop and summarize for the operator."
    )
}

/// TURN-6: the final text of a turn stopped at its limit, after the reply's own text.
pub fn step_limit_summary(limit: u32, text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        format!("Stopped after {limit} tool calls, the limit of one turn.")
    } else {
        format!("{text} (stopped after {limit} tool calls, the limit of one turn)")
    }
}

/// GATE-3: a gated extra tool called without the operator's assent.
pub fn extra_tool_needs_assent(name: &str) -> String {
    format!(
        "Refused: {name} changes state and the operator has not approved the plan. STOP and wait for approval."
    )
}
