//! The two transports: streamable HTTP as a tower service, and stdio.

use std::sync::Arc;

use nomos_agent::{Access, Agent};
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::server::NomosMcp;

/// Which `Host` headers the HTTP transport accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostCheck {
    /// Loopback names only: guards a server without authentication against DNS rebinding.
    Loopback,
    /// Any host: every request carries a bearer token the browser never sends by itself.
    Any,
}

/// How the HTTP transport is set up. No `Default`: the caller says which hosts to accept.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Which `Host` headers are accepted.
    pub hosts: HostCheck,
    /// Flips to `true` at shutdown; open MCP sessions and their streams end then.
    pub shutdown: watch::Receiver<bool>,
}

/// The streamable HTTP transport as a tower service: one [`NomosMcp`] per MCP session.
/// Requests without a [`crate::Caller`] in their extensions may only read.
pub fn http_service(
    agent: Agent,
    options: HttpOptions,
) -> StreamableHttpService<NomosMcp, LocalSessionManager> {
    let cancel = CancellationToken::new();
    let mut shutdown = options.shutdown;
    let on_shutdown = cancel.clone();
    // Ends with the server: when shutdown flips or its sender is gone. Outside a runtime
    // (a router built only to be described) there is nothing to stop.
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            let _ = shutdown.wait_for(|down| *down).await;
            on_shutdown.cancel();
        });
    }
    let mut config = StreamableHttpServerConfig::default().with_cancellation_token(cancel);
    if options.hosts == HostCheck::Any {
        config = config.disable_allowed_hosts();
    }
    StreamableHttpService::new(
        move || Ok(NomosMcp::new(agent.clone(), Access::ReadOnly, None)),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// Why the stdio transport stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The client never completed the `initialize` handshake.
    #[error("the MCP client did not initialize: {0}")]
    Initialize(String),
    /// The server task ended abnormally.
    #[error("the MCP server task ended abnormally: {0}")]
    Task(String),
}

/// Serves one MCP session on stdin/stdout until the client closes it. Whoever runs the
/// process owns the data directory, so calls have the operator's access (under the gates);
/// `base_url` is where the web UI lives, for the links in approval requests.
pub async fn serve_stdio(agent: Agent, base_url: Option<String>) -> Result<(), StdioError> {
    let server = NomosMcp::new(agent, Access::Operate, base_url);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| StdioError::Initialize(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| StdioError::Task(e.to_string()))?;
    Ok(())
}
