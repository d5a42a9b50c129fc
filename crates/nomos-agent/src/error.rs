//! Why a runtime call failed.

use nomos_core::ports::store::StoreError;
use nomos_core::session::{DecisionError, ExecutionError};
use nomos_core::{ApprovalId, SessionId};

/// An error of the runtime. Model and executor failures inside a turn are not errors of
/// the call: they end the turn with `turn.done { error }` (TURN-1) instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The session does not exist.
    #[error("session {0} not found")]
    SessionNotFound(SessionId),
    /// The approval does not exist.
    #[error("approval {0} not found")]
    ApprovalNotFound(ApprovalId),
    /// TURN-8: a turn is already running in this session.
    #[error("a turn is already running in session {0}; wait for it to finish")]
    TurnInProgress(SessionId),
    /// The operator's message was empty.
    #[error("the message is empty")]
    EmptyMessage,
    /// GATE-7: the decision was refused.
    #[error(transparent)]
    Decision(#[from] DecisionError),
    /// GATE-4: an explicit plan decision was refused (the plan it names does not wait).
    #[error(transparent)]
    PlanDecision(#[from] nomos_core::session::PlanDecisionError),
    /// An execution input was refused by the core.
    #[error(transparent)]
    Execution(#[from] ExecutionError),
    /// The store failed (after retrying version conflicts).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// RESUME-3: every attempt to resume got no usable reply; the last error.
    #[error("the session could not be resumed: {0}")]
    ResumeFailed(String),
    /// MCP-1: tools are called from outside only in a session an outside client drives.
    #[error("session {0} is not driven by an outside client; its tools are the model's")]
    NotAClientSession(SessionId),
    /// CONTROL-1: a stop needs a running turn, and the session has none here.
    #[error("session {0} has no running turn to stop")]
    NoRunningTurn(SessionId),
    /// CONTROL-1: the running turn is already being stopped.
    #[error("the turn of session {0} is already being stopped")]
    AlreadyStopping(SessionId),
    /// CONTROL-2: a revoke was refused.
    #[error(transparent)]
    Revoke(#[from] nomos_core::session::RevokeError),
    /// CONTROL-5: a close was refused by the core.
    #[error(transparent)]
    Close(#[from] nomos_core::session::CloseError),
    /// The runtime is shutting down.
    #[error("the runtime is shutting down")]
    ShuttingDown,
}
