//! RESUME: the notes that resume a session, nudge it, or say that resuming failed.
//!
//! Every note is plain text with stable wording, built from facts the caller read from the
//! store. A resume note (RESUME-1) always quotes the operator's last message and, while a
//! plan is in flight, tells the model to advance it with `update_plan_step` and `run`
//! instead of proposing it again. A retried resume (RESUME-2) grows more directive with each
//! attempt, spaced by [`ResumeRetry`]; when every attempt fails, [`terminal_note`] tells the
//! operator why and that the session can be resumed (RESUME-3).

use serde::{Deserialize, Serialize};

use crate::ports::store::SessionSnapshot;
use crate::record::{Approval, Execution};
use crate::status::{ApprovalStatus, ExecutionStatus, StepStatus};
use crate::sweep::excerpt;
use crate::time::Span;

/// How many characters of the operator's last message a note quotes.
pub const QUOTE_CHARS: usize = 300;

/// How many characters of a command's output a continuation carries.
pub const OUTPUT_CHARS: usize = 800;

/// The plan generation a session is working through, as the notes describe it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PlanInFlight {
    /// The current generation.
    pub generation: u32,
    /// How many steps it has.
    pub n_steps: u32,
    /// How many of them are closed (done, failed, skipped or replaced).
    pub n_closed: u32,
    /// Seq and title of the first step that is pending or running.
    pub next: Option<(u32, String)>,
}

impl PlanInFlight {
    /// The current plan generation of a stored session as the resume notes describe it,
    /// when one is in flight (some step of it still open).
    pub fn of(snapshot: &SessionSnapshot) -> Option<PlanInFlight> {
        let generation = snapshot.record.plan_generation;
        let steps = snapshot.plan_steps(false);
        if generation == 0 || steps.is_empty() {
            return None;
        }
        let n_closed = steps.iter().filter(|s| s.status.is_closed()).count() as u32;
        let next = steps
            .iter()
            .find(|s| matches!(s.status, StepStatus::Pending | StepStatus::Running))
            .map(|s| (s.seq, s.title.clone()));
        let plan = PlanInFlight {
            generation,
            n_steps: steps.len() as u32,
            n_closed,
            next,
        };
        plan.is_open().then_some(plan)
    }

    /// Whether any step is still open, i.e. the plan is actually in flight.
    pub fn is_open(&self) -> bool {
        self.n_closed < self.n_steps
    }
}

/// Why the session is being resumed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ResumeKind {
    /// The operator's client reconnected after the turn was cut off.
    Reconnect,
    /// The operator asked to resume (`/resume`).
    Manual,
    /// EXEC-4: the operator decided on an execution; `outcome` says what ran and what it
    /// returned, or that it was denied (see [`continuation_outcome`]).
    Continuation {
        /// What happened to the execution.
        outcome: String,
    },
    /// SWEEP-1: the idle sweep nudged the session.
    IdleNudge,
}

/// RESUME-1, RESUME-2: the note that resumes a session, for `attempt` 1, 2 or 3.
///
/// Attempt 1 states the situation; attempt 2 adds that the previous reply was empty;
/// attempt 3 and later demand a tool call or a short status now.
pub fn resume_note(
    last_operator_message: Option<&str>,
    plan: Option<&PlanInFlight>,
    kind: &ResumeKind,
    attempt: u32,
) -> String {
    let mut lines = vec![kind_line(kind)];
    lines.push(quote_line(last_operator_message));
    if let Some(plan) = plan {
        lines.push(plan_line(plan));
    }
    if let ResumeKind::IdleNudge = kind {
        lines.push(FINISH_OR_REPORT.to_owned());
    }
    match attempt {
        0 | 1 => lines.push("Continue from here.".to_owned()),
        2 => lines.push(
            "Your previous reply was empty. Continue from here: reply with a tool call or a \
             short status."
                .to_owned(),
        ),
        _ => lines.push(
            "Your previous replies were empty. Reply now with a tool call or a short status; \
             do not reply empty."
                .to_owned(),
        ),
    }
    lines.join("\n")
}

/// SWEEP-1: the note the idle sweep leaves in the transcript.
pub fn nudge_note(goal: Option<&str>, plan: Option<&PlanInFlight>) -> String {
    let mut lines = vec!["This session has been idle for a while.".to_owned()];
    if let Some(goal) = goal {
        lines.push(format!("Goal: {}", quoted(goal)));
    }
    if let Some(plan) = plan {
        lines.push(plan_line(plan));
    }
    lines.push(FINISH_OR_REPORT.to_owned());
    lines.join("\n")
}

