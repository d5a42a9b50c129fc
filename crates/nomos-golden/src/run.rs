//! Running one case in-process against the real runtime, with a fresh embedded store,
//! the simulated fleet and virtual time.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;

use nomos_agent::{Agent, AgentConfig, Clock, ManualClock, TurnReport};
use nomos_core::activity::{ActivityEntry, ActivityFacts, derive_activity};
use nomos_core::event::EventRecord;
use nomos_core::ports::chat::{ChatModel, ChatRequest, ChatResponse, DeltaSink, ModelError, Usage};
use nomos_core::ports::store::{SessionSnapshot, Store};
use nomos_core::record::{Message, ToolCallRecord};
use nomos_core::resume::ResumeKind;
use nomos_core::{ApprovalStatus, Span, Timestamp};
use nomos_llm::{
    CiEnvironment, OpenAiConfig, OpenAiModel, RecordingModel, ReplayModel, ScriptedModel,
};
use nomos_sqlite::SqliteStore;
use tokio::task::JoinHandle;

use crate::manifest::{Action, Case, Pick, PickName};
use crate::tally::TurnTime;
use crate::world::{SimulatedExecutor, seed};

/// When every case starts, in virtual time.
pub const CASE_START_MILLIS: i64 = 1_800_000_000_000;

/// Which model plays the cases.
#[derive(Clone, Debug)]
pub enum ModelChoice {
    /// The scripted replies of each case (deterministic, free).
    Stub,
    /// A real OpenAI-compatible endpoint (from `NOMOS_LLM_*` on the command line).
    OpenAi(OpenAiConfig),
    /// Recordings in a directory.
    Replay(PathBuf),
    /// A real endpoint, recording every exchange into a directory (and the exact bytes of
    /// each HTTP exchange into its [`WIRE_DIR`]).
    Record(OpenAiConfig, PathBuf),
}

/// The subdirectory of a recording directory that keeps the exact bytes of each exchange,
/// in a directory per case (its name, with anything but letters, digits, `.`, `-` and `_`
/// as `_`).
pub const WIRE_DIR: &str = "wire";

/// `name` as one path component.
pub fn path_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_owned()
}

/// What a case left behind, for the assertions.
#[derive(Clone, Debug)]
pub struct Observed {
    /// The session at the end.
    pub snapshot: SessionSnapshot,
    /// Its events.
    pub events: Vec<EventRecord>,
    /// Its tool calls.
    pub calls: Vec<ToolCallRecord>,
    /// Its transcript.
    pub messages: Vec<Message>,
    /// Every turn's report.
    pub turns: Vec<TurnReport>,
    /// Every turn that ended, its wall time split between the model and Nomos (EVAL-7).
    pub turn_times: Vec<TurnTime>,
    /// Step errors (a refused decision, a refused message).
    pub step_errors: Vec<String>,
    /// Replies left in the stub script, when the stub played.
    pub script_remaining: Option<usize>,
    /// Tokens and cost.
    pub usage: Usage,
    /// The activity log, derived a day after the case ended (so a time taken from "now"
    /// shows).
    pub activity: Vec<ActivityEntry>,
    /// The case's virtual time at its end.
    pub ended_at: Timestamp,
}

/// The activity log of a case's session, derived a day after the case ended, so an entry
/// whose time was taken from "now" instead of its persisted fact shows (ACTIVITY-2).
pub fn case_activity(
    snapshot: &SessionSnapshot,
    events: &[EventRecord],
    calls: &[ToolCallRecord],
    ended_at: Timestamp,
) -> Vec<ActivityEntry> {
    derive_activity(
        &ActivityFacts {
            session: &snapshot.record,
            events,
            steps: &snapshot.steps,
            executions: &snapshot.executions,
            approvals: &snapshot.approvals,
            tool_calls: calls,
        },
        ended_at + Span::from_mins(24 * 60),
    )
}

/// Runs a case to its end (or its first infrastructure error).
pub async fn run_case(case: &Case, choice: &ModelChoice) -> Result<Observed, String> {
    run_case_scoped(case, choice, nomos_core::declared::AssentScope::Declared).await
}

