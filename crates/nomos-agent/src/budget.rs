//! What the model reads of the conversation: each tool result cut to the model's share with
//! ANSI escapes stripped (the store keeps the full capped output), and the whole request fitted
//! to the configured context size (TURN-9). Pure functions over the port's types.
//!
//! Fitting goes in three moves, each only when the request is still over its target:
//! 1. tool results older than the last exchange are cut to a short head and tail, oldest
//!    first, with a note naming the execution and the bytes cut;
//! 2. the oldest exchanges are replaced by one summary note built from the messages (what
//!    was asked, what ran, outcomes) and the current plan;
//! 3. nothing else: the system prompt, the tool specs, the operator's last message and the last
//!    exchange are always kept whole. An assistant message and its results move together
//!    (TURN-7).

use std::collections::HashMap;
use std::sync::Arc;

use nomos_core::ExecutionId;
use nomos_core::ports::chat::{ChatMessage, ChatRequest, ToolSpec};

/// The tool that reads what a cut took away.
pub(crate) const OUTPUT_TOOL: &str = "get_execution_output";

/// How much of each older result survives step 1 of fitting.
pub(crate) const OLDER_RESULT_BYTES: usize = 1024;

/// The most the summary note lists of each kind (asks, runs).
const SUMMARY_ITEMS: usize = 30;

/// Tokens kept free for the model's reply, at most.
const REPLY_RESERVE: usize = 8192;

/// Tokens of overhead the wire format adds per message (role, separators).
const MESSAGE_OVERHEAD: usize = 4;

/// The sizes that bound what the model reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    /// The model's context size, in tokens.
    pub context_tokens: usize,
    /// The most of one tool result the model reads, in bytes.
    pub model_output_bytes: usize,
}

impl Budget {
    /// The request size to aim for: the context minus room for the reply.
    pub fn target_tokens(&self) -> usize {
        let reserve = REPLY_RESERVE.min(self.context_tokens / 4);
        self.context_tokens.saturating_sub(reserve)
    }
}

/// What the conversation knows beyond its messages.
#[derive(Clone, Debug, Default)]
pub(crate) struct Context {
    /// The execution behind each `run` call, by call id.
    pub executions: HashMap<String, ExecutionId>,
    /// The current plan, one line per step, when there is one.
    pub plan: Option<String>,
    /// Each tool result as the model may read it whole (ANSI stripped), by call id: every
    /// cut is made from it, so a note's offsets are offsets into the execution's output.
    pub originals: HashMap<String, String>,
}

/// What fitting did, for logs and measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fit {
    pub tokens_before: usize,
    pub tokens_after: usize,
    pub n_results_cut: usize,
    pub n_messages_summarised: usize,
}

/// A cheap token estimate that errs high. Bytes / 4 is too optimistic for command output
/// (versions, paths and punctuation tokenise at about two bytes a token), so each text is
/// counted by its character runs ([`text_tokens`]), plus 5 % and a per-message overhead. Tested
/// against real tokenisers (cl100k, o200k) on the fixtures.
pub(crate) fn estimate_tokens(request: &ChatRequest) -> usize {
    let messages: usize = request.messages.iter().map(message_tokens).sum();
    let tools = tools_tokens(&request.tools);
    total_tokens(
        messages + tools,
        request.messages.len() + request.tools.len(),
    )
}

/// The estimate of a request from the text tokens of its parts and how many parts it has.
pub(crate) fn total_tokens(text_tokens: usize, n_parts: usize) -> usize {
    text_tokens + text_tokens / 20 + MESSAGE_OVERHEAD * n_parts
}

