//! Each active session's model history, kept as the session commits: every commit the
//! runtime makes appends its messages and results to the history it was decided on, so a
//! model request reads nothing from the store and costs the same at turn 300 as at turn 3.
//!
//! A history is rebuilt from the store only when it is missing (a session this process has
//! not seen, or one it forgot) or stale: a commit decided on another version than the
//! history's (a conflict, a write by another process) drops it, and the next request
//! rebuilds it. The rebuild and the appends go through the same steps, so they agree; the
//! tests hold both against [`super::build_history`] and the context budget's `model_view`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};

use nomos_core::Role;
use nomos_core::ports::chat::{ChatMessage, ToolCall};
use nomos_core::ports::store::{Commit, SessionSnapshot};
use nomos_core::record::{Message, PlanStep, ToolCallRecord, ToolCallRequest};
use nomos_core::{ExecutionId, SessionId, StepId};

use super::INTERRUPTED_RESULT;
use crate::budget::{Budget, NOTE_PREFIX, Window, window::ResultView};

/// How many sessions keep a history before the histories start over.
const CAPACITY: usize = 256;

/// What a commit adds to a history.
#[derive(Clone, Debug, Default)]
pub(crate) struct CommitRows {
    messages: Vec<Message>,
    results: Vec<(String, String)>,
    executions: Vec<(String, ExecutionId)>,
    steps: Vec<PlanStep>,
    removed_steps: Vec<StepId>,
}

impl CommitRows {
    /// The rows of `commit` a history reads.
    pub(crate) fn of(commit: &Commit) -> CommitRows {
        CommitRows {
            messages: commit.messages.clone(),
            results: commit
                .tool_calls
                .iter()
                .map(|c| (c.call_id.clone(), c.result.clone()))
                .collect(),
            executions: commit
                .executions
                .iter()
                .filter_map(|e| e.tool_call_id.clone().map(|call| (call, e.id)))
                .collect(),
            steps: commit.steps.clone(),
            removed_steps: commit.removed_steps.clone(),
        }
    }
}

/// One session's conversation as the model reads it, at one version of the session.
#[derive(Clone, Debug)]
pub(crate) struct ModelHistory {
    version: i64,
    window: Window,
    /// Calls without a result yet, in the order of the conversation: entry -> call.
    pending: BTreeMap<usize, ToolCallRequest>,
    /// The entries of each call id (a call's result sits in every entry of its id).
    entries_of: HashMap<String, Vec<usize>>,
    /// Results whose call no message has made yet.
    orphans: HashMap<String, String>,
    used: HashSet<String>,
    executions: HashMap<String, ExecutionId>,
    steps: BTreeMap<(u32, u32), (StepId, String)>,
    step_keys: HashMap<StepId, (u32, u32)>,
}

impl ModelHistory {
    /// The history of a session with no messages yet, at `version`.
    pub(crate) fn new(budget: Budget, system_prompt: &str, version: i64) -> ModelHistory {
        ModelHistory {
            version,
            window: Window::new(budget, system_prompt),
            pending: BTreeMap::new(),
            entries_of: HashMap::new(),
            orphans: HashMap::new(),
            used: HashSet::new(),
            executions: HashMap::new(),
            steps: BTreeMap::new(),
            step_keys: HashMap::new(),
        }
    }

    /// The history rebuilt from what the store holds.
    pub(crate) fn rebuild(
        budget: Budget,
        system_prompt: &str,
        snapshot: &SessionSnapshot,
        messages: &[Message],
        calls: &[ToolCallRecord],
    ) -> ModelHistory {
        let mut history = ModelHistory::new(budget, system_prompt, snapshot.record.version);
        history.apply(&CommitRows {
            messages: messages.to_vec(),
            results: calls
                .iter()
                .map(|c| (c.call_id.clone(), c.result.clone()))
                .collect(),
            executions: snapshot
                .executions
                .iter()
                .filter_map(|e| e.tool_call_id.clone().map(|call| (call, e.id)))
                .collect(),
            steps: snapshot.steps.clone(),
            removed_steps: Vec::new(),
        });
        history
    }

