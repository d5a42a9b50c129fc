//! Progress notifications while a tool call runs, for clients that sent a progress token
//! (a long command keeps a client's own request timeout from firing).

use std::future::Future;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;

/// How often progress is reported while a call runs.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Awaits `call`, telling the client every [`PROGRESS_EVERY`] that it still runs.
pub(crate) async fn with_progress<T>(
    call: impl Future<Output = T>,
    context: &RequestContext<RoleServer>,
) -> T {
    let Some(token) = context.meta.get_progress_token() else {
        return call.await;
    };
    let mut call = std::pin::pin!(call);
    let started = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(started + PROGRESS_EVERY, PROGRESS_EVERY);
    loop {
        tokio::select! {
            done = &mut call => return done,
            _ = ticks.tick() => {
                let secs = started.elapsed().as_secs();
                let mut param = ProgressNotificationParam::new(token.clone(), secs as f64);
                param.message = Some(format!("still running after {secs} s"));
                if let Err(error) = context.peer.notify_progress(param).await {
                    tracing::debug!(%error, "could not send a progress notification");
                }
            }
        }
    }
}
