//! The manifest format (EVAL-1): cases, their fixture world, operator steps, scripted
//! model replies and assertions. Parsing is strict: an unknown key is an error that names
//! it and its line.

use std::collections::BTreeMap;
use std::path::Path;

use nomos_core::{CommandClass, ExecutionStatus, SessionStatus, StepStatus};
use serde::Deserialize;

/// A whole manifest.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The cases, in order.
    pub cases: Vec<Case>,
}

/// One conversation and what must be true after it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique name.
    pub name: String,
    /// Free tags, for filtering (`--tag`).
    #[serde(default)]
    pub tags: Vec<String>,
    /// EVAL-4: whether the case scripts model behaviour (`stub`, the default: it runs only
    /// with the stub) or asserts outcomes any competent model must reach (`any`).
    #[serde(default)]
    pub model: CaseModel,
    /// What the world holds before the conversation.
    #[serde(default)]
    pub world: World,
    /// Operator steps, in order.
    pub steps: Vec<Step>,
    /// Assertions on what happened.
    #[serde(default)]
    pub expect: Expect,
    /// Time limit for the case, in seconds (default 30).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// Which models a case is meant for (EVAL-4).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CaseModel {
    /// Scripted behaviour: only the stub plays it.
    #[default]
    Stub,
    /// Outcomes only: any model runs it (the stub too, with the case's script).
    Any,
}

/// The fixture world: hosts, knowledge and canned command outputs.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct World {
    /// Hosts the simulated executor knows (`local` is always known).
    #[serde(default)]
    pub hosts: Vec<HostFixture>,
    /// Knowledge-graph entities.
    #[serde(default)]
    pub entities: Vec<EntityFixture>,
    /// Relationships between them.
    #[serde(default)]
    pub relationships: Vec<RelationshipFixture>,
    /// Knowledge entries.
    #[serde(default)]
    pub knowledge: Vec<KnowledgeFixture>,
    /// Canned outputs per host and exact command.
    #[serde(default)]
    pub outputs: Vec<OutputFixture>,
}

/// A host of the simulated fleet.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostFixture {
    /// Slug, e.g. `lxc:bridge`.
    pub slug: String,
    /// Address shown by `list_hosts`.
    #[serde(default)]
    pub address: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// FLEET-3: a Proxmox node whose guests `discover_guests` may ask for.
    #[serde(default)]
    pub proxmox: bool,
    /// SAFE-1: `before-change` on a node snapshots its guests before a change (the
    /// simulated node answers the snapshot commands itself).
    #[serde(default)]
    pub snapshot: Option<SnapshotFixture>,
}

/// SAFE-1: a host fixture's `snapshot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SnapshotFixture {
    /// Snapshot before a change.
    BeforeChange,
    /// No snapshot.
    Never,
}

/// An entity.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityFixture {
    /// Slug.
    pub slug: String,
    /// Kind (defaults to the slug's prefix).
    #[serde(default)]
    pub kind: Option<String>,
    /// Name (defaults to the slug's suffix).
    #[serde(default)]
    pub name: Option<String>,
    /// Attributes (a mapping).
    #[serde(default)]
    pub attributes: BTreeMap<String, yaml_serde::Value>,
}

/// A relationship.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelationshipFixture {
    /// Source slug.
    pub from: String,
    /// Kind.
    pub kind: String,
    /// Target slug.
    pub to: String,
}

/// A knowledge entry, written `age_days` before the case starts.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnowledgeFixture {
    /// Key.
    pub key: String,
    /// Title.
    pub title: String,
    /// Content.
    pub content: String,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Entity slugs.
    #[serde(default)]
    pub about: Vec<String>,
    /// How old it is.
    #[serde(default)]
    pub age_days: i64,
}

/// What a command prints on a host.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputFixture {
    /// Host slug.
    pub host: String,
    /// The exact command string.
    pub command: String,
    /// Standard output.
    #[serde(default)]
    pub stdout: String,
    /// Standard error.
    #[serde(default)]
    pub stderr: String,
    /// Exit code (default 0).
    #[serde(default)]
    pub exit_code: i32,
    /// The command never returns (to leave an execution `running` for a restart).
    #[serde(default)]
    pub hang: bool,
}

