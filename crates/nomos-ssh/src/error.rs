//! The crate's detailed error, and its one mapping into the port's [`ExecError`].

use std::path::PathBuf;

use nomos_core::ports::exec::ExecError;

/// Everything that can go wrong running a command over SSH or locally.
#[derive(Debug, thiserror::Error)]
pub enum SshError {
    /// The host name could not be resolved.
    #[error("could not resolve {address}: {source}")]
    Resolve {
        /// The name asked for.
        address: String,
        /// The resolver's error.
        source: std::io::Error,
    },
    /// The TCP connection failed (refused, unreachable).
    #[error("could not connect to {addr}: {source}")]
    Connect {
        /// `address:port`.
        addr: String,
        /// The socket error.
        source: std::io::Error,
    },
    /// Connecting, the handshake or authentication took longer than allowed.
    #[error("connecting to {addr} timed out after {after_ms} ms")]
    ConnectTimeout {
        /// `address:port`.
        addr: String,
        /// The connect timeout.
        after_ms: u64,
    },
    /// The server presented a key other than the one in known_hosts.
    #[error(
        "host key mismatch for {addr}: known_hosts {} line {line} has {expected}, the server presented {actual}",
        known_hosts.display()
    )]
    HostKeyMismatch {
        /// `address:port`.
        addr: String,
        /// Fingerprint on record (SHA256 form).
        expected: String,
        /// Fingerprint presented (SHA256 form).
        actual: String,
        /// The known_hosts file.
        known_hosts: PathBuf,
        /// The line holding the recorded key.
        line: usize,
    },
    /// The server's key is not in known_hosts and the policy is strict.
    #[error(
        "host key of {addr} is not in {} ({fingerprint}); if that fingerprint is the host's, \
         record it with `nomos-server hosts check --trust-new`",
        known_hosts.display()
    )]
    UnknownHostKey {
        /// `address:port`.
        addr: String,
        /// Fingerprint presented (SHA256 form).
        fingerprint: String,
        /// The known_hosts file.
        known_hosts: PathBuf,
    },
    /// The server presented a certificate, which is not supported.
    #[error("{addr} presented a host certificate; only plain host keys are supported")]
    HostCertificate {
        /// `address:port`.
        addr: String,
    },
    /// known_hosts could not be read or written.
    #[error("known_hosts {}: {message}", path.display())]
    KnownHosts {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The client key could not be loaded.
    #[error("could not load key {}: {message}", path.display())]
    Key {
        /// The key file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The server refused every key offered.
    #[error("server refused {offered} for user {user}")]
    AuthRefused {
        /// The login user.
        user: String,
        /// What was offered (`key /path/to/id` or the ssh-agent's keys).
        offered: String,
    },
    /// The ssh-agent could not be used.
    #[error("ssh-agent: {message}")]
    Agent {
        /// What went wrong.
        message: String,
    },
    /// The SSH protocol layer failed.
    #[error("ssh protocol error: {0}")]
    Protocol(#[from] russh::Error),
    /// The server would not open a session channel.
    #[error("the server refused to open a channel: {reason}")]
    ChannelOpen {
        /// The server's reason.
        reason: String,
    },
    /// The server refused the `exec` request.
    #[error("the server refused to execute the command")]
    ExecRefused,
    /// The command ran past its timeout.
    #[error("command timed out after {after_ms} ms")]
    Timeout {
        /// The timeout.
        after_ms: u64,
    },
    /// The connection went away before the command finished.
    #[error("connection lost: {message}")]
    Disconnected {
        /// What was seen.
        message: String,
    },
    /// A jump host on the way failed.
    #[error("jump host {jump}: {source}")]
    Jump {
        /// The jump host's slug.
        jump: String,
        /// Its error.
        source: Box<SshError>,
    },
    /// A connection attempt made for several waiting commands failed; each of them
    /// gets this same error.
    #[error("{0}")]
    Shared(std::sync::Arc<SshError>),
    /// The host is not an SSH host (the local host given to the SSH executor).
    #[error("host {host} is not reached over ssh")]
    NotSsh {
        /// The slug.
        host: String,
    },
    /// The local shell could not be started.
    #[error("could not start {shell}: {source}")]
    Spawn {
        /// The shell.
        shell: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Reading a local command's output or status failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
}

impl SshError {
    /// Maps this error into the executor port's error for `host` (a slug). This is
    /// the only place the two meet.
    pub fn into_exec_error(self, host: &str) -> ExecError {
        self.exec_error(host)
    }

    fn exec_error(&self, host: &str) -> ExecError {
        let host = host.to_string();
        match self {
            SshError::Shared(inner) => inner.exec_error(&host),
            SshError::Jump { jump, source } => match source.exec_error(jump) {
                ExecError::Connect { host: j, message } => ExecError::Connect {
                    host,
                    message: format!("through jump host {j}: {message}"),
                },
                ExecError::Auth { host: j, message } => ExecError::Auth {
                    host,
                    message: format!("at jump host {j}: {message}"),
                },
                ExecError::Disconnected { host: j, message } => ExecError::Disconnected {
                    host,
                    message: format!("jump host {j}: {message}"),
                },
                other => other,
            },
            SshError::Resolve { .. }
            | SshError::Connect { .. }
            | SshError::ConnectTimeout { .. }
            | SshError::HostCertificate { .. }
            | SshError::KnownHosts { .. } => ExecError::Connect {
                host,
                message: self.to_string(),
            },
            SshError::HostKeyMismatch {
                expected, actual, ..
            } => ExecError::HostKeyMismatch {
                host,
                expected: expected.clone(),
                actual: actual.clone(),
            },
            SshError::UnknownHostKey { fingerprint, .. } => ExecError::UnknownHostKey {
                host,
                fingerprint: fingerprint.clone(),
            },
            SshError::Key { .. } | SshError::AuthRefused { .. } | SshError::Agent { .. } => {
                ExecError::Auth {
                    host,
                    message: self.to_string(),
                }
            }
            SshError::Timeout { after_ms } => ExecError::Timeout {
                after_ms: *after_ms,
            },
            SshError::Protocol(_) | SshError::Disconnected { .. } => ExecError::Disconnected {
                host,
                message: self.to_string(),
            },
            SshError::NotSsh { .. }
            | SshError::ChannelOpen { .. }
            | SshError::ExecRefused
            | SshError::Spawn { .. }
            | SshError::Io { .. } => ExecError::Other(format!("{host}: {self}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatch_maps_with_both_fingerprints() {
        let error = SshError::HostKeyMismatch {
            addr: "10.0.0.2:22".into(),
            expected: "SHA256:old".into(),
            actual: "SHA256:new".into(),
            known_hosts: PathBuf::from("/k"),
            line: 3,
        };
        assert_eq!(
            error.into_exec_error("host:hubris").to_string(),
            "host key mismatch for host:hubris: expected SHA256:old, got SHA256:new"
        );
    }

    #[test]
    fn jump_failure_names_both_hosts() {
        let error = SshError::Jump {
            jump: "host:bastion".into(),
            source: Box::new(SshError::ConnectTimeout {
                addr: "10.0.0.1:22".into(),
                after_ms: 500,
            }),
        };
        assert_eq!(
            error.into_exec_error("vm:db").to_string(),
            "could not connect to vm:db: through jump host host:bastion: \
             connecting to 10.0.0.1:22 timed out after 500 ms"
        );
    }

    #[test]
    fn refused_key_is_an_auth_error() {
        let error = SshError::AuthRefused {
            user: "root".into(),
            offered: "key /k/id".into(),
        };
        assert!(matches!(
            error.into_exec_error("vm:db"),
            ExecError::Auth { host, .. } if host == "vm:db"
        ));
    }
}
