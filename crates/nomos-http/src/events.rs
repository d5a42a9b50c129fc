//! Live events over SSE: `GET /api/sessions/{id}/events` (ids are the session's `seq`) and
//! `GET /api/events` (ids are `global_seq`).
//!
//! Each durable event is sent as `id: <seq>`, `event: <kind>` (`plan.step.started`,
//! `turn.done`...) and the committed record's wire form ([`EventRecordDto`]) as JSON
//! data. Model text streams as `event: text.delta` without an id (it is not durable; the
//! final message is), and a running command's output as `event: execution.output`
//! (EXEC-10), also without an id.
//!
//! Resuming: the stream subscribes to the bus *before* it reads the backlog from the
//! database, then skips live events at or below the last id it sent, so a client
//! reconnecting with `Last-Event-ID` (or `?last_event_id=`) misses nothing and gets
//! nothing twice. A session stream without one starts from the session's first event;
//! the global stream without one starts with live events only.
//!
//! Falling behind: when this stream's bus receiver lags (the client reads too slowly) or a
//! live event arrives with a gap before it, the stream transparently re-reads the missing
//! events from the database and goes on; clients never have to reload for it. Only text
//! deltas can be lost that way.
//!
//! Live output queued behind a catch-up: while the backlog is read from the database, the
//! bus keeps queueing live events for this stream. Its durable events are skipped by
//! position. A text delta queued then may belong to a reply whose final message the
//! catch-up has already sent, and a command's output to an execution whose end it sent;
//! sending them afterwards would show a draft after its final message. So the stream notes
//! the messages and execution ends each catch-up sends, and of the events that were queued
//! when it ended drops exactly the deltas of those messages (and deltas that do not say
//! which reply they belong to) and the output of those executions. A reply still being
//! written or a command still running streams on, however long the catch-up took. Deltas
//! and output are transient; the final message and the stored output are durable.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use nomos_agent::{LiveEvent, Numbering, Published};
use nomos_core::event::{DomainEvent, EventRecord};
use nomos_core::{ExecutionId, MessageId, SessionId};
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, mpsc};
use utoipa::IntoParams;
use uuid::Uuid;

use crate::error::{ApiError, AppPath, AppQuery};
use crate::event_dto::EventRecordDto;
use crate::state::AppState;

/// Events read from the database per query while catching up.
const PAGE: u32 = 500;

/// Events buffered per client before the stream waits for it.
const BUFFER: usize = 256;

/// How often a keep-alive comment is sent on an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The keep-alive comment.
const KEEP_ALIVE_FRAME: &[u8] = b":\n\n";

/// The routes of this module (no request timeout: streams are long-lived).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/events", get(global_events))
        .route("/api/sessions/{id}/events", get(session_events))
}

/// Whether `path` is one of the two event streams (`/api/events`,
/// `/api/sessions/{id}/events`), the only routes that take `?access_token=`.
pub fn is_event_stream(path: &str) -> bool {
    if path == "/api/events" {
        return true;
    }
    let mut segments = path.split('/');
    matches!(
        (
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
        ),
        (Some(""), Some("api"), Some("sessions"), Some(id), Some("events"), None) if !id.is_empty()
    )
}

/// Query of the event streams.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Resume after this id (like the `Last-Event-ID` header, which wins when both are given).
    pub last_event_id: Option<i64>,
    /// The bearer token, for clients that cannot set headers (EventSource).
    pub access_token: Option<String>,
}

/// Which log a stream follows.
#[derive(Clone, Copy, Debug)]
enum Scope {
    Session(SessionId),
    Global,
}

impl Scope {
    fn position(&self, record: &EventRecord) -> i64 {
        match self {
            Scope::Session(_) => record.seq,
            Scope::Global => record.global_seq,
        }
    }

    fn session(&self) -> Option<SessionId> {
        match self {
            Scope::Session(id) => Some(*id),
            Scope::Global => None,
        }
    }

    fn numbering(&self) -> Numbering {
        match self {
            Scope::Session(_) => Numbering::Session,
            Scope::Global => Numbering::Global,
        }
    }
}