/// One operator step. Exactly one action key per step; `model` holds the stub model's
/// replies for the turn the step starts (ignored against a real model).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Send an operator message.
    #[serde(default)]
    pub say: Option<String>,
    /// Approve a pending approval (`latest` or its 1-based index in request order).
    #[serde(default)]
    pub approve: Option<Pick>,
    /// Deny a pending approval.
    #[serde(default)]
    pub deny: Option<Pick>,
    /// Let pending approvals expire: advance past their expiry and sweep.
    #[serde(default)]
    pub expire_approvals: Option<bool>,
    /// Advance virtual time by this many minutes, running a sweep every 5 minutes.
    #[serde(default)]
    pub wait_minutes: Option<i64>,
    /// Advance virtual time by this many minutes with no sweep in between (what a decision
    /// meets when no sweep ran since its approval expired).
    #[serde(default)]
    pub advance_minutes: Option<i64>,
    /// The operator's client disconnected and reconnected: resume (RESUME-1).
    #[serde(default)]
    pub reconnect: Option<bool>,
    /// Nomos restarts: in-flight work is dropped and the start-up reconcile runs.
    #[serde(default)]
    pub restart: Option<bool>,
    /// The stub model's replies for this step's turn.
    #[serde(default)]
    pub model: Vec<yaml_serde::Value>,
}

/// Which approval a decision names.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Pick {
    /// `latest`.
    Named(PickName),
    /// 1-based index in request order.
    Index(usize),
}

/// Named picks.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PickName {
    /// The most recent pending approval.
    Latest,
}

/// The action of a step, validated.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Operator message.
    Say(String),
    /// Decision.
    Decide(Pick, nomos_core::Decision),
    /// Expire pending approvals.
    ExpireApprovals,
    /// Advance time, sweeping.
    Wait(i64),
    /// Advance time, not sweeping.
    Advance(i64),
    /// Resume after a reconnect.
    Reconnect,
    /// Restart the runtime.
    Restart,
}

impl Step {
    /// The step's one action, or what is wrong with it.
    pub fn action(&self) -> Result<Action, String> {
        let mut actions = Vec::new();
        if let Some(text) = &self.say {
            actions.push(Action::Say(text.clone()));
        }
        if let Some(pick) = &self.approve {
            actions.push(Action::Decide(pick.clone(), nomos_core::Decision::Approve));
        }
        if let Some(pick) = &self.deny {
            actions.push(Action::Decide(pick.clone(), nomos_core::Decision::Deny));
        }
        if self.expire_approvals == Some(true) {
            actions.push(Action::ExpireApprovals);
        }
        if let Some(minutes) = self.wait_minutes {
            if minutes <= 0 {
                return Err(format!("wait_minutes must be positive, got {minutes}"));
            }
            actions.push(Action::Wait(minutes));
        }
        if let Some(minutes) = self.advance_minutes {
            if minutes <= 0 {
                return Err(format!("advance_minutes must be positive, got {minutes}"));
            }
            actions.push(Action::Advance(minutes));
        }
        if self.reconnect == Some(true) {
            actions.push(Action::Reconnect);
        }
        if self.restart == Some(true) {
            actions.push(Action::Restart);
        }
        match actions.len() {
            1 => Ok(actions.remove(0)),
            0 => Err("a step needs one action: say, approve, deny, expire_approvals, wait_minutes, advance_minutes, reconnect or restart".to_owned()),
            n => Err(format!("a step takes one action, this one has {n}")),
        }
    }
}

/// A bound on a count: a bare number means exactly.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Count {
    /// Exactly this many.
    Exactly(u32),
    /// Within bounds.
    Bounds(CountBounds),
}

/// Bounds of a count.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CountBounds {
    /// At least.
    #[serde(default)]
    pub at_least: Option<u32>,
    /// At most.
    #[serde(default)]
    pub at_most: Option<u32>,
    /// Exactly.
    #[serde(default)]
    pub exactly: Option<u32>,
}

