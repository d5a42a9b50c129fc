//! Opening one authenticated SSH connection: TCP (or a tunnel), handshake, host-key
//! check, public-key authentication, all under the connect timeout.

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
use crate::inventory::SshTarget;
use crate::ssh::config::SshConfig;
use crate::ssh::verify::HostKeyCheck;

/// An authenticated session handle.
pub(crate) type SshHandle = Handle<HostKeyCheck>;

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
pub(crate) async fn handshake<S>(
    stream: S,
    target: &SshTarget,
    config: &SshConfig,
) -> Result<SshHandle, SshError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let key = match &target.key_file {
        Some(path) => Some(load_key(path)?),
        None => None,
    };
    let handler = HostKeyCheck {
        address: target.address.clone(),
        port: target.port,
        known_hosts: config.known_hosts.clone(),
        policy: config.host_key_policy,
    };
    let work = async {
        let mut handle = client::connect_stream(client_config(config), stream, handler).await?;
        match key {
            Some(key) => authenticate(&mut handle, target, key).await?,
            None => authenticate_with_agent(&mut handle, target, config).await?,
        }
        Ok(handle)
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
) -> Result<(), SshError> {
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
        let AgentIdentity::PublicKey { key, .. } = identity else {
            continue;
        };
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
            return Ok(());
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

/// Loads a private key (no passphrase), expanding a leading `~/`.
fn load_key(path: &Path) -> Result<PrivateKey, SshError> {
    let path = expand_home(path);
    russh::keys::load_secret_key(&path, None).map_err(|e| SshError::Key {
        path: path.clone(),
        message: e.to_string(),
    })
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
        let error = load_key(Path::new("/nonexistent/id_ed25519")).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("could not load key /nonexistent/id_ed25519:"),
            "{error}"
        );
    }

    #[test]
    fn encrypted_key_is_refused_with_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id");
        let status = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "secret", "-f"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        let error = load_key(&path).unwrap_err();
        assert!(matches!(error, SshError::Key { .. }), "{error}");
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
