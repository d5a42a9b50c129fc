//! The live history against the reference: after every commit, appending the commit's rows
//! gives what rebuilding from the store's rows gives, and both equal the conversation
//! [`build_history`] and the context budget's `model_view` make of those rows.

use std::collections::{BTreeMap, HashMap, HashSet};

use nomos_core::record::{Message, PlanStep, ToolCallOutcome, ToolCallRecord, ToolCallRequest};
use nomos_core::{Role, SessionId, StepStatus, Timestamp};
use proptest::prelude::*;
use uuid::Uuid;

use super::*;
use crate::budget::{Budget, Context, Tools, model_view};
use crate::history::build_history;

const PROMPT: &str = "You are Nomos.";

fn budget() -> Budget {
    Budget {
        context_tokens: 6_000,
        model_output_bytes: 600,
    }
}

fn session() -> SessionId {
    SessionId(Uuid::from_u128(42))
}

/// One change a commit can carry.
#[derive(Clone, Debug)]
enum Op {
    Operator(String),
    Note(String),
    /// Text and how many calls.
    Assistant(String, usize),
    /// Answers the n-th call without a result (modulo), with an output of this shape.
    Result(usize, Output),
    /// A result for a call id no message has made (an outside client's call).
    Orphan,
    /// An execution for the n-th call made so far (modulo).
    Execution(usize),
    Step(u32, u32, StepStatus),
    RemoveStep(usize),
    /// The commit ends here.
    Commit,
}

#[derive(Clone, Debug)]
enum Output {
    Short,
    Long,
    Ansi,
    Empty,
}

impl Output {
    fn text(&self, n: usize) -> String {
        match self {
            Output::Short => format!("ok {n}"),
            Output::Long => format!("line {n} of a long output\n").repeat(80),
            Output::Ansi => format!("\u{1b}[31mred {n}\u{1b}[0m\r\nprogress\rdone\n"),
            Output::Empty => String::new(),
        }
    }
}

fn op() -> impl Strategy<Value = Op> {
    let status = prop_oneof![
        Just(StepStatus::Pending),
        Just(StepStatus::Running),
        Just(StepStatus::Done),
    ];
    let output = prop_oneof![
        Just(Output::Short),
        Just(Output::Long),
        Just(Output::Ansi),
        Just(Output::Empty),
    ];
    prop_oneof![
        2 => "[a-z ]{0,12}".prop_map(Op::Operator),
        1 => "[a-z ]{0,12}".prop_map(Op::Note),
        3 => ("[a-z ]{0,8}", 0usize..4).prop_map(|(t, n)| Op::Assistant(t, n)),
        4 => (0usize..8, output).prop_map(|(n, o)| Op::Result(n, o)),
        1 => Just(Op::Orphan),
        2 => (0usize..8).prop_map(Op::Execution),
        1 => (1u32..4, 1u32..4, status).prop_map(|(g, s, st)| Op::Step(g, s, st)),
        1 => (0usize..8).prop_map(Op::RemoveStep),
        3 => Just(Op::Commit),
    ]
}

/// The store's rows, as a reference store would hold them.
#[derive(Default)]
struct Rows {
    messages: Vec<Message>,
    calls: Vec<ToolCallRecord>,
    /// Every call made, in order.
    made: Vec<ToolCallRequest>,
    executions: Vec<nomos_core::record::Execution>,
    steps: BTreeMap<(u32, u32), PlanStep>,
    n_calls: usize,
}

impl Rows {
    fn snapshot(&self) -> SessionSnapshot {
        let mut session = nomos_core::session::Session::create(
            session(),
            Timestamp::EPOCH,
            nomos_core::session::SessionConfig::spec_defaults(),
        );
        let mut snapshot = session.snapshot();
        let _ = session.take_commit();
        snapshot.executions = self.executions.clone();
        snapshot.steps = self.steps.values().cloned().collect();
        snapshot
    }

    fn answered(&self) -> HashSet<&str> {
        self.calls.iter().map(|c| c.call_id.as_str()).collect()
    }
}