impl Count {
    /// Whether `n` satisfies the bound, and how it reads.
    pub fn check(&self, n: u32) -> Result<(), String> {
        let (at_least, at_most) = match self {
            Count::Exactly(e) => (Some(*e), Some(*e)),
            Count::Bounds(b) => match b.exactly {
                Some(e) => (Some(e), Some(e)),
                None => (b.at_least, b.at_most),
            },
        };
        if at_least.is_none() && at_most.is_none() {
            return Err(
                "the count has no bound (use a number, exactly, at_least or at_most)".to_owned(),
            );
        }
        if at_least.is_some_and(|min| n < min) || at_most.is_some_and(|max| n > max) {
            let want = match (at_least, at_most) {
                (Some(a), Some(b)) if a == b => format!("exactly {a}"),
                (Some(a), Some(b)) => format!("between {a} and {b}"),
                (Some(a), None) => format!("at least {a}"),
                (None, Some(b)) => format!("at most {b}"),
                (None, None) => String::new(),
            };
            return Err(format!("expected {want}, got {n}"));
        }
        Ok(())
    }
}

/// Assertions on what happened in a case.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The session's final status.
    #[serde(default)]
    pub status: Option<SessionStatus>,
    /// Tool calls by name.
    #[serde(default)]
    pub tool_calls: BTreeMap<String, Count>,
    /// Calls whose arguments contain a text.
    #[serde(default)]
    pub arguments: Vec<ArgumentMatch>,
    /// Refused calls, with a text their result contains.
    #[serde(default)]
    pub refused: Vec<RefusedMatch>,
    /// The plan's shape.
    #[serde(default)]
    pub plan: Option<PlanExpect>,
    /// Executions by class and status.
    #[serde(default)]
    pub executions: Vec<ExecutionExpect>,
    /// How many approvals were requested.
    #[serde(default)]
    pub approvals_requested: Option<Count>,
    /// GATE-10: approval requests that carry a preview, and what they show.
    #[serde(default)]
    pub approvals: Vec<ApprovalExpect>,
    /// Event kinds that must appear in this order (other events may come between).
    #[serde(default)]
    pub events_in_order: Vec<String>,
    /// Text the assistant's replies contain, together.
    #[serde(default)]
    pub reply_contains: Vec<String>,
    /// Text the assistant's replies never contain.
    #[serde(default)]
    pub reply_not_contains: Vec<String>,
    /// Text the stored output of some execution contains: what the console's API returns to
    /// the operator (SECRET-2: the original, whatever the model read).
    #[serde(default)]
    pub execution_output_contains: Vec<String>,
    /// Text no stored tool result (what the model reads) contains.
    #[serde(default)]
    pub tool_results_not_contain: Vec<String>,
    /// How many turns failed (`turn.done` with an error).
    #[serde(default)]
    pub turn_errors: Option<Count>,
    /// Entries of the derived activity log by kind and state.
    #[serde(default)]
    pub activity: Vec<ActivityExpect>,
    /// How many turns are known to stay open at the end (`turn.started` without `turn.done`);
    /// default 0. The TURN-1 check allows exactly this many.
    #[serde(default)]
    pub turns_left_open: Option<u32>,
    /// How many operator steps were refused (a late decision, a message during a turn).
    /// Without it, any refused step fails the case.
    #[serde(default)]
    pub refused_steps: Option<Count>,
}