/// The text tokens of one message (without the per-message overhead).
pub(crate) fn message_tokens(message: &ChatMessage) -> usize {
    match message {
        ChatMessage::System { content } | ChatMessage::User { content } => text_tokens(content),
        ChatMessage::Assistant {
            content,
            tool_calls,
        } => {
            content.as_deref().map_or(0, text_tokens)
                + tool_calls
                    .iter()
                    .map(|c| {
                        text_tokens(&c.id) + text_tokens(&c.name) + text_tokens(&c.arguments) + 8
                    })
                    .sum::<usize>()
        }
        ChatMessage::Tool { call_id, content } => text_tokens(call_id) + text_tokens(content),
    }
}

/// The tools a runtime offers the model, shared by all its requests, with their token
/// estimate made once.
#[derive(Clone, Debug)]
pub(crate) struct Tools {
    /// The specs, as every request carries them.
    pub specs: Arc<[ToolSpec]>,
    /// Their estimated tokens.
    pub tokens: usize,
}

impl Tools {
    /// The tools and their estimate.
    pub(crate) fn new(specs: Vec<ToolSpec>) -> Tools {
        let tokens = tools_tokens(&specs);
        Tools {
            specs: specs.into(),
            tokens,
        }
    }

    /// No tools.
    #[cfg(test)]
    pub(crate) fn none() -> Tools {
        Tools::new(Vec::new())
    }
}

/// The text tokens of the tool specs.
pub(crate) fn tools_tokens(tools: &[ToolSpec]) -> usize {
    tools
        .iter()
        .map(|tool| {
            text_tokens(&tool.name)
                + text_tokens(&tool.description)
                + text_tokens(&tool.parameters.to_string())
        })
        .sum()
}

/// Terminal escapes (colours, cursor moves, titles) and stray control characters removed;
/// newlines and tabs kept.
pub(crate) fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters, then one final byte in @..~.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ESC \.
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\n' | '\t' => out.push(c),
            '\r' => {
                // `\r\n` is a newline; a lone `\r` (progress bars) starts the line again.
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// `text` cut to at most about `keep` bytes, half head and half tail on character
/// boundaries, with a note saying what was cut and where the rest is. `None` when it fits.
pub(crate) fn head_and_tail(
    text: &str,
    keep: usize,
    execution: Option<ExecutionId>,
) -> Option<String> {
    if text.len() <= keep {
        return None;
    }
    let mut head_end = keep / 2;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - (keep - keep / 2);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let n_cut = tail_start - head_end;
    let total = text.len();
    let how = match execution {
        Some(id) => format!(
            "{OUTPUT_TOOL}(execution_id: \"{id}\", offset: {head_end}, limit: {n_cut}) reads what was cut"
        ),
        None => "this result is not an execution's output and cannot be read again".to_owned(),
    };
    Some(format!(
        "{}\n[Nomos: {n_cut} of {total} bytes cut here (bytes {head_end}..{tail_start}); {how}]\n{}",
        &text[..head_end],
        &text[tail_start..]
    ))
}

/// The model's view of every tool result: ANSI stripped, cut to `model_output_bytes`. The
/// stripped results are kept in `context` for later cuts. The reference the window's views
/// ([`window::ResultView`]) are tested against.
#[cfg(test)]
pub(crate) fn model_view(request: &mut ChatRequest, budget: &Budget, context: &mut Context) {
    for message in &mut request.messages {
        if let ChatMessage::Tool { call_id, content } = message {
            let clean = strip_ansi(content);
            let execution = context.executions.get(&**call_id).copied();
            *content = head_and_tail(&clean, budget.model_output_bytes, execution)
                .unwrap_or(clean.clone())
                .into();
            context.originals.insert(call_id.to_string(), clean);
        }
    }
}

/// Fits `request` to `target` tokens (see the module's doc).
pub(crate) fn fit(request: &mut ChatRequest, target: usize, context: &Context) -> Fit {
    let tokens_before = estimate_tokens(request);
    let mut fit = Fit {
        tokens_before,
        tokens_after: tokens_before,
        ..Fit::default()
    };
    if tokens_before <= target {
        return fit;
    }
    let units = units(&request.messages);
    let protected = protected_units(&request.messages, &units);
    // 1. Older results, oldest first, to a short head and tail.
    'cut: for (unit_idx, unit) in units.iter().enumerate() {
        if protected[unit_idx] {
            continue;
        }
        for idx in unit.clone() {
            if let ChatMessage::Tool { call_id, content } = &mut request.messages[idx] {
                let execution = context.executions.get(&**call_id).copied();
                let shown = content.clone();
                let original = context
                    .originals
                    .get(&**call_id)
                    .map_or(&*shown, String::as_str);
                if original.len() > OLDER_RESULT_BYTES && content.len() <= OLDER_RESULT_BYTES + 300
                {
                    // Already cut this short.
                    continue;
                }
                if let Some(cut) = head_and_tail(original, OLDER_RESULT_BYTES, execution) {
                    *content = cut.into();
                    fit.n_results_cut += 1;
                    if estimate_tokens(request) <= target {
                        break 'cut;
                    }
                }
            }
        }
    }
    fit.tokens_after = estimate_tokens(request);
    if fit.tokens_after <= target {
        return fit;
    }
    // 2. The oldest unprotected units, replaced by one summary note.
    let mut dropped = vec![false; request.messages.len()];
    let mut summary = Summary::default();
    for (unit_idx, unit) in units.iter().enumerate() {
        if protected[unit_idx] {
            continue;
        }
        summary.add(&request.messages[unit.clone()]);
        for idx in unit.clone() {
            dropped[idx] = true;
        }
        let note = summary.note(context.plan.as_deref());
        let kept_tokens = estimate_tokens(&without(request, &dropped, &note));
        if kept_tokens <= target {
            break;
        }
    }
    let note = summary.note(context.plan.as_deref());
    let compacted = without(request, &dropped, &note);
    fit.n_messages_summarised = dropped.iter().filter(|d| **d).count();
    *request = compacted;
    fit.tokens_after = estimate_tokens(request);
    fit
}

