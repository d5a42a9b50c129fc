//! The context budget (TURN-9) kept across requests: the model's view of one session's
//! conversation, message by message, with each message's token estimate, and the fitting of
//! [`super::fit`] applied to it in place, so a request costs the same whatever the length of
//! the session.
//!
//! Each tool result is viewed once, when it arrives (ANSI stripped, cut to the model's
//! share); an older result cut to a short head and tail stays cut, and exchanges summarised
//! stay summarised, with the summary note kept and extended as more exchanges join it. The
//! rules are those of [`super::fit`]: the system prompt, the operator's last message and the
//! last exchange are never cut or summarised, and an assistant message and its results move
//! together (TURN-7).

use std::sync::Arc;

use nomos_core::ExecutionId;
use nomos_core::ports::chat::{ChatMessage, ChatRequest};

use super::{
    Budget, Fit, OLDER_RESULT_BYTES, Summary, Tools, head_and_tail, is_operator_message,
    message_tokens, strip_ansi, text_tokens, total_tokens,
};

/// One message of the conversation as the model reads it.
#[derive(Clone, Debug)]
struct Entry {
    message: ChatMessage,
    tokens: usize,
    summarised: bool,
    result: Option<ResultView>,
}

/// A tool result: the whole output as the model may read it, the view it gets first, and
/// whether fitting has already looked at it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ResultView {
    /// ANSI stripped, whole: every cut is made from it.
    pub original: Arc<str>,
    /// Cut to the model's share (the original itself when it fits).
    pub view: Arc<str>,
    /// The execution behind the call, named by a cut's note.
    pub execution: Option<ExecutionId>,
    /// Fitting cut it to a short head and tail, or found nothing to cut.
    pub cut: bool,
}

impl ResultView {
    /// The view of a raw result for a model that reads at most `keep` bytes of one.
    pub(crate) fn of(raw: &str, keep: usize, execution: Option<ExecutionId>) -> ResultView {
        let original: Arc<str> = strip_ansi(raw).into();
        let view = head_and_tail(&original, keep, execution)
            .map(Arc::from)
            .unwrap_or_else(|| original.clone());
        ResultView {
            original,
            view,
            execution,
            cut: false,
        }
    }
}

/// The conversation of one session as the model reads it, fitted in place.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    budget: Budget,
    entries: Vec<Entry>,
    /// Text tokens and count of the messages not summarised.
    kept_tokens: usize,
    n_kept: usize,
    /// Where the summary note stands (the first summarised message), and what it says.
    summary: Option<(usize, Summary)>,
    /// Entries before this one were all looked at by step 1 of fitting.
    cut_from: usize,
    last_operator: Option<usize>,
    last_assistant: Option<usize>,
}

impl Window {
    /// A conversation that starts with the system prompt.
    pub(crate) fn new(budget: Budget, system_prompt: &str) -> Window {
        let mut window = Window {
            budget,
            entries: Vec::new(),
            kept_tokens: 0,
            n_kept: 0,
            summary: None,
            cut_from: 0,
            last_operator: None,
            last_assistant: None,
        };
        window.push(
            ChatMessage::System {
                content: system_prompt.into(),
            },
            None,
        );
        window
    }

    /// Appends a message; a tool result comes with its view. Returns its index.
    pub(crate) fn push(&mut self, message: ChatMessage, result: Option<ResultView>) -> usize {
        let idx = self.entries.len();
        match &message {
            ChatMessage::Assistant { .. } => self.last_assistant = Some(idx),
            m if is_operator_message(m) => self.last_operator = Some(idx),
            _ => {}
        }
        let mut entry = Entry {
            tokens: 0,
            message,
            summarised: false,
            result: None,
        };
        if let Some(result) = result {
            set_content(&mut entry, result.view.clone());
            entry.result = Some(result);
        }
        entry.tokens = message_tokens(&entry.message);
        self.kept_tokens += entry.tokens;
        self.n_kept += 1;
        self.entries.push(entry);
        idx
    }

    /// Replaces the result at `idx` (a call answered, or its execution now known).
    pub(crate) fn set_result(&mut self, idx: usize, result: ResultView) {
        let Some(entry) = self.entries.get_mut(idx) else {
            return;
        };
        let before = entry.tokens;
        set_content(entry, result.view.clone());
        entry.result = Some(result);
        entry.tokens = message_tokens(&entry.message);
        if !entry.summarised {
            self.kept_tokens = self.kept_tokens - before + entry.tokens;
        }
        // Step 1 looks at it again.
        self.cut_from = self.cut_from.min(idx);
    }

    /// The result at `idx`, if it is one.
    pub(crate) fn result(&self, idx: usize) -> Option<&ResultView> {
        self.entries.get(idx).and_then(|e| e.result.as_ref())
    }