/// RESUME-4: the note after the operator's assent opened the window for `generation`: its
/// steps and the declared commands it approved (`(step seq, class, host, command)`).
pub fn plan_approved_note(
    message: &str,
    generation: u32,
    n_steps: u32,
    declared: &[(u32, &str, &str, &str)],
) -> String {
    format!(
        "The operator's message {} approved plan generation {generation} (steps 1..{n_steps}; \
         {}). Advance it with update_plan_step and run; do not call propose_plan again.",
        quoted(message),
        declared_list(declared)
    )
}

/// GATE-4, RESUME-4: the note after the operator approved `generation` with an explicit
/// decision (the Approve button), with the reason they gave, if any.
pub fn plan_decided_approved_note(
    generation: u32,
    n_steps: u32,
    declared: &[(u32, &str, &str, &str)],
    reason: Option<&str>,
) -> String {
    format!(
        "The operator approved plan generation {generation} with an explicit decision{} (steps \
         1..{n_steps}; {}). Advance it with update_plan_step and run; do not call propose_plan \
         again.",
        reason_clause(reason),
        declared_list(declared)
    )
}

/// GATE-4, RESUME-4: the note after the operator rejected `generation`.
pub fn plan_rejected_note(generation: u32, reason: Option<&str>) -> String {
    format!(
        "The operator rejected plan generation {generation}{}. Nothing of it will run: do not run \
         commands that change state. Ask the operator what they want instead, or propose a new \
         plan with propose_plan that addresses the rejection.",
        reason_clause(reason)
    )
}

fn reason_clause(reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!(", saying {}", quoted(reason)),
        None => String::new(),
    }
}

fn declared_list(declared: &[(u32, &str, &str, &str)]) -> String {
    if declared.is_empty() {
        return "no declared commands: every command that is not read-only needs its own approval"
            .to_owned();
    }
    let list: Vec<String> = declared
        .iter()
        .map(|(seq, class, host, command)| format!("step {seq} [{class}] {host}: {command}"))
        .collect();
    format!("declared commands: {}", list.join("; "))
}

/// RESUME-4: the note when a plan waits and the operator's message was not read as assent.
pub fn plan_waits_note(message: &str, generation: u32) -> String {
    format!(
        "The operator's message {} was not read as approval: plan generation {generation} still \
         waits for the operator's approval. Do not run commands that change state; answer the \
         operator and wait for an explicit approval.",
        quoted(message)
    )
}

/// RESUME-3: the operator-visible note after every attempt to resume failed.
pub fn terminal_note(last_error: &str, attempts: u32) -> String {
    let error = excerpt(last_error, QUOTE_CHARS);
    let error = if error.is_empty() {
        "no error was reported".to_owned()
    } else {
        error
    };
    let tries = if attempts == 1 { "attempt" } else { "attempts" };
    format!(
        "Nomos could not resume this session: {attempts} {tries} got no usable reply from the \
         model. Last error: {error}. The session is still open; send a message or use /resume \
         to try again."
    )
}