/// [`run_case`] with `[gate] assent_scope` set to `scope` (GATE-9), to compare what the
/// operator is asked and sees under each.
pub async fn run_case_scoped(
    case: &Case,
    choice: &ModelChoice,
    scope: nomos_core::declared::AssentScope,
) -> Result<Observed, String> {
    let store = Arc::new(
        SqliteStore::in_memory()
            .await
            .map_err(|e| format!("store: {e}"))?,
    );
    let clock = ManualClock::starting_at(Timestamp::from_millis(CASE_START_MILLIS));
    seed(
        store.as_ref(),
        &case.world,
        Timestamp::from_millis(CASE_START_MILLIS),
    )
    .await
    .map_err(|e| format!("seeding the world: {e}"))?;
    let executor = Arc::new(SimulatedExecutor::new(&case.world));
    let (model, script) = build_model(case, choice)?;
    let timed = Arc::new(TimedModel::new(model));
    let model: Arc<dyn ChatModel> = timed.clone();
    let mut config = AgentConfig::spec_defaults();
    config.session.assent_scope = scope;
    let ttl = config.session.approval_ttl;
    let sweep_interval = config.sweep_interval;
    let build = |config: AgentConfig| {
        Agent::builder(store.clone(), executor.clone(), model.clone())
            .config(config)
            .clock(Arc::new(clock.clone()))
            .build()
    };
    let mut agent = build(tuned(config.clone()));
    let id = agent.create_session().await.map_err(|e| e.to_string())?;
    let mut turns = Vec::new();
    let mut turn_times = Vec::new();
    let mut step_errors = Vec::new();
    let mut hung: Vec<JoinHandle<TurnReport>> = Vec::new();

    for (idx, step) in case.steps.iter().enumerate() {
        let n = idx + 1;
        let action = step.action().map_err(|e| format!("step {n}: {e}"))?;
        match action {
            Action::Say(text) => {
                let watch = TurnWatch::start(&timed);
                match agent.spawn_message(id, &text).await {
                    Ok(handle) => {
                        if await_turn(handle, &executor, &mut turns, &mut hung).await? {
                            turn_times.push(watch.stop(&timed));
                        }
                    }
                    Err(e) => step_errors.push(format!("step {n}: message refused: {e}")),
                }
            }
            Action::Decide(pick, decision) => {
                let snapshot = agent.session(id).await.map_err(|e| e.to_string())?;
                let Some(approval_id) = pick_approval(&snapshot, &pick) else {
                    step_errors.push(format!("step {n}: no approval matches {pick:?}"));
                    continue;
                };
                let watch = TurnWatch::start(&timed);
                match agent
                    .spawn_decide(approval_id, decision, Some(CASE_OPERATOR))
                    .await
                {
                    Ok((_, handle)) => {
                        if await_turn(handle, &executor, &mut turns, &mut hung).await? {
                            turn_times.push(watch.stop(&timed));
                        }
                    }
                    Err(e) => step_errors.push(format!("step {n}: decision refused: {e}")),
                }
            }
            Action::ExpireApprovals => {
                clock.advance(Span::from_millis(
                    ttl.as_millis() + Span::from_mins(1).as_millis(),
                ));
                agent.sweep_once().await.map_err(|e| e.to_string())?;
            }
            Action::Wait(minutes) => {
                let mut left = Span::from_mins(minutes);
                while left > Span::ZERO {
                    let chunk = left.min(sweep_interval);
                    clock.advance(chunk);
                    left = Span::from_millis(left.as_millis() - chunk.as_millis());
                    agent.sweep_once().await.map_err(|e| e.to_string())?;
                }
            }
            Action::Advance(minutes) => clock.advance(Span::from_mins(minutes)),
            Action::Reconnect => match agent.resume(id, ResumeKind::Reconnect).await {
                Ok(report) => turns.push(report),
                Err(e) => step_errors.push(format!("step {n}: resume refused: {e}")),
            },
            Action::Restart => {
                for handle in hung.drain(..) {
                    handle.abort();
                }
                agent = build(tuned(config.clone()));
                agent
                    .reconcile_startup()
                    .await
                    .map_err(|e| format!("start-up reconcile: {e}"))?;
            }
        }
    }
    for handle in hung.drain(..) {
        handle.abort();
    }
    let snapshot = agent.session(id).await.map_err(|e| e.to_string())?;
    let events = store
        .events_after(Some(id), 0, 100_000)
        .await
        .map_err(|e| e.to_string())?;
    let calls = store.tool_calls(id).await.map_err(|e| e.to_string())?;
    let messages = store.messages(id).await.map_err(|e| e.to_string())?;
    let mut usage = Usage::default();
    for turn in &turns {
        usage.add(&turn.usage);
    }
    let ended_at = clock.now();
    let activity = case_activity(&snapshot, &events, &calls, ended_at);
    Ok(Observed {
        snapshot,
        events,
        calls,
        messages,
        turns,
        turn_times,
        step_errors,
        script_remaining: script.map(|s| s.remaining()),
        usage,
        activity,
        ended_at,
    })
}

