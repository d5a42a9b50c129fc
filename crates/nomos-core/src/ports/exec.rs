//! The executor port: run one exact command string on one host.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::classify::Shell;
use crate::proxmox::Guest;
use crate::record::ExecOutput;
use crate::time::Span;

/// Bounds on one command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecLimits {
    /// Kill the command after this long.
    pub timeout: Span,
    /// Keep at most this many bytes of stdout and of stderr each (EXEC-5).
    pub output_cap: usize,
}

impl ExecLimits {
    /// The defaults of EXEC-5 with a caller-chosen timeout.
    pub fn with_timeout(timeout: Span) -> ExecLimits {
        ExecLimits {
            timeout,
            output_cap: 64 * 1024,
        }
    }
}

/// A host the executor can reach.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Slug (`local`, `lxc:nextcloud`, `host:hubris`).
    pub slug: String,
    /// Address or `local`.
    pub address: String,
    /// Tags from the inventory.
    pub tags: Vec<String>,
    /// The SHA256 fingerprints (`SHA256:...`, as `ssh-keygen -lf` prints them) of the
    /// host keys the executor trusts for this host; empty for a local host or one with
    /// no recorded key.
    #[serde(default)]
    pub host_keys: Vec<String>,
}

/// Why a command could not produce a result (EXEC-2: each ends the execution as failed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The host slug is not in the inventory.
    #[error("unknown host `{host}`; known hosts: {}", known.join(", "))]
    UnknownHost {
        /// The slug asked for.
        host: String,
        /// The slugs that exist.
        known: Vec<String>,
    },
    /// The host could not be reached (down, DNS, refused).
    #[error("could not connect to {host}: {message}")]
    Connect {
        /// Host slug.
        host: String,
        /// What went wrong.
        message: String,
    },
    /// The host's key did not match the known one.
    #[error("host key mismatch for {host}: expected {expected}, got {actual}")]
    HostKeyMismatch {
        /// Host slug.
        host: String,
        /// Fingerprint on record.
        expected: String,
        /// Fingerprint presented.
        actual: String,
    },
    /// The host's key is not known and trust-on-first-use is off.
    #[error(
        "host key of {host} is not known ({fingerprint}); if that fingerprint is the host's, \
         record it with `nomos-server hosts check --trust-new`"
    )]
    UnknownHostKey {
        /// Host slug.
        host: String,
        /// Fingerprint presented.
        fingerprint: String,
    },
    /// Authentication was refused.
    #[error("authentication to {host} was refused: {message}")]
    Auth {
        /// Host slug.
        host: String,
        /// What went wrong.
        message: String,
    },
    /// The command ran past its timeout and was stopped.
    #[error("command timed out after {after_ms} ms")]
    Timeout {
        /// The timeout that elapsed.
        after_ms: u64,
    },
    /// The connection dropped before the command finished.
    #[error("connection to {host} was lost: {message}")]
    Disconnected {
        /// Host slug.
        host: String,
        /// What went wrong.
        message: String,
    },
    /// Anything else, with its text.
    #[error("{0}")]
    Other(String),
}

/// Which stream a live chunk of output came from (EXEC-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// EXEC-10: where an executor hands the output of a running command as it arrives, chunk by
/// chunk, besides capturing it. It must not block; the runtime coalesces and caps what it
/// passes on, and the stored output stays the captured one.
pub type OutputSink = std::sync::Arc<dyn Fn(OutputStream, &[u8]) + Send + Sync>;

/// Runs commands on hosts. Implementations run exactly the string given (EXEC-7).
///
/// The runtime calls [`Executor::run`] only for a command the gate allowed, at most once per
/// execution (EXEC-6), and records whatever it returns: an `Err` ends the execution as
/// failed with the error's text (EXEC-2). An implementation should honour
/// [`ExecLimits`] (stop the command at the timeout, cap the output) and should stop the
/// command when the returned future is dropped.
#[async_trait]
pub trait Executor: Send + Sync {
    /// Runs `command` on `host` and returns its captured output.
    async fn run(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
    ) -> Result<ExecOutput, ExecError>;

    /// EXEC-8: runs `command` like [`Executor::run`], its processes marked with `marker`
    /// (the execution's id) so [`Executor::stop_marked`] can find them after a restart.
    /// The default runs it unmarked.
    async fn run_marked(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
        marker: &str,
    ) -> Result<ExecOutput, ExecError> {
        let _ = marker;
        self.run(host, command, limits).await
    }

    /// EXEC-10: runs `command` like [`Executor::run_marked`], handing its output to `live`
    /// as it arrives. The default shows nothing live and runs it marked.
    async fn run_streamed(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
        marker: &str,
        live: OutputSink,
    ) -> Result<ExecOutput, ExecError> {
        let _ = live;
        self.run_marked(host, command, limits, marker).await
    }

    /// EXEC-8: stops whatever still runs on `host` of the command started with
    /// `marker`, after a restart lost track of it. `Ok` when nothing of it runs any more.
    /// The default cannot find such processes and says so.
    async fn stop_marked(&self, host: &str, marker: &str) -> Result<(), ExecError> {
        let _ = marker;
        Err(ExecError::Other(format!(
            "this executor cannot stop a command on {host} after a restart"
        )))
    }

    /// The hosts this executor knows.
    fn hosts(&self) -> Vec<HostInfo>;

    /// CLASSIFY-8: the interpreter this executor names to run a command on `host`
    /// (`/bin/sh -c` unless the inventory pins another), so the gate classifies the
    /// command in the grammar of the shell that will read it. The default is POSIX sh.
    fn shell(&self, host: &str) -> Shell {
        let _ = host;
        Shell::Sh
    }

    /// FLEET-3: the slugs of the hosts that are Proxmox VE nodes, whose guests a
    /// discovery may ask for. The default knows none.
    fn proxmox_nodes(&self) -> Vec<String> {
        Vec::new()
    }

    /// FLEET-3: makes the guests a discovery found on `node` hosts of this executor,
    /// replacing what an earlier discovery of that node found. A container without an
    /// SSH address of its own is then reached through its node with the fixed
    /// [`crate::proxmox::pct_exec`] transport around the command given to
    /// [`Executor::run`]. Returns the slugs it reaches that way (a guest the executor
    /// already knows as a host of its own keeps its own route). The default cannot
    /// reach guests and says so.
    fn set_guests(&self, node: &str, guests: &[Guest]) -> Result<Vec<String>, ExecError> {
        let _ = guests;
        Err(ExecError::Other(format!(
            "this executor cannot reach the guests of {node}"
        )))
    }

    /// SAFE-1: what this executor knows of `host` that the safety nets depend on: the
    /// snapshot policy the inventory gives it (its own entry, one of its tags, or for a
    /// guest reached through its node, the node's) and the Proxmox guest it is, when a
    /// discovery found it. The core decides from this; the default knows nothing, so no
    /// snapshot is taken.
    fn host_safety(&self, host: &str) -> crate::snapshot::HostSafety {
        let _ = host;
        crate::snapshot::HostSafety::default()
    }
}
