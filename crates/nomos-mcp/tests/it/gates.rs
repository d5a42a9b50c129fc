//! The golden suite's gate cases, driven through MCP (MCP-1, MCP-2): the same manifest
//! (`evals/golden.yaml`) and the same checks (`nomos_golden::check`), with an MCP client
//! making the tool calls the stub model makes there, and the operator speaking and
//! deciding through the HTTP API. The cases are not copied: each `gate` case of the
//! manifest runs here too.

use std::sync::Arc;

use nomos_agent::ManualClock;
use nomos_core::{Decision, Span, Timestamp};
use nomos_golden::manifest::{Action, Case, Manifest};
use nomos_golden::run::{CASE_START_MILLIS, Observed, pick_approval};
use nomos_golden::world::{SimulatedExecutor, seed};
use nomos_sqlite::SqliteStore;
use serde_json::Value;

use crate::{OPERATOR, Parts, call, serve, structured, text};

/// The tag of the cases replayed here.
const GATE: &str = "gate";

// rule: MCP-1
// rule: MCP-2
#[tokio::test]
async fn mcp_the_golden_gate_cases_hold_when_an_mcp_client_makes_the_calls() {
    let path = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../../evals/golden.yaml");
    let manifest = Manifest::load(&path).unwrap();
    let cases: Vec<&Case> = manifest
        .cases
        .iter()
        .filter(|c| c.tags.iter().any(|t| t == GATE))
        .collect();
    let mut n_driven = 0;
    let mut failures = Vec::new();
    for case in cases {
        let Some(observed) = drive(case).await else {
            continue;
        };
        n_driven += 1;
        let mut expect = case.expect.clone();
        // The words of the client's own model are not Nomos's: only the gates are checked.
        expect.reply_contains.clear();
        expect.reply_not_contains.clear();
        for failure in nomos_golden::check::check(&expect, &observed) {
            failures.push(format!("{}: {failure}", case.name));
        }
    }
    assert!(
        n_driven >= 5,
        "only {n_driven} gate cases could be driven through MCP"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Plays one case through MCP, or `None` when it needs what only the runtime's own
/// harness does (a restart, a reconnect, idle time) or a tool MCP does not serve
/// (`ask_operator`).
async fn drive(case: &Case) -> Option<Observed> {
    let mut actions = Vec::new();
    for step in &case.steps {
        let action = step.action().unwrap();
        if matches!(
            action,
            Action::Restart | Action::Reconnect | Action::Wait(_) | Action::Advance(_)
        ) {
            return None;
        }
        // `ask_operator` is a question for Nomos's operator; an MCP client asks its own user.
        let asks_the_operator = serde_json::to_string(&step.model)
            .is_ok_and(|replies| replies.contains("\"ask_operator\""));
        if asks_the_operator {
            return None;
        }
        actions.push((action, step.model.clone()));
    }
    let start = Timestamp::from_millis(CASE_START_MILLIS);
    let store = Arc::new(SqliteStore::in_memory().await.unwrap());
    seed(store.as_ref(), &case.world, start).await.unwrap();
    let clock = ManualClock::starting_at(start);
    let nomos = serve(Parts {
        store: store.clone(),
        executor: Arc::new(SimulatedExecutor::new(&case.world)),
        clock: Some(Arc::new(clock.clone())),
    })
    .await;
    let client = nomos.connect(OPERATOR, "golden", &case.name).await;
    let id = nomos.session_of(&format!("golden {}", case.name)).await;
    let mut step_errors = Vec::new();
    for (n, (action, replies)) in actions.into_iter().enumerate() {
        match action {
            Action::Say(words) => nomos.say(id, &words).await,
            Action::Decide(pick, decision) => {
                let snapshot = nomos.agent.session(id).await.unwrap();
                let Some(approval_id) = pick_approval(&snapshot, &pick) else {
                    step_errors.push(format!("step {}: no approval matches {pick:?}", n + 1));
                    continue;
                };
                let word = match decision {
                    Decision::Approve => "approve",
                    Decision::Deny => "deny",
                };
                let (status, body) = nomos.decide(&approval_id.to_string(), word).await;
                if status != 200 {
                    step_errors.push(format!("step {}: decision refused: {body}", n + 1));
                    continue;
                }
                // The client hears of the decision (and the result) by waiting.
                let waited = call(
                    &client,
                    "wait_for_approval",
                    serde_json::json!({ "approval_id": approval_id.to_string(), "timeout_secs": 30 }),
                )
                .await;
                assert_ne!(
                    structured(&waited)["decision"],
                    "pending",
                    "{}",
                    text(&waited)
                );
            }
            Action::ExpireApprovals => {
                let ttl = nomos.agent.config().session.approval_ttl;
                clock.advance(Span::from_millis(
                    ttl.as_millis() + Span::from_mins(1).as_millis(),
                ));
                nomos.agent.sweep_once().await.unwrap();
            }
            Action::Wait(_) | Action::Advance(_) | Action::Restart | Action::Reconnect => {
                unreachable!("filtered above")
            }
        }
        play(&client, &case.name, &replies).await;
    }
    let snapshot = nomos.agent.session(id).await.unwrap();
    let store = nomos.agent.store();
    let events = store.events_after(Some(id), 0, 100_000).await.unwrap();
    let calls = store.tool_calls(id).await.unwrap();
    let ended_at = nomos_agent::Clock::now(&clock);
    let activity = nomos_golden::run::case_activity(&snapshot, &events, &calls, ended_at);
    Some(Observed {
        snapshot,
        events,
        calls,
        messages: store.messages(id).await.unwrap(),
        turns: Vec::new(),
        turn_times: Vec::new(),
        step_errors,
        script_remaining: None,
        usage: Default::default(),
        activity,
        ended_at,
    })
}

/// Makes the tool calls of the stub's replies, in order, and checks each reply's
/// `expect.last_tool_result_contains` against what the client got back.
async fn play(client: &crate::Client, case: &str, replies: &[yaml_serde::Value]) {
    let mut last_result = String::new();
    for reply in replies {
        let reply: Value = serde_json::to_value(reply).unwrap();
        if let Some(want) = reply["expect"]["last_tool_result_contains"].as_str() {
            assert!(
                last_result.contains(want),
                "{case}: `{want}` not in {last_result}"
            );
        }
        for tool_call in reply["tool_calls"].as_array().into_iter().flatten() {
            let name = tool_call["name"].as_str().unwrap();
            let arguments = tool_call["arguments"].clone();
            assert!(
                arguments.is_object(),
                "{case}: {name} arguments {arguments}"
            );
            let result = call(client, name, arguments).await;
            last_result = text(&result);
        }
    }
}
