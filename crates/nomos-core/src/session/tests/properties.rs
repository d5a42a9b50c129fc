//! Property tests: random sessions, driven with real command strings through the real
//! classifier and operator messages from a labelled table, agree at every step with the
//! reference model of the rules (`reference.rs`), and keep the session's invariants.
//!
//! The session is driven the way the runtime drives it: by a model shell ([`Shell`]) that
//! learns what to run only from `poll_action`, drained after every input, and (in the
//! timer-driven cases) lets time pass only through the one timer `poll_timeout` arms.
//!
//! `PROPTEST_CASES` sets the number of cases (CI keeps the default); with
//! `NOMOS_PROPS_REPORT=1` the test prints how many distinct dangerous sequences (ones that
//! tried a non-read-only command) and distinct dangerous situations it generated.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use uuid::Uuid;

use crate::classification::Classification;
use crate::event::DomainEvent;
use crate::id::{ApprovalId, ExecutionId};
use crate::record::{PlanStep, ToolCallOutcome};
use crate::status::{
    ApprovalStatus, CommandClass, Decision, ExecutionStatus, Outcome, SessionStatus, StepStatus,
};
use crate::time::{Span, Timestamp};

use super::super::{Action, KnowledgeUse, Revision, ToolInput, ToolReply};
use super::reference::{
    CallVerdict, DecisionVerdict, Label, Reading, Reference, RunVerdict, StepState, WindowState,
};
use super::{Harness, drafts};

// ---- Commands: hand-labelled parts, combined; the label is the most dangerous part's ----

/// Parts that only read (CLASSIFY-3).
const READ_ONLY_PARTS: &[&str] = &[
    "uptime",
    "df -h",
    "free -m",
    "cat /etc/hostname",
    "ls -la /var/log",
    "ps aux",
    "systemctl status nginx",
    "docker ps",
    "journalctl -u nginx --no-pager",
    "git status",
    "grep -r error /var/log/syslog",
    "head -n 20 /var/log/syslog",
    "uname -a",
    "hostname",
    "docker compose logs --tail 50",
    "ip addr show",
    "dpkg -l",
    "echo hello",
    "/usr/bin/uptime",
];

/// Parts that change state but destroy nothing (CLASSIFY-4).
const CONFIG_PARTS: &[&str] = &[
    "systemctl restart nginx",
    "systemctl reload nginx",
    "apt-get update",
    "apt-get install -y htop",
    "docker compose restart bridge",
    "docker compose pull",
    "sed -i s/a/b/ /etc/app.conf",
    "echo hi > /tmp/x",
    "tee /etc/motd",
    "touch /tmp/marker",
    "mkdir -p /srv/new",
    "chmod 644 /etc/app.conf",
    "cp /etc/a /etc/b",
];

/// Parts that destroy (CLASSIFY-4).
const DESTRUCTIVE_PARTS: &[&str] = &[
    "rm -rf /srv/old",
    "docker volume rm media_old",
    "systemctl stop nginx",
    "reboot",
    "docker compose down",
    "truncate -s 0 /var/log/syslog",
    "shred /tmp/secret",
    "docker system prune -af",
    "dd if=/dev/zero of=/dev/sdb",
];

/// Programs no rule knows (CLASSIFY-7): never read-only, always their own approval.
const UNKNOWN_PARTS: &[&str] = &["mytool --sync", "/opt/tools/cleanup --all"];

/// Variable assignments before a command: harmless, or changing what runs.
const ASSIGNMENTS: &[(&str, Label)] = &[
    ("LC_ALL=C ", Label::ReadOnly),
    ("PAGER=cat ", Label::Config),
    ("PATH=/tmp/evil:$PATH ", Label::Config),
];

/// Commands the option-by-option classifier (rev. 2 of the contract) reads as changing
/// state and the first classifier read as read-only (kept apart so they can be switched
/// off to compare the two).
const CLASSIFY6_PARTS: &[(&str, Label)] = &[
    ("export PATH=/tmp/evil:$PATH", Label::Config),
    ("export GIT_SSH_COMMAND=/tmp/x", Label::Config),
    ("set -x", Label::Config),
    ("rg --pre /tmp/x foo", Label::Config),
    ("base64 -o /tmp/out /etc/hostname", Label::Config),
];
const CLASSIFY6_PARTS_ENABLED: bool = true;

/// Whether a wrapper passes the environment every command starts with
/// (`GIT_OPTIONAL_LOCKS=0`, CLASSIFY-9) on to its command.
#[derive(Clone, Copy, Debug)]
enum PinnedEnvironment {
    Kept,
    /// `sudo` resets the environment.
    Reset,
}

/// Wrappers that run their command unchanged (CLASSIFY-2); `{}` is the command.
const WRAPPERS: &[(&str, PinnedEnvironment)] = &[
    ("sudo {}", PinnedEnvironment::Reset),
    ("timeout 30 {}", PinnedEnvironment::Kept),
    ("nice {}", PinnedEnvironment::Kept),
    ("env LC_ALL=C {}", PinnedEnvironment::Kept),
];

/// Read-only parts that take an optional lock unless `GIT_OPTIONAL_LOCKS=0` is set: under a
/// wrapper that resets the environment they write (CLASSIFY-9).
const OPTIONAL_LOCK_PARTS: &[&str] = &["git status"];

/// Shell wrappers that take the command as one quoted word (CLASSIFY-2).
const SHELL_WRAPPERS: &[&str] = &["bash -c '{}'", "sh -c '{}'"];