/// What the operator was asked and saw in one case (GATE-9, GATE-10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Oversight {
    /// Approval cards shown.
    pub cards: u32,
    /// State-changing commands that ran (were dispatched).
    pub changes_run: u32,
    /// Of those, how many the operator saw neither on an approved card nor as a declared
    /// command of the plan generation they assented to.
    pub unseen: u32,
}

/// Counts [`Oversight`] in a case's end state.
pub fn oversight(snapshot: &SessionSnapshot) -> Oversight {
    use nomos_core::record::ExecutionKind;
    use nomos_core::{ApprovalStatus, CommandClass, ExecutionStatus};
    let mut seen = Oversight {
        cards: snapshot.approvals.len() as u32,
        ..Oversight::default()
    };
    for e in &snapshot.executions {
        let dispatched = matches!(
            e.status,
            ExecutionStatus::Running | ExecutionStatus::Completed | ExecutionStatus::Failed
        ) && e.started_at.is_some();
        if e.kind != ExecutionKind::Command || e.class == CommandClass::ReadOnly || !dispatched {
            continue;
        }
        seen.changes_run += 1;
        // A fan-out's one approval names its first host's execution and covers the rest.
        let guard = snapshot
            .fanouts
            .iter()
            .find(|f| f.hosts.iter().any(|h| h.execution_id == e.id))
            .map_or(e.id, |f| f.hosts[0].execution_id);
        let on_a_card = snapshot
            .approvals
            .iter()
            .any(|a| a.execution_id == guard && a.status == ApprovalStatus::Approved);
        let declared = snapshot.steps.iter().any(|s| {
            s.generation == e.generation
                && s.commands
                    .iter()
                    .any(|c| c.covers(&e.host, &e.command, e.class))
        });
        if !on_a_card && !declared {
            seen.unseen += 1;
        }
    }
    seen
}

/// Short back-offs: the cases run in virtual time, nothing waits for real.
fn tuned(mut config: AgentConfig) -> AgentConfig {
    config.resume.backoff = vec![Span::from_millis(1), Span::from_millis(2)];
    // SAFE-2: the simulated fleet answers only the case's scripted commands, so it holds
    // no backups; the backups are proved against a real sshd (nomos-agent's tests).
    config.backup.mode = nomos_core::safety::BackupMode::Off;
    config
}

type BuiltModel = (Arc<dyn ChatModel>, Option<Arc<ScriptedModel>>);

fn build_model(case: &Case, choice: &ModelChoice) -> Result<BuiltModel, String> {
    match choice {
        ModelChoice::Stub => {
            let replies: Vec<yaml_serde::Value> = case
                .steps
                .iter()
                .flat_map(|s| s.model.iter().cloned())
                .collect();
            let script = Arc::new(
                ScriptedModel::from_yaml_value(yaml_serde::Value::Sequence(replies))
                    .map_err(|e| e.to_string())?,
            );
            Ok((script.clone(), Some(script)))
        }
        ModelChoice::OpenAi(config) => Ok((Arc::new(openai(config)?), None)),
        ModelChoice::Replay(dir) => Ok((
            Arc::new(ReplayModel::open(dir).map_err(|e| e.to_string())?),
            None,
        )),
        ModelChoice::Record(config, dir) => {
            // The exact bytes the server sent go beside the recordings, in `wire/<case>/`.
            let config = config
                .clone()
                .with_wire_log(dir.join(WIRE_DIR).join(path_safe(&case.name)));
            let model = RecordingModel::new(
                openai(&config)?,
                dir,
                CiEnvironment::for_endpoint(config.endpoint()),
            )
            .map_err(|e| e.to_string())?;
            Ok((Arc::new(model), None))
        }
    }
}

