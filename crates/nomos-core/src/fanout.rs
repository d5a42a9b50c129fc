//! One command on many hosts (FLEET-1, FLEET-2): resolving a group to its hosts, the
//! fan-out record that links one execution per host, and the compact per-host table the
//! model reads.
//!
//! A group is `tag:NAME` (every inventory host carrying that tag) or an explicit list of
//! host slugs. The session (`session/fanout.rs`) classifies the command once, asks for at
//! most one approval bound to the command and the exact host set, creates one execution
//! per host and starts them in a rolling window of `max_parallel`; once `max_failures`
//! hosts failed no new host starts and the rest are skipped.
//!
//! FLEET-5: a fan-out may have a canary, its first N hosts. They run alone; when every one
//! of them passed, the rest wait for an approval of their own, bound to the same command
//! and the remaining host set; when one did not pass, the rest are skipped.

use serde::{Deserialize, Serialize};

use crate::id::{ExecutionId, SessionId};
use crate::ports::exec::HostInfo;
use crate::record::Execution;
use crate::status::{CommandClass, ExecutionStatus};
use crate::time::Timestamp;

/// The id of one fan-out, derived from its session like every id a session makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FanoutId(pub uuid::Uuid);

impl std::fmt::Display for FanoutId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// FLEET-2: the rolling window's limits of one fan-out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FanoutLimits {
    /// At most this many hosts run at once.
    pub max_parallel: u32,
    /// After this many failed hosts no new host starts.
    pub max_failures: u32,
}

impl FanoutLimits {
    /// The values SPEC.md names: 10 at once, stop after the first failure.
    pub fn spec_defaults() -> FanoutLimits {
        FanoutLimits {
            max_parallel: 10,
            max_failures: 1,
        }
    }

    /// A call's limits: its overrides within `max_parallel_cap` (the configured maximum),
    /// the defaults where it gives none. Zero is refused, naming the argument.
    pub fn for_call(
        defaults: FanoutLimits,
        max_parallel_cap: u32,
        max_parallel: Option<u32>,
        max_failures: Option<u32>,
    ) -> Result<FanoutLimits, GroupError> {
        let parallel = max_parallel.unwrap_or(defaults.max_parallel);
        if parallel == 0 || parallel > max_parallel_cap {
            return Err(GroupError::Limit(format!(
                "`max_parallel` must be between 1 and {max_parallel_cap}, got {parallel}"
            )));
        }
        let failures = max_failures.unwrap_or(defaults.max_failures);
        if failures == 0 {
            return Err(GroupError::Limit(
                "`max_failures` must be at least 1".to_owned(),
            ));
        }
        Ok(FanoutLimits {
            max_parallel: parallel,
            max_failures: failures,
        })
    }
}

/// One host of a fan-out and the execution that runs the command there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FanoutHost {
    /// Host slug.
    pub host: String,
    /// Its execution.
    pub execution_id: ExecutionId,
}

/// FLEET-1: one `run` on a group. Never changes once created; each host's state is its
/// execution's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fanout {
    /// Derived from the session and a counter.
    pub id: FanoutId,
    /// The owning session.
    pub session_id: SessionId,
    /// The model's tool-call id that asked for it.
    pub tool_call_id: Option<String>,
    /// How the group was named: `tag:NAME`, or `hosts` for a list.
    pub group: String,
    /// The exact command every host runs (EXEC-7).
    pub command: String,
    /// Its class, decided once.
    pub class: CommandClass,
    /// The hosts in the order they start, each with its execution.
    pub hosts: Vec<FanoutHost>,
    /// The rolling window's limits.
    pub limits: FanoutLimits,
    /// When it was requested.
    pub created_at: Timestamp,
    /// FLEET-5: how many hosts, from the first, run before the rest wait for the
    /// operator; 0 for none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub canary: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Fanout {
    /// Whether the execution is one of this fan-out's.
    pub fn contains(&self, execution_id: ExecutionId) -> bool {
        self.hosts.iter().any(|h| h.execution_id == execution_id)
    }

    /// The host slugs, in start order.
    pub fn host_slugs(&self) -> Vec<String> {
        self.hosts.iter().map(|h| h.host.clone()).collect()
    }

    /// FLEET-5: the hosts that run first, alone (none without a canary).
    pub fn canary_hosts(&self) -> &[FanoutHost] {
        &self.hosts[..self.canary_len()]
    }

    /// FLEET-5: the hosts that wait for the canary (all of them without one).
    pub fn rest_hosts(&self) -> &[FanoutHost] {
        &self.hosts[self.canary_len()..]
    }

    /// FLEET-5: the hosts one approval that names `execution_id` covers: the canary when
    /// it is one of the canary's, the rest when it is one of theirs, every host when the
    /// fan-out has no canary.
    pub fn phase_of(&self, execution_id: ExecutionId) -> &[FanoutHost] {
        let split = self.canary_len();
        if split == 0 {
            return &self.hosts;
        }
        match self
            .hosts
            .iter()
            .position(|h| h.execution_id == execution_id)
        {
            Some(at) if at < split => &self.hosts[..split],
            Some(_) => &self.hosts[split..],
            None => &self.hosts,
        }
    }

    fn canary_len(&self) -> usize {
        (self.canary as usize).min(self.hosts.len())
    }
}