    /// The session version this history matches.
    pub(crate) fn version(&self) -> i64 {
        self.version
    }

    /// Appends what a commit added.
    pub(crate) fn apply(&mut self, rows: &CommitRows) {
        for (call, execution) in &rows.executions {
            if self.executions.insert(call.clone(), *execution) != Some(*execution) {
                self.render_again(call);
            }
        }
        for id in &rows.removed_steps {
            if let Some(key) = self.step_keys.remove(id) {
                self.steps.remove(&key);
            }
        }
        for step in &rows.steps {
            let key = (step.generation, step.seq);
            if let Some(old) = self.step_keys.insert(step.id, key) {
                self.steps.remove(&old);
            }
            let line = format!("{}. {} [{}]", step.seq, step.title, step.status);
            self.steps.insert(key, (step.id, line));
        }
        for message in &rows.messages {
            self.push_message(message);
        }
        for (call, result) in &rows.results {
            self.used.insert(call.clone());
            let entries = self.entries_of.get(call).cloned().unwrap_or_default();
            if entries.is_empty() {
                self.orphans.insert(call.clone(), result.clone());
                continue;
            }
            let view = self.view_of(call, result);
            for idx in entries {
                self.pending.remove(&idx);
                self.window.set_result(idx, view.clone());
            }
        }
    }

    /// Moves to the version a commit gave the session.
    pub(crate) fn committed(&mut self, rows: &CommitRows, version: i64) {
        self.apply(rows);
        self.version = version;
    }

    fn view_of(&self, call: &str, result: &str) -> ResultView {
        ResultView::of(
            result,
            self.window.budget().model_output_bytes,
            self.executions.get(call).copied(),
        )
    }

