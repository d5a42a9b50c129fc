//! Host-key verification against a known_hosts file.
//!
//! Keys are looked up under the address the connection was made to, as OpenSSH
//! writes them (`address` for port 22, `[address]:port` otherwise; hashed entries
//! are understood). A recorded key that differs from the presented one refuses the
//! connection and reports both SHA256 fingerprints. An address with no recorded
//! key is refused under [`HostKeyPolicy::Strict`] and recorded under
//! [`HostKeyPolicy::AcceptNew`]. An address with recorded keys of other types only
//! is treated as a mismatch, never learnt.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use russh::client;
use russh::keys::{HashAlg, PublicKey, PublicKeyOrCertificate};

use crate::error::SshError;
use crate::ssh::config::HostKeyPolicy;

/// What a connect saw of the server's host key, and what known_hosts made of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenKey {
    /// The key the server presented.
    pub key: PublicKey,
    /// Whether it is trusted.
    pub trust: KeyTrust,
}

impl SeenKey {
    /// The key's SHA256 fingerprint (`SHA256:...`).
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.key)
    }
}

/// How known_hosts judged a presented host key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyTrust {
    /// It was on record.
    Trusted,
    /// It was unknown and has just been recorded ([`HostKeyPolicy::AcceptNew`]).
    Learnt,
    /// It is not on record; the connection was refused.
    Unknown,
    /// A different key is on record; the connection was refused.
    Changed {
        /// The recorded key's fingerprint.
        expected: String,
    },
}

/// Where a connect leaves what it saw of the host key, also when it refuses it.
pub(crate) type SeenSlot = Arc<Mutex<Option<SeenKey>>>;

/// The russh client handler: checks the server's key, nothing else.
pub(crate) struct HostKeyCheck {
    pub(crate) address: String,
    pub(crate) port: u16,
    pub(crate) known_hosts: PathBuf,
    pub(crate) policy: HostKeyPolicy,
    pub(crate) seen: SeenSlot,
}

impl client::Handler for HostKeyCheck {
    type Error = SshError;

    async fn check_server_key(&mut self, key: &PublicKeyOrCertificate) -> Result<bool, SshError> {
        match key {
            PublicKeyOrCertificate::PublicKey { key, .. } => {
                let verdict = verify(
                    &self.address,
                    self.port,
                    key,
                    &self.known_hosts,
                    self.policy,
                );
                let trust = match &verdict {
                    Ok(trust) => Some(trust.clone()),
                    Err(SshError::UnknownHostKey { .. }) => Some(KeyTrust::Unknown),
                    Err(SshError::HostKeyMismatch { expected, .. }) => Some(KeyTrust::Changed {
                        expected: expected.clone(),
                    }),
                    Err(_) => None,
                };
                if let (Some(trust), Ok(mut seen)) = (trust, self.seen.lock()) {
                    *seen = Some(SeenKey {
                        key: key.clone(),
                        trust,
                    });
                }
                verdict?;
                Ok(true)
            }
            PublicKeyOrCertificate::Certificate(_) => Err(SshError::HostCertificate {
                addr: addr(&self.address, self.port),
            }),
        }
    }
}

/// The SHA256 fingerprint of a key, as OpenSSH prints it (`SHA256:...`).
pub fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

/// The SHA256 fingerprints of the keys `known_hosts` records for `address:port`, in file
/// order, as `ssh-keygen -lf` prints them; none when the file is missing or unreadable
/// (the connection itself then says why).
pub fn recorded_fingerprints(address: &str, port: u16, known_hosts: &Path) -> Vec<String> {
    russh::keys::known_hosts::known_host_keys_path(address, port, known_hosts)
        .map(|keys| keys.iter().map(|(_, key)| fingerprint(key)).collect())
        .unwrap_or_default()
}

fn addr(address: &str, port: u16) -> String {
    format!("{address}:{port}")
}

/// Records `key` as the host key of `address:port` in `known_hosts` (the file and its
/// directory are created when missing). For an operator who has seen the key's
/// fingerprint and trusts it.
pub fn trust_key(
    address: &str,
    port: u16,
    key: &PublicKey,
    known_hosts: &Path,
) -> Result<(), SshError> {
    russh::keys::known_hosts::learn_known_hosts_path(address, port, key, known_hosts).map_err(|e| {
        SshError::KnownHosts {
            path: known_hosts.to_path_buf(),
            message: e.to_string(),
        }
    })
}

