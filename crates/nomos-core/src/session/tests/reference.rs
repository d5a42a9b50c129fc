//! A reference model of the gate, written from SPEC.md alone (GATE-1..7 with the explicit
//! plan decision of GATE-4, PLAN-2..5,
//! SESSION-2/3/5/7, WRITEBACK-2, EXEC-1/6), for the property tests to hold the session
//! against. It is deliberately small and shares no code with the session: its own state
//! (is there a plan, which generation, which steps are closed, is an assent window open
//! for which generation and until when, which approvals wait) and its own transitions.
//! Commands arrive with a hand-written label and messages with their intended reading, so
//! the model never asks the classifier or the assent detector either.

use crate::time::{Span, Timestamp};

/// The class a command was labelled with by hand (CLASSIFY-1), with the programs nobody
/// knows (CLASSIFY-7) as a class of their own, between a known change and a destruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Label {
    ReadOnly,
    Config,
    UnknownProgram,
    Destructive,
}

/// How the operator meant a message (GATE-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reading {
    Assent,
    NotAssent,
}

/// What the rules say a `run` must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunVerdict {
    /// Run it now (GATE-1, GATE-5 inside the window).
    Dispatch,
    /// It becomes an approval request (GATE-5).
    AwaitApproval,
    /// The same request already waits; nothing new (GATE-5).
    AlreadyPending,
    /// Refused (GATE-2, GATE-3).
    Refused,
}

/// What the rules say a decision must do (GATE-7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecisionVerdict {
    Dispatch,
    Denied,
    Refused,
}

/// Whether a lifecycle tool call is accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallVerdict {
    Accepted,
    Refused,
}

/// A step as the model keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepState {
    Pending,
    Running,
    Done,
    Failed,
    Skipped,
    Replaced,
}