    fn push_message(&mut self, message: &Message) {
        match message.role {
            Role::Operator => {
                self.window.push(
                    ChatMessage::User {
                        content: message.content.as_str().into(),
                    },
                    None,
                );
            }
            Role::Note => {
                self.window.push(
                    ChatMessage::User {
                        content: format!("{NOTE_PREFIX}{}", message.content).into(),
                    },
                    None,
                );
            }
            Role::Assistant => {
                let content =
                    (!message.content.trim().is_empty()).then(|| message.content.as_str().into());
                let tool_calls = message
                    .tool_calls
                    .iter()
                    .map(|c| ToolCall {
                        id: c.call_id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect();
                self.window.push(
                    ChatMessage::Assistant {
                        content,
                        tool_calls,
                    },
                    None,
                );
                for call in &message.tool_calls {
                    self.push_call(call);
                }
            }
        }
    }

    fn push_call(&mut self, call: &ToolCallRequest) {
        self.used.insert(call.call_id.clone());
        let answered = self
            .entries_of
            .get(&call.call_id)
            .and_then(|entries| entries.first())
            .filter(|idx| !self.pending.contains_key(idx))
            .and_then(|idx| self.window.result(*idx).cloned());
        let (view, pending) = match (answered, self.orphans.remove(&call.call_id)) {
            (Some(view), _) => (view, false),
            (None, Some(result)) => (self.view_of(&call.call_id, &result), false),
            (None, None) => (self.view_of(&call.call_id, INTERRUPTED_RESULT), true),
        };
        let idx = self.window.push(
            ChatMessage::Tool {
                call_id: call.call_id.as_str().into(),
                content: "".into(),
            },
            Some(view),
        );
        if pending {
            self.pending.insert(idx, call.clone());
        }
        self.entries_of
            .entry(call.call_id.clone())
            .or_default()
            .push(idx);
    }

    /// A call's result viewed again, now that its execution is known.
    fn render_again(&mut self, call: &str) {
        let Some(entries) = self.entries_of.get(call) else {
            return;
        };
        let execution = self.executions.get(call).copied();
        for idx in entries.clone() {
            if let Some(result) = self.window.result(idx) {
                let again = ResultView::of(
                    &result.original,
                    self.window.budget().model_output_bytes,
                    execution,
                );
                self.window.set_result(idx, again);
            }
        }
    }

    /// The calls that have no result, in the order of the conversation (TURN-7).
    pub(crate) fn dangling(&self) -> Vec<ToolCallRequest> {
        self.pending.values().cloned().collect()
    }

    /// Whether the session has used this tool-call id (TURN-10).
    pub(crate) fn is_used(&self, call_id: &str) -> bool {
        self.used.contains(call_id)
    }

    /// How many distinct tool-call ids the session has used.
    pub(crate) fn n_used(&self) -> usize {
        self.used.len()
    }

    /// The current plan, one line per step, when there is one.
    pub(crate) fn plan(&self) -> Option<String> {
        let (&(generation, _), _) = self.steps.last_key_value()?;
        let lines: Vec<&str> = self
            .steps
            .range((generation, 0)..)
            .map(|(_, (_, line))| line.as_str())
            .collect();
        Some(lines.join("\n"))
    }

    /// The conversation and the context budget's state.
    pub(crate) fn window(&mut self) -> &mut Window {
        &mut self.window
    }

    /// The conversation before any fitting, for comparing with a rebuild.
    #[cfg(test)]
    pub(crate) fn unfitted(&self) -> Vec<ChatMessage> {
        self.window.unfitted()
    }
}

/// The histories of the sessions this process drives.
#[derive(Debug, Default)]
pub(crate) struct Histories {
    map: Mutex<HashMap<SessionId, Slot>>,
}

/// A session's history, and how many commits and forgets it has seen: a history rebuilt
/// from the store is kept only when no commit came between the reads and the keeping.
#[derive(Debug, Default)]
struct Slot {
    history: Option<ModelHistory>,
    epoch: u64,
}

impl Histories {
    /// Whether a commit decided at `version` would extend a history.
    pub(crate) fn tracks(&self, id: SessionId, version: Option<i64>) -> bool {
        version.is_some()
            && self
                .lock()
                .get(&id)
                .and_then(|slot| slot.history.as_ref())
                .map(|h| h.version)
                == version
    }

    /// After a commit decided at `expected` that gave the session `version`: appends its
    /// rows to the history of that version, or forgets a history of any other.
    pub(crate) fn committed(
        &self,
        id: SessionId,
        expected: Option<i64>,
        version: i64,
        rows: Option<&CommitRows>,
    ) {
        let mut map = self.lock();
        let slot = map.entry(id).or_default();
        slot.epoch += 1;
        match (slot.history.as_mut(), rows) {
            (Some(history), Some(rows)) if Some(history.version) == expected => {
                history.committed(rows, version);
            }
            _ => slot.history = None,
        }
    }

    /// Where the session's commits stand, to pass to [`Histories::keep`].
    pub(crate) fn epoch(&self, id: SessionId) -> u64 {
        self.lock().get(&id).map_or(0, |slot| slot.epoch)
    }

    /// Keeps a history (a new session's, or one rebuilt from the store) unless the session
    /// committed or was forgotten since `epoch`.
    pub(crate) fn keep(&self, id: SessionId, epoch: u64, history: ModelHistory) {
        let mut map = self.lock();
        if map.len() >= CAPACITY && !map.contains_key(&id) {
            map.clear();
        }
        let slot = map.entry(id).or_default();
        if slot.epoch == epoch {
            slot.history = Some(history);
        }
    }

    /// Forgets a session's history (a conflict, a failed commit).
    pub(crate) fn forget(&self, id: SessionId) {
        let mut map = self.lock();
        let slot = map.entry(id).or_default();
        slot.epoch += 1;
        slot.history = None;
    }

    /// Runs `f` on the history, when there is one at `version` (any version when `None`).
    pub(crate) fn with<T>(
        &self,
        id: SessionId,
        version: Option<i64>,
        f: impl FnOnce(&mut ModelHistory) -> T,
    ) -> Option<T> {
        let mut map = self.lock();
        let slot = map.get_mut(&id)?;
        let history = slot.history.as_mut()?;
        if version.is_some_and(|v| v != history.version) {
            slot.history = None;
            return None;
        }
        Some(f(history))
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<SessionId, Slot>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod agent_tests;