/// The events of one session, as SSE.
#[utoipa::path(get, path = "/api/sessions/{id}/events", tag = "events",
    params(("id" = Uuid, Path, description = "session id"), EventsQuery,
        ("Last-Event-ID" = Option<i64>, Header, description = "resume after this seq")),
    responses((status = 200, description = "an SSE stream", content_type = "text/event-stream", body = String),
        (status = 404, body = crate::error::ErrorBody)))]
pub async fn session_events(
    State(state): State<AppState>,
    AppPath(id): AppPath<Uuid>,
    AppQuery(query): AppQuery<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = SessionId(id);
    let last = last_event_id(&headers, &query)?.unwrap_or(0);
    let receiver = state.agent.bus().subscribe_shared();
    state.agent.session(id).await?;
    Ok(stream(state, Scope::Session(id), last, receiver))
}

/// The events of every session, as SSE.
#[utoipa::path(get, path = "/api/events", tag = "events",
    params(EventsQuery,
        ("Last-Event-ID" = Option<i64>, Header, description = "resume after this global seq")),
    responses((status = 200, description = "an SSE stream", content_type = "text/event-stream", body = String)))]
pub async fn global_events(
    State(state): State<AppState>,
    AppQuery(query): AppQuery<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let last = last_event_id(&headers, &query)?;
    let receiver = state.agent.bus().subscribe_shared();
    let last = match last {
        Some(last) => last,
        // Live only: start after the newest committed event.
        None => state.agent.store().newest_global_seq().await?,
    };
    Ok(stream(state, Scope::Global, last, receiver))
}

fn last_event_id(headers: &HeaderMap, query: &EventsQuery) -> Result<Option<i64>, ApiError> {
    let Some(value) = headers.get("last-event-id") else {
        return match query.last_event_id {
            Some(id) if id < 0 => Err(ApiError::BadQuery(format!(
                "last_event_id: expected a non-negative event id, got {id}"
            ))),
            other => Ok(other),
        };
    };
    let text = value
        .to_str()
        .map_err(|_| ApiError::Invalid("Last-Event-ID: not ASCII text".into()))?;
    match text.trim().parse::<i64>() {
        Ok(id) if id >= 0 => Ok(Some(id)),
        _ => Err(ApiError::Invalid(format!(
            "Last-Event-ID: expected a non-negative event id, got {text:?}"
        ))),
    }
}

