//! Tests of the context budget: what is cut, what is kept whole, and the estimate against real tokenizers.

use nomos_core::ports::chat::{ToolCall, ToolSpec};
use nomos_core::{ExecutionId, SessionId};
use uuid::Uuid;

use super::*;
use crate::config::DEFAULT_SYSTEM_PROMPT;
use crate::tools::builtin_specs;

/// The fleet-audit fixture, found at run time (a build reused from another checkout
/// must not read that checkout's files).
fn fixture() -> String {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../../fixtures/fleet-audit")
    .display()
    .to_string()
}

fn hosts() -> Vec<String> {
    std::fs::read_to_string(format!("{}/hosts.txt", fixture()))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn apt_output(host: &str) -> String {
    std::fs::read_to_string(format!("{}/apt/{host}.txt", fixture())).unwrap()
}

fn execution(n: usize) -> ExecutionId {
    SessionId(Uuid::from_u128(7)).execution_id(n)
}

fn exchange(messages: &mut Vec<ChatMessage>, id: &str, name: &str, args: &str, result: &str) {
    messages.push(ChatMessage::Assistant {
        content: None,
        tool_calls: vec![ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: args.to_owned(),
        }]
        .into(),
    });
    messages.push(ChatMessage::Tool {
        call_id: id.into(),
        content: result.into(),
    });
}

/// The seeds' fleet audit: `list_hosts`, then `apt list --upgradable` and `uname -r` on each
/// of 20 hosts, 41 calls in one turn, as the history hands it over before any cut.
fn fleet_audit() -> (ChatRequest, Context) {
    let hosts = hosts();
    let mut messages = vec![
        ChatMessage::System {
            content: DEFAULT_SYSTEM_PROMPT.into(),
        },
        ChatMessage::User {
            content: "Audit the fleet: which hosts have upgrades pending, and which kernel runs?"
                .into(),
        },
    ];
    let mut context = Context::default();
    exchange(&mut messages, "c0", "list_hosts", "{}", &hosts.join("\n"));
    let mut n = 0;
    for host in &hosts {
        for (command, stdout) in [
            ("apt list --upgradable", apt_output(host)),
            ("uname -r", "6.1.0-28-amd64\n".to_owned()),
        ] {
            n += 1;
            let id = format!("c{n}");
            let args = serde_json::json!({"host": host, "command": command}).to_string();
            let result = format!("exit 0 (840 ms)\nstdout:\n{stdout}");
            exchange(&mut messages, &id, "run", &args, &result);
            context.executions.insert(id, execution(n));
        }
    }
    let request = ChatRequest {
        messages,
        tools: builtin_specs().into(),
    };
    (request, context)
}

fn n_calls(request: &ChatRequest) -> usize {
    request
        .messages
        .iter()
        .map(|m| match m {
            ChatMessage::Assistant { tool_calls, .. } => tool_calls.len(),
            _ => 0,
        })
        .sum()
}

fn tool_results(request: &ChatRequest) -> Vec<(&str, &str)> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool { call_id, content } => Some((&**call_id, &**content)),
            _ => None,
        })
        .collect()
}

/// TURN-7 after any cut: each call's result follows its assistant message.
fn assert_calls_keep_their_results(request: &ChatRequest) {
    let mut open: Vec<String> = Vec::new();
    for message in &request.messages {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(open.is_empty(), "calls left without results: {open:?}");
                open = tool_calls.iter().map(|c| c.id.clone()).collect();
            }
            ChatMessage::Tool { call_id, .. } => {
                assert_eq!(
                    open.first(),
                    Some(&call_id.to_string()),
                    "a result apart from its call"
                );
                open.remove(0);
            }
            _ => assert!(open.is_empty(), "calls left without results: {open:?}"),
        }
    }
}

fn request_text(request: &ChatRequest) -> String {
    serde_json::to_string(request).unwrap()
}

