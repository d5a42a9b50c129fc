//! The closed sets of states: sessions, steps, executions, approvals and command classes.
//!
//! Each enum spells itself in `snake_case` on the wire and in the stores (`as_str`)
//! and parses back with `FromStr`, so no state ever travels as a free-form string.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use nomos_classify::{CommandClass, UnknownVariant};

macro_rules! spelled_enum {
    ($(#[$doc:meta])* $name:ident, $kind:literal { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stable spelling used in stores, events and APIs.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownVariant;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownVariant {
                        kind: $kind,
                        value: s.to_owned(),
                        expected: concat!($($text, " "),+),
                    }),
                }
            }
        }
    };
}

spelled_enum!(
    /// SESSION-1: where a session (a task) stands.
    SessionStatus, "session status" {
        /// Chatting, no goal set yet.
        Active => "active",
        /// A goal is set; a plan is being made or waits for assent.
        Planning => "planning",
        /// The operator assented to the plan; it is being carried out.
        Executing => "executing",
        /// The agent asked the operator a question and waits for the answer.
        AwaitingInput => "awaiting_input",
        /// Finished successfully (terminal).
        Done => "done",
        /// Finished in failure (terminal).
        Failed => "failed",
        /// Finished with part of the goal reached (terminal).
        Partial => "partial",
    }
);

impl SessionStatus {
    /// `done`, `failed` and `partial` are terminal.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            SessionStatus::Done | SessionStatus::Failed | SessionStatus::Partial
        )
    }
}

spelled_enum!(
    /// The outcome named by `complete_task`.
    Outcome, "outcome" {
        /// The goal was reached.
        Success => "success",
        /// The goal was not reached.
        Failure => "failure",
        /// Part of the goal was reached.
        Partial => "partial",
    }
);

impl Outcome {
    /// SESSION-2: the terminal status an outcome moves a session to.
    pub fn status(&self) -> SessionStatus {
        match self {
            Outcome::Success => SessionStatus::Done,
            Outcome::Failure => SessionStatus::Failed,
            Outcome::Partial => SessionStatus::Partial,
        }
    }
}

spelled_enum!(
    /// PLAN-1: where one plan step stands.
    StepStatus, "step status" {
        /// Not started.
        Pending => "pending",
        /// Started, not finished.
        Running => "running",
        /// Finished successfully.
        Done => "done",
        /// Finished in failure.
        Failed => "failed",
        /// Deliberately not done.
        Skipped => "skipped",
        /// Superseded by a revised plan; never changes again (PLAN-4).
        Replaced => "replaced",
    }
);

impl StepStatus {
    /// A step that will not change any more under normal flow.
    pub fn is_closed(&self) -> bool {
        matches!(
            self,
            StepStatus::Done | StepStatus::Failed | StepStatus::Skipped | StepStatus::Replaced
        )
    }
}

spelled_enum!(
    /// EXEC-1: where one execution stands. Transitions only go forward.
    ExecutionStatus, "execution status" {
        /// Waiting for the operator's decision.
        PendingApproval => "pending_approval",
        /// Approved (or allowed by the gate), not yet dispatched.
        Approved => "approved",
        /// Dispatched to the host.
        Running => "running",
        /// Finished with a result (any exit code).
        Completed => "completed",
        /// Could not run to completion (transport error, timeout, interruption).
        Failed => "failed",
        /// Denied, expired or cleaned up; never ran.
        Cancelled => "cancelled",
        /// SAFE-3: ran with a revert armed on its host, waiting for the operator's Confirm.
        Armed => "armed",
        /// SAFE-3: its revert fired (a failed check, or no Confirm in the window).
        Reverted => "reverted",
    }
);

