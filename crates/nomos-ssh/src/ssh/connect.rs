//! Opening one authenticated SSH connection: TCP (or a tunnel), handshake, host-key
//! check, public-key authentication (a key file, with its passphrase when it has one,
//! or the ssh-agent's keys), all under the connect timeout.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use russh::client::{self, Handle};
use russh::keys::agent::AgentIdentity;
use russh::keys::agent::client::AgentClient;
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use crate::error::SshError;
use crate::inventory::{Passphrase, SshTarget};
use crate::ssh::config::SshConfig;
use crate::ssh::verify::{HostKeyCheck, SeenSlot};

/// An authenticated session handle.
pub(crate) type SshHandle = Handle<HostKeyCheck>;

/// How a connection authenticated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthMethod {
    /// A private key file.
    KeyFile {
        /// The file.
        path: PathBuf,
        /// Whether it was unlocked with a passphrase.
        passphrase: PassphraseUse,
    },
    /// A key held by the ssh-agent.
    Agent {
        /// The agent's socket.
        socket: PathBuf,
        /// The accepted key's SHA256 fingerprint.
        fingerprint: String,
        /// The key's comment in the agent.
        comment: String,
    },
}

/// Whether a key file needed its passphrase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassphraseUse {
    /// The key is not encrypted.
    Unencrypted,
    /// The key was decrypted with the inventory's passphrase source.
    Decrypted,
}

impl fmt::Display for AuthMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthMethod::KeyFile {
                path,
                passphrase: PassphraseUse::Unencrypted,
            } => write!(f, "key {}", path.display()),
            AuthMethod::KeyFile {
                path,
                passphrase: PassphraseUse::Decrypted,
            } => write!(f, "key {} (with passphrase)", path.display()),
            AuthMethod::Agent {
                socket,
                fingerprint,
                comment,
            } => write!(
                f,
                "ssh-agent {} key {fingerprint} {comment}",
                socket.display()
            ),
        }
    }
}

/// The russh settings for every connection.
pub(crate) fn client_config(config: &SshConfig) -> Arc<client::Config> {
    Arc::new(client::Config {
        keepalive_interval: Some(config.keepalive_interval),
        keepalive_max: 3,
        nodelay: true,
        ..Default::default()
    })
}

/// Opens a TCP connection to `target`, resolving its name first.
pub(crate) async fn tcp(target: &SshTarget) -> Result<TcpStream, SshError> {
    let addrs: Vec<_> = tokio::net::lookup_host((target.address.as_str(), target.port))
        .await
        .map_err(|source| SshError::Resolve {
            address: target.address.clone(),
            source,
        })?
        .collect();
    let stream = TcpStream::connect(addrs.as_slice())
        .await
        .map_err(|source| SshError::Connect {
            addr: format!("{}:{}", target.address, target.port),
            source,
        })?;
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!("set_nodelay failed: {e}");
    }
    Ok(stream)
}

/// Runs the SSH handshake and authentication over `stream`, bounded by the
/// connect timeout.
/// What the server presented is left in `seen`, also when it is refused.
pub(crate) async fn handshake<S>(
    stream: S,
    target: &SshTarget,
    config: &SshConfig,
    seen: SeenSlot,
) -> Result<(SshHandle, AuthMethod), SshError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let key = match &target.key_file {
        Some(path) => Some(load_key(path, target.passphrase.as_ref())?),
        None => None,
    };
    let handler = HostKeyCheck {
        address: target.address.clone(),
        port: target.port,
        known_hosts: config.known_hosts.clone(),
        policy: config.host_key_policy,
        seen,
    };
    let work = async {
        let mut handle = client::connect_stream(client_config(config), stream, handler).await?;
        let method = match key {
            Some((key, path, passphrase)) => {
                authenticate(&mut handle, target, key).await?;
                AuthMethod::KeyFile { path, passphrase }
            }
            None => authenticate_with_agent(&mut handle, target, config).await?,
        };
        Ok((handle, method))
    };
    bounded(config.connect_timeout, target, work).await
}