/// FLEET-5: how many hosts of a group of `hosts` run first. A call's `canary` is taken as
/// given, from 0 (none) to one less than the group; without one, a group of more than one
/// host that a policy tag covers (`required_by`) gets a canary of one host. A call that
/// asks for no canary where the policy requires one is refused, naming the tag.
pub fn canary_size(
    requested: Option<u32>,
    required_by: Option<&str>,
    hosts: usize,
) -> Result<u32, GroupError> {
    match (requested, required_by) {
        (Some(0), Some(tag)) if hosts > 1 => Err(GroupError::Limit(format!(
            "a canary is required for hosts tagged `{tag}`: give `canary` of at least 1, or leave it out for 1"
        ))),
        (Some(n), _) if n > 0 && n as usize >= hosts => Err(GroupError::Limit(format!(
            "`canary` must be less than the group's {hosts} host(s), got {n}: a canary leaves at least one host for the rest"
        ))),
        (Some(n), _) => Ok(n),
        (None, Some(_)) if hosts > 1 => Ok(1),
        (None, _) => Ok(0),
    }
}

/// FLEET-5: the first of the policy's canary tags that a host of the group carries.
pub fn canary_required_by<'a>(
    hosts: &[String],
    inventory: &[HostInfo],
    canary_tags: &'a [String],
) -> Option<&'a str> {
    canary_tags
        .iter()
        .find(|tag| {
            inventory
                .iter()
                .filter(|h| hosts.contains(&h.slug))
                .any(|h| h.tags.contains(tag))
        })
        .map(String::as_str)
}

/// FLEET-5: how the canary of a fan-out stands, from its hosts' states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CanaryVerdict {
    /// A canary host has not ended yet.
    Running,
    /// Every canary host ran and exited 0.
    Passed,
    /// These canary hosts ended without passing (failed, skipped or cancelled).
    Failed(Vec<usize>),
}

/// FLEET-5: the verdict over the canary's states: passed only when every host is `ok`.
pub fn canary_verdict(states: &[HostState]) -> CanaryVerdict {
    if states.iter().any(|s| !s.is_terminal()) {
        return CanaryVerdict::Running;
    }
    let failed: Vec<usize> = states
        .iter()
        .enumerate()
        .filter(|(_, s)| **s != HostState::Ok)
        .map(|(i, _)| i)
        .collect();
    if failed.is_empty() {
        CanaryVerdict::Passed
    } else {
        CanaryVerdict::Failed(failed)
    }
}

/// Why a group could not be resolved to hosts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    /// No host carries the tag.
    #[error("no host carries tag `{tag}`; tags in the inventory: {}", known.join(", "))]
    UnknownTag {
        /// The tag asked for.
        tag: String,
        /// The tags that exist.
        known: Vec<String>,
    },
    /// A listed host is not in the inventory.
    #[error("unknown host `{host}` in `hosts`; known hosts: {}", known.join(", "))]
    UnknownHost {
        /// The slug asked for.
        host: String,
        /// The slugs that exist.
        known: Vec<String>,
    },
    /// The group names no host.
    #[error("the group names no host")]
    Empty,
    /// A limit argument is out of range.
    #[error("{0}")]
    Limit(String),
}

/// FLEET-1: the hosts of a group, in inventory order for a tag and in the given order
/// for a list (duplicates dropped). `target` is `tag:NAME`; `list` is the `hosts` array.
pub fn resolve_tag(tag: &str, inventory: &[HostInfo]) -> Result<Vec<String>, GroupError> {
    let hosts: Vec<String> = inventory
        .iter()
        .filter(|h| h.tags.iter().any(|t| t == tag))
        .map(|h| h.slug.clone())
        .collect();
    if hosts.is_empty() {
        let mut known: Vec<String> = inventory.iter().flat_map(|h| h.tags.clone()).collect();
        known.sort();
        known.dedup();
        return Err(GroupError::UnknownTag {
            tag: tag.to_owned(),
            known,
        });
    }
    Ok(hosts)
}

