//! CONTROL-5/6: the operator closes a denied or stuck task, and archives a session off the
//! board. The core decides what each does; here the session is taken first, so a close or
//! an archive never interleaves with a running turn (TURN-8).

use nomos_core::record::Decider;
use nomos_core::session::CloseEffect;
use nomos_core::{Outcome, SessionId};

use crate::agent::Agent;
use crate::error::AgentError;

impl Agent {
    /// CONTROL-5, AUDIT-1: closes an open task as `failure` or `partial` with a note.
    /// Refused with [`AgentError::TurnInProgress`] while a turn runs, and with
    /// [`AgentError::Close`] when the core refuses (terminal, a command running, ...).
    pub async fn close_session(
        &self,
        id: SessionId,
        outcome: Outcome,
        note: Option<&str>,
        by: Option<&Decider>,
    ) -> Result<CloseEffect, AgentError> {
        let _guard = self
            .inner
            .locks
            .try_lock(id)
            .await
            .ok_or(AgentError::TurnInProgress(id))?;
        self.session(id).await?;
        let effect = self
            .mutate(id, |session, now| {
                session.handle_operator_close(now, outcome, note, by)
            })
            .await??;
        tracing::info!(
            target: "nomos::audit",
            session = %id,
            outcome = outcome.as_str(),
            cancelled = effect.n_cancelled,
            principal = by.map_or("-", |d| d.name.as_str()),
            request = by.and_then(|d| d.request_id.as_deref()).unwrap_or("-"),
            "operator closed the task"
        );
        Ok(effect)
    }

    /// CONTROL-6: archives a session (it leaves the board) or brings it back; returns
    /// whether that changed anything. Refused while a turn runs.
    pub async fn archive_session(
        &self,
        id: SessionId,
        archived: bool,
        by: Option<&Decider>,
    ) -> Result<bool, AgentError> {
        let _guard = self
            .inner
            .locks
            .try_lock(id)
            .await
            .ok_or(AgentError::TurnInProgress(id))?;
        self.session(id).await?;
        let changed = self
            .mutate(id, |session, now| session.handle_archive(now, archived, by))
            .await?;
        Ok(changed)
    }
}
