//! The event bus: committed events, live text deltas and live command output, per session
//! and global.
//!
//! Publishing never blocks: a subscriber that falls behind gets
//! [`tokio::sync::broadcast::error::RecvError::Lagged`] and must catch up from the store's
//! durable event log (which is what the SSE endpoint does with `Last-Event-ID`).

use nomos_core::event::EventRecord;
use nomos_core::ports::exec::OutputStream;
use nomos_core::{ExecutionId, SessionId};
use serde::Serialize;
use tokio::sync::broadcast;

/// Something subscribers hear about.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LiveEvent {
    /// A committed domain event (durable, numbered).
    Committed(EventRecord),
    /// Text the model is streaming (not durable; the final message is).
    TextDelta {
        /// The session.
        session_id: SessionId,
        /// The new text.
        text: String,
    },
    /// EXEC-10: output of a running command (not durable; the stored output is).
    ExecutionOutput {
        /// The session.
        session_id: SessionId,
        /// The execution.
        execution_id: ExecutionId,
        /// Which stream it came from.
        stream: OutputStream,
        /// The new text.
        text: String,
    },
}

impl LiveEvent {
    /// The session the event belongs to.
    pub fn session_id(&self) -> SessionId {
        match self {
            LiveEvent::Committed(record) => record.session_id,
            LiveEvent::TextDelta { session_id, .. }
            | LiveEvent::ExecutionOutput { session_id, .. } => *session_id,
        }
    }
}

/// Fans events out to any number of subscribers.
#[derive(Clone, Debug)]
pub struct EventBus {
    sender: broadcast::Sender<LiveEvent>,
}

impl EventBus {
    /// A bus that buffers `capacity` events per subscriber before they lag.
    pub fn with_capacity(capacity: usize) -> EventBus {
        let (sender, _) = broadcast::channel(capacity.max(1));
        EventBus { sender }
    }

    /// Publishes an event; never blocks, and nobody listening is fine.
    pub fn publish(&self, event: LiveEvent) {
        let _ = self.sender.send(event);
    }

    /// Subscribes to every session's events; filter with [`LiveEvent::session_id`].
    pub fn subscribe(&self) -> broadcast::Receiver<LiveEvent> {
        self.sender.subscribe()
    }

    /// How many subscribers are listening.
    pub fn n_subscribers(&self) -> usize {
        self.sender.receiver_count()
    }
}