// rule: TURN-9
#[test]
fn the_token_estimate_errs_high_against_real_tokenisers_on_the_fixtures() {
    let cl100k = tiktoken_rs::cl100k_base().unwrap();
    let o200k = tiktoken_rs::o200k_base().unwrap();
    let mut texts: Vec<String> = hosts().iter().map(|h| apt_output(h)).collect();
    texts.push(DEFAULT_SYSTEM_PROMPT.to_owned());
    texts.push(serde_json::to_string(&builtin_specs()).unwrap());
    for text in &texts {
        let request = ChatRequest {
            messages: vec![ChatMessage::User {
                content: text.as_str().into(),
            }],
            tools: Vec::new().into(),
        };
        let estimate = estimate_tokens(&request);
        for (name, real) in [
            ("cl100k", cl100k.encode_with_special_tokens(text).len()),
            ("o200k", o200k.encode_with_special_tokens(text).len()),
        ] {
            assert!(
                estimate >= real,
                "{name}: estimate {estimate} < {real} for {:?}",
                shorten(text, 60)
            );
        }
    }
    let (request, _) = fleet_audit();
    let real = cl100k
        .encode_with_special_tokens(&request_text(&request))
        .len();
    assert!(estimate_tokens(&request) >= real * 9 / 10);
}

// rule: TURN-9
#[test]
fn the_fleet_audit_fits_the_context_with_every_call_and_the_last_exchange_whole() {
    let (raw, mut context) = fleet_audit();
    assert_eq!(n_calls(&raw), 41);
    let budget = Budget {
        context_tokens: 128_000,
        model_output_bytes: 8 * 1024,
    };
    let before = estimate_tokens(&raw);
    assert!(before > budget.context_tokens, "{before}");
    let mut request = raw.clone();
    model_view(&mut request, &budget, &mut context);
    let fit = fit(&mut request, budget.target_tokens(), &context);
    assert!(fit.tokens_after <= budget.target_tokens(), "{fit:?}");
    // The numbers README.md quotes (`cargo test -p nomos-agent --lib fleet_audit -- --nocapture`).
    let cl100k = tiktoken_rs::cl100k_base().unwrap();
    let real = |r: &ChatRequest| cl100k.encode_with_special_tokens(&request_text(r)).len();
    eprintln!(
        "fleet audit, 41 calls: estimated {before} -> {} tokens, cl100k {} -> {} tokens ({fit:?})",
        estimate_tokens(&request),
        real(&raw),
        real(&request)
    );
    assert_calls_keep_their_results(&request);
    assert_eq!(request.messages[0], raw.messages[0], "system prompt whole");
    assert_eq!(
        request.messages[1], raw.messages[1],
        "operator's message whole"
    );
    assert_eq!(request.tools, raw.tools);
    let n = raw.messages.len();
    assert_eq!(request.messages.last(), raw.messages.get(n - 1));
    assert_eq!(
        request.messages[request.messages.len() - 2],
        raw.messages[n - 2]
    );
    let results = tool_results(&request);
    assert!(
        results.iter().all(|(_, text)| !text.contains('\u{1b}')),
        "ANSI escapes reach the model"
    );
    let (_, cut) = results[1];
    assert!(
        cut.contains(&format!("execution_id: \"{}\"", execution(1))),
        "{cut}"
    );
    assert!(cut.contains("bytes cut here"), "{cut}");
    // The note's offsets point into the whole (stripped) output.
    let whole = strip_ansi(tool_results(&raw)[1].1);
    let head = between(cut, "offset: ", ",").parse::<usize>().unwrap();
    assert!(
        cut.starts_with(&whole[..head]),
        "the head is the output's first bytes"
    );
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap() + start.len();
    let to = text[from..].find(end).unwrap() + from;
    &text[from..to]
}