    /// The conversation before any fitting: every message, each result in its first view.
    #[cfg(test)]
    pub(crate) fn unfitted(&self) -> Vec<ChatMessage> {
        self.entries
            .iter()
            .map(|entry| {
                let mut message = entry.message.clone();
                if let (ChatMessage::Tool { content, .. }, Some(result)) =
                    (&mut message, &entry.result)
                {
                    content.clone_from(&result.view);
                }
                message
            })
            .collect()
    }

    /// The request as it stands, with these tools.
    pub(crate) fn request(&self, tools: &Tools, plan: Option<&str>) -> ChatRequest {
        let mut messages = Vec::with_capacity(self.n_kept + 1);
        for (idx, entry) in self.entries.iter().enumerate() {
            if let Some((at, summary)) = &self.summary
                && *at == idx
            {
                messages.push(ChatMessage::User {
                    content: summary.note(plan).into(),
                });
            }
            if !entry.summarised {
                messages.push(entry.message.clone());
            }
        }
        ChatRequest {
            messages,
            tools: tools.specs.clone(),
        }
    }

    fn estimate(&self, tools_tokens: usize, n_tools: usize, note_tokens: Option<usize>) -> usize {
        total_tokens(
            self.kept_tokens + tools_tokens + note_tokens.unwrap_or(0),
            self.n_kept + n_tools + usize::from(note_tokens.is_some()),
        )
    }

    fn note_tokens(&self, plan: Option<&str>) -> Option<usize> {
        self.summary
            .as_ref()
            .map(|(_, summary)| text_tokens(&summary.note(plan)))
    }

    /// Whether the unit starting at `idx` is never cut or summarised.
    fn protected(&self, idx: usize) -> bool {
        matches!(self.entries[idx].message, ChatMessage::System { .. })
            || Some(idx) == self.last_operator
            || self.last_assistant.is_some_and(|last| idx >= last)
    }

    /// The end (exclusive) of the unit that starts at `start`.
    fn unit_end(&self, start: usize) -> usize {
        let mut end = start + 1;
        while end < self.entries.len()
            && matches!(self.entries[end].message, ChatMessage::Tool { .. })
        {
            end += 1;
        }
        end
    }

    /// Fits the conversation to `target` tokens with these tools, in the three moves of
    /// [`super::fit`], keeping what earlier fits did.
    pub(crate) fn fit(&mut self, target: usize, tools: &Tools, plan: Option<&str>) -> Fit {
        let tools_tokens = tools.tokens;
        let n_tools = tools.specs.len();
        let tokens_before = self.estimate(tools_tokens, n_tools, self.note_tokens(plan));
        let mut fit = Fit {
            tokens_before,
            tokens_after: tokens_before,
            ..Fit::default()
        };
        if tokens_before <= target {
            return fit;
        }
        // 1. Older results, oldest first, to a short head and tail.
        let note_tokens = self.note_tokens(plan);
        let mut idx = self.cut_from;
        'cut: while idx < self.entries.len() {
            if self.last_assistant.is_some_and(|last| idx >= last) {
                // The last exchange and what follows it are never cut.
                break;
            }
            let end = self.unit_end(idx);
            if !self.protected(idx) {
                for at in idx..end {
                    if self.cut_one(at, &mut fit)
                        && self.estimate(tools_tokens, n_tools, note_tokens) <= target
                    {
                        self.cut_from = at + 1;
                        break 'cut;
                    }
                }
            }
            idx = end;
            self.cut_from = idx;
        }
        fit.tokens_after = self.estimate(tools_tokens, n_tools, note_tokens);
        if fit.tokens_after <= target {
            return fit;
        }
        // 2. The oldest unprotected units, into the summary note.
        let mut idx = 0;
        while idx < self.entries.len() {
            let end = self.unit_end(idx);
            if self.last_assistant.is_some_and(|last| idx >= last) {
                break;
            }
            if self.entries[idx].summarised || self.protected(idx) {
                idx = end;
                continue;
            }
            let messages: Vec<ChatMessage> = self.entries[idx..end]
                .iter()
                .map(|e| e.message.clone())
                .collect();
            let summary = &mut self
                .summary
                .get_or_insert_with(|| (idx, Summary::default()))
                .1;
            summary.add(&messages);
            for entry in &mut self.entries[idx..end] {
                entry.summarised = true;
                self.kept_tokens -= entry.tokens;
                self.n_kept -= 1;
            }
            fit.n_messages_summarised += end - idx;
            if self.estimate(tools_tokens, n_tools, self.note_tokens(plan)) <= target {
                break;
            }
            idx = end;
        }
        fit.tokens_after = self.estimate(tools_tokens, n_tools, self.note_tokens(plan));
        fit
    }

    /// Step 1 on one message: cuts an older result from its whole output. Whether it cut.
    fn cut_one(&mut self, at: usize, fit: &mut Fit) -> bool {
        let entry = &mut self.entries[at];
        let Some(result) = &mut entry.result else {
            return false;
        };
        if result.cut || entry.summarised {
            return false;
        }
        result.cut = true;
        let current = match &entry.message {
            ChatMessage::Tool { content, .. } => content.len(),
            _ => return false,
        };
        if result.original.len() > OLDER_RESULT_BYTES && current <= OLDER_RESULT_BYTES + 300 {
            // Already cut this short.
            return false;
        }
        let Some(cut) = head_and_tail(&result.original, OLDER_RESULT_BYTES, result.execution)
        else {
            return false;
        };
        set_content(entry, cut.into());
        let before = entry.tokens;
        entry.tokens = message_tokens(&entry.message);
        self.kept_tokens = self.kept_tokens - before + entry.tokens;
        fit.n_results_cut += 1;
        true
    }

    /// The budget this window fits to.
    pub(crate) fn budget(&self) -> Budget {
        self.budget
    }
}