/// Checks `key` for `address:port` against `known_hosts` under `policy`.
pub(crate) fn verify(
    address: &str,
    port: u16,
    key: &PublicKey,
    known_hosts: &Path,
    policy: HostKeyPolicy,
) -> Result<KeyTrust, SshError> {
    let known_error = |e: russh::keys::Error| SshError::KnownHosts {
        path: known_hosts.to_path_buf(),
        message: e.to_string(),
    };
    let recorded = russh::keys::known_hosts::known_host_keys_path(address, port, known_hosts)
        .map_err(known_error)?;
    if recorded.iter().any(|(_, known)| known == key) {
        return Ok(KeyTrust::Trusted);
    }
    let same_type = recorded
        .iter()
        .find(|(_, known)| known.algorithm() == key.algorithm());
    if let Some((line, known)) = same_type.or(recorded.first()) {
        return Err(SshError::HostKeyMismatch {
            addr: addr(address, port),
            expected: fingerprint(known),
            actual: fingerprint(key),
            known_hosts: known_hosts.to_path_buf(),
            line: *line,
        });
    }
    match policy {
        HostKeyPolicy::Strict => Err(SshError::UnknownHostKey {
            addr: addr(address, port),
            fingerprint: fingerprint(key),
            known_hosts: known_hosts.to_path_buf(),
        }),
        HostKeyPolicy::AcceptNew => {
            trust_key(address, port, key, known_hosts)?;
            tracing::info!(
                address,
                port,
                fingerprint = %fingerprint(key),
                known_hosts = %known_hosts.display(),
                "accepted new host key"
            );
            Ok(KeyTrust::Learnt)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY_A: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIAjltiVO7YiVSLU5hL5ytng+WEdZzSqkktp/4WGGJN3n";
    const KEY_B: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIATMUIsxS02GAkWat0w/UF1zR013M4gQ1rqZth7uq3Mr";

    fn key(base64: &str) -> PublicKey {
        russh::keys::parse_public_key_base64(base64).unwrap()
    }

    fn known_hosts(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known_hosts");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    // rule: FLEET-4
    #[test]
    fn recorded_fingerprints_are_what_ssh_keygen_prints() {
        let (_dir, path) = known_hosts(&format!(
            "[10.0.0.2]:2222 ssh-ed25519 {KEY_A}\n10.0.0.3 ssh-ed25519 {KEY_B}\n"
        ));
        let printed = std::process::Command::new("ssh-keygen")
            .arg("-lf")
            .arg(&path)
            .output()
            .expect("ssh-keygen runs");
        assert!(printed.status.success(), "{printed:?}");
        let printed = String::from_utf8(printed.stdout).unwrap();
        // `256 SHA256:... [10.0.0.2]:2222 (ED25519)`, one line per key, in file order.
        let expected: Vec<String> = printed
            .lines()
            .map(|line| line.split_whitespace().nth(1).unwrap().to_owned())
            .collect();
        assert_eq!(expected.len(), 2, "{printed}");
        assert_eq!(
            recorded_fingerprints("10.0.0.2", 2222, &path),
            vec![expected[0].clone()]
        );
        assert_eq!(
            recorded_fingerprints("10.0.0.3", 22, &path),
            vec![expected[1].clone()]
        );
        assert!(recorded_fingerprints("10.0.0.4", 22, &path).is_empty());
        assert!(
            recorded_fingerprints("10.0.0.2", 2222, &path.with_extension("missing")).is_empty()
        );
    }

    #[test]
    fn recorded_key_is_accepted() {
        let (_dir, path) = known_hosts(&format!("[10.0.0.2]:2222 ssh-ed25519 {KEY_A}\n"));
        let trust = verify("10.0.0.2", 2222, &key(KEY_A), &path, HostKeyPolicy::Strict).unwrap();
        assert_eq!(trust, KeyTrust::Trusted);
    }

    #[test]
    fn changed_key_is_refused_with_both_fingerprints_even_under_accept_new() {
        let (_dir, path) = known_hosts(&format!("10.0.0.2 ssh-ed25519 {KEY_A}\n"));
        let error =
            verify("10.0.0.2", 22, &key(KEY_B), &path, HostKeyPolicy::AcceptNew).unwrap_err();
        let SshError::HostKeyMismatch {
            expected,
            actual,
            line,
            ..
        } = error
        else {
            panic!("expected a mismatch, got {error}");
        };
        assert_eq!(expected, fingerprint(&key(KEY_A)));
        assert_eq!(actual, fingerprint(&key(KEY_B)));
        assert!(expected.starts_with("SHA256:"));
        assert_ne!(expected, actual);
        assert_eq!(line, 1);
        // Nothing was learnt.
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("10.0.0.2 ssh-ed25519 {KEY_A}\n")
        );
    }

    #[test]
    fn unknown_key_is_refused_when_strict() {
        let (_dir, path) = known_hosts("");
        let error = verify("10.0.0.9", 22, &key(KEY_A), &path, HostKeyPolicy::Strict).unwrap_err();
        assert!(
            matches!(&error, SshError::UnknownHostKey { fingerprint: f, .. } if *f == fingerprint(&key(KEY_A))),
            "{error}"
        );
    }

    #[test]
    fn unknown_key_is_learnt_under_accept_new_then_recognised() {
        let (_dir, path) = known_hosts("");
        let first = verify(
            "10.0.0.9",
            2200,
            &key(KEY_A),
            &path,
            HostKeyPolicy::AcceptNew,
        )
        .unwrap();
        assert_eq!(first, KeyTrust::Learnt);
        let again = verify("10.0.0.9", 2200, &key(KEY_A), &path, HostKeyPolicy::Strict).unwrap();
        assert_eq!(again, KeyTrust::Trusted);
        let text = std::fs::read_to_string(&path).unwrap();
        let learnt: Vec<&str> = text.lines().filter(|line| !line.is_empty()).collect();
        assert_eq!(learnt.len(), 1, "{text}");
        assert!(
            learnt[0].starts_with("[10.0.0.9]:2200 ssh-ed25519 "),
            "{text}"
        );
    }

    #[test]
    fn corrupt_known_hosts_is_an_error_naming_the_file() {
        let (_dir, path) = known_hosts("10.0.0.2 ssh-ed25519 !!!notbase64\n");
        let error = verify("10.0.0.2", 22, &key(KEY_A), &path, HostKeyPolicy::Strict).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with(&format!("known_hosts {}:", path.display())),
            "{error}"
        );
    }
}
