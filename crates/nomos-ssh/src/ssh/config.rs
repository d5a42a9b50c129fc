//! Settings of the SSH executor.

use std::path::PathBuf;
use std::time::Duration;

/// What to do with a host key that is not in known_hosts.
///
/// A key that is in known_hosts for the host but differs from the presented one
/// is always refused, whatever the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostKeyPolicy {
    /// Refuse the connection (the default).
    Strict,
    /// Trust the key on first use and append it to known_hosts. Only when the
    /// operator asks for it.
    AcceptNew,
}

/// How the SSH executor connects and runs commands.
///
/// Built with [`SshConfig::new`], which documents every default; change fields
/// directly or with the `with_*` methods.
#[derive(Clone, Debug)]
pub struct SshConfig {
    /// The known_hosts file host keys are checked against (and, under
    /// [`HostKeyPolicy::AcceptNew`], appended to).
    pub known_hosts: PathBuf,
    /// What to do with an unknown host key.
    pub host_key_policy: HostKeyPolicy,
    /// Bound on TCP connect + key exchange + authentication, per hop.
    pub connect_timeout: Duration,
    /// A pooled connection unused for this long is closed.
    pub idle_timeout: Duration,
    /// Send a keepalive when the server has been silent this long; after three
    /// unanswered ones the connection is declared dead.
    pub keepalive_interval: Duration,
    /// At most this many commands share one connection at a time; more wait for a
    /// free channel. OpenSSH's `MaxSessions` defaults to 10; the default of 8 leaves
    /// room for the clean-up channels that stop timed-out commands.
    pub max_channels: usize,
    /// On timeout, time between the TERM signal and the KILL signal.
    pub stop_grace: Duration,
    /// The ssh-agent socket used for hosts without a `key_file`.
    pub agent_socket: Option<PathBuf>,
}

impl SshConfig {
    /// Strict host keys from `known_hosts`; 10 s connect timeout; 5 min idle
    /// timeout; 15 s keepalive; 8 channels per connection; 1 s stop grace; the
    /// ssh-agent named by `SSH_AUTH_SOCK`, if set.
    pub fn new(known_hosts: impl Into<PathBuf>) -> SshConfig {
        SshConfig {
            known_hosts: known_hosts.into(),
            host_key_policy: HostKeyPolicy::Strict,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            keepalive_interval: Duration::from_secs(15),
            max_channels: 8,
            stop_grace: Duration::from_secs(1),
            agent_socket: std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from),
        }
    }

    /// Sets the known_hosts file.
    pub fn with_known_hosts(mut self, known_hosts: impl Into<PathBuf>) -> SshConfig {
        self.known_hosts = known_hosts.into();
        self
    }

    /// Sets the host key policy.
    pub fn with_host_key_policy(mut self, policy: HostKeyPolicy) -> SshConfig {
        self.host_key_policy = policy;
        self
    }

    /// Sets the connect timeout.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> SshConfig {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the idle timeout of pooled connections.
    pub fn with_idle_timeout(mut self, timeout: Duration) -> SshConfig {
        self.idle_timeout = timeout;
        self
    }

    /// Sets the ssh-agent socket for hosts without a `key_file` (`None`: no agent).
    pub fn with_agent_socket(mut self, socket: Option<PathBuf>) -> SshConfig {
        self.agent_socket = socket;
        self
    }

    /// Sets the number of concurrent channels per connection (at least 1).
    pub fn with_max_channels(mut self, channels: usize) -> SshConfig {
        self.max_channels = channels.max(1);
        self
    }
}
