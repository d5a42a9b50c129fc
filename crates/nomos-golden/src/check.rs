//! Evaluating a case's assertions against what it left behind. Every assertion either
//! holds or names what it saw; nothing passes because it could not be evaluated (EVAL-3).

use nomos_core::event::DomainEvent;
use nomos_core::record::ToolCallOutcome;
use nomos_core::{Role, StepStatus};

use crate::manifest::{Count, Expect};
use crate::run::Observed;

/// The failures of one case; empty means it passed.
pub fn check(expect: &Expect, observed: &Observed) -> Vec<String> {
    let mut failures = Vec::new();
    let mut fail = |what: String| failures.push(what);

    match &expect.refused_steps {
        None => {
            for error in &observed.step_errors {
                fail(error.clone());
            }
        }
        Some(count) => {
            if let Err(e) = count.check(observed.step_errors.len() as u32) {
                fail(format!(
                    "refused_steps: {e} ({})",
                    observed.step_errors.join("; ")
                ));
            }
        }
    }
    // A stub that drifted from its script fails loudly (a replay's missing recording is a
    // turn error like any other model error).
    for turn in observed
        .turns
        .iter()
        .filter(|_| observed.script_remaining.is_some())
    {
        if let Some(error) = &turn.error
            && error.contains("scripted model")
        {
            fail(format!("the stub model drifted from its script: {error}"));
        }
    }
    if let Some(remaining) = observed.script_remaining
        && remaining > 0
    {
        fail(format!("the stub script has {remaining} unplayed replies"));
    }

    if let Some(status) = expect.status
        && observed.snapshot.record.status != status
    {
        fail(format!(
            "status: expected {status}, got {}",
            observed.snapshot.record.status
        ));
    }
    for (tool, count) in &expect.tool_calls {
        let n = observed.calls.iter().filter(|c| &c.name == tool).count() as u32;
        if let Err(e) = count.check(n) {
            fail(format!("tool_calls.{tool}: {e}"));
        }
    }
    for want in &expect.arguments {
        let n = observed
            .calls
            .iter()
            .filter(|c| c.name == want.tool && c.arguments.contains(&want.contains))
            .count() as u32;
        let count = want
            .count
            .clone()
            .unwrap_or(Count::Bounds(crate::manifest::CountBounds {
                at_least: Some(1),
                ..Default::default()
            }));
        if let Err(e) = count.check(n) {
            fail(format!(
                "arguments of {} containing {:?}: {e}",
                want.tool, want.contains
            ));
        }
    }
    for want in &expect.refused {
        let n = observed
            .calls
            .iter()
            .filter(|c| {
                c.name == want.tool
                    && c.outcome == ToolCallOutcome::Refused
                    && want
                        .contains
                        .as_ref()
                        .is_none_or(|text| c.result.contains(text))
            })
            .count() as u32;
        let count = want
            .count
            .clone()
            .unwrap_or(Count::Bounds(crate::manifest::CountBounds {
                at_least: Some(1),
                ..Default::default()
            }));
        if let Err(e) = count.check(n) {
            fail(format!(
                "refused {} calls containing {:?}: {e}",
                want.tool,
                want.contains.as_deref().unwrap_or("")
            ));
        }
    }
    if let Some(plan) = &expect.plan {
        let record = &observed.snapshot.record;
        let current: Vec<StepStatus> = observed
            .snapshot
            .steps
            .iter()
            .filter(|s| s.generation == record.plan_generation)
            .map(|s| s.status)
            .collect();
        if let Some(generation) = plan.generation
            && record.plan_generation != generation
        {
            fail(format!(
                "plan.generation: expected {generation}, got {}",
                record.plan_generation
            ));
        }
        if let Some(n) = plan.n_steps
            && current.len() as u32 != n
        {
            fail(format!("plan.n_steps: expected {n}, got {}", current.len()));
        }
        if let Some(statuses) = &plan.statuses
            && &current != statuses
        {
            fail(format!(
                "plan.statuses: expected {statuses:?}, got {current:?}"
            ));
        }
        if let Some(count) = &plan.replaced {
            let n = observed
                .snapshot
                .steps
                .iter()
                .filter(|s| {
                    s.generation < record.plan_generation && s.status == StepStatus::Replaced
                })
                .count() as u32;
            if let Err(e) = count.check(n) {
                fail(format!("plan.replaced: {e}"));
            }
        }
        if let Some(count) = &plan.running_anywhere {
            let n = observed
                .snapshot
                .steps
                .iter()
                .filter(|s| s.status == StepStatus::Running)
                .count() as u32;
            if let Err(e) = count.check(n) {
                fail(format!("plan.running_anywhere: {e}"));
            }
        }
    }
    for want in &expect.executions {
        let n = observed
            .snapshot
            .executions
            .iter()
            .filter(|e| {
                // GATE-10: previews are counted only where a case asks for them.
                let kind = want.kind.unwrap_or_default();
                e.kind == kind
                    && want.class.is_none_or(|c| e.class == c)
                    && want.status.is_none_or(|s| e.status == s)
            })
            .count() as u32;
        if let Err(e) = want.count.check(n) {
            let class = want.class.map_or("any".to_owned(), |c| c.to_string());
            let status = want.status.map_or("any".to_owned(), |s| s.to_string());
            let kind = want.kind.unwrap_or_default().as_str();
            let kind = if kind == "command" {
                String::new()
            } else {
                format!("kind {kind}, ")
            };
            fail(format!(
                "executions ({kind}class {class}, status {status}): {e}"
            ));
        }
    }
    for want in &expect.approvals {
        let n = observed
            .snapshot
            .approvals
            .iter()
            .filter(|a| {
                let note = a.binding.origin.card_note().unwrap_or_default();
                let diff = a
                    .binding
                    .preview
                    .as_ref()
                    .and_then(|p| p.diff.clone())
                    .unwrap_or_default();
                want.note_contains
                    .as_ref()
                    .is_none_or(|t| note.contains(t.as_str()))
                    && want
                        .preview
                        .is_none_or(|p| a.binding.preview.is_some() == p)
                    && want
                        .diff_contains
                        .as_ref()
                        .is_none_or(|t| diff.contains(t.as_str()))
                    && want.status.is_none_or(|s| a.status == s)
            })
            .count() as u32;
        if let Err(e) = want.count.check(n) {
            fail(format!("approvals ({want:?}): {e}"));
        }
    }
    for want in &expect.activity {
        let n = observed
            .activity
            .iter()
            .filter(|e| {
                want.kind.is_none_or(|k| e.kind == k) && want.state.is_none_or(|s| e.state == s)
            })
            .count() as u32;
        if let Err(e) = want.count.check(n) {
            fail(format!(
                "activity (kind {:?}, state {:?}): {e}",
                want.kind, want.state
            ));
        }
    }
    // ACTIVITY-2 in every case: each entry carries a persisted time, never the time the log
    // was derived (a day after the case ended).
    if let Some(late) = observed.activity.iter().find(|e| e.at > observed.ended_at) {
        fail(format!(
            "ACTIVITY-2: entry `{}` has time {}, after the case ended at {}",
            late.key, late.at, observed.ended_at
        ));
    }
    // ACTIVITY-3 in every case: nothing is running in the log of a terminal session.
    if observed.snapshot.record.status.is_terminal()
        && let Some(open) = observed.activity.iter().find(|e| {
            matches!(
                e.state,
                nomos_core::activity::EntryState::Running
                    | nomos_core::activity::EntryState::Stalled
            )
        })
    {
        fail(format!(
            "ACTIVITY-3: entry `{}` is {:?} in a {} session",
            open.key, open.state, observed.snapshot.record.status
        ));
    }
    if let Some(count) = &expect.approvals_requested {
        let n = observed.snapshot.approvals.len() as u32;
        if let Err(e) = count.check(n) {
            fail(format!("approvals_requested: {e}"));
        }
    }
    if !expect.events_in_order.is_empty() {
        let kinds: Vec<&str> = observed.events.iter().map(|e| e.event.kind()).collect();
        let mut it = kinds.iter();
        for want in &expect.events_in_order {
            if !it.any(|k| k == want) {
                fail(format!(
                    "events_in_order: `{want}` not found in order; events were {}",
                    kinds.join(", ")
                ));
                break;
            }
        }
    }
    let replies: String = observed
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    for text in &expect.reply_contains {
        if !replies.contains(text.as_str()) {
            fail(format!("reply_contains: {text:?} not in the replies"));
        }
    }
    for text in &expect.reply_not_contains {
        if replies.contains(text.as_str()) {
            fail(format!("reply_not_contains: {text:?} is in the replies"));
        }
    }
    for text in &expect.execution_output_contains {
        let found = observed.snapshot.executions.iter().any(|e| {
            e.output.as_ref().is_some_and(|o| {
                o.stdout.contains(text.as_str()) || o.stderr.contains(text.as_str())
            })
        });
        if !found {
            fail(format!(
                "execution_output_contains: {text:?} is in no execution's stored output"
            ));
        }
    }
    for text in &expect.tool_results_not_contain {
        if let Some(call) = observed
            .calls
            .iter()
            .find(|c| c.result.contains(text.as_str()))
        {
            fail(format!(
                "tool_results_not_contain: {text:?} is in the result of {} ({})",
                call.name, call.call_id
            ));
        }
    }
    let dones: Vec<&Option<String>> = observed
        .events
        .iter()
        .filter_map(|e| match &e.event {
            DomainEvent::TurnDone { error, .. } => Some(error),
            _ => None,
        })
        .collect();
    if let Some(count) = &expect.turn_errors {
        let n = dones.iter().filter(|e| e.is_some()).count() as u32;
        if let Err(e) = count.check(n) {
            fail(format!("turn_errors: {e}"));
        }
    }
    // TURN-1 holds in every case: one `turn.done` per `turn.started`. A turn still open at the
    // end of the case fails it too (EVAL-5: no check is skipped).
    let started = observed
        .events
        .iter()
        .filter(|e| e.event.kind() == "turn.started")
        .count();
    let left_open = expect.turns_left_open.unwrap_or(0) as usize;
    if dones.len() + left_open != started {
        fail(format!(
            "TURN-1: turn.done emitted {} times for {started} turns ({left_open} expected to stay open)",
            dones.len()
        ));
    }
    failures
}
