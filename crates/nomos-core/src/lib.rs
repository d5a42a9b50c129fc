//! The pure core of Nomos: it decides, the shell does.
//!
//! # Brief overview
//!
//! * [`session::Session`] is the aggregate of one chat: its status (SESSION), its plan
//!   generations (PLAN), the gate for `run` (GATE), executions and approvals (EXEC).
//!   Inputs arrive through `handle_*` methods with the current time as an argument;
//!   the rows and [`event::DomainEvent`]s they produce leave through
//!   [`session::Session::take_commit`].
//! * [`classify`] reads a shell command the way a shell would and returns its
//!   [`status::CommandClass`] with a reason (CLASSIFY). It is total: a command it cannot
//!   read is never read-only.
//!
//!   ```
//!   use nomos_core::CommandClass;
//!   use nomos_core::classify::classify;
//!
//!   assert_eq!(classify("df -h | sort -k5").class, CommandClass::ReadOnly);
//!   assert_eq!(classify("sudo systemctl restart nginx").class, CommandClass::ConfigMutation);
//!   // A wrapper never hides what it runs, and the reason names the word that decided.
//!   let verdict = classify("bash -c 'rm -rf /var/cache/app'");
//!   assert_eq!(verdict.class, CommandClass::Destructive);
//!   assert!(verdict.reason.contains("`rm`"), "{}", verdict.reason);
//!   // Input it cannot parse is never read-only (CLASSIFY-5).
//!   assert_ne!(classify("cat 'unterminated").class, CommandClass::ReadOnly);
//!   ```
//! * [`activity`] derives the operator's activity log from persisted facts (ACTIVITY).
//! * [`sweep`] decides what to do with idle sessions and stale executions (SWEEP, EXEC-3),
//!   for the runtime's sweeps and the backfill tool alike.
//! * [`resume`] writes the notes that resume a session (RESUME).
//! * [`ports`] defines the traits the shell implements: store, executor, chat model.
//!
//! Nothing here performs I/O, reads a clock, draws a random number or spawns a task.

#![deny(missing_docs)]

pub mod activity;
pub mod assent;
pub mod authz;
pub mod chain;
pub mod check;
pub mod declared;
pub mod edit;
pub mod event;
pub mod fanout;
pub mod id;
pub mod plan_digest;
pub mod ports;
pub mod preview;
pub mod proxmox;
pub mod record;
pub mod redaction;
pub mod resume;
pub mod revert;
pub mod safety;
pub mod session;
pub mod snapshot;
pub mod status;
pub mod sweep;
pub mod time;

/// The command classifier (CLASSIFY), re-exported from `nomos-classify` so its paths
/// stay `nomos_core::classify::...` and `nomos_core::classification::...`.
pub use nomos_classify as classify;
pub use nomos_classify::classification;

pub use classification::Classification;
pub use id::{ApprovalId, ExecutionId, MessageId, SessionId, StepId};
pub use status::{
    ApprovalStatus, CommandClass, Decision, ExecutionStatus, Outcome, Role, SessionStatus,
    StepStatus,
};
pub use time::{Span, Timestamp};