/// The SSE response: frames from the pump, a keep-alive comment when idle.
fn stream(
    state: AppState,
    scope: Scope,
    last: i64,
    receiver: broadcast::Receiver<Arc<Published>>,
) -> Response {
    let (sender, events) = mpsc::channel(BUFFER);
    let open = OpenStream::new(state.streams.clone());
    tokio::spawn(async move {
        let _open = open;
        let mut pump = Pump {
            state,
            scope,
            last,
            sender,
            behind: Behind::default(),
        };
        if let Err(error) = pump.run(receiver).await {
            tracing::debug!(%error, "event stream ended");
        }
    });
    let stream = futures::stream::unfold(events, |mut events| async move {
        let frame = match tokio::time::timeout(KEEP_ALIVE, events.recv()).await {
            Ok(Some(frame)) => frame,
            Ok(None) => return None,
            Err(_idle) => Bytes::from_static(KEEP_ALIVE_FRAME),
        };
        Some((Ok::<_, Infallible>(frame), events))
    });
    let mut response = Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// One SSE frame: `id` (durable events only), `event` and the data, which never holds a
/// newline (compact JSON).
fn frame(id: Option<i64>, kind: &str, data: &str) -> String {
    let mut frame = String::with_capacity(data.len() + kind.len() + 40);
    if let Some(id) = id {
        frame.push_str("id: ");
        frame.push_str(&id.to_string());
        frame.push('\n');
    }
    frame.push_str("event: ");
    frame.push_str(kind);
    frame.push_str("\ndata: ");
    frame.push_str(data);
    frame.push_str("\n\n");
    frame
}

/// A committed event's frame in `scope`'s numbering: `id: <position>`, `event: <kind>`
/// and the record's wire form ([`EventRecordDto`]) as the data.
fn record_frame(scope: Scope, record: &EventRecord) -> String {
    let data =
        serde_json::to_string(&EventRecordDto::from(record)).unwrap_or_else(|_| "{}".to_owned());
    frame(Some(scope.position(record)), record.event.kind(), &data)
}

/// A live event's frame, shared by every stream of the same numbering.
fn encode(scope: Scope, event: &LiveEvent) -> String {
    match event {
        LiveEvent::Committed(record) => record_frame(scope, record),
        // Streamed model text: no id (it is not durable; the final message is).
        LiveEvent::TextDelta {
            session_id,
            message_id,
            text,
        } => {
            let data = match message_id {
                Some(message_id) => serde_json::json!({
                    "session_id": session_id,
                    "message_id": message_id,
                    "text": text,
                }),
                None => serde_json::json!({"session_id": session_id, "text": text}),
            };
            frame(None, "text.delta", &data.to_string())
        }
        // EXEC-10: a running command's output chunk, no id (the stored output is durable).
        LiveEvent::ExecutionOutput {
            session_id,
            execution_id,
            stream,
            text,
        } => {
            let data = serde_json::json!({
                "session_id": session_id,
                "execution_id": execution_id,
                "stream": stream,
                "text": text,
            });
            frame(None, "execution.output", &data.to_string())
        }
    }
}

/// Shared text as a body frame, without copying it.
struct SharedFrame(Arc<str>);

impl AsRef<[u8]> for SharedFrame {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// Why a stream stopped.
#[derive(Debug, thiserror::Error)]
enum PumpEnd {
    #[error("the client went away")]
    ClientGone,
    #[error("the server is shutting down")]
    Shutdown,
    #[error("the event bus closed")]
    BusClosed,
    #[error("reading the event log failed: {0}")]
    Store(#[from] nomos_core::ports::store::StoreError),
}

/// Moves events from the database and the bus to one client, in order, once each.
struct Pump {
    state: AppState,
    scope: Scope,
    last: i64,
    sender: mpsc::Sender<Bytes>,
    behind: Behind,
}

/// Live events queued behind the last catch-ups, and what those catch-ups sent that such
/// events may belong to (see the module docs).
#[derive(Debug, Default)]
struct Behind {
    /// Live events the bus had queued when the last catch-up ended, not yet received.
    n_queued: usize,
    /// Messages the catch-ups sent while events were queued behind them.
    messages: HashSet<MessageId>,
    /// Executions whose end the catch-ups sent meanwhile.
    ended: HashSet<ExecutionId>,
}

impl Behind {
    /// Notes a record a catch-up sent.
    fn caught_up(&mut self, event: &DomainEvent) {
        match event {
            DomainEvent::MessageAppended { message_id, .. } => {
                self.messages.insert(*message_id);
            }
            DomainEvent::ExecutionCreated {
                execution_id,
                status,
                ..
            }
            | DomainEvent::ExecutionStatusChanged {
                execution_id,
                status,
                ..
            } if status.is_terminal() => {
                self.ended.insert(*execution_id);
            }
            _ => {}
        }
    }

    /// A catch-up ended with `n_queued` live events waiting behind it.
    fn queued(&mut self, n_queued: usize) {
        self.n_queued = n_queued;
        if n_queued == 0 {
            self.forget();
        }
    }

    /// One live event received: whether it was queued behind a catch-up.
    fn take(&mut self) -> bool {
        if self.n_queued == 0 {
            self.forget();
            return false;
        }
        self.n_queued -= 1;
        true
    }

    /// Whether a live event that is not durable came after what the stream has sent: a text
    /// delta of a message it sent whole (or of no named reply), or output of an execution
    /// whose end it sent. Only events `queued` behind a catch-up can be.
    fn stale(&self, queued: bool, event: &LiveEvent) -> bool {
        match event {
            LiveEvent::Committed(_) => false,
            LiveEvent::TextDelta { message_id, .. } => self.stale_delta(queued, *message_id),
            LiveEvent::ExecutionOutput { execution_id, .. } => {
                self.stale_output(queued, *execution_id)
            }
        }
    }

    /// Whether a text delta of `message_id` shows a draft the stream has sent as final.
    fn stale_delta(&self, queued: bool, message_id: Option<MessageId>) -> bool {
        queued && message_id.is_none_or(|id| self.messages.contains(&id))
    }

    /// Whether output of `execution_id` came after the execution's end, as sent.
    fn stale_output(&self, queued: bool, execution_id: ExecutionId) -> bool {
        queued && self.ended.contains(&execution_id)
    }

    fn forget(&mut self) {
        if !self.messages.is_empty() || !self.ended.is_empty() {
            self.messages = HashSet::new();
            self.ended = HashSet::new();
        }
    }
}

impl Pump {
    async fn run(
        &mut self,
        mut receiver: broadcast::Receiver<Arc<Published>>,
    ) -> Result<(), PumpEnd> {
        let mut shutdown = self.state.shutdown.clone();
        self.catch_up().await?;
        // What the bus queued for us while the backlog was read: see the module docs.
        self.behind.queued(receiver.len());
        loop {
            let received = tokio::select! {
                received = receiver.recv() => received,
                _ = self.sender.closed() => return Err(PumpEnd::ClientGone),
                _ = crate::workers::until_stopped(&mut shutdown) => return Err(PumpEnd::Shutdown),
            };
            let queued = self.behind.take();
            let published = match received {
                Ok(published) => published,
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "event stream lagged; re-reading the event log");
                    self.catch_up().await?;
                    self.behind.queued(receiver.len());
                    continue;
                }
                Err(RecvError::Closed) => return Err(PumpEnd::BusClosed),
            };
            match published.event() {
                LiveEvent::Committed(record) => {
                    if self
                        .scope
                        .session()
                        .is_some_and(|id| id != record.session_id)
                    {
                        continue;
                    }
                    let position = self.scope.position(record);
                    if position <= self.last {
                        continue;
                    }
                    if position == self.last + 1 {
                        let scope = self.scope;
                        let frame = published.encoded(scope.numbering(), |e| encode(scope, e));
                        self.send(Bytes::from_owner(SharedFrame(frame))).await?;
                        self.last = position;
                    } else {
                        // A gap: something committed earlier was published later (or
                        // not to us). The database has it, in order.
                        self.catch_up().await?;
                        self.behind.queued(receiver.len());
                    }
                }
                // Streamed model text, and EXEC-10: a running command's output. Both are
                // dropped when queued behind a catch-up that made them stale.
                transient @ (LiveEvent::TextDelta { .. } | LiveEvent::ExecutionOutput { .. }) => {
                    if self.behind.stale(queued, transient)
                        || self
                            .scope
                            .session()
                            .is_some_and(|id| id != transient.session_id())
                    {
                        continue;
                    }
                    let scope = self.scope;
                    let frame = published.encoded(scope.numbering(), |e| encode(scope, e));
                    self.send(Bytes::from_owner(SharedFrame(frame))).await?;
                }
            }
        }
    }

    /// Sends every stored event after `last`.
    async fn catch_up(&mut self) -> Result<(), PumpEnd> {
        let store = self.state.agent.store().clone();
        loop {
            let page = store
                .events_after(self.scope.session(), self.last, PAGE)
                .await?;
            let n = page.len();
            for record in &page {
                self.send_record(record).await?;
            }
            if n < PAGE as usize {
                return Ok(());
            }
        }
    }

    /// Sends one record read from the database, noting what it ends.
    async fn send_record(&mut self, record: &EventRecord) -> Result<(), PumpEnd> {
        let position = self.scope.position(record);
        self.send(Bytes::from(record_frame(self.scope, record)))
            .await?;
        self.last = position;
        self.behind.caught_up(&record.event);
        Ok(())
    }

    async fn send(&self, frame: Bytes) -> Result<(), PumpEnd> {
        self.sender
            .send(frame)
            .await
            .map_err(|_| PumpEnd::ClientGone)
    }
}

/// Counts an open stream for as long as it lives.
struct OpenStream(Arc<AtomicU64>);

impl OpenStream {
    fn new(counter: Arc<AtomicU64>) -> OpenStream {
        counter.fetch_add(1, Ordering::Relaxed);
        OpenStream(counter)
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use futures::{Stream, StreamExt};
    use nomos_agent::Agent;
    use nomos_llm::ScriptedModel;
    use nomos_sqlite::SqliteStore;
    use nomos_ssh::LocalExecutor;
    use tokio::sync::watch;

    use super::*;
    use crate::auth::Auth;
    use crate::metrics::Metrics;

    async fn state(dir: &std::path::Path) -> (AppState, watch::Sender<bool>) {
        let store = Arc::new(SqliteStore::open_in_data_dir(dir).await.unwrap());
        let model = Arc::new(ScriptedModel::from_yaml_str("[]").unwrap());
        let agent = Agent::builder(store, Arc::new(LocalExecutor::new()), model).build();
        let (stop, stopping) = watch::channel(false);
        let metrics = Arc::new(Metrics::default());
        (
            AppState::new(agent, Auth::Disabled, metrics, false, stopping),
            stop,
        )
    }

    /// Reads SSE blocks (`event: ...` lines and the data) until `n` have arrived.
    async fn blocks(
        body: &mut (impl Stream<Item = Result<axum::body::Bytes, axum::Error>> + Unpin),
        buffer: &mut String,
        n: usize,
    ) -> Vec<String> {
        let mut out = Vec::new();
        while out.len() < n {
            if let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                if !block.starts_with(':') {
                    out.push(block);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), body.next())
                .await
                .expect("an event within 10 s")
                .expect("the stream is open")
                .unwrap();
            buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
        out
    }

    fn delta(session_id: SessionId, message_id: Option<MessageId>, text: &str) -> LiveEvent {
        LiveEvent::TextDelta {
            session_id,
            message_id,
            text: text.into(),
        }
    }

    #[tokio::test]
    async fn a_delta_queued_behind_a_catch_up_that_sent_its_message_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (state, _stop) = state(dir.path()).await;
        // The stream subscribes first (as the handler does); then a reply streams and its
        // message is committed, all before the catch-up reads the database.
        let receiver = state.agent.bus().subscribe_shared();
        let id = state.agent.create_session().await.unwrap();
        let bus = state.agent.bus();
        bus.publish(delta(id, Some(id.message_id(1)), "stale draft"));
        let _failed_turn = state.agent.send_message(id, "hello").await;
        let response = stream(state.clone(), Scope::Global, 0, receiver).into_response();
        let mut body = response.into_body().into_data_stream();
        let mut buffer = String::new();
        let first = blocks(&mut body, &mut buffer, 2).await;
        assert!(first[0].contains("event: session.created"), "{first:?}");
        // After the catch-up, deltas of a reply it has not sent flow.
        bus.publish(delta(id, Some(id.message_id(9)), "live draft"));
        let mut seen = Vec::new();
        while !seen.iter().any(|b: &String| b.contains("live draft")) {
            seen.extend(blocks(&mut body, &mut buffer, 1).await);
        }
        let all: Vec<&String> = first.iter().chain(&seen).collect();
        assert!(
            all.iter().any(|b| b.contains("event: message.appended")),
            "{all:?}"
        );
        assert!(!all.iter().any(|b| b.contains("stale draft")), "{all:?}");
    }

    #[tokio::test]
    async fn a_delta_queued_behind_a_catch_up_for_a_reply_not_yet_written_is_sent() {
        let dir = tempfile::tempdir().unwrap();
        let (state, _stop) = state(dir.path()).await;
        let receiver = state.agent.bus().subscribe_shared();
        let id = state.agent.create_session().await.unwrap();
        // The reply streams while the stream reads its backlog; its message is not stored.
        state
            .agent
            .bus()
            .publish(delta(id, Some(id.message_id(1)), "draft"));
        let response = stream(state.clone(), Scope::Session(id), 0, receiver).into_response();
        let mut body = response.into_body().into_data_stream();
        let mut buffer = String::new();
        let seen = blocks(&mut body, &mut buffer, 2).await;
        assert!(seen[0].contains("event: session.created"), "{seen:?}");
        assert!(seen[1].contains("event: text.delta"), "{seen:?}");
        assert!(seen[1].contains("\"text\":\"draft\""), "{seen:?}");
        assert!(
            seen[1].contains(&id.message_id(1).0.to_string()),
            "the delta names its reply: {seen:?}"
        );
    }

    #[tokio::test]
    async fn a_delta_that_does_not_name_its_reply_is_dropped_when_queued_behind_a_catch_up() {
        let dir = tempfile::tempdir().unwrap();
        let (state, _stop) = state(dir.path()).await;
        let receiver = state.agent.bus().subscribe_shared();
        let id = SessionId(Uuid::new_v4());
        state.agent.bus().publish(delta(id, None, "stale draft"));
        state.agent.create_session().await.unwrap();
        let response = stream(state.clone(), Scope::Global, 0, receiver).into_response();
        let mut body = response.into_body().into_data_stream();
        let mut buffer = String::new();
        let first = blocks(&mut body, &mut buffer, 1).await;
        assert!(first[0].contains("event: session.created"), "{first:?}");
        state.agent.bus().publish(delta(id, None, "live draft"));
        let next = blocks(&mut body, &mut buffer, 1).await;
        assert!(next[0].contains("live draft"), "{next:?}");
        assert!(!buffer.contains("stale draft"), "{buffer}");
    }

    // rule: EXEC-10
    #[test]
    fn output_behind_a_catch_up_is_stale_only_for_an_execution_whose_end_it_sent() {
        use nomos_core::ExecutionStatus;
        let session = SessionId(Uuid::new_v4());
        let (ended, running) = (session.execution_id(1), session.execution_id(2));
        let status = |execution_id, status| DomainEvent::ExecutionStatusChanged {
            execution_id,
            status,
            exit_code: None,
            error: None,
        };
        let mut behind = Behind::default();
        behind.caught_up(&status(ended, ExecutionStatus::Completed));
        behind.caught_up(&status(running, ExecutionStatus::Running));
        behind.queued(2);
        let queued = behind.take();
        assert!(queued);
        assert!(behind.stale_output(queued, ended));
        assert!(!behind.stale_output(queued, running));
        assert!(behind.take());
        // Past what was queued, everything is live and nothing is remembered.
        let queued = behind.take();
        assert!(!queued);
        assert!(!behind.stale_output(queued, ended));
        assert!(behind.ended.is_empty() && behind.messages.is_empty());
    }

    #[test]
    fn what_a_catch_up_sent_is_forgotten_once_the_events_queued_behind_it_are_read() {
        let session = SessionId(Uuid::new_v4());
        let message_id = session.message_id(1);
        let mut behind = Behind::default();
        behind.caught_up(&DomainEvent::MessageAppended {
            message_id,
            role: nomos_core::Role::Assistant,
        });
        behind.queued(1);
        let queued = behind.take();
        assert!(behind.stale_delta(queued, Some(message_id)));
        assert!(!behind.stale_delta(queued, Some(session.message_id(2))));
        let queued = behind.take();
        assert!(!queued);
        assert!(!behind.stale_delta(queued, Some(message_id)));
        assert!(behind.messages.is_empty(), "{behind:?}");
        // A catch-up with nothing queued behind it keeps nothing either.
        behind.caught_up(&DomainEvent::MessageAppended {
            message_id,
            role: nomos_core::Role::Assistant,
        });
        behind.queued(0);
        assert!(behind.messages.is_empty(), "{behind:?}");
    }
}