/// Bounds a connect step by the connect timeout.
pub(crate) async fn bounded<T>(
    timeout: Duration,
    target: &SshTarget,
    work: impl Future<Output = Result<T, SshError>>,
) -> Result<T, SshError> {
    match tokio::time::timeout(timeout, work).await {
        Ok(result) => result,
        Err(_) => Err(SshError::ConnectTimeout {
            addr: format!("{}:{}", target.address, target.port),
            after_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        }),
    }
}

async fn authenticate(
    handle: &mut SshHandle,
    target: &SshTarget,
    key: PrivateKey,
) -> Result<(), SshError> {
    let hash = if key.algorithm().is_rsa() {
        handle.best_supported_rsa_hash().await?.flatten()
    } else {
        None
    };
    let result = handle
        .authenticate_publickey(
            target.user.clone(),
            PrivateKeyWithHashAlg::new(Arc::new(key), hash),
        )
        .await?;
    if result.success() {
        Ok(())
    } else {
        Err(SshError::AuthRefused {
            user: target.user.clone(),
            offered: match &target.key_file {
                Some(path) => format!("key {}", path.display()),
                None => "the key".into(),
            },
        })
    }
}

/// Offers each key of the ssh-agent in turn until the server accepts one.
async fn authenticate_with_agent(
    handle: &mut SshHandle,
    target: &SshTarget,
    config: &SshConfig,
) -> Result<AuthMethod, SshError> {
    let agent_error = |message: String| SshError::Agent { message };
    let Some(socket) = &config.agent_socket else {
        return Err(agent_error(
            "the host has no key_file and no agent is configured (SSH_AUTH_SOCK is not set)".into(),
        ));
    };
    let mut agent = AgentClient::connect_uds(socket)
        .await
        .map_err(|e| agent_error(format!("could not reach {}: {e}", socket.display())))?;
    let identities = agent
        .request_identities()
        .await
        .map_err(|e| agent_error(format!("could not list keys: {e}")))?;
    let mut offered = 0;
    for identity in identities {
        let AgentIdentity::PublicKey { key, comment } = identity else {
            continue;
        };
        let fingerprint = crate::ssh::verify::fingerprint(&key);
        offered += 1;
        let hash = if key.algorithm().is_rsa() {
            handle.best_supported_rsa_hash().await?.flatten()
        } else {
            None
        };
        let result = handle
            .authenticate_publickey_with(target.user.clone(), key, hash, &mut agent)
            .await
            .map_err(|e| agent_error(format!("signing failed: {e}")))?;
        if result.success() {
            return Ok(AuthMethod::Agent {
                socket: socket.clone(),
                fingerprint,
                comment,
            });
        }
    }
    Err(SshError::AuthRefused {
        user: target.user.clone(),
        offered: format!(
            "the {offered} key(s) of the ssh-agent at {}",
            socket.display()
        ),
    })
}

/// Loads a private key, expanding a leading `~/`; an encrypted one is decrypted with
/// the passphrase read from `passphrase`.
fn load_key(
    path: &Path,
    passphrase: Option<&Passphrase>,
) -> Result<(PrivateKey, PathBuf, PassphraseUse), SshError> {
    let path = expand_home(path);
    let key_error = |message: String| SshError::Key {
        path: path.clone(),
        message,
    };
    match russh::keys::load_secret_key(&path, None) {
        Ok(key) => Ok((key, path, PassphraseUse::Unencrypted)),
        Err(russh::keys::Error::KeyIsEncrypted) => {
            let secret = match passphrase {
                Some(source) => Some(read_passphrase(source).map_err(key_error)?),
                None => None,
            };
            let Some(secret) = secret else {
                return Err(key_error(
                    "the key is encrypted; name its passphrase with passphrase_file or \
                     passphrase_env for this host in the inventory"
                        .into(),
                ));
            };
            match russh::keys::load_secret_key(&path, Some(&secret)) {
                Ok(key) => Ok((key, path, PassphraseUse::Decrypted)),
                Err(e) => Err(key_error(format!(
                    "could not decrypt it with the passphrase from {}: {e}",
                    describe(passphrase)
                ))),
            }
        }
        Err(e) => Err(key_error(e.to_string())),
    }
}