impl Expect {
    /// EVAL-5: every tool name and event kind an assertion names exists, so that no
    /// assertion holds because it asked about nothing.
    pub fn check_names(&self) -> Result<(), String> {
        let tools: Vec<String> = nomos_agent::tools::builtin_specs()
            .into_iter()
            .map(|s| s.name)
            .collect();
        let named = self
            .tool_calls
            .keys()
            .map(|t| ("tool_calls", t))
            .chain(self.arguments.iter().map(|a| ("arguments", &a.tool)))
            .chain(self.refused.iter().map(|r| ("refused", &r.tool)));
        for (key, tool) in named {
            if !tools.contains(tool) {
                return Err(format!(
                    "{key}: unknown tool `{tool}`; the tools are {}",
                    tools.join(", ")
                ));
            }
        }
        for kind in &self.events_in_order {
            if !nomos_core::event::DomainEvent::KINDS.contains(&kind.as_str()) {
                return Err(format!(
                    "events_in_order: unknown event kind `{kind}`; the kinds are {}",
                    nomos_core::event::DomainEvent::KINDS.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// A call of `tool` whose arguments contain `contains`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgumentMatch {
    /// Tool name.
    pub tool: String,
    /// Text the arguments contain.
    pub contains: String,
    /// How many such calls (default: at least 1).
    #[serde(default)]
    pub count: Option<Count>,
}

/// A refused call of `tool` whose result contains `contains`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusedMatch {
    /// Tool name.
    pub tool: String,
    /// Text the refusal contains.
    #[serde(default)]
    pub contains: Option<String>,
    /// How many (default: at least 1).
    #[serde(default)]
    pub count: Option<Count>,
}

/// The plan's shape.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanExpect {
    /// The current generation.
    #[serde(default)]
    pub generation: Option<u32>,
    /// How many steps the current generation has.
    #[serde(default)]
    pub n_steps: Option<u32>,
    /// Statuses of the current generation's steps, in seq order.
    #[serde(default)]
    pub statuses: Option<Vec<StepStatus>>,
    /// How many steps of older generations are `replaced`.
    #[serde(default)]
    pub replaced: Option<Count>,
    /// How many steps of any generation are `running` (SESSION-5: a replaced plan leaves
    /// none).
    #[serde(default)]
    pub running_anywhere: Option<Count>,
}

/// Activity entries of a kind (and state).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActivityExpect {
    /// Kind.
    #[serde(default)]
    pub kind: Option<nomos_core::activity::ActivityKind>,
    /// State.
    #[serde(default)]
    pub state: Option<nomos_core::activity::EntryState>,
    /// How many.
    pub count: Count,
}

/// Executions of a class (and status).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutionExpect {
    /// Kind: `command` (the default) or `preview` (GATE-10).
    #[serde(default)]
    pub kind: Option<nomos_core::record::ExecutionKind>,
    /// Class.
    #[serde(default)]
    pub class: Option<CommandClass>,
    /// Status.
    #[serde(default)]
    pub status: Option<ExecutionStatus>,
    /// How many.
    pub count: Count,
}

/// Approval requests with a given card note and preview (GATE-9, GATE-10).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalExpect {
    /// Text the card's note (why it was asked) contains.
    #[serde(default)]
    pub note_contains: Option<String>,
    /// Whether it carries a preview.
    #[serde(default)]
    pub preview: Option<bool>,
    /// Text the preview's diff contains.
    #[serde(default)]
    pub diff_contains: Option<String>,
    /// Its status (`pending`, `approved`, `denied`...).
    #[serde(default)]
    pub status: Option<nomos_core::ApprovalStatus>,
    /// How many.
    pub count: Count,
}

/// Why a manifest could not be used (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The YAML does not fit the format (names the key and line).
    #[error("{origin}: {message}")]
    Format {
        /// The file.
        origin: String,
        /// What and where.
        message: String,
    },
    /// A case breaks a rule of the format.
    #[error("{origin}: case `{case}`: {message}")]
    Case {
        /// The file.
        origin: String,
        /// The case.
        case: String,
        /// What is wrong.
        message: String,
    },
}