fn set_content(entry: &mut Entry, text: Arc<str>) {
    if let ChatMessage::Tool { content, .. } = &mut entry.message {
        *content = text;
    }
}

#[cfg(test)]
mod tests {
    use nomos_core::ports::chat::ToolCall;

    use super::*;
    use crate::budget::{Context, fit as fit_request};

    fn budget() -> Budget {
        Budget {
            context_tokens: 4_000,
            model_output_bytes: 2_048,
        }
    }

    /// A window and the same conversation as one request, after `n` exchanges of `bytes`.
    fn conversation(n: usize, bytes: usize) -> (Window, ChatRequest, Context) {
        let mut window = Window::new(budget(), "system prompt");
        let mut messages = vec![ChatMessage::System {
            content: "system prompt".into(),
        }];
        let mut context = Context::default();
        for i in 0..n {
            let ask = ChatMessage::User {
                content: format!("question {i}").into(),
            };
            window.push(ask.clone(), None);
            messages.push(ask);
            let call = ChatMessage::Assistant {
                content: None,
                tool_calls: vec![ToolCall {
                    id: format!("c{i}"),
                    name: "run".into(),
                    arguments: format!(r#"{{"host":"web{i}","command":"cat log"}}"#),
                }]
                .into(),
            };
            window.push(call.clone(), None);
            messages.push(call);
            let raw = format!("line {i}\n").repeat(bytes / 7 + 1);
            let view = ResultView::of(&raw, budget().model_output_bytes, None);
            messages.push(ChatMessage::Tool {
                call_id: format!("c{i}").into(),
                content: view.view.clone(),
            });
            context
                .originals
                .insert(format!("c{i}"), view.original.to_string());
            window.push(
                ChatMessage::Tool {
                    call_id: format!("c{i}").into(),
                    content: "".into(),
                },
                Some(view),
            );
        }
        (
            window,
            ChatRequest {
                messages,
                tools: Vec::new().into(),
            },
            context,
        )
    }

    // rule: TURN-9
    #[test]
    fn the_estimate_of_the_window_is_the_estimate_of_its_request() {
        let (window, request, _) = conversation(12, 3_000);
        assert_eq!(
            window.estimate(0, 0, None),
            crate::budget::estimate_tokens(&request)
        );
    }

    // rule: TURN-9
    #[test]
    fn a_window_fitted_once_sends_what_fitting_the_whole_request_sends() {
        let (mut window, mut request, context) = conversation(30, 3_000);
        let target = budget().target_tokens();
        let whole = fit_request(&mut request, target, &context);
        let kept = window.fit(target, &Tools::none(), None);
        assert_eq!(
            window.request(&Tools::none(), None).messages,
            request.messages
        );
        assert_eq!(kept.tokens_after, whole.tokens_after);
        assert!(kept.tokens_after <= target, "{kept:?}");
    }

    // rule: TURN-9
    #[test]
    fn a_window_fitted_after_each_exchange_stays_within_its_target() {
        let target = budget().target_tokens();
        let mut window = Window::new(budget(), "system prompt");
        for i in 0..200 {
            window.push(
                ChatMessage::User {
                    content: format!("question {i}").into(),
                },
                None,
            );
            window.push(
                ChatMessage::Assistant {
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: format!("c{i}"),
                        name: "run".into(),
                        arguments: "{}".into(),
                    }]
                    .into(),
                },
                None,
            );
            window.push(
                ChatMessage::Tool {
                    call_id: format!("c{i}").into(),
                    content: "".into(),
                },
                Some(ResultView::of(&"x y z ".repeat(600), 2_048, None)),
            );
            let fit = window.fit(target, &Tools::none(), None);
            assert!(fit.tokens_after <= target, "exchange {i}: {fit:?}");
            let request = window.request(&Tools::none(), None);
            assert_eq!(
                crate::budget::estimate_tokens(&request),
                fit.tokens_after,
                "exchange {i}"
            );
            // The last exchange and the operator's last message are whole.
            let n = request.messages.len();
            assert!(
                matches!(&request.messages[n - 1], ChatMessage::Tool { content, .. } if content.len() >= 2_048)
            );
            assert!(
                matches!(&request.messages[n - 3], ChatMessage::User { content } if **content == format!("question {i}"))
            );
        }
    }
}