/// The messages grouped so that a call and its results stay together: the system prompt, each
/// user message alone, each assistant message with the tool results after it.
fn units(messages: &[ChatMessage]) -> Vec<std::ops::Range<usize>> {
    let mut units: Vec<std::ops::Range<usize>> = Vec::new();
    for (idx, message) in messages.iter().enumerate() {
        match message {
            ChatMessage::Tool { .. } if !units.is_empty() => {
                if let Some(last) = units.last_mut() {
                    last.end = idx + 1;
                }
            }
            _ => units.push(idx..idx + 1),
        }
    }
    units
}

/// The units never cut or summarised: the system prompt, the operator's last message, and
/// everything from the last assistant message on.
fn protected_units(messages: &[ChatMessage], units: &[std::ops::Range<usize>]) -> Vec<bool> {
    let last_operator = messages.iter().rposition(is_operator_message);
    let last_assistant = messages
        .iter()
        .rposition(|m| matches!(m, ChatMessage::Assistant { .. }));
    units
        .iter()
        .map(|unit| {
            let first = unit.start;
            matches!(messages[first], ChatMessage::System { .. })
                || Some(first) == last_operator
                || last_assistant.is_some_and(|last| first >= last)
        })
        .collect()
}

pub(crate) fn is_operator_message(message: &ChatMessage) -> bool {
    matches!(message, ChatMessage::User { content } if !content.starts_with(NOTE_PREFIX))
}

/// How the history marks the runtime's own notes among user messages.
pub(crate) const NOTE_PREFIX: &str = "[Nomos] ";

/// `request` without the dropped messages, the summary note in the place of the first one.
fn without(request: &ChatRequest, dropped: &[bool], note: &str) -> ChatRequest {
    let mut messages = Vec::with_capacity(request.messages.len());
    let mut noted = false;
    for (idx, message) in request.messages.iter().enumerate() {
        if dropped[idx] {
            if !noted {
                messages.push(ChatMessage::User {
                    content: note.into(),
                });
                noted = true;
            }
            continue;
        }
        messages.push(message.clone());
    }
    ChatRequest {
        messages,
        tools: request.tools.clone(),
    }
}

