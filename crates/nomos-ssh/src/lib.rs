//! SSH and local command executors for Nomos, with the host inventory.
//!
//! - [`Inventory`] reads the TOML host list and seeds the knowledge graph.
//! - [`LocalExecutor`] runs commands on this machine (`/bin/sh -c`).
//! - [`SshExecutor`] runs them over pooled SSH connections (russh), with strict
//!   host-key checking by default.
//! - [`FleetExecutor`] routes by slug between the two; it is the
//!   [`nomos_core::ports::exec::Executor`] a runtime normally uses.
//!
//! Every executor runs exactly the string it is given (EXEC-7): the local one as
//! `/bin/sh -c STRING`, the SSH one as an `exec` request that the server hands to
//! the user's login shell as `$SHELL -c STRING`.

#![deny(missing_docs)]

pub mod capture;
pub mod error;
pub mod fleet;
pub mod inventory;
pub mod local;
pub use nomos_core::proxmox;
mod reaper;
mod spawn;
pub mod ssh;

pub use error::SshError;
pub use fleet::FleetExecutor;
pub use inventory::{Host, HostProblem, Inventory, InventoryError, Passphrase, SshTarget, Target};
pub use local::LocalExecutor;
pub use ssh::SshExecutor;
pub use ssh::check::HostCheck;
pub use ssh::config::{HostKeyPolicy, SshConfig};
pub use ssh::connect::{AuthMethod, PassphraseUse};
pub use ssh::pool::PoolStats;
pub use ssh::verify::{KeyTrust, SeenKey, fingerprint, trust_key};