impl Manifest {
    /// Parses and validates a manifest; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Manifest, ManifestError> {
        let manifest: Manifest = yaml_serde::from_str(text).map_err(|e| ManifestError::Format {
            origin: origin.to_owned(),
            message: e.to_string(),
        })?;
        let mut names = std::collections::BTreeSet::new();
        for case in &manifest.cases {
            let fail = |message: String| ManifestError::Case {
                origin: origin.to_owned(),
                case: case.name.clone(),
                message,
            };
            if !names.insert(case.name.clone()) {
                return Err(fail("duplicate case name".to_owned()));
            }
            if case.steps.is_empty() {
                return Err(fail("a case needs at least one step".to_owned()));
            }
            for (idx, step) in case.steps.iter().enumerate() {
                step.action()
                    .map_err(|m| fail(format!("step {}: {m}", idx + 1)))?;
                for (n, reply) in step.model.iter().enumerate() {
                    nomos_llm::ScriptedModel::from_yaml_value(yaml_serde::Value::Sequence(vec![
                        reply.clone(),
                    ]))
                    .map_err(|e| fail(format!("step {} model reply {}: {e}", idx + 1, n + 1)))?;
                }
            }
            case.expect.check_names().map_err(fail)?;
            let counts = case
                .expect
                .tool_calls
                .values()
                .chain(
                    case.expect
                        .arguments
                        .iter()
                        .filter_map(|a| a.count.as_ref()),
                )
                .chain(case.expect.refused.iter().filter_map(|r| r.count.as_ref()))
                .chain(case.expect.executions.iter().map(|e| &e.count))
                .chain(case.expect.activity.iter().map(|a| &a.count))
                .chain(case.expect.approvals_requested.iter())
                .chain(case.expect.turn_errors.iter())
                .chain(case.expect.refused_steps.iter());
            for count in counts {
                if let Count::Bounds(b) = count
                    && b.at_least.is_none()
                    && b.at_most.is_none()
                    && b.exactly.is_none()
                {
                    return Err(fail(
                        "a count has no bound (use a number, exactly, at_least or at_most)"
                            .to_owned(),
                    ));
                }
            }
        }
        Ok(manifest)
    }

    /// Reads and parses a manifest file.
    pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Manifest::parse(&text, &path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: EVAL-1
    #[test]
    fn unknown_key_is_named_with_its_line() {
        let err = Manifest::parse(
            "cases:\n  - name: a\n    steps: [{say: hi}]\n    expct: {}\n",
            "golden.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("golden.yaml"), "{err}");
        assert!(err.contains("expct"), "{err}");
        assert!(err.contains("line 4"), "{err}");
    }

    #[test]
    fn step_with_two_actions_is_refused() {
        let err = Manifest::parse(
            "cases:\n  - name: a\n    steps: [{say: hi, reconnect: true}]\n",
            "m",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("case `a`: step 1: a step takes one action"),
            "{err}"
        );
    }

    #[test]
    fn unknown_status_spelling_is_a_manifest_error() {
        let err = Manifest::parse(
            "cases:\n  - name: a\n    steps: [{say: hi}]\n    expect: {status: finished}\n",
            "m",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("finished"), "{err}");
    }

    // rule: EVAL-5
    #[test]
    fn unknown_tool_names_and_event_kinds_in_assertions_are_manifest_errors() {
        let check = |expect: &str| {
            Manifest::parse(
                &format!("cases:\n  - name: a\n    steps: [{{say: hi}}]\n    expect: {expect}\n"),
                "m",
            )
            .map(|_| ())
            .map_err(|e| e.to_string())
        };
        let err = check("{tool_calls: {runn: 0}}").unwrap_err();
        assert!(err.contains("tool_calls: unknown tool `runn`"), "{err}");
        let err = check("{refused: [{tool: propose_plans}]}").unwrap_err();
        assert!(
            err.contains("refused: unknown tool `propose_plans`"),
            "{err}"
        );
        let err = check("{arguments: [{tool: rum, contains: x}]}").unwrap_err();
        assert!(err.contains("arguments: unknown tool `rum`"), "{err}");
        let err = check("{events_in_order: [turn.start]}").unwrap_err();
        assert!(err.contains("unknown event kind `turn.start`"), "{err}");
        let err = check("{executions: [{status: finished, count: 1}]}").unwrap_err();
        assert!(err.contains("finished"), "{err}");
        check("{tool_calls: {run: 0, get_execution_output: 0}, events_in_order: [turn.done]}")
            .unwrap();
    }

    // rule: EVAL-4
    #[test]
    fn a_case_is_for_the_stub_unless_it_says_any() {
        let manifest = Manifest::parse(
            "cases:\n  - name: a\n    steps: [{say: hi}]\n  - name: b\n    model: any\n    steps: [{say: hi}]\n",
            "m",
        )
        .unwrap();
        assert_eq!(manifest.cases[0].model, CaseModel::Stub);
        assert_eq!(manifest.cases[1].model, CaseModel::Any);
        let err = Manifest::parse(
            "cases:\n  - name: a\n    model: gpt\n    steps: [{say: hi}]\n",
            "m",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("gpt"), "{err}");
    }

    #[test]
    fn counts_read_as_bounds() {
        assert!(Count::Exactly(1).check(1).is_ok());
        assert_eq!(
            Count::Exactly(0).check(2),
            Err("expected exactly 0, got 2".to_owned())
        );
        let at_most = Count::Bounds(CountBounds {
            at_most: Some(1),
            ..CountBounds::default()
        });
        assert!(at_most.check(0).is_ok());
        assert_eq!(
            at_most.check(2),
            Err("expected at most 1, got 2".to_owned())
        );
    }
}