impl ExecutionStatus {
    /// `completed`, `failed`, `cancelled` and `reverted` are terminal.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            ExecutionStatus::Completed
                | ExecutionStatus::Failed
                | ExecutionStatus::Cancelled
                | ExecutionStatus::Reverted
        )
    }

    /// EXEC-1: whether moving from `self` to `next` goes forward along the order.
    pub fn can_move_to(&self, next: ExecutionStatus) -> bool {
        use ExecutionStatus as S;
        if self.is_terminal() {
            return false;
        }
        match next {
            S::Cancelled | S::Failed => true,
            S::PendingApproval => false,
            S::Approved => *self == S::PendingApproval,
            // EXEC-1, EXEC-6: only an approved execution starts, and only once.
            S::Running => *self == S::Approved,
            S::Completed => matches!(self, S::Running | S::Armed),
            // SAFE-3: a change that ran with its revert armed waits for Confirm.
            S::Armed => *self == S::Running,
            S::Reverted => *self == S::Armed,
        }
    }
}

spelled_enum!(
    /// GATE-7: where one approval request stands.
    ApprovalStatus, "approval status" {
        /// Waiting for the operator.
        Pending => "pending",
        /// The operator approved it.
        Approved => "approved",
        /// The operator denied it.
        Denied => "denied",
        /// Nobody answered in time; counts as a denial.
        Expired => "expired",
        /// Voided (the task completed, or what it bound to changed).
        Cancelled => "cancelled",
    }
);

spelled_enum!(
    /// An operator's decision on one approval request.
    Decision, "decision" {
        /// Run it.
        Approve => "approve",
        /// Do not run it.
        Deny => "deny",
    }
);

spelled_enum!(
    /// Who wrote a transcript message.
    Role, "role" {
        /// The operator.
        Operator => "operator",
        /// The model.
        Assistant => "assistant",
        /// Nomos itself: nudges, resume notes, terminal notes.
        Note => "note",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for status in SessionStatus::ALL {
            assert_eq!(status.as_str().parse::<SessionStatus>().unwrap(), *status);
        }
        for class in CommandClass::ALL {
            assert_eq!(class.as_str().parse::<CommandClass>().unwrap(), *class);
        }
        let err = "running".parse::<SessionStatus>().unwrap_err();
        assert!(
            err.to_string().contains("unknown session status `running`"),
            "{err}"
        );
    }

    // rule: SESSION-1
    #[test]
    fn terminal_statuses_are_done_failed_partial() {
        let terminal: Vec<_> = SessionStatus::ALL
            .iter()
            .filter(|s| s.is_terminal())
            .collect();
        assert_eq!(
            terminal,
            [
                &SessionStatus::Done,
                &SessionStatus::Failed,
                &SessionStatus::Partial
            ]
        );
    }

    // rule: EXEC-1
    #[test]
    fn execution_transitions_only_go_forward() {
        use ExecutionStatus as S;
        assert!(S::PendingApproval.can_move_to(S::Approved));
        assert!(S::Approved.can_move_to(S::Running));
        assert!(S::Running.can_move_to(S::Completed));
        assert!(S::Running.can_move_to(S::Failed));
        assert!(S::PendingApproval.can_move_to(S::Cancelled));
        assert!(!S::Running.can_move_to(S::Approved));
        assert!(!S::Completed.can_move_to(S::Failed));
        assert!(!S::Cancelled.can_move_to(S::Running));
        assert!(!S::PendingApproval.can_move_to(S::Completed));
        // rule: EXEC-6 — nothing starts without its approval, and nothing starts twice.
        assert!(!S::PendingApproval.can_move_to(S::Running));
        assert!(!S::Running.can_move_to(S::Running));
    }

    // rule: SAFE-3
    #[test]
    fn an_armed_change_ends_completed_or_reverted() {
        use ExecutionStatus as S;
        assert!(S::Running.can_move_to(S::Armed));
        assert!(S::Armed.can_move_to(S::Completed));
        assert!(S::Armed.can_move_to(S::Reverted));
        assert!(S::Armed.can_move_to(S::Failed));
        assert!(!S::Running.can_move_to(S::Reverted));
        assert!(!S::Approved.can_move_to(S::Armed));
        assert!(S::Reverted.is_terminal() && !S::Armed.is_terminal());
    }

    #[test]
    fn classes_are_ordered_by_danger() {
        assert!(CommandClass::ReadOnly < CommandClass::ConfigMutation);
        assert!(CommandClass::ConfigMutation < CommandClass::Destructive);
    }
}