impl StepState {
    fn closed(self) -> bool {
        !matches!(self, StepState::Pending | StepState::Running)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ApprovalState {
    Waiting,
    Decided,
    Dead,
}

#[derive(Clone, Debug)]
struct ModelApproval {
    command: String,
    generation: u32,
    expires_at: Timestamp,
    state: ApprovalState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Knowledge {
    Untouched,
    Discovered,
    WrittenBack,
}

/// Why the window is not open, for the report of dangerous situations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowState {
    NeverOpened,
    Open,
    TimedOut,
    ClosedFinished,
    ClosedReplaced,
    ClosedRevised,
    ClosedEnded,
}

/// The reference model of one session.
#[derive(Clone, Debug)]
pub struct Reference {
    window_span: Span,
    approval_span: Span,
    goal: bool,
    terminal: bool,
    awaiting_answer: bool,
    generation: u32,
    /// The current generation's steps, in seq order.
    steps: Vec<StepState>,
    /// Open window: (generation, until).
    window: Option<(u32, Timestamp)>,
    last_close: WindowState,
    approvals: Vec<ModelApproval>,
    knowledge: Knowledge,
    /// GATE-9: the commands the current generation declared.
    declared: Vec<String>,
}

impl Reference {
    /// A fresh session; SPEC's defaults are 30 minutes for both spans.
    pub fn new(window_span: Span, approval_span: Span) -> Reference {
        Reference {
            window_span,
            approval_span,
            goal: false,
            terminal: false,
            awaiting_answer: false,
            generation: 0,
            steps: Vec::new(),
            window: None,
            last_close: WindowState::NeverOpened,
            approvals: Vec::new(),
            knowledge: Knowledge::Untouched,
            declared: Vec::new(),
        }
    }

    pub fn awaiting_answer(&self) -> bool {
        self.awaiting_answer
    }

    pub fn terminal(&self) -> bool {
        self.terminal
    }

    pub fn n_approvals(&self) -> usize {
        self.approvals.len()
    }

    /// GATE-4: whether the window covers the current generation at `now`.
    pub fn window_open(&self, now: Timestamp) -> bool {
        matches!(self.window, Some((generation, until)) if generation == self.generation && now < until)
    }

    pub fn window_state(&self, now: Timestamp) -> WindowState {
        match self.window {
            Some(_) if self.window_open(now) => WindowState::Open,
            Some(_) => WindowState::TimedOut,
            None => self.last_close,
        }
    }

    fn close_window(&mut self, why: WindowState) {
        if self.window.take().is_some() {
            self.last_close = why;
        }
    }

    /// GATE-7: every waiting approval dies (replaced or revised plan, end of the task).
    fn kill_waiting_approvals(&mut self) {
        for approval in &mut self.approvals {
            if approval.state == ApprovalState::Waiting {
                approval.state = ApprovalState::Dead;
            }
        }
    }

    fn plan_open(&self) -> bool {
        self.steps.iter().any(|s| !s.closed())
    }

    /// `set_goal` (SESSION-2, SESSION-7).
    pub fn set_goal(&mut self) -> CallVerdict {
        if self.terminal {
            self.terminal = false;
            self.knowledge = Knowledge::Untouched;
            if self.generation > 0 {
                self.generation += 1;
                self.steps.clear();
                self.declared.clear();
            }
        }
        self.goal = true;
        CallVerdict::Accepted
    }

    /// `propose_plan` with `n` drafted steps (PLAN-2, PLAN-3, PLAN-6); `reason` is `None`
    /// for a call without `revise: true`, `Some(reason)` with it; its steps declare
    /// `declared` (GATE-9), and an accepted proposal makes them the current generation's
    /// declared commands.
    pub fn propose_plan_declaring(
        &mut self,
        n: usize,
        revise: Option<Option<&str>>,
        declared: &[String],
    ) -> CallVerdict {
        let verdict = self.propose(n, revise);
        if verdict == CallVerdict::Accepted {
            self.declared = declared.to_vec();
        }
        verdict
    }

    fn propose(&mut self, n: usize, revise: Option<Option<&str>>) -> CallVerdict {
        if self.terminal || !self.goal {
            return CallVerdict::Refused;
        }
        // PLAN-6: none of the generated titles is a write-back step, so one is appended.
        let fresh = vec![StepState::Pending; n + 1];
        if self.generation == 0 {
            self.generation = 1;
            self.steps = fresh;
            return CallVerdict::Accepted;
        }
        // GATE-4: after a rejection the next proposal is a new generation.
        if self.rejected() {
            self.generation += 1;
            self.steps = fresh;
            self.kill_waiting_approvals();
            return CallVerdict::Accepted;
        }
        let in_flight = self.steps.iter().any(|s| *s != StepState::Pending);
        if !in_flight {
            self.steps = fresh;
            self.close_window(WindowState::ClosedReplaced);
            self.kill_waiting_approvals();
            return CallVerdict::Accepted;
        }
        match revise {
            Some(Some(reason)) if !reason.trim().is_empty() => {
                self.generation += 1;
                self.steps = fresh;
                self.close_window(WindowState::ClosedRevised);
                self.kill_waiting_approvals();
                CallVerdict::Accepted
            }
            _ => CallVerdict::Refused,
        }
    }

    /// `update_plan_step(seq, status)` (PLAN-4, PLAN-5); closing the last open step closes
    /// the window (GATE-4).
    pub fn update_step(&mut self, seq: u32, to: StepState) -> CallVerdict {
        if matches!(to, StepState::Pending | StepState::Replaced) {
            return CallVerdict::Refused;
        }
        let Some(idx) = (seq as usize)
            .checked_sub(1)
            .filter(|&i| i < self.steps.len())
        else {
            return CallVerdict::Refused;
        };
        let current = self.steps[idx];
        if current == StepState::Replaced {
            return CallVerdict::Refused;
        }
        if current == to {
            return CallVerdict::Accepted;
        }
        if current.closed() {
            return CallVerdict::Refused;
        }
        if to != StepState::Skipped && self.steps[..idx].contains(&StepState::Pending) {
            return CallVerdict::Refused;
        }
        self.steps[idx] = to;
        if self.window.is_some() && !self.plan_open() {
            self.close_window(WindowState::ClosedFinished);
        }
        CallVerdict::Accepted
    }

    /// `ask_operator` (SESSION-2).
    pub fn ask_operator(&mut self) -> CallVerdict {
        if self.terminal {
            return CallVerdict::Refused;
        }
        self.awaiting_answer = true;
        CallVerdict::Accepted
    }

    /// `complete_task` (SESSION-3, SESSION-5, WRITEBACK-2).
    pub fn complete(&mut self, success: bool) -> CallVerdict {
        if self.terminal {
            return CallVerdict::Refused;
        }
        if success && self.knowledge == Knowledge::Discovered {
            return CallVerdict::Refused;
        }
        self.terminal = true;
        self.awaiting_answer = false;
        self.close_window(WindowState::ClosedEnded);
        self.kill_waiting_approvals();
        // PLAN-8: success closes open steps as done; otherwise running ones failed and
        // pending ones skipped.
        for step in &mut self.steps {
            *step = match (*step, success) {
                (s, _) if s.closed() => s,
                (_, true) => StepState::Done,
                (StepState::Running, false) => StepState::Failed,
                (_, false) => StepState::Skipped,
            };
        }
        CallVerdict::Accepted
    }

    /// A write-back tool ran (WRITEBACK-1).
    pub fn write_back(&mut self) {
        self.knowledge = Knowledge::WrittenBack;
    }

    /// An operator message read as `reading`. Returns the generation it assented to.
    pub fn operator_message(&mut self, now: Timestamp, reading: Reading) -> Option<u32> {
        // GATE-4: an answer to a question goes to the model and never assents.
        if self.awaiting_answer {
            self.awaiting_answer = false;
            return None;
        }
        if self.terminal || !self.plan_open() || reading != Reading::Assent {
            return None;
        }
        self.window = Some((self.generation, now + self.window_span));
        Some(self.generation)
    }

    /// Whether the operator rejected the current generation: every step of it replaced.
    fn rejected(&self) -> bool {
        !self.steps.is_empty() && self.steps.iter().all(|s| *s == StepState::Replaced)
    }

    /// GATE-4 (rev. 2): the operator's explicit decision on plan generation `asked`. It is
    /// accepted only for the current generation while it waits: a plan with an open step,
    /// no open window, a live session. Approve opens the window (and ends a question, since
    /// the session moves on to executing); reject closes every open step as replaced and
    /// kills the waiting approvals, so nothing of it runs.
    pub fn plan_decision(&mut self, now: Timestamp, asked: u32, approve: bool) -> CallVerdict {
        let waits = !self.terminal
            && self.generation > 0
            && asked == self.generation
            && self.plan_open()
            && !self.window_open(now);
        if !waits {
            return CallVerdict::Refused;
        }
        if approve {
            self.awaiting_answer = false;
            self.window = Some((self.generation, now + self.window_span));
        } else {
            for step in &mut self.steps {
                if !step.closed() {
                    *step = StepState::Replaced;
                }
            }
            self.kill_waiting_approvals();
        }
        CallVerdict::Accepted
    }

    /// `run` of a command labelled `label` (GATE-1..5).
    pub fn run(&mut self, now: Timestamp, command: &str, label: Label) -> RunVerdict {
        // GATE-2 (no plan yet), GATE-3 (no open window for the current plan).
        if label != Label::ReadOnly && (self.generation == 0 || !self.window_open(now)) {
            return RunVerdict::Refused;
        }
        if self.knowledge == Knowledge::Untouched {
            self.knowledge = Knowledge::Discovered;
        }
        // GATE-9: inside the window only a declared change runs at once.
        let declared = self.declared.iter().any(|d| d.trim() == command.trim());
        match label {
            Label::ReadOnly => RunVerdict::Dispatch,
            Label::Config if declared => RunVerdict::Dispatch,
            // GATE-5: destructive, or a program nobody knows: its own approval; GATE-9: so
            // is a change the plan did not declare.
            Label::Config | Label::UnknownProgram | Label::Destructive => {
                let generation = self.generation;
                let waiting = self.approvals.iter().any(|a| {
                    a.state == ApprovalState::Waiting
                        && a.command == command
                        && a.generation == generation
                });
                if waiting {
                    return RunVerdict::AlreadyPending;
                }
                self.approvals.push(ModelApproval {
                    command: command.to_owned(),
                    generation,
                    expires_at: now + self.approval_span,
                    state: ApprovalState::Waiting,
                });
                RunVerdict::AwaitApproval
            }
        }
    }

    /// GATE-9: the current generation's declared commands.
    pub fn declared(&self) -> &[String] {
        &self.declared
    }

    /// A decision on the `idx`-th approval request (in request order), or on an id the
    /// session never issued (`None`) (GATE-7).
    pub fn decide(&mut self, now: Timestamp, idx: Option<usize>, approve: bool) -> DecisionVerdict {
        let Some(approval) = idx.and_then(|i| self.approvals.get_mut(i)) else {
            return DecisionVerdict::Refused;
        };
        if approval.state != ApprovalState::Waiting {
            return DecisionVerdict::Refused;
        }
        if now >= approval.expires_at {
            // Expiry means deny; the late decision is refused.
            approval.state = ApprovalState::Dead;
            return DecisionVerdict::Refused;
        }
        approval.state = ApprovalState::Decided;
        if approve {
            DecisionVerdict::Dispatch
        } else {
            DecisionVerdict::Denied
        }
    }

    /// GATE-4, GATE-7: every moment at which something must expire: each waiting
    /// approval's expiry and the open window's end.
    pub fn deadlines(&self) -> Vec<Timestamp> {
        self.approvals
            .iter()
            .filter(|a| a.state == ApprovalState::Waiting)
            .map(|a| a.expires_at)
            .chain(self.window.map(|(_, until)| until))
            .collect()
    }

    /// Time passed and the shell asked for timeouts: overdue approvals and the window end.
    pub fn timeout(&mut self, now: Timestamp) {
        for approval in &mut self.approvals {
            if approval.state == ApprovalState::Waiting && now >= approval.expires_at {
                approval.state = ApprovalState::Dead;
            }
        }
        if matches!(self.window, Some((_, until)) if now >= until) {
            self.close_window(WindowState::TimedOut);
        }
    }
}
