//! The event bus: committed events, live text deltas and live command output, per session
//! and global.
//!
//! Publishing never blocks: a subscriber that falls behind gets
//! [`tokio::sync::broadcast::error::RecvError::Lagged`] and must catch up from the store's
//! durable event log (which is what the SSE endpoint does with `Last-Event-ID`).
//!
//! Subscribers that send events on to many clients subscribe with
//! [`EventBus::subscribe_shared`]: each event reaches them as one [`Published`] value shared by
//! all of them, whose encoding the first one makes and every other one reuses, so an event is
//! encoded once per numbering, not once per client.

use std::sync::{Arc, OnceLock};

use nomos_core::event::EventRecord;
use nomos_core::ports::exec::OutputStream;
use nomos_core::{ExecutionId, MessageId, SessionId};
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
        /// The id the reply will have once it is appended, when the runtime knew it as the
        /// model began (a message appended meanwhile takes it first).
        message_id: Option<MessageId>,
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

/// How a subscriber numbers committed events: by the session's `seq` or the global one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// Per session (`seq`).
    Session,
    /// Across sessions (`global_seq`).
    Global,
}

/// One published event, shared by every [`EventBus::subscribe_shared`] subscriber, with the
/// encoding the first of them made for each numbering.
#[derive(Debug)]
pub struct Published {
    event: LiveEvent,
    encoded: [OnceLock<Arc<str>>; 2],
}

impl Published {
    /// The event.
    pub fn event(&self) -> &LiveEvent {
        &self.event
    }

    /// The event encoded for subscribers numbering by `numbering`: made by `encode` the first
    /// time it is asked for, and the same shared text for every later caller.
    pub fn encoded(
        &self,
        numbering: Numbering,
        encode: impl FnOnce(&LiveEvent) -> String,
    ) -> Arc<str> {
        let slot = match numbering {
            Numbering::Session => &self.encoded[0],
            Numbering::Global => &self.encoded[1],
        };
        slot.get_or_init(|| Arc::from(encode(&self.event))).clone()
    }
}

/// Fans events out to any number of subscribers.
#[derive(Clone, Debug)]
pub struct EventBus {
    sender: broadcast::Sender<LiveEvent>,
    shared: broadcast::Sender<Arc<Published>>,
}

impl EventBus {
    /// A bus that buffers `capacity` events per subscriber before they lag.
    pub fn with_capacity(capacity: usize) -> EventBus {
        let (sender, _) = broadcast::channel(capacity.max(1));
        let (shared, _) = broadcast::channel(capacity.max(1));
        EventBus { sender, shared }
    }

    /// Publishes an event; never blocks, and nobody listening is fine.
    pub fn publish(&self, event: LiveEvent) {
        if self.shared.receiver_count() > 0 {
            let _ = self.shared.send(Arc::new(Published {
                event: event.clone(),
                encoded: Default::default(),
            }));
        }
        let _ = self.sender.send(event);
    }

    /// Subscribes to every session's events, each one shared with the other shared
    /// subscribers (see [`Published`]); they lag like [`EventBus::subscribe`]'s.
    pub fn subscribe_shared(&self) -> broadcast::Receiver<Arc<Published>> {
        self.shared.subscribe()
    }

    /// Subscribes to every session's events; filter with [`LiveEvent::session_id`].
    pub fn subscribe(&self) -> broadcast::Receiver<LiveEvent> {
        self.sender.subscribe()
    }

    /// How many subscribers are listening.
    pub fn n_subscribers(&self) -> usize {
        self.sender.receiver_count() + self.shared.receiver_count()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use uuid::Uuid;

    use super::*;

    #[tokio::test]
    async fn an_event_is_encoded_once_for_all_shared_subscribers() {
        let bus = EventBus::with_capacity(8);
        let mut subscribers: Vec<_> = (0..50).map(|_| bus.subscribe_shared()).collect();
        bus.publish(LiveEvent::TextDelta {
            session_id: SessionId(Uuid::nil()),
            message_id: None,
            text: "hello".into(),
        });
        let n_encoded = AtomicUsize::new(0);
        let mut texts = Vec::new();
        for subscriber in &mut subscribers {
            let published = subscriber.recv().await.unwrap();
            texts.push(published.encoded(Numbering::Global, |event| {
                n_encoded.fetch_add(1, Ordering::Relaxed);
                format!("{event:?}")
            }));
        }
        assert_eq!(n_encoded.load(Ordering::Relaxed), 1);
        assert!(texts.iter().all(|t| Arc::ptr_eq(t, &texts[0])));
        assert!(texts[0].contains("hello"));
    }
}