fn message(n: usize, role: Role, content: &str, calls: Vec<ToolCallRequest>) -> Message {
    Message {
        id: session().message_id(n as u64 + 1),
        session_id: session(),
        role,
        content: content.to_owned(),
        tool_calls: calls,
        created_at: Timestamp::EPOCH,
    }
}

fn record(call_id: &str, result: String) -> ToolCallRecord {
    ToolCallRecord {
        session_id: session(),
        call_id: call_id.to_owned(),
        name: "run".into(),
        arguments: "{}".into(),
        result,
        outcome: ToolCallOutcome::Ok,
        started_at: Timestamp::EPOCH,
        duration_ms: 0,
    }
}

fn execution(n: usize, call_id: &str) -> nomos_core::record::Execution {
    nomos_core::record::Execution {
        id: session().execution_id(n),
        session_id: session(),
        tool_call_id: Some(call_id.to_owned()),
        host: "local".into(),
        command: "true".into(),
        class: nomos_core::CommandClass::ReadOnly,
        reason: String::new(),
        kind: nomos_core::record::ExecutionKind::Command,
        generation: 0,
        step_seq: None,
        status: nomos_core::ExecutionStatus::Completed,
        created_at: Timestamp::EPOCH,
        started_at: None,
        finished_at: None,
        output: None,
        error: None,
    }
}

fn step(generation: u32, seq: u32, status: StepStatus) -> PlanStep {
    PlanStep {
        check: None,
        id: session().step_id(generation, seq),
        session_id: session(),
        generation,
        seq,
        title: format!("step {generation}.{seq}"),
        detail: None,
        commands: Vec::new(),
        status,
        note: None,
        started_at: None,
        finished_at: None,
        updated_at: Timestamp::EPOCH,
    }
}

/// What the runtime sent before the live history: the rows rebuilt into one request.
struct Reference {
    messages: Vec<nomos_core::ports::chat::ChatMessage>,
    dangling: Vec<String>,
    used: HashSet<String>,
    plan: Option<String>,
}

fn reference(rows: &Rows) -> Reference {
    let history = build_history(PROMPT, &rows.messages, &rows.calls);
    let mut request = nomos_core::ports::chat::ChatRequest {
        messages: history.messages,
        tools: Vec::new().into(),
    };
    let snapshot = rows.snapshot();
    let generation = snapshot.steps.iter().map(|s| s.generation).max();
    let plan: Vec<String> = snapshot
        .steps
        .iter()
        .filter(|s| Some(s.generation) == generation)
        .map(|s| format!("{}. {} [{}]", s.seq, s.title, s.status))
        .collect();
    let mut context = Context {
        executions: snapshot
            .executions
            .iter()
            .filter_map(|e| e.tool_call_id.clone().map(|call| (call, e.id)))
            .collect(),
        plan: (!plan.is_empty()).then(|| plan.join("\n")),
        originals: HashMap::new(),
    };
    model_view(&mut request, &budget(), &mut context);
    let mut used: HashSet<String> = rows
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.call_id.clone()))
        .collect();
    used.extend(rows.calls.iter().map(|c| c.call_id.clone()));
    Reference {
        messages: request.messages,
        dangling: history.dangling.into_iter().map(|c| c.call_id).collect(),
        used,
        plan: context.plan,
    }
}

fn assert_matches(history: &ModelHistory, rows: &Rows, what: &str) {
    let expected = reference(rows);
    assert_eq!(history.unfitted(), expected.messages, "{what}: messages");
    let dangling: Vec<String> = history.dangling().into_iter().map(|c| c.call_id).collect();
    assert_eq!(dangling, expected.dangling, "{what}: dangling calls");
    assert_eq!(
        history.n_used(),
        expected.used.len(),
        "{what}: used call ids"
    );
    for id in &expected.used {
        assert!(history.is_used(id), "{what}: call id {id} used");
    }
    assert_eq!(history.plan(), expected.plan, "{what}: plan");
}