/// FLEET-1: an explicit list of hosts, each checked against the inventory.
pub fn resolve_list(list: &[String], inventory: &[HostInfo]) -> Result<Vec<String>, GroupError> {
    let mut hosts: Vec<String> = Vec::with_capacity(list.len());
    for host in list {
        if !inventory.iter().any(|h| &h.slug == host) {
            return Err(GroupError::UnknownHost {
                host: host.clone(),
                known: inventory.iter().map(|h| h.slug.clone()).collect(),
            });
        }
        if !hosts.contains(host) {
            hosts.push(host.clone());
        }
    }
    if hosts.is_empty() {
        return Err(GroupError::Empty);
    }
    Ok(hosts)
}

/// GATE-7 for a group: the host part of the binding is the exact host set, sorted so the
/// same set always binds the same way, one slug per line.
pub fn host_set_binding(hosts: &[String]) -> String {
    let mut sorted = hosts.to_vec();
    sorted.sort();
    sorted.join("\n")
}

/// How one host of a fan-out stands, derived from its execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostState {
    /// Waiting for the approval that covers the fan-out.
    PendingApproval,
    /// Waiting for a free slot in the window.
    Queued,
    /// Running now.
    Running,
    /// Ran and exited 0.
    Ok,
    /// Ran and exited non-zero, or could not run (unreachable, timed out).
    Failed,
    /// Never started: the fan-out stopped after `max_failures` failures (FLEET-2).
    Skipped,
    /// Denied, expired or cancelled before it started.
    Cancelled,
}

impl HostState {
    /// The state's name in tables and JSON.
    pub fn as_str(&self) -> &'static str {
        match self {
            HostState::PendingApproval => "pending_approval",
            HostState::Queued => "queued",
            HostState::Running => "running",
            HostState::Ok => "ok",
            HostState::Failed => "failed",
            HostState::Skipped => "skipped",
            HostState::Cancelled => "cancelled",
        }
    }

    /// FLEET-2: whether the host counts against `max_failures`.
    pub fn is_failure(&self) -> bool {
        *self == HostState::Failed
    }

    /// Whether the host is done: it ran, or it never will.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            HostState::Ok | HostState::Failed | HostState::Skipped | HostState::Cancelled
        )
    }
}

/// The error text of a host skipped by FLEET-2; [`host_state`] reads it back.
pub const SKIPPED_PREFIX: &str = "skipped: ";

/// The state of one host from its execution.
pub fn host_state(execution: &Execution) -> HostState {
    match execution.status {
        ExecutionStatus::PendingApproval => HostState::PendingApproval,
        ExecutionStatus::Approved => HostState::Queued,
        // SAFE-3: an armed change has run; it waits for Confirm.
        ExecutionStatus::Running | ExecutionStatus::Armed => HostState::Running,
        ExecutionStatus::Completed => {
            let exit = execution.output.as_ref().and_then(|o| o.exit_code);
            if exit == Some(0) {
                HostState::Ok
            } else {
                HostState::Failed
            }
        }
        ExecutionStatus::Failed | ExecutionStatus::Reverted => HostState::Failed,
        ExecutionStatus::Cancelled => {
            let skipped = execution
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with(SKIPPED_PREFIX));
            if skipped {
                HostState::Skipped
            } else {
                HostState::Cancelled
            }
        }
    }
}

