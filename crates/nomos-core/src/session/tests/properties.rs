//! Property tests: random sequences of tool calls, operator messages, decisions and time
//! never break the session's invariants.

use std::collections::HashMap;

use proptest::prelude::*;

use crate::event::DomainEvent;
use crate::record::PlanStep;
use crate::status::{ApprovalStatus, CommandClass, Decision, Outcome, StepStatus};
use crate::time::Span;

use super::super::{Action, KnowledgeUse};
use super::Harness;

#[derive(Clone, Debug)]
enum Op {
    Goal,
    Plan(usize),
    Revise(usize),
    Step(u32, StepStatus),
    Say(&'static str),
    Run(CommandClass),
    Decide(usize, Decision),
    Finish(usize),
    Complete(Outcome),
    WriteBack,
    Advance(i64),
    Timeout,
    Commit,
}

fn op() -> impl Strategy<Value = Op> {
    let status = prop_oneof![
        Just(StepStatus::Running),
        Just(StepStatus::Done),
        Just(StepStatus::Failed),
        Just(StepStatus::Skipped),
        Just(StepStatus::Replaced),
        Just(StepStatus::Pending),
    ];
    let class = prop_oneof![
        Just(CommandClass::ReadOnly),
        Just(CommandClass::ConfigMutation),
        Just(CommandClass::Destructive),
    ];
    let outcome = prop_oneof![
        Just(Outcome::Success),
        Just(Outcome::Failure),
        Just(Outcome::Partial)
    ];
    let message = prop_oneof![
        Just("yes"),
        Just("proceed with the rest"),
        Just("no, wait"),
        Just("what does step 2 do?"),
        Just("go ahead"),
        Just("hello"),
    ];
    let decision = prop_oneof![Just(Decision::Approve), Just(Decision::Deny)];
    prop_oneof![
        1 => Just(Op::Goal),
        2 => (1usize..5).prop_map(Op::Plan),
        1 => (1usize..4).prop_map(Op::Revise),
        4 => (0u32..7, status).prop_map(|(seq, s)| Op::Step(seq, s)),
        2 => message.prop_map(Op::Say),
        4 => class.prop_map(Op::Run),
        2 => (0usize..4, decision).prop_map(|(i, d)| Op::Decide(i, d)),
        2 => (0usize..6).prop_map(Op::Finish),
        1 => outcome.prop_map(Op::Complete),
        1 => Just(Op::WriteBack),
        1 => (1i64..45).prop_map(Op::Advance),
        1 => Just(Op::Timeout),
        2 => Just(Op::Commit),
    ]
}

/// Applies one op; returns the dispatches it produced with whether they were allowed.
fn apply(h: &mut Harness, op: &Op) -> Vec<(Action, bool)> {
    let mut dispatched = Vec::new();
    match op {
        Op::Goal => {
            h.goal();
        }
        Op::Plan(n) => {
            let titles: Vec<String> = (0..*n).map(|i| format!("step {i}")).collect();
            let titles: Vec<&str> = titles.iter().map(String::as_str).collect();
            h.plan(&titles);
        }
        Op::Revise(n) => {
            let titles: Vec<String> = (0..*n).map(|i| format!("revised {i}")).collect();
            let titles: Vec<&str> = titles.iter().map(String::as_str).collect();
            h.revise(&titles, "new facts");
        }
        Op::Step(seq, status) => {
            h.step(*seq, *status);
        }
        Op::Say(text) => {
            h.say(text);
        }
        Op::Run(class) => {
            let assent_before = h.session.assent_open(h.now + Span::from_millis(10));
            let reply = h.run("some command", *class);
            if let Some(action @ Action::Dispatch { .. }) = reply.action {
                let allowed = match class {
                    CommandClass::ReadOnly => true,
                    CommandClass::ConfigMutation => assent_before,
                    CommandClass::Destructive => false,
                };
                dispatched.push((action, allowed));
            }
        }
        Op::Decide(idx, decision) => {
            if let Some(approval) = h.session.approvals().get(*idx).cloned()
                && let Ok(Some(action)) =
                    h.session
                        .handle_decision(h.now, approval.id, *decision, None)
            {
                let approved = h
                    .session
                    .approvals()
                    .iter()
                    .any(|a| a.id == approval.id && a.status == ApprovalStatus::Approved);
                dispatched.push((action, *decision == Decision::Approve && approved));
            }
        }
        Op::Finish(idx) => {
            if let Some(execution) = h.session.executions().get(*idx).cloned() {
                let _ = h.session.handle_execution_finished(
                    h.now,
                    execution.id,
                    Ok(Default::default()),
                );
            }
        }
        Op::Complete(outcome) => {
            h.complete(*outcome);
        }
        Op::WriteBack => h
            .session
            .handle_knowledge_use(h.now, KnowledgeUse::WriteBack),
        Op::Advance(mins) => h.advance(Span::from_mins(*mins)),
        Op::Timeout => {
            h.session.handle_timeout(h.now);
        }
        Op::Commit => {
            h.commit();
        }
    }
    dispatched
}

fn step_events(events: &[crate::event::PendingEvent]) -> usize {
    events
        .iter()
        .filter(|e| {
            matches!(
                e.event,
                DomainEvent::StepStarted { .. } | DomainEvent::StepFinished { .. }
            )
        })
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The invariants of PLAN-1, PLAN-4, PLAN-9, GATE-2/3/5/7 and SESSION-3/7.
    #[test]
    fn random_sessions_keep_every_invariant(ops in prop::collection::vec(op(), 1..60)) {
        let mut h = Harness::new();
        let mut replaced: HashMap<crate::id::StepId, PlanStep> = HashMap::new();
        for op in &ops {
            let before_steps: HashMap<_, _> =
                h.session.all_steps().iter().map(|s| (s.id, s.status)).collect();
            let was_terminal = h.session.status().is_terminal();
            let n_events_before = step_events(h.session.pending_events());
            let dispatched = apply(&mut h, op);

            // rule: GATE-2, GATE-3, GATE-5, GATE-7 — nothing non-read-only is dispatched
            // without the assent or approval the rules require.
            for (action, allowed) in &dispatched {
                prop_assert!(allowed, "dispatch not allowed: {action:?} after {op:?}");
            }

            // rule: PLAN-4 — a replaced step never changes.
            for step in h.session.all_steps() {
                if let Some(old) = replaced.get(&step.id) {
                    prop_assert_eq!(old, step);
                }
                if step.status == StepStatus::Replaced {
                    replaced.entry(step.id).or_insert_with(|| step.clone());
                }
            }
            for id in replaced.keys() {
                prop_assert!(h.session.all_steps().iter().any(|s| s.id == *id), "replaced step vanished");
            }

            // rule: PLAN-1 — seq is contiguous 1..N in every generation.
            let mut by_generation: HashMap<u32, Vec<u32>> = HashMap::new();
            for step in h.session.all_steps() {
                by_generation.entry(step.generation).or_default().push(step.seq);
            }
            for seqs in by_generation.values() {
                let expected: Vec<u32> = (1..=seqs.len() as u32).collect();
                prop_assert_eq!(seqs, &expected);
            }

            // rule: SESSION-3, SESSION-7 — terminal stays terminal unless set_goal reopens.
            if was_terminal && !matches!(op, Op::Goal) {
                prop_assert!(h.session.status().is_terminal(), "left terminal on {op:?}");
            }

            // rule: PLAN-9 — every step status change emits exactly one event. (A commit
            // drains the events, and a PLAN-2 replacement rewrites pending steps without
            // changing a status.)
            if !matches!(op, Op::Commit) {
                let changed = h
                    .session
                    .all_steps()
                    .iter()
                    .filter(|s| before_steps.get(&s.id).is_some_and(|old| *old != s.status))
                    .count();
                let n_events = step_events(h.session.pending_events()) - n_events_before;
                prop_assert_eq!(changed, n_events, "after {:?}", op);
            }
        }
    }

    /// Replaying the same inputs yields the same state and the same events.
    #[test]
    fn sessions_are_deterministic(ops in prop::collection::vec(op(), 1..40)) {
        let mut a = Harness::new();
        let mut b = Harness::new();
        for op in &ops {
            apply(&mut a, op);
            apply(&mut b, op);
        }
        prop_assert_eq!(a.session.snapshot(), b.session.snapshot());
        prop_assert_eq!(a.events(), b.events());
    }
}