fn describe(passphrase: Option<&Passphrase>) -> String {
    match passphrase {
        Some(Passphrase::File(file)) => format!("passphrase_file {}", expand_home(file).display()),
        Some(Passphrase::Env(name)) => format!("passphrase_env {name}"),
        None => "nowhere".into(),
    }
}

/// Reads a passphrase from its file (one trailing newline dropped) or variable.
fn read_passphrase(source: &Passphrase) -> Result<String, String> {
    match source {
        Passphrase::File(file) => {
            let file = expand_home(file);
            match std::fs::read_to_string(&file) {
                Ok(text) => {
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    Ok(text.strip_suffix('\r').unwrap_or(text).to_string())
                }
                Err(e) => Err(format!(
                    "could not read its passphrase_file {}: {e}",
                    file.display()
                )),
            }
        }
        Passphrase::Env(name) => match std::env::var(name) {
            Ok(value) => Ok(value),
            Err(std::env::VarError::NotPresent) => {
                Err(format!("its passphrase_env variable {name} is not set"))
            }
            Err(std::env::VarError::NotUnicode(_)) => Err(format!(
                "its passphrase_env variable {name} is not valid UTF-8"
            )),
        },
    }
}

fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_key_file_is_a_key_error_naming_the_file() {
        let error = load_key(Path::new("/nonexistent/id_ed25519"), None).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("could not load key /nonexistent/id_ed25519:"),
            "{error}"
        );
    }

    fn encrypted_key(dir: &Path) -> PathBuf {
        let path = dir.join("id");
        let status = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "secret", "-f"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        path
    }

    fn key_message(result: Result<(PrivateKey, PathBuf, PassphraseUse), SshError>) -> String {
        match result {
            Ok(_) => panic!("expected a key error"),
            Err(error @ SshError::Key { .. }) => error.to_string(),
            Err(other) => panic!("expected a key error, got {other}"),
        }
    }

    #[test]
    fn an_encrypted_key_without_a_passphrase_source_names_the_inventory_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = encrypted_key(dir.path());
        let message = key_message(load_key(&path, None));
        assert!(
            message.contains("passphrase_file or passphrase_env"),
            "{message}"
        );
    }

    #[test]
    fn an_encrypted_key_is_decrypted_with_the_passphrase_from_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = encrypted_key(dir.path());
        let file = dir.path().join("pass");
        std::fs::write(&file, "secret\n").unwrap();
        let (_, _, used) = load_key(&path, Some(&Passphrase::File(file))).unwrap();
        assert_eq!(used, PassphraseUse::Decrypted);
    }

    #[test]
    fn a_wrong_or_missing_passphrase_is_a_key_error_naming_its_source() {
        let dir = tempfile::tempdir().unwrap();
        let path = encrypted_key(dir.path());
        let file = dir.path().join("pass");
        std::fs::write(&file, "wrong\n").unwrap();
        let message = key_message(load_key(&path, Some(&Passphrase::File(file.clone()))));
        assert!(
            message.contains(&format!("passphrase_file {}", file.display())),
            "{message}"
        );
        let unset = Passphrase::Env("NOMOS_TEST_UNSET_PASSPHRASE_VARIABLE".into());
        let message = key_message(load_key(&path, Some(&unset)));
        assert!(
            message.contains("NOMOS_TEST_UNSET_PASSPHRASE_VARIABLE is not set"),
            "{message}"
        );
        assert!(!message.contains("secret"), "{message}");
    }

    #[test]
    fn tilde_means_home() {
        let home = std::env::var_os("HOME").unwrap();
        assert_eq!(
            expand_home(Path::new("~/.ssh/id")),
            PathBuf::from(home).join(".ssh/id")
        );
        assert_eq!(expand_home(Path::new("/k/id")), PathBuf::from("/k/id"));
    }
}