// rule: TURN-9
#[test]
fn an_older_result_is_cut_from_the_whole_output_not_from_an_earlier_cut() {
    let (raw, mut context) = fleet_audit();
    let budget = Budget {
        context_tokens: 16_000,
        model_output_bytes: 8 * 1024,
    };
    let mut request = raw.clone();
    model_view(&mut request, &budget, &mut context);
    fit(&mut request, budget.target_tokens(), &context);
    let notes: Vec<&str> = tool_results(&request)
        .into_iter()
        .map(|(_, text)| text)
        .filter(|text| text.contains("bytes cut here"))
        .collect();
    assert!(!notes.is_empty());
    for note in notes {
        assert_eq!(note.matches("bytes cut here").count(), 1, "{note}");
    }
}

// rule: TURN-9
#[test]
fn a_small_context_summarises_the_oldest_exchanges_and_keeps_the_plan() {
    let (raw, mut context) = fleet_audit();
    context.plan = Some("1. Audit every host [running]\n2. Write back [pending]".to_owned());
    let budget = Budget {
        context_tokens: 16_000,
        model_output_bytes: 8 * 1024,
    };
    let mut request = raw.clone();
    model_view(&mut request, &budget, &mut context);
    let fit = fit(&mut request, budget.target_tokens(), &context);
    eprintln!("fleet audit in a 16k context: {fit:?}");
    assert!(fit.n_messages_summarised > 0, "{fit:?}");
    assert!(fit.tokens_after <= budget.target_tokens(), "{fit:?}");
    assert_calls_keep_their_results(&request);
    let ChatMessage::User { content: note } = &request.messages[2] else {
        panic!(
            "no summary note after the operator's message: {:?}",
            request.messages[2]
        );
    };
    assert!(note.starts_with(NOTE_PREFIX), "{note}");
    assert!(
        note.contains("run `apt list --upgradable` on web-01 -> exit 0"),
        "{note}"
    );
    assert!(note.contains("1. Audit every host [running]"), "{note}");
    assert_eq!(request.messages[1], raw.messages[1]);
    assert_eq!(request.messages.last(), raw.messages.last());
}

// rule: TURN-9
#[test]
fn a_request_under_its_target_is_left_alone() {
    let (mut request, context) = fleet_audit();
    request.messages.truncate(6);
    let before = request.clone();
    let fit = fit(&mut request, 1_000_000, &context);
    assert_eq!(request, before);
    assert_eq!(fit.tokens_before, fit.tokens_after);
}

#[test]
fn head_and_tail_keep_both_ends_on_character_boundaries_and_say_what_was_cut() {
    let text = format!("{}é{}", "a".repeat(10), "b".repeat(10));
    let cut = head_and_tail(&text, 10, Some(execution(3))).unwrap();
    assert!(cut.starts_with("aaaaa\n[Nomos: "), "{cut}");
    assert!(cut.ends_with("\nbbbbb"), "{cut}");
    assert!(
        cut.contains("12 of 22 bytes cut here (bytes 5..17)"),
        "{cut}"
    );
    assert!(cut.contains("offset: 5, limit: 12"), "{cut}");
    assert_eq!(head_and_tail("short", 10, None), None);
}

#[test]
fn ansi_escapes_and_carriage_returns_are_stripped_for_the_model() {
    let text = "\u{1b}[1;32mok\u{1b}[0m done\r\n\u{1b}]0;title\u{7}50%\r100%\n";
    assert_eq!(strip_ansi(text), "ok done\n50%\n100%\n");
}

#[test]
fn the_tool_specs_count_toward_the_estimate() {
    let empty = ChatRequest {
        messages: Vec::new(),
        tools: Vec::new().into(),
    };
    let with_tools = ChatRequest {
        messages: Vec::new(),
        tools: vec![ToolSpec {
            name: "run".into(),
            description: "x".repeat(300),
            parameters: serde_json::json!({}),
        }]
        .into(),
    };
    assert_eq!(estimate_tokens(&empty), 0);
    assert!(estimate_tokens(&with_tools) > 70);
}
