//! Typed identifiers for the things a session owns.
//!
//! Session ids come from the caller (the shell draws them at random). Every id a
//! session creates itself (steps, executions, approvals, messages) is derived from
//! the session id and a stable name with UUIDv5, so that replaying the same inputs
//! yields the same ids and the core never needs a random source or a clock.

use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// The underlying UUID.
            pub fn as_uuid(&self) -> Uuid {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map($name)
            }
        }

        impl From<Uuid> for $name {
            fn from(uuid: Uuid) -> Self {
                $name(uuid)
            }
        }
    };
}

typed_id!(
    /// One chat, one task.
    SessionId
);
typed_id!(
    /// One plan step, unique per `(session, generation, seq)`.
    StepId
);
typed_id!(
    /// One command the agent asked to run.
    ExecutionId
);
typed_id!(
    /// One approval request shown to the operator.
    ApprovalId
);
typed_id!(
    /// One message in a session's transcript.
    MessageId
);

impl SessionId {
    /// Derives a child id from this session and a stable name.
    pub fn derive(&self, name: &str) -> Uuid {
        Uuid::new_v5(&self.0, name.as_bytes())
    }

    /// The id of step `seq` of plan generation `generation`.
    pub fn step_id(&self, generation: u32, seq: u32) -> StepId {
        StepId(self.derive(&format!("step/{generation}/{seq}")))
    }

    /// The id of the `n`th execution of this session (1-based).
    pub fn execution_id(&self, n: usize) -> ExecutionId {
        ExecutionId(self.derive(&format!("execution/{n}")))
    }

    /// The id of the approval that guards `execution`.
    pub fn approval_id(&self, execution: ExecutionId) -> ApprovalId {
        ApprovalId(self.derive(&format!("approval/{execution}")))
    }

    /// The id of the `n`th message of this session (1-based).
    pub fn message_id(&self, n: u64) -> MessageId {
        MessageId(self.derive(&format!("message/{n}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_ids_are_stable_and_distinct() {
        let session = SessionId(Uuid::from_u128(7));
        assert_eq!(session.step_id(1, 1), session.step_id(1, 1));
        assert_ne!(session.step_id(1, 1), session.step_id(2, 1));
        assert_ne!(session.execution_id(1).0, session.step_id(1, 1).0);
        let other = SessionId(Uuid::from_u128(8));
        assert_ne!(session.execution_id(1), other.execution_id(1));
    }
}