/// Lists and pipelines (CLASSIFY-2).
const JOINERS: &[&str] = &[" | ", "; ", " && ", " || "];

/// A command string with its hand-written label.
#[derive(Clone, Debug)]
struct Cmd {
    text: String,
    label: Label,
}

fn labelled_part() -> impl Strategy<Value = Cmd> {
    let mut parts: Vec<(String, Label)> = Vec::new();
    parts.extend(
        READ_ONLY_PARTS
            .iter()
            .map(|p| ((*p).to_owned(), Label::ReadOnly)),
    );
    parts.extend(
        CONFIG_PARTS
            .iter()
            .map(|p| ((*p).to_owned(), Label::Config)),
    );
    parts.extend(
        DESTRUCTIVE_PARTS
            .iter()
            .map(|p| ((*p).to_owned(), Label::Destructive)),
    );
    parts.extend(
        UNKNOWN_PARTS
            .iter()
            .map(|p| ((*p).to_owned(), Label::UnknownProgram)),
    );
    if CLASSIFY6_PARTS_ENABLED {
        parts.extend(CLASSIFY6_PARTS.iter().map(|(p, l)| ((*p).to_owned(), *l)));
    }
    let assignment = prop_oneof![
        6 => Just(None),
        1 => prop::sample::select(ASSIGNMENTS).prop_map(Some),
    ];
    let wrapper = prop_oneof![
        4 => Just(None),
        1 => prop::sample::select(WRAPPERS).prop_map(Some),
    ];
    (prop::sample::select(parts), assignment, wrapper).prop_map(
        |((text, label), assignment, wrapper)| {
            let mut cmd = Cmd { text, label };
            if let Some((wrapper, environment)) = wrapper {
                if matches!(environment, PinnedEnvironment::Reset)
                    && OPTIONAL_LOCK_PARTS.contains(&cmd.text.as_str())
                {
                    cmd.label = cmd.label.max(Label::Config);
                }
                cmd.text = wrapper.replace("{}", &cmd.text);
            }
            if let Some((prefix, prefix_label)) = assignment {
                cmd.text = format!("{prefix}{}", cmd.text);
                cmd.label = cmd.label.max(prefix_label);
            }
            cmd
        },
    )
}

/// What a plan declares (GATE-9): none to a few commands of any class.
fn declared() -> impl Strategy<Value = Vec<Cmd>> {
    prop::collection::vec(command(), 0..3)
}

fn command() -> impl Strategy<Value = Cmd> {
    let list = (
        labelled_part(),
        prop::collection::vec((prop::sample::select(JOINERS), labelled_part()), 0..3),
    )
        .prop_map(|(first, rest)| {
            rest.into_iter().fold(first, |acc, (joiner, next)| Cmd {
                text: format!("{}{joiner}{}", acc.text, next.text),
                label: acc.label.max(next.label),
            })
        });
    let shell = prop_oneof![
        5 => Just(None),
        1 => prop::sample::select(SHELL_WRAPPERS).prop_map(Some),
    ];
    (list, shell).prop_map(|(cmd, shell)| match shell {
        Some(shell) => Cmd {
            text: shell.replace("{}", &cmd.text),
            label: cmd.label,
        },
        None => cmd,
    })
}

// ---- Operator messages: each with the reading the operator meant (GATE-4) ----

const MESSAGES: &[(&str, Reading)] = &[
    ("yes", Reading::Assent),
    ("approved", Reading::Assent),
    ("approve", Reading::Assent),
    ("go ahead", Reading::Assent),
    ("proceed", Reading::Assent),
    ("continue", Reading::Assent),
    ("ok", Reading::Assent),
    ("okay", Reading::Assent),
    ("lgtm", Reading::Assent),
    ("do it", Reading::Assent),
    ("y", Reading::Assent),
    ("go", Reading::Assent),
    ("yes, go ahead", Reading::Assent),
    ("Procceed with the rest please", Reading::Assent),
    ("LGTM!", Reading::Assent),
    ("sounds good, approved", Reading::Assent),
    ("no", Reading::NotAssent),
    ("no, wait", Reading::NotAssent),
    ("what does step 2 do?", Reading::NotAssent),
    ("hello", Reading::NotAssent),
    ("don't proceed", Reading::NotAssent),
    ("do not proceed", Reading::NotAssent),
    ("dont proceed", Reading::NotAssent),
    ("stop", Reading::NotAssent),
    ("stopp", Reading::NotAssent),
    ("noooo", Reading::NotAssent),
    ("wait", Reading::NotAssent),
    ("hold on", Reading::NotAssent),
    ("not yet", Reading::NotAssent),
    ("later", Reading::NotAssent),
    ("check the backups first", Reading::NotAssent),
    ("can you explain step 1?", Reading::NotAssent),
    ("proceed?", Reading::NotAssent),
    ("ok but wait for the backup", Reading::NotAssent),
    ("before you start, back up the config", Reading::NotAssent),
];

/// GATE-4 rev. 2 cases the first detector read as assent; the rewritten detector reads
/// them right (kept apart so they can be switched off to compare the two).
const TRICKY_MESSAGES: &[(&str, Reading)] = &[
    ("let's go over the plan first", Reading::NotAssent),
    ("go back to step 1", Reading::NotAssent),
    ("ok so what does step 2 do", Reading::NotAssent),
    ("status: OK", Reading::NotAssent),
    ("don;t proceed", Reading::NotAssent),
    ("let's do it tonight", Reading::NotAssent),
    ("go through the logs first", Reading::NotAssent),
];
const TRICKY_MESSAGES_ENABLED: bool = true;

