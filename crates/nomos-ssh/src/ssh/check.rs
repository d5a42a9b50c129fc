//! Checking that hosts are reachable the way commands will reach them: connect (through
//! any jump hosts), authenticate, run the read-only `true`, and report the
//! authentication method and what known_hosts made of the host key.
//!
//! The operator's command for it is `nomos-server hosts check`; with `--trust-new` it
//! records the unknown keys it showed with [`trust_key`](crate::ssh::verify::trust_key).

use nomos_core::ports::exec::ExecLimits;
use nomos_core::time::Span;

use crate::error::SshError;
use crate::ssh::SshExecutor;
use crate::ssh::connect::AuthMethod;
use crate::ssh::verify::SeenKey;

/// What checking one host found.
#[derive(Debug)]
pub struct HostCheck {
    /// The host's slug.
    pub slug: String,
    /// The host key the server presented, with its verdict; `None` when the
    /// connection failed before a key was seen (unreachable, or a jump host failed).
    pub host_key: Option<SeenKey>,
    /// How it authenticated, or why the check failed.
    pub outcome: Result<AuthMethod, SshError>,
}

impl SshExecutor {
    /// Connects to the SSH host `slug` as a command would, runs `true` and reports.
    /// A connection already pooled is reused.
    pub async fn check(&self, slug: &str) -> HostCheck {
        let limits = ExecLimits::with_timeout(Span::from_secs(10));
        let outcome = match self.execute(slug, "true", limits).await {
            Ok(output) if output.exit_code == Some(0) => self.auth_method(slug).await,
            Ok(output) => Err(SshError::Disconnected {
                message: format!("`true` ended with {:?}", output.exit_code),
            }),
            Err(error) => Err(error),
        };
        HostCheck {
            slug: slug.to_string(),
            host_key: self.pool.seen_key(slug),
            outcome,
        }
    }

    async fn auth_method(&self, slug: &str) -> Result<AuthMethod, SshError> {
        let (conn, _lease) = self.pool.acquire(slug).await?;
        Ok(conn.auth.clone())
    }
}
