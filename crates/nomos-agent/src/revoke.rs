//! CONTROL-2: the operator revokes an assent window or cancels a pending approval. Each is
//! one decision of the core, committed through the same path as every gate decision, so
//! the next gate decision sees it.

use nomos_core::event::DomainEvent;
use nomos_core::ports::store::SessionFilter;
use nomos_core::record::{AssentWindow, Decider};
use nomos_core::{ApprovalId, ExecutionId, SessionId, SessionStatus};

use crate::agent::Agent;
use crate::error::AgentError;

impl Agent {
    /// CONTROL-2, AUDIT-1: closes the session's open assent window now; returns the
    /// generation it covered. Refused ([`AgentError::Revoke`]) when no window is open.
    pub async fn revoke_assent(
        &self,
        id: SessionId,
        by: Option<&Decider>,
    ) -> Result<u32, AgentError> {
        self.session(id).await?;
        let generation = self
            .mutate(id, |session, now| session.handle_revoke_assent(now, by))
            .await??;
        tracing::info!(
            target: "nomos::audit",
            session = %id,
            generation,
            principal = by.map_or("-", |d| d.name.as_str()),
            request = by.and_then(|d| d.request_id.as_deref()).unwrap_or("-"),
            "operator revoked the assent"
        );
        Ok(generation)
    }

    /// CONTROL-2, AUDIT-1: cancels a pending approval by its id; its execution is cancelled
    /// and never runs. Refused like a decision when the approval is no longer pending.
    pub async fn cancel_approval(
        &self,
        approval_id: ApprovalId,
        by: Option<&Decider>,
    ) -> Result<(SessionId, ExecutionId), AgentError> {
        let approval = self
            .inner
            .store
            .approval(approval_id)
            .await?
            .ok_or(AgentError::ApprovalNotFound(approval_id))?;
        let id = approval.session_id;
        // Decided on what the store holds, like a decision: another process may have
        // requested or decided it.
        self.inner.cache.forget(id);
        let execution_id = self
            .mutate(id, |session, now| {
                session.handle_cancel_approval(now, approval_id, by)
            })
            .await??;
        tracing::info!(
            target: "nomos::audit",
            session = %id,
            execution = %execution_id,
            principal = by.map_or("-", |d| d.name.as_str()),
            request = by.and_then(|d| d.request_id.as_deref()).unwrap_or("-"),
            decision = "cancel",
            "operator cancelled an approval"
        );
        Ok((id, execution_id))
    }
}

/// CONTROL-3: one open assent window, with who granted it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenWindow {
    /// The session.
    pub session_id: SessionId,
    /// The session's goal, if set.
    pub goal: Option<String>,
    /// The window as the session row holds it (generation, opened, expires).
    pub window: AssentWindow,
    /// AUDIT-1: who granted it, from its `plan.assent` event.
    pub granted_by: Option<String>,
    /// AUDIT-1: the request that carried the assent.
    pub request_id: Option<String>,
}

/// Sessions read per page while looking for open windows.
const WINDOW_PAGE: u32 = 500;

/// Events read to find who granted a window.
const GRANT_EVENTS: u32 = 100_000;

impl Agent {
    /// CONTROL-3: every assent window open now, oldest grant first, with who granted it.
    /// Windows close at the session's end, so only open sessions are read.
    pub async fn open_windows(&self) -> Result<Vec<OpenWindow>, AgentError> {
        let now = self.now();
        let store = self.store();
        let mut out = Vec::new();
        let mut after = None;
        loop {
            let filter = SessionFilter {
                statuses: SessionStatus::ALL
                    .iter()
                    .copied()
                    .filter(|s| !s.is_terminal())
                    .collect(),
                after,
                limit: Some(WINDOW_PAGE),
                ..SessionFilter::default()
            };
            let page = store.list_sessions(&filter).await?;
            let n = page.len();
            after = page.last().map(|s| s.id);
            for session in page {
                let Some(window) = session.assent.filter(|w| now < w.expires_at) else {
                    continue;
                };
                let events = store
                    .events_after(Some(session.id), 0, GRANT_EVENTS)
                    .await?;
                let grant = events.iter().rev().find_map(|e| match &e.event {
                    DomainEvent::AssentOpened {
                        generation,
                        granted_by,
                        request_id,
                        ..
                    } if *generation == window.generation => {
                        Some((granted_by.clone(), request_id.clone()))
                    }
                    _ => None,
                });
                let (granted_by, request_id) = grant.unwrap_or_default();
                out.push(OpenWindow {
                    session_id: session.id,
                    goal: session.goal.clone(),
                    window,
                    granted_by,
                    request_id,
                });
            }
            if n < WINDOW_PAGE as usize {
                break;
            }
        }
        out.sort_by_key(|w| (w.window.opened_at, w.session_id));
        Ok(out)
    }
}