/// FLEET-2: the tool result of a fan-out, one row per host (host, state, exit, duration,
/// first and last output line, bytes cut), then the hosts not started, within `cap`
/// bytes however many hosts there are. When the full rows do not fit, the output lines
/// are dropped first, then the rows of hosts that succeeded are folded into one line, and
/// the full output of each host stays in its execution (`get_execution_output`).
pub fn summary_table(fanout: &Fanout, executions: &[Execution], cap: usize) -> String {
    let rows: Vec<(&FanoutHost, Option<&Execution>)> = fanout
        .hosts
        .iter()
        .map(|h| (h, executions.iter().find(|e| e.id == h.execution_id)))
        .collect();
    let states: Vec<HostState> = rows
        .iter()
        .map(|(_, e)| e.map_or(HostState::Cancelled, host_state))
        .collect();
    let count = |s: HostState| states.iter().filter(|x| **x == s).count();
    let head = format!(
        "fan-out {} on {} ({} hosts): {} ok, {} failed, {} skipped, {} cancelled, {} not finished\nhost | state | exit | ms | cut | first line | last line | execution",
        fanout.group,
        fanout.command,
        rows.len(),
        count(HostState::Ok),
        count(HostState::Failed),
        count(HostState::Skipped),
        count(HostState::Cancelled),
        count(HostState::PendingApproval) + count(HostState::Queued) + count(HostState::Running),
    );
    let skipped: Vec<&str> = rows
        .iter()
        .zip(&states)
        .filter(|(_, s)| **s == HostState::Skipped)
        .map(|((h, _), _)| h.host.as_str())
        .collect();
    let split = fanout.canary_hosts().len();
    let canary = (split > 0).then(|| canary_verdict(&states[..split]));
    let tail = match (&canary, skipped.is_empty()) {
        (Some(CanaryVerdict::Failed(_)), false) => format!(
            "\nnot started (the canary did not pass): {}",
            skipped.join(", ")
        ),
        (_, false) => format!(
            "\nnot started (max_failures = {} reached): {}",
            fanout.limits.max_failures,
            skipped.join(", ")
        ),
        (Some(CanaryVerdict::Passed), true)
            if states[split..]
                .iter()
                .all(|s| *s == HostState::PendingApproval) =>
        {
            format!(
                "\ncanary passed on {}; the other {} host(s) have not run: they wait for the operator's approval of the rest. STOP and wait for the operator; do not run the command again.",
                rows[..split]
                    .iter()
                    .map(|(h, _)| h.host.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                rows.len() - split
            )
        }
        _ => String::new(),
    };
    for detail in [Detail::Lines(120), Detail::Lines(40), Detail::None] {
        let body: Vec<String> = rows
            .iter()
            .zip(&states)
            .map(|((h, e), s)| row(h, *e, *s, detail))
            .collect();
        let text = format!("{head}\n{}{tail}", body.join("\n"));
        if text.len() <= cap {
            return text;
        }
    }
    // Fold the hosts that succeeded into one line; failures keep their rows.
    let ok: Vec<&str> = rows
        .iter()
        .zip(&states)
        .filter(|(_, s)| **s == HostState::Ok)
        .map(|((h, _), _)| h.host.as_str())
        .collect();
    let mut body: Vec<String> = rows
        .iter()
        .zip(&states)
        .filter(|(_, s)| **s != HostState::Ok && **s != HostState::Skipped)
        .map(|((h, e), s)| row(h, *e, *s, Detail::None))
        .collect();
    if !ok.is_empty() {
        body.insert(
            0,
            format!("{} hosts ok (exit 0): {}", ok.len(), ok.join(", ")),
        );
    }
    let text = format!("{head}\n{}{tail}", body.join("\n"));
    fit(text, cap)
}

#[derive(Clone, Copy)]
enum Detail {
    Lines(usize),
    None,
}

fn row(
    host: &FanoutHost,
    execution: Option<&Execution>,
    state: HostState,
    detail: Detail,
) -> String {
    let output = execution.and_then(|e| e.output.as_ref());
    let exit = match output {
        Some(o) => match (o.exit_code, &o.signal) {
            (Some(code), _) => code.to_string(),
            (None, Some(signal)) => format!("sig {signal}"),
            (None, None) => "-".to_owned(),
        },
        None => "-".to_owned(),
    };
    let ms = output.map_or("-".to_owned(), |o| o.duration_ms.to_string());
    let cut = output.map_or(0, |o| o.stdout_cut + o.stderr_cut);
    let (first, last) = match (detail, output, execution) {
        (Detail::None, _, _) => (String::new(), String::new()),
        (Detail::Lines(width), Some(o), _) => {
            let text = if o.stdout.trim().is_empty() {
                &o.stderr
            } else {
                &o.stdout
            };
            // SECRET-2: the rows are for the model, and a cut line could leave half a
            // secret the scanner no longer knows, so the whole output is redacted first.
            let text = nomos_redact::Scanner::builtin().redact(text).text;
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let first = lines.first().map_or(String::new(), |l| clip(l, width));
            let last = if lines.len() > 1 {
                lines.last().map_or(String::new(), |l| clip(l, width))
            } else {
                String::new()
            };
            (first, last)
        }
        (Detail::Lines(width), None, Some(e)) => (
            e.error.as_deref().map_or(String::new(), |t| clip(t, width)),
            String::new(),
        ),
        (Detail::Lines(_), None, None) => (String::new(), String::new()),
    };
    format!(
        "{} | {} | {exit} | {ms} | {cut} | {first} | {last} | {}",
        host.host,
        state.as_str(),
        host.execution_id
    )
}

fn clip(line: &str, width: usize) -> String {
    let line = line.trim().replace('|', "/");
    if line.chars().count() <= width {
        return line;
    }
    let kept: String = line.chars().take(width).collect();
    format!("{kept}…")
}

fn fit(mut text: String, cap: usize) -> String {
    if text.len() <= cap {
        return text;
    }
    let note = "\n[table cut to the output cap; get_execution_output reads each host]";
    let mut end = cap.saturating_sub(note.len());
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(note);
    text
}