/// EXEC-4: what happened to an execution after the operator's decision, for
/// [`ResumeKind::Continuation`]. Reads the execution and approval rows only.
pub fn continuation_outcome(execution: &Execution, approval: Option<&Approval>) -> String {
    let what = format!("`{}` on {}", execution.command, execution.host);
    let edited: String;
    let decision = match approval.map(|approval| approval.status) {
        Some(ApprovalStatus::Denied) => {
            // CONTROL-4: the denial's text (with the operator's reason) is the error the
            // cancelled execution carries.
            let why = execution
                .error
                .as_deref()
                .filter(|e| e.starts_with("denied by the operator"))
                .unwrap_or("denied by the operator");
            return format!("{why}; {what} did not run");
        }
        Some(ApprovalStatus::Expired) => {
            return format!(
                "the approval expired without an answer (a denial); {what} did not run"
            );
        }
        Some(ApprovalStatus::Cancelled) => {
            return format!("the approval was voided; {what} did not run");
        }
        Some(ApprovalStatus::Pending) => {
            return format!("{what} still waits for the operator's approval");
        }
        Some(ApprovalStatus::Approved) => {
            match approval.and_then(|a| a.binding.edited_from.as_ref()) {
                // GATE-11: the model is told what ran instead of what it asked.
                Some(from) => {
                    edited = format!(
                        "the operator changed `{}` to `{}`; `{}` ran instead of what you asked, and running `{}` again needs its own approval; ",
                        from.command, execution.command, execution.command, from.command
                    );
                    &edited
                }
                None => "approved; ",
            }
        }
        None => "",
    };
    match (execution.status, &execution.output) {
        (ExecutionStatus::Completed, Some(output)) => {
            let exit = match (output.exit_code, &output.signal) {
                (Some(code), _) => format!("exited {code}"),
                (None, Some(signal)) => format!("was killed by {signal}"),
                (None, None) => "ended without an exit code".to_owned(),
            };
            let text = if output.stdout.trim().is_empty() {
                &output.stderr
            } else {
                &output.stdout
            };
            // SECRET-2: the model reads this note; secrets leave the output first.
            let body = excerpt(&crate::redaction::redact_for_model(text), OUTPUT_CHARS);
            let body = if body.is_empty() {
                "(no output)".to_owned()
            } else {
                body
            };
            format!("{decision}{what} {exit}: {body}")
        }
        (ExecutionStatus::Completed, None) => format!("{decision}{what} completed (no output)"),
        (ExecutionStatus::Failed | ExecutionStatus::Cancelled | ExecutionStatus::Reverted, _) => {
            let error = execution.error.as_deref().unwrap_or("no error text");
            format!("{decision}{what} {}: {error}", execution.status)
        }
        (status, _) => format!("{decision}{what} is {status}"),
    }
}

/// RESUME-2: how many times a resume is tried and how long to wait before each try.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumeRetry {
    /// Attempts in all, the first included (3).
    pub max_attempts: u32,
    /// Waits before attempts 2, 3...; the last one repeats (4 s, 8 s).
    pub backoff: Vec<Span>,
}

impl ResumeRetry {
    /// The retry policy SPEC.md names: 3 attempts, 4 s then 8 s apart.
    pub fn spec_defaults() -> ResumeRetry {
        ResumeRetry {
            max_attempts: 3,
            backoff: vec![Span::from_secs(4), Span::from_secs(8)],
        }
    }

    /// The wait before attempt `attempt` (1-based): zero for the first, then the back-off;
    /// `None` once `attempt` is past `max_attempts` (or is 0), meaning give up.
    pub fn delay_before(&self, attempt: u32) -> Option<Span> {
        if attempt == 0 || attempt > self.max_attempts {
            return None;
        }
        if attempt == 1 {
            return Some(Span::ZERO);
        }
        let idx = usize::try_from(attempt - 2).unwrap_or(usize::MAX);
        Some(
            self.backoff
                .get(idx)
                .or(self.backoff.last())
                .copied()
                .unwrap_or(Span::ZERO),
        )
    }
}

const FINISH_OR_REPORT: &str = "Finish the task with complete_task, or report what blocks it \
                                (ask_operator) if you cannot go on.";

fn kind_line(kind: &ResumeKind) -> String {
    match kind {
        ResumeKind::Reconnect => {
            "The operator reconnected; your last turn was cut off. Pick up where you left off."
                .to_owned()
        }
        ResumeKind::Manual => "The operator asked to resume this session.".to_owned(),
        ResumeKind::Continuation { outcome } => {
            format!("The operator decided on the command you asked to run: {outcome}.")
        }
        ResumeKind::IdleNudge => {
            "This session has been idle for a while; Nomos is checking in.".to_owned()
        }
    }
}

fn quote_line(last_operator_message: Option<&str>) -> String {
    match last_operator_message.map(|text| excerpt(text, QUOTE_CHARS)) {
        Some(text) if !text.is_empty() => format!("The operator's last message: “{text}”"),
        _ => "The operator has not written a message yet.".to_owned(),
    }
}

fn plan_line(plan: &PlanInFlight) -> String {
    let progress = format!(
        "Plan generation {} has {} of {} steps closed.",
        plan.generation, plan.n_closed, plan.n_steps
    );
    if !plan.is_open() {
        return format!("{progress} Every step is closed; do not call propose_plan again.");
    }
    let next = match &plan.next {
        Some((seq, title)) => format!(" Next step: {seq} {}.", quoted(title)),
        None => String::new(),
    };
    format!(
        "{progress} The plan is in flight: advance it with update_plan_step and run; do not \
         call propose_plan again.{next}"
    )
}

fn quoted(text: &str) -> String {
    format!("“{}”", excerpt(text, QUOTE_CHARS))
}

#[cfg(test)]
mod tests;