/// Plays `ops` into the reference rows and, commit by commit, into a live history.
fn play(ops: &[Op]) {
    let mut rows = Rows::default();
    let mut live = ModelHistory::new(budget(), PROMPT, 1);
    let mut pending = CommitRows::default();
    let mut version = 1;
    let mut n_orphans = 0;
    let mut ops = ops.to_vec();
    ops.push(Op::Commit);
    for op in ops {
        match op {
            Op::Operator(text) => {
                let m = message(rows.messages.len(), Role::Operator, &text, Vec::new());
                rows.messages.push(m.clone());
                pending.messages.push(m);
            }
            Op::Note(text) => {
                let m = message(rows.messages.len(), Role::Note, &text, Vec::new());
                rows.messages.push(m.clone());
                pending.messages.push(m);
            }
            Op::Assistant(text, n) => {
                let calls: Vec<ToolCallRequest> = (0..n)
                    .map(|_| {
                        rows.n_calls += 1;
                        ToolCallRequest {
                            call_id: format!("call_{}", rows.n_calls),
                            name: "run".into(),
                            arguments: format!(r#"{{"command":"echo {}"}}"#, rows.n_calls),
                        }
                    })
                    .collect();
                rows.made.extend(calls.iter().cloned());
                let m = message(rows.messages.len(), Role::Assistant, &text, calls);
                rows.messages.push(m.clone());
                pending.messages.push(m);
            }
            Op::Result(n, output) => {
                let answered = rows.answered();
                let open: Vec<String> = rows
                    .made
                    .iter()
                    .filter(|c| !answered.contains(c.call_id.as_str()))
                    .map(|c| c.call_id.clone())
                    .collect();
                if open.is_empty() {
                    continue;
                }
                let call = &open[n % open.len()];
                let r = record(call, output.text(n));
                pending.results.push((r.call_id.clone(), r.result.clone()));
                rows.calls.push(r);
            }
            Op::Orphan => {
                n_orphans += 1;
                let r = record(&format!("client_{n_orphans}"), "from a client".into());
                pending.results.push((r.call_id.clone(), r.result.clone()));
                rows.calls.push(r);
            }
            Op::Execution(n) => {
                if rows.made.is_empty() {
                    continue;
                }
                let call = rows.made[n % rows.made.len()].call_id.clone();
                let e = execution(rows.executions.len() + 1, &call);
                pending.executions.push((call, e.id));
                rows.executions.push(e);
            }
            Op::Step(generation, seq, status) => {
                let s = step(generation, seq, status);
                rows.steps.insert((generation, seq), s.clone());
                pending.steps.push(s);
            }
            Op::RemoveStep(n) => {
                let Some(key) = rows.steps.keys().nth(n % rows.steps.len().max(1)).copied() else {
                    continue;
                };
                if let Some(s) = rows.steps.remove(&key) {
                    // As `take_commit` diffs: a step is upserted or removed, never both.
                    pending.steps.retain(|p| p.id != s.id);
                    pending.removed_steps.push(s.id);
                }
            }
            Op::Commit => {
                version += 1;
                live.committed(&std::mem::take(&mut pending), version);
                assert_matches(&live, &rows, "appended");
                let rebuilt = ModelHistory::rebuild(
                    budget(),
                    PROMPT,
                    &rows.snapshot(),
                    &rows.messages,
                    &rows.calls,
                );
                assert_matches(&rebuilt, &rows, "rebuilt");
                // Fitting never changes what the history holds, only what a request sends.
                let mut fitted = live.clone();
                let plan = fitted.plan();
                let fit =
                    fitted
                        .window()
                        .fit(budget().target_tokens(), &Tools::none(), plan.as_deref());
                assert!(
                    fit.tokens_after <= fit.tokens_before,
                    "fitting grew the request: {fit:?}"
                );
                assert_eq!(fitted.unfitted(), live.unfitted());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    // rule: TURN-7
    #[test]
    fn the_live_history_equals_a_rebuild_from_the_store_after_every_commit(
        ops in proptest::collection::vec(op(), 0..60)
    ) {
        play(&ops);
    }
}

// rule: TURN-7
#[test]
fn a_result_recorded_after_its_call_fills_the_interrupted_placeholder() {
    play(&[
        Op::Operator("check".into()),
        Op::Assistant(String::new(), 2),
        Op::Commit,
        Op::Execution(0),
        Op::Result(0, Output::Long),
        Op::Commit,
        Op::Result(0, Output::Ansi),
    ]);
}