/// What the replaced messages said, in short.
#[derive(Clone, Debug, Default)]
pub(crate) struct Summary {
    asked: Vec<String>,
    ran: Vec<String>,
    n_messages: usize,
}

impl Summary {
    pub(crate) fn add(&mut self, messages: &[ChatMessage]) {
        let mut calls: HashMap<&str, String> = HashMap::new();
        for message in messages {
            self.n_messages += 1;
            match message {
                ChatMessage::User { content } if is_operator_message(message) => {
                    self.asked.push(shorten(content, 200));
                }
                ChatMessage::Assistant { tool_calls, .. } => {
                    for call in tool_calls.iter() {
                        calls.insert(&call.id, describe_call(&call.name, &call.arguments));
                    }
                }
                ChatMessage::Tool { call_id, content } => {
                    let what = calls
                        .remove(&**call_id)
                        .unwrap_or_else(|| "a tool call".to_owned());
                    let outcome = shorten(content.lines().next().unwrap_or(""), 80);
                    self.ran.push(format!("{what} -> {outcome}"));
                }
                ChatMessage::System { .. } | ChatMessage::User { .. } => {}
            }
        }
    }

    pub(crate) fn note(&self, plan: Option<&str>) -> String {
        let mut note = format!(
            "{NOTE_PREFIX}{} earlier messages were summarised to fit the model's context (no detail below is new; {OUTPUT_TOOL} reads any execution's full output).",
            self.n_messages
        );
        push_list(&mut note, "The operator asked", &self.asked);
        push_list(&mut note, "Tool calls and their outcomes", &self.ran);
        if let Some(plan) = plan {
            note.push_str("\nThe current plan:\n");
            note.push_str(plan);
        }
        note
    }
}

fn push_list(note: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    note.push_str(&format!("\n{title}:"));
    let skipped = items.len().saturating_sub(SUMMARY_ITEMS);
    if skipped > 0 {
        note.push_str(&format!("\n- ({skipped} earlier ones not listed)"));
    }
    for item in &items[skipped..] {
        note.push_str("\n- ");
        note.push_str(item);
    }
}

/// `run` calls by host and command, other calls by name.
fn describe_call(name: &str, arguments: &str) -> String {
    let args: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    match (args["host"].as_str(), args["command"].as_str()) {
        (Some(host), Some(command)) => format!("run `{}` on {host}", shorten(command, 120)),
        _ => name.to_owned(),
    }
}

fn shorten(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
mod tests;
pub(crate) mod window;

pub(crate) use window::Window;

/// Tokens of one text, estimated from its character runs: a run of letters counts one token per
/// four bytes, a run of digits one per three, each other symbol one, whitespace nothing.
pub(crate) fn text_tokens(text: &str) -> usize {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Letter,
        Digit,
        Space,
        Symbol,
    }
    let mut tokens = 0;
    let mut run = 0usize;
    let mut class = Class::Space;
    let flush = |class: Class, run: usize| match class {
        Class::Letter => run.div_ceil(4),
        Class::Digit => run.div_ceil(3),
        Class::Space | Class::Symbol => 0,
    };
    for c in text.chars() {
        let next = if c.is_alphabetic() {
            Class::Letter
        } else if c.is_ascii_digit() {
            Class::Digit
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Symbol
        };
        if next == Class::Symbol {
            tokens += flush(class, run) + c.len_utf8().min(2);
            run = 0;
            class = Class::Symbol;
            continue;
        }
        if next != class {
            tokens += flush(class, run);
            run = 0;
            class = next;
        }
        run += c.len_utf8();
    }
    tokens + flush(class, run)
}
