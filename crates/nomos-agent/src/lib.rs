//! The Nomos runtime: the imperative shell around `nomos-core`.
//!
//! # Brief overview
//!
//! * [`Agent`] holds the ports (a [`nomos_core::ports::store::Store`], an
//!   [`nomos_core::ports::exec::Executor`], a [`nomos_core::ports::chat::ChatModel`]) and
//!   drives the core: [`Agent::send_message`] runs a turn (TURN-1..8),
//!   [`Agent::decide`] decides an approval and resumes the session (EXEC-4),
//!   [`Agent::resume`] resumes it with escalating notes (RESUME-1..3).
//! * [`Agent::reconcile_startup`], [`Agent::sweep_once`] and [`Agent::start_workers`] keep
//!   sessions and executions from getting stuck (EXEC-3, EXEC-6, SWEEP-1..3).
//! * [`Agent::create_client_session`] and [`Agent::call_tool`] let an outside client (an
//!   MCP client) drive a session through the same gates (MCP-1, MCP-2).
//! * [`EventBus`] fans committed events and streamed text out to subscribers.
//! * [`tools`] holds the tool contracts the model reads and the knowledge tools; embedders
//!   add their own with [`AgentBuilder::extra_tool`].
//!
//! Every change to a session goes through one path: load the aggregate, let the core
//! decide, commit rows and events atomically with a version check, publish the events,
//! act on the actions the core queued, and arm the session's one timer from the core's
//! next deadline (while the workers run).

#![deny(missing_docs)]

mod agent;
mod budget;
pub mod bus;
mod cache;
mod cancel;
mod check;
mod client;
pub mod clock;
mod close;
pub mod config;
mod continuation;
mod declare;
mod error;
mod exec;
mod health;
mod history;
pub mod live;
mod locks;
mod preview;
mod reconcile;
mod replica;
mod request;
mod revoke;
mod safety;
mod shells;
mod sweeper;
mod timers;
pub mod tools;
mod turn;

pub use agent::{Agent, AgentBuilder};
pub use bus::{EventBus, LiveEvent, Numbering, Published};
pub use cancel::StopReport;
pub use client::{Access, CallReply};
pub use clock::{Clock, ManualClock, SystemClock, TokioClock};
pub use config::{AgentConfig, ApprovalPolicy, Classifier, DEFAULT_SYSTEM_PROMPT, NO_OPERATOR};
pub use continuation::{Awaiting, DecisionReport, PlanDecisionReport};
pub use error::AgentError;
pub use exec::output_text;
pub use health::{STALE_AFTER, WriteHealth};
pub use history::INTERRUPTED_RESULT;
pub use reconcile::TurnInterruption;
pub use replica::{Heartbeat, Replication};
pub use revoke::OpenWindow;
pub use safety::{RestoreRequestError, RollbackRequestError};
pub use sweeper::{SweepReport, Workers};
pub use tools::guests::NodeDiscovery;
pub use turn::TurnReport;