fn message_table() -> Vec<(&'static str, Reading)> {
    let mut table = MESSAGES.to_vec();
    if TRICKY_MESSAGES_ENABLED {
        table.extend_from_slice(TRICKY_MESSAGES);
    }
    table
}

// ---- Operations ----

/// Which approval a decision names.
#[derive(Clone, Copy, Debug)]
enum Pick {
    /// The n-th request (in request order), modulo how many exist.
    Nth(usize),
    /// An id this session never issued (a mismatched decision).
    Foreign,
}

#[derive(Clone, Debug)]
enum Op {
    Goal,
    /// `propose_plan` with n steps, the first declaring these commands (GATE-9).
    Plan(usize, Vec<Cmd>),
    /// `revise: true`, with a reason, an empty one, or none.
    Revise(usize, Option<&'static str>, Vec<Cmd>),
    /// `run` of the i-th declared command of the current plan, with stray whitespace.
    RunDeclared(usize),
    Step(u32, StepStatus),
    Say(&'static str, Reading),
    Ask,
    Run(Cmd),
    Decide(Pick, Decision),
    /// GATE-4: the explicit plan decision on the current generation plus an offset
    /// (-1: an older one, 1: one that does not exist), approving or rejecting.
    DecidePlan(i8, bool),
    /// Two decisions on the same request, one after the other.
    DecideTwice(usize, Decision, Decision),
    Finish(usize),
    Complete(Outcome),
    WriteBack,
    Advance(i64),
    Timeout,
    Commit,
}

fn op() -> impl Strategy<Value = Op> {
    let status = prop_oneof![
        4 => Just(StepStatus::Running),
        3 => Just(StepStatus::Done),
        1 => Just(StepStatus::Failed),
        2 => Just(StepStatus::Skipped),
        1 => Just(StepStatus::Replaced),
        1 => Just(StepStatus::Pending),
    ];
    let outcome = prop_oneof![
        Just(Outcome::Success),
        Just(Outcome::Failure),
        Just(Outcome::Partial)
    ];
    let decision = || prop_oneof![2 => Just(Decision::Approve), 1 => Just(Decision::Deny)];
    let reason = prop_oneof![
        3 => Just(Some("new facts")),
        1 => Just(Some("  ")),
        1 => Just(None),
    ];
    let pick = prop_oneof![
        6 => (0usize..4).prop_map(Pick::Nth),
        1 => Just(Pick::Foreign),
    ];
    prop_oneof![
        2 => Just(Op::Goal),
        3 => ((1usize..4), declared()).prop_map(|(n, d)| Op::Plan(n, d)),
        2 => ((1usize..4), reason, declared()).prop_map(|(n, r, d)| Op::Revise(n, r, d)),
        4 => (0usize..4).prop_map(Op::RunDeclared),
        6 => (1u32..5, status).prop_map(|(seq, s)| Op::Step(seq, s)),
        5 => prop::sample::select(message_table()).prop_map(|(m, r)| Op::Say(m, r)),
        1 => Just(Op::Ask),
        8 => command().prop_map(Op::Run),
        3 => (pick, decision()).prop_map(|(p, d)| Op::Decide(p, d)),
        2 => (prop_oneof![6 => Just(0i8), 1 => Just(-1i8), 1 => Just(1i8)], prop::bool::weighted(0.7))
            .prop_map(|(offset, approve)| Op::DecidePlan(offset, approve)),
        1 => (0usize..4, decision(), decision()).prop_map(|(i, a, b)| Op::DecideTwice(i, a, b)),
        1 => (0usize..6).prop_map(Op::Finish),
        1 => outcome.prop_map(Op::Complete),
        1 => Just(Op::WriteBack),
        2 => prop_oneof![3 => 1i64..10, 1 => 29i64..32, 1 => 45i64..60].prop_map(Op::Advance),
        1 => Just(Op::Timeout),
        2 => Just(Op::Commit),
    ]
}

// ---- Driving the session and the model side by side ----

fn texts(declared: &[Cmd]) -> Vec<String> {
    declared.iter().map(|c| c.text.clone()).collect()
}

/// Drafts titled `titles`, the first declaring `declared` on `local` (GATE-9).
fn declaring_drafts(titles: &[String], declared: &[Cmd]) -> Vec<crate::session::StepDraft> {
    let mut steps = drafts(&titles.iter().map(String::as_str).collect::<Vec<_>>());
    if let Some(first) = steps.first_mut() {
        first.commands = declared
            .iter()
            .map(|c| {
                crate::declared::DeclaredCommand::new(
                    "local",
                    Vec::new(),
                    c.text.clone(),
                    crate::classify::classify(&c.text),
                )
            })
            .collect();
    }
    steps
}

fn call_verdict(reply: &ToolReply) -> CallVerdict {
    match reply.outcome {
        ToolCallOutcome::Ok => CallVerdict::Accepted,
        _ => CallVerdict::Refused,
    }
}

fn run_verdict(reply: &ToolReply, actions: &[Action]) -> RunVerdict {
    match (reply.outcome, actions.first().copied()) {
        (_, Some(Action::Dispatch { .. })) => RunVerdict::Dispatch,
        (_, Some(Action::AwaitApproval { .. })) => RunVerdict::AwaitApproval,
        (ToolCallOutcome::Ok, None) => RunVerdict::AlreadyPending,
        _ => RunVerdict::Refused,
    }
}

fn step_state(status: StepStatus) -> StepState {
    match status {
        StepStatus::Pending => StepState::Pending,
        StepStatus::Running => StepState::Running,
        StepStatus::Done => StepState::Done,
        StepStatus::Failed => StepState::Failed,
        StepStatus::Skipped => StepState::Skipped,
        StepStatus::Replaced => StepState::Replaced,
    }
}

fn label_of(classification: &Classification) -> Label {
    match classification.class {
        CommandClass::Destructive => Label::Destructive,
        _ if classification.program_unknown() => Label::UnknownProgram,
        CommandClass::ReadOnly => Label::ReadOnly,
        CommandClass::ConfigMutation => Label::Config,
    }
}

/// The model shell: it learns what to run only from `poll_action`, and keeps one timer
/// armed from `poll_timeout`, as the runtime does.
#[derive(Default)]
struct Shell {
    /// Whether time passes through the timer: every deadline `poll_timeout` names fires
    /// `handle_timeout` at that deadline.
    timers: bool,
    /// Every execution the shell was told to run.
    dispatched: HashSet<ExecutionId>,
    /// Every approval the shell was told waits for the operator.
    awaited: HashSet<ApprovalId>,
}

impl Shell {
    fn with_timers() -> Shell {
        Shell {
            timers: true,
            ..Shell::default()
        }
    }

    /// Drains the queue after an input (until `None`) and checks each action against the
    /// session it came from.
    fn drain(&mut self, h: &mut Harness) -> Result<Vec<Action>, TestCaseError> {
        let mut actions = Vec::new();
        while let Some(action) = h.session.poll_action() {
            match action {
                Action::Dispatch { execution_id } => {
                    // rule: EXEC-6 — told to run once, and only what is already `running`.
                    prop_assert!(
                        self.dispatched.insert(execution_id),
                        "{} dispatched twice",
                        execution_id
                    );
                    let status = h.session.execution(execution_id).map(|e| e.status);
                    prop_assert_eq!(status, Some(ExecutionStatus::Running));
                }
                Action::AwaitApproval {
                    approval_id,
                    execution_id,
                } => {
                    // rule: GATE-7 — the shell hears only of a request that waits.
                    let waits = h.session.approvals().iter().any(|a| {
                        a.id == approval_id
                            && a.execution_id == execution_id
                            && a.status == ApprovalStatus::Pending
                    });
                    prop_assert!(waits, "{} does not wait", approval_id);
                    prop_assert!(self.awaited.insert(approval_id), "{} twice", approval_id);
                }
                Action::StartFanout { fanout_id } => {
                    // The generated inputs run single hosts only; a fan-out is never started.
                    prop_assert!(
                        false,
                        "fan-out {} started by a single-host input",
                        fanout_id
                    );
                }
            }
            actions.push(action);
        }
        // rule: EXEC-1, EXEC-6 — an execution started exactly when the shell was told to
        // run it: nothing runs that the shell was not told of, and nothing it was told of
        // is left unstarted.
        for execution in h.session.executions() {
            prop_assert_eq!(
                execution.started_at.is_some(),
                self.dispatched.contains(&execution.id),
                "execution {} ({})",
                execution.id,
                execution.status
            );
        }
        Ok(actions)
    }

    /// Lets time pass to `until` through the one timer: each deadline `poll_timeout` names
    /// on the way fires `handle_timeout` at that deadline (at `now` when already past).
    fn pass_time(
        &self,
        h: &mut Harness,
        model: &mut Reference,
        until: Timestamp,
    ) -> Result<(), TestCaseError> {
        while let Some(at) = h.session.poll_timeout().filter(|at| *at <= until) {
            let at = at.max(h.now);
            h.now = at;
            h.session.handle_timeout(at);
            model.timeout(at);
            // The timer makes progress: what it fired for is done.
            prop_assert!(
                h.session.poll_timeout().is_none_or(|next| next > at),
                "the timer would fire again for {}",
                at
            );
        }
        h.now = h.now.max(until);
        Ok(())
    }
}

/// What one case saw of dangerous attempts, for the report.
#[derive(Default)]
struct Seen {
    /// The abstract shape of the case, when it tried a non-read-only command.
    sequence: String,
    dangerous: bool,
    /// (window state, class, awaiting an answer, verdict) of each non-read-only attempt.
    situations: Vec<(WindowState, Label, bool, RunVerdict)>,
}

fn token(op: &Op) -> String {
    match op {
        Op::Goal => "g".into(),
        Op::Plan(..) => "p".into(),
        Op::Revise(_, Some(r), _) if !r.trim().is_empty() => "r".into(),
        Op::Revise(..) => "r0".into(),
        Op::RunDeclared(_) => "R".into(),
        Op::Step(seq, status) => format!("s{seq}{}", &status.as_str()[..2]),
        Op::Say(_, Reading::Assent) => "y".into(),
        Op::Say(_, Reading::NotAssent) => "n".into(),
        Op::Ask => "q".into(),
        Op::Run(cmd) => match cmd.label {
            Label::ReadOnly => ".".into(),
            Label::Config => "C".into(),
            Label::UnknownProgram => "U".into(),
            Label::Destructive => "D".into(),
        },
        Op::Decide(Pick::Foreign, _) => "x".into(),
        Op::Decide(_, Decision::Approve) => "a".into(),
        Op::Decide(_, Decision::Deny) => "d".into(),
        Op::DecideTwice(..) => "aa".into(),
        Op::DecidePlan(_, true) => "P".into(),
        Op::DecidePlan(_, false) => "X".into(),
        Op::Finish(_) => "f".into(),
        Op::Complete(_) => "c".into(),
        Op::WriteBack => "w".into(),
        Op::Advance(m) if *m >= 30 => "T".into(),
        Op::Advance(_) => "t".into(),
        Op::Timeout => "o".into(),
        Op::Commit => String::new(),
    }
}

/// Applies `op` to the session and to the model, and checks that they agree.
fn apply(
    h: &mut Harness,
    model: &mut Reference,
    shell: &mut Shell,
    op: &Op,
    seen: &mut Seen,
) -> Result<(), TestCaseError> {
    seen.sequence.push_str(&token(op));
    match op {
        Op::Goal => {
            let reply = h.goal();
            prop_assert_eq!(call_verdict(&reply), model.set_goal(), "set_goal");
        }
        Op::Plan(n, declared) => {
            let titles: Vec<String> = (0..*n).map(|i| format!("step {i}")).collect();
            let reply = h.tool(ToolInput::ProposePlan {
                steps: declaring_drafts(&titles, declared),
                revision: Revision::No,
            });
            prop_assert_eq!(
                call_verdict(&reply),
                model.propose_plan_declaring(*n, None, &texts(declared)),
                "propose_plan: {}",
                reply.text
            );
        }
        Op::Revise(n, reason, declared) => {
            let titles: Vec<String> = (0..*n).map(|i| format!("revised {i}")).collect();
            let reply = h.tool(ToolInput::ProposePlan {
                steps: declaring_drafts(&titles, declared),
                revision: Revision::Yes {
                    reason: reason.map(str::to_owned),
                },
            });
            prop_assert_eq!(
                call_verdict(&reply),
                model.propose_plan_declaring(*n, Some(*reason), &texts(declared)),
                "revise: {}",
                reply.text
            );
        }
        Op::RunDeclared(idx) => {
            let Some(text) = model.declared().get(*idx).cloned() else {
                return Ok(());
            };
            let cmd = Cmd {
                label: label_of(&crate::classify::classify(&text)),
                text: format!("  {text} "),
            };
            return apply(h, model, shell, &Op::Run(cmd), seen);
        }
        Op::Step(seq, status) => {
            let reply = h.step(*seq, *status);
            prop_assert_eq!(
                call_verdict(&reply),
                model.update_step(*seq, step_state(*status)),
                "update_plan_step({}, {}): {}",
                seq,
                status,
                reply.text
            );
        }
        Op::Say(text, reading) => {
            let effect = h.say(text);
            let expected = model.operator_message(h.now, *reading);
            prop_assert_eq!(
                effect.assented_generation,
                expected,
                "message {:?} ({:?})",
                text,
                reading
            );
        }
        Op::DecidePlan(offset, approve) => {
            h.now = h.now + Span::from_millis(10);
            let generation = h.session.record().plan_generation as i64 + i64::from(*offset);
            let generation = u32::try_from(generation).unwrap_or(0);
            let decision = if *approve {
                crate::session::PlanDecision::Approve
            } else {
                crate::session::PlanDecision::Reject
            };
            // The digest of the plan as it is now: the operator saw the current plan.
            let shown = h
                .session
                .plan_digest()
                .unwrap_or_else(|| crate::plan_digest::PlanDigest::from_client(""));
            let decided = h
                .session
                .handle_plan_decision(h.now, generation, &shown, decision, None, None);
            let verdict = if decided.is_ok() {
                CallVerdict::Accepted
            } else {
                CallVerdict::Refused
            };
            prop_assert_eq!(
                verdict,
                model.plan_decision(h.now, generation, *approve),
                "plan decision {:?} on generation {}: {:?}",
                decision,
                generation,
                decided
            );
        }
        Op::Ask => {
            let reply = h.tool(ToolInput::AskOperator {
                question: "which disk?".to_owned(),
            });
            prop_assert_eq!(call_verdict(&reply), model.ask_operator(), "ask_operator");
        }
        Op::Run(cmd) => {
            let classification: Classification = crate::classify::classify(&cmd.text);
            prop_assert_eq!(
                label_of(&classification),
                cmd.label,
                "the classifier and the hand label disagree on `{}` ({})",
                &cmd.text,
                &classification.reason
            );
            let at = h.now + Span::from_millis(10);
            let window = model.window_state(at);
            let awaiting = model.awaiting_answer();
            let expected = model.run(at, &cmd.text, cmd.label);
            let reply = h.tool(ToolInput::Run {
                host: "local".to_owned(),
                command: cmd.text.clone(),
                classification,
                preview: None,
            });
            prop_assert_eq!(h.now, at);
            let actions = shell.drain(h)?;
            prop_assert!(actions.len() <= 1, "{:?}", actions);
            prop_assert_eq!(
                reply.action,
                actions.first().copied(),
                "the reply and the queue"
            );
            let got = run_verdict(&reply, &actions);
            prop_assert_eq!(got, expected, "run `{}`: {}", &cmd.text, &reply.text);
            if cmd.label != Label::ReadOnly {
                seen.dangerous = true;
                seen.situations.push((window, cmd.label, awaiting, got));
                // rule: GATE-2, GATE-3, GATE-5 — nothing non-read-only runs at once outside
                // an assent window, and nothing destructive runs at once at all.
                if got == RunVerdict::Dispatch {
                    prop_assert_eq!(window, WindowState::Open, "`{}`", &cmd.text);
                    prop_assert_eq!(cmd.label, Label::Config, "`{}`", &cmd.text);
                    // rule: GATE-9 — and no change outside the approved declared set.
                    prop_assert!(
                        model.declared().iter().any(|d| d.trim() == cmd.text.trim()),
                        "`{}` ran without being declared",
                        &cmd.text
                    );
                }
            }
        }
        Op::Decide(pick, decision) => {
            decide(h, model, shell, *pick, *decision)?;
        }
        Op::DecideTwice(idx, first, second) => {
            decide(h, model, shell, Pick::Nth(*idx), *first)?;
            let again = decide(h, model, shell, Pick::Nth(*idx), *second)?;
            // rule: GATE-7 — a second decision on one request is always refused.
            if again.is_some() {
                prop_assert_eq!(again, Some(DecisionVerdict::Refused));
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
            let reply = h.complete(*outcome);
            prop_assert_eq!(
                call_verdict(&reply),
                model.complete(*outcome == Outcome::Success),
                "complete_task({}): {}",
                outcome,
                reply.text
            );
        }
        Op::WriteBack => {
            h.session
                .handle_knowledge_use(h.now, KnowledgeUse::WriteBack);
            model.write_back();
        }
        Op::Advance(mins) if shell.timers => {
            let until = h.now + Span::from_mins(*mins);
            shell.pass_time(h, model, until)?;
        }
        Op::Advance(mins) => h.advance(Span::from_mins(*mins)),
        Op::Timeout => {
            h.session.handle_timeout(h.now);
            model.timeout(h.now);
        }
        Op::Commit => {
            h.commit();
        }
    }
    Ok(())
}

/// One decision, on the session and the model. Returns the verdict, or `None` when there
/// was no request to name.
fn decide(
    h: &mut Harness,
    model: &mut Reference,
    shell: &mut Shell,
    pick: Pick,
    decision: Decision,
) -> Result<Option<DecisionVerdict>, TestCaseError> {
    let (approval_id, idx) = match pick {
        Pick::Foreign => (ApprovalId(Uuid::from_u128(0xdead)), None),
        Pick::Nth(_) if h.session.approvals().is_empty() => return Ok(None),
        Pick::Nth(n) => {
            let idx = n % h.session.approvals().len();
            (h.session.approvals()[idx].id, Some(idx))
        }
    };
    prop_assert_eq!(h.session.approvals().len(), model.n_approvals());
    let expected = model.decide(h.now, idx, decision == Decision::Approve);
    let res = h
        .session
        .handle_decision(h.now, approval_id, decision, None);
    let actions = shell.drain(h)?;
    prop_assert_eq!(
        res.clone().ok().flatten(),
        actions.first().copied(),
        "the answer and the queue"
    );
    let got = match res {
        Ok(_) if matches!(actions.as_slice(), [Action::Dispatch { .. }]) => {
            DecisionVerdict::Dispatch
        }
        Ok(_) => DecisionVerdict::Denied,
        Err(_) => DecisionVerdict::Refused,
    };
    prop_assert_eq!(
        got,
        expected,
        "decision {:?} on {:?}: {:?}",
        decision,
        pick,
        res
    );
    Ok(Some(got))
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

/// The invariants that hold after every op, whatever the model says.
fn check_invariants(
    h: &Harness,
    model: &Reference,
    op: &Op,
    before_steps: &HashMap<crate::id::StepId, StepStatus>,
    was_terminal: bool,
    n_step_events_before: usize,
    replaced: &mut HashMap<crate::id::StepId, PlanStep>,
) -> Result<(), TestCaseError> {
    // rule: SESSION-2 — the session waits for an answer exactly when the model says so.
    prop_assert_eq!(
        h.session.status() == SessionStatus::AwaitingInput,
        model.awaiting_answer() && !model.terminal(),
        "status {} after {:?}",
        h.session.status(),
        op
    );
    prop_assert_eq!(h.session.status().is_terminal(), model.terminal());

    // rule: PLAN-4 — a replaced step never changes, and never vanishes.
    for step in h.session.all_steps() {
        if let Some(old) = replaced.get(&step.id) {
            prop_assert_eq!(old, step);
        }
        if step.status == StepStatus::Replaced {
            replaced.entry(step.id).or_insert_with(|| step.clone());
        }
    }
    for id in replaced.keys() {
        prop_assert!(
            h.session.all_steps().iter().any(|s| s.id == *id),
            "replaced step vanished"
        );
    }

    // rule: SESSION-5 — only the current generation has running steps.
    let generation = h.session.record().plan_generation;
    for step in h.session.all_steps() {
        if step.status == StepStatus::Running {
            prop_assert_eq!(
                step.generation,
                generation,
                "a replaced plan's step still runs"
            );
        }
    }

    // rule: PLAN-1 — seq is contiguous 1..N in every generation.
    let mut by_generation: HashMap<u32, Vec<u32>> = HashMap::new();
    for step in h.session.all_steps() {
        by_generation
            .entry(step.generation)
            .or_default()
            .push(step.seq);
    }
    for seqs in by_generation.values() {
        let expected: Vec<u32> = (1..=seqs.len() as u32).collect();
        prop_assert_eq!(seqs, &expected);
    }

    // rule: SESSION-3, SESSION-7 — terminal stays terminal unless set_goal reopens.
    if was_terminal && !matches!(op, Op::Goal) {
        prop_assert!(
            h.session.status().is_terminal(),
            "left terminal on {:?}",
            op
        );
    }

    // rule: PLAN-9 — every step status change emits exactly one event (a commit drains
    // the events, and a PLAN-2 replacement rewrites pending steps without a change).
    if !matches!(op, Op::Commit) {
        let changed = h
            .session
            .all_steps()
            .iter()
            .filter(|s| before_steps.get(&s.id).is_some_and(|old| *old != s.status))
            .count();
        let n_events = step_events(h.session.pending_events()) - n_step_events_before;
        prop_assert_eq!(changed, n_events, "after {:?}", op);
    }

    // rule: GATE-4 — every window closes once: never more closes than opens.
    let events = h.events();
    let opened = events
        .iter()
        .filter(|e| matches!(e, DomainEvent::AssentOpened { .. }))
        .count();
    let closed = events
        .iter()
        .filter(|e| matches!(e, DomainEvent::AssentClosed { .. }))
        .count();
    prop_assert!(
        closed <= opened && opened <= closed + 1,
        "{opened} windows opened, {closed} closes"
    );
    if model.terminal() {
        prop_assert_eq!(opened, closed, "a window outlived its session");
    }
    Ok(())
}

/// The invariants of time, after every op: the timer the shell keeps is never late.
fn check_timer(
    h: &Harness,
    model: &Reference,
    shell: &Shell,
    op: &Op,
) -> Result<(), TestCaseError> {
    // rule: GATE-4, GATE-7 — the one timer is never late: it is due no later than the
    // first moment the reference model says something must expire.
    if let Some(first) = model.deadlines().into_iter().filter(|d| *d > h.now).min() {
        let armed = h.session.poll_timeout();
        prop_assert!(
            armed.is_some_and(|at| at <= first),
            "timer armed for {:?}, but something expires at {} (after {:?})",
            armed,
            first,
            op
        );
    }

    // rule: GATE-4, GATE-7 — when time passes only through the timer, nothing is ever
    // found overdue: each approval expired and each window closed at its deadline.
    if shell.timers {
        let overdue = h
            .session
            .approvals()
            .iter()
            .filter(|a| a.status == ApprovalStatus::Pending && a.expires_at <= h.now)
            .count();
        prop_assert_eq!(overdue, 0, "approvals overdue after {:?}", op);
        prop_assert!(
            h.session
                .record()
                .assent
                .is_none_or(|w| w.expires_at > h.now),
            "a window outlived its deadline after {:?}",
            op
        );
    }

    Ok(())
}

/// Runs one case: the session and the model side by side, the session driven by `shell`.
fn run_case(ops: &[Op], seen: &mut Seen, mut shell: Shell) -> Result<(), TestCaseError> {
    let mut h = Harness::new();
    let config = *h.session.config();
    let mut model = Reference::new(config.assent_window, config.approval_ttl);
    let mut replaced: HashMap<crate::id::StepId, PlanStep> = HashMap::new();
    for op in ops {
        let before_steps: HashMap<_, _> = h
            .session
            .all_steps()
            .iter()
            .map(|s| (s.id, s.status))
            .collect();
        let was_terminal = h.session.status().is_terminal();
        let n_step_events_before = step_events(h.session.pending_events());
        apply(&mut h, &mut model, &mut shell, op, seen)?;
        // Every input leaves its actions in the queue; the shell drains them all, and
        // only `run` and decisions queue any.
        let rest = shell.drain(&mut h)?;
        prop_assert!(rest.is_empty(), "{:?} queued {:?}", op, rest);
        if shell.timers {
            let now = h.now;
            shell.pass_time(&mut h, &mut model, now)?;
        }
        check_timer(&h, &model, &shell, op)?;
        check_invariants(
            &h,
            &model,
            op,
            &before_steps,
            was_terminal,
            n_step_events_before,
            &mut replaced,
        )?;
    }
    Ok(())
}

fn config() -> Config {
    // `Config::default` reads PROPTEST_CASES; without it, 256 cases.
    Config {
        failure_persistence: None,
        ..Config::default()
    }
}

// rule: GATE-1, GATE-2, GATE-3, GATE-4, GATE-5, GATE-7, SESSION-2, SESSION-5, PLAN-3,
// EXEC-6
/// Random sessions agree with the reference model on every `run`, decision, plan and step
/// call, and no non-read-only command is ever dispatched without what the rules require.
#[test]
fn random_sessions_agree_with_the_reference_model_of_the_rules() {
    let mut runner = TestRunner::new(config());
    // The runner takes a `Fn`; the tallies live in cells.
    let sequences: RefCell<HashSet<String>> = RefCell::default();
    let situations: RefCell<HashSet<(WindowState, Label, bool, RunVerdict)>> = RefCell::default();
    let n_cases = Cell::new(0u64);
    let strategy = prop::collection::vec(op(), 1..60);
    let res = runner.run(&strategy, |ops| {
        let mut seen = Seen::default();
        let res = run_case(&ops, &mut seen, Shell::default());
        n_cases.set(n_cases.get() + 1);
        if seen.dangerous {
            sequences.borrow_mut().insert(seen.sequence);
            situations.borrow_mut().extend(seen.situations);
        }
        res
    });
    let (sequences, situations, n_cases) = (
        sequences.into_inner(),
        situations.into_inner(),
        n_cases.get(),
    );
    if let Err(failure) = res {
        panic!("{failure}");
    }
    if std::env::var_os("NOMOS_PROPS_REPORT").is_some() {
        eprintln!(
            "session properties: {n_cases} cases, {} distinct dangerous sequences, {} distinct dangerous situations (window state x class x awaiting answer x verdict)",
            sequences.len(),
            situations.len()
        );
    }
    assert!(
        !sequences.is_empty(),
        "the generator never tried a dangerous command"
    );
}

// rule: GATE-4, GATE-7, EXEC-6
/// Driven by a shell that acts only on `poll_action` and lets time pass only through the
/// one timer `poll_timeout` arms, random sessions still agree with the reference model, and
/// every approval expires and every window closes at its deadline, not at a later sweep.
#[test]
fn sessions_driven_by_their_timer_expire_everything_at_its_deadline() {
    let mut runner = TestRunner::new(config());
    let strategy = prop::collection::vec(op(), 1..60);
    let res = runner.run(&strategy, |ops| {
        run_case(&ops, &mut Seen::default(), Shell::with_timers())
    });
    if let Err(failure) = res {
        panic!("{failure}");
    }
}

proptest! {
    /// Replaying the same inputs yields the same state and the same events.
    #[test]
    fn sessions_are_deterministic(ops in prop::collection::vec(op(), 1..40)) {
        let mut a = Harness::new();
        let mut b = Harness::new();
        let config = *a.session.config();
        let mut model_a = Reference::new(config.assent_window, config.approval_ttl);
        let mut model_b = model_a.clone();
        for op in &ops {
            // Agreement is the other property's concern; here only the replay counts.
            let _ = apply(&mut a, &mut model_a, &mut Shell::default(), op, &mut Seen::default());
            let _ = apply(&mut b, &mut model_b, &mut Shell::default(), op, &mut Seen::default());
        }
        prop_assert_eq!(a.session.snapshot(), b.session.snapshot());
        prop_assert_eq!(a.events(), b.events());
    }
}

/// The rows of `after` that are new or differ from their row in `before`, by key: what a
/// commit must carry, written from the snapshots alone.
fn rows_changed<T: Clone + PartialEq, K: Eq + std::hash::Hash>(
    before: &[T],
    after: &[T],
    key: impl Fn(&T) -> K,
) -> Vec<T> {
    let old: HashMap<K, &T> = before.iter().map(|row| (key(row), row)).collect();
    after
        .iter()
        .filter(|row| old.get(&key(row)).is_none_or(|was| *was != *row))
        .cloned()
        .collect()
}

/// Checks the commit taken between two snapshots against their difference.
fn check_commit(
    before: &crate::ports::store::SessionSnapshot,
    after: &crate::ports::store::SessionSnapshot,
    commit: &crate::ports::store::Commit,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        &commit.executions,
        &rows_changed(&before.executions, &after.executions, |e| e.id)
    );
    prop_assert_eq!(
        &commit.approvals,
        &rows_changed(&before.approvals, &after.approvals, |a| a.id)
    );
    prop_assert_eq!(
        &commit.fanouts,
        &rows_changed(&before.fanouts, &after.fanouts, |f| f.id)
    );
    prop_assert_eq!(
        &commit.steps,
        &rows_changed(&before.steps, &after.steps, |s| s.id)
    );
    let kept: HashSet<_> = after.steps.iter().map(|s| s.id).collect();
    let removed: Vec<_> = before
        .steps
        .iter()
        .map(|s| s.id)
        .filter(|id| !kept.contains(id))
        .collect();
    prop_assert_eq!(&commit.removed_steps, &removed);
    if before.record != after.record {
        prop_assert_eq!(commit.session.as_ref(), Some(&after.record));
    }
    Ok(())
}

proptest! {
    /// However the decisions are grouped into commits, each commit carries exactly the
    /// rows that differ from the state last committed, and the session keeps no copy of
    /// its whole state to find them.
    #[test]
    fn each_commit_carries_exactly_the_rows_changed_since_the_last_one(
        ops in prop::collection::vec(op(), 1..40),
    ) {
        let mut h = Harness::new();
        let config = *h.session.config();
        let mut model = Reference::new(config.assent_window, config.approval_ttl);
        let mut committed = crate::ports::store::SessionSnapshot {
            record: h.session.record().clone(),
            steps: Vec::new(),
            executions: Vec::new(),
            approvals: Vec::new(),
            fanouts: Vec::new(),
        };
        let mut before = h.session.snapshot();
        for op in &ops {
            let n_commits = h.commits.len();
            let _ = apply(&mut h, &mut model, &mut Shell::default(), op, &mut Seen::default());
            while h.session.poll_action().is_some() {}
            if h.commits.len() > n_commits {
                // `Op::Commit` committed what the ops before it decided.
                let commit = h.commits.last().expect("a commit").clone();
                check_commit(&committed, &before, &commit)?;
                committed = before.clone();
                committed.record.version = h.session.record().version;
            }
            before = h.session.snapshot();
        }
        let commit = h.commit();
        check_commit(&committed, &before, &commit)?;
    }
}