fn openai(config: &OpenAiConfig) -> Result<OpenAiModel, String> {
    OpenAiModel::new(config.clone()).map_err(|e| e.to_string())
}

/// Waits for a turn, unless it hangs on a command that never returns (then it is left
/// running for a later `restart` step). Returns whether the turn ended.
async fn await_turn(
    mut handle: JoinHandle<TurnReport>,
    executor: &SimulatedExecutor,
    turns: &mut Vec<TurnReport>,
    hung: &mut Vec<JoinHandle<TurnReport>>,
) -> Result<bool, String> {
    let signal = executor.hung();
    tokio::select! {
        res = &mut handle => {
            turns.push(res.map_err(|e| format!("turn task failed: {e}"))?);
            Ok(true)
        }
        _ = signal.notified() => {
            hung.push(handle);
            Ok(false)
        }
    }
}

/// Who decides the approvals of a case's `approve`/`deny` steps: the case's operator.
pub const CASE_OPERATOR: &str = "eval";

/// A model that adds up the wall time spent waiting for the model it wraps, so a turn's
/// time can be split between the model and Nomos (EVAL-7).
struct TimedModel {
    inner: Arc<dyn ChatModel>,
    spent: Mutex<Duration>,
}

impl TimedModel {
    fn new(inner: Arc<dyn ChatModel>) -> TimedModel {
        TimedModel {
            inner,
            spent: Mutex::new(Duration::ZERO),
        }
    }

    fn spent(&self) -> Duration {
        // A poisoned lock still holds a valid sum.
        *self.spent.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl ChatModel for TimedModel {
    async fn complete(
        &self,
        request: &ChatRequest,
        sink: DeltaSink<'_>,
    ) -> Result<ChatResponse, ModelError> {
        let started = Instant::now();
        let res = self.inner.complete(request, sink).await;
        *self.spent.lock().unwrap_or_else(|e| e.into_inner()) += started.elapsed();
        res
    }

    fn name(&self) -> String {
        self.inner.name()
    }
}

/// The wall clock and the model's time at the start of a turn.
struct TurnWatch {
    started: Instant,
    model_before: Duration,
}

impl TurnWatch {
    fn start(model: &TimedModel) -> TurnWatch {
        TurnWatch {
            started: Instant::now(),
            model_before: model.spent(),
        }
    }

    fn stop(self, model: &TimedModel) -> TurnTime {
        TurnTime::split(
            self.started.elapsed(),
            model.spent().saturating_sub(self.model_before),
        )
    }
}

/// The approval a decision step names: the latest pending one, or the n-th requested.
pub fn pick_approval(snapshot: &SessionSnapshot, pick: &Pick) -> Option<nomos_core::ApprovalId> {
    match pick {
        Pick::Named(PickName::Latest) => snapshot
            .approvals
            .iter()
            .rev()
            .find(|a| a.status == ApprovalStatus::Pending)
            .map(|a| a.id),
        Pick::Index(n) => snapshot.approvals.get(n.checked_sub(1)?).map(|a| a.id),
    }
}

/// Why a case did not run to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseFailure {
    /// Its time limit passed, with a turn still going.
    TimedOut(Duration),
    /// Something outside the model failed (the store, the world, a turn's task).
    Broken(String),
}

impl std::fmt::Display for CaseFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaseFailure::TimedOut(limit) => write!(f, "timed out after {} s", limit.as_secs()),
            CaseFailure::Broken(error) => f.write_str(error),
        }
    }
}

/// Runs a case under its time limit (`limit`, or the case's own), measuring its wall time.
pub async fn run_case_timed(
    case: &Case,
    choice: &ModelChoice,
    limit: Option<Duration>,
) -> (Result<Observed, CaseFailure>, Duration) {
    let started = Instant::now();
    let limit = limit.unwrap_or(Duration::from_secs(case.timeout_secs.unwrap_or(30)));
    let res = match tokio::time::timeout(limit, run_case(case, choice)).await {
        Ok(res) => res.map_err(CaseFailure::Broken),
        Err(_) => Err(CaseFailure::TimedOut(limit)),
    };
    (res, started.elapsed())
}
