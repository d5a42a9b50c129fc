//! Sessions: create, list, read, delete; post a message (a turn), resume; read the plan,
//! the activity log and the transcript.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use nomos_core::activity::{ActivityFacts, derive_activity};
use nomos_core::plan_digest::PlanDigest;
use nomos_core::ports::store::{ArchiveFilter, ListOrder, SessionCursor, SessionFilter};
use nomos_core::resume::ResumeKind;
use nomos_core::{SessionId, SessionStatus};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::dto::{
    ActivityDto, PlanDto, PostMessage, SessionDto, StepDto, TranscriptMessage, TurnAccepted,
};
use crate::error::{ApiError, AppJson, AppPath, AppQuery};
use crate::state::AppState;

/// Events read per query of an export.
const EXPORT_PAGE: u32 = 500;

/// Most events read to derive one activity log.
const ACTIVITY_EVENTS: u32 = 100_000;

/// The routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/sessions", post(create).get(list))
        .route("/api/sessions/{id}", get(read).delete(remove))
        .route("/api/sessions/{id}/messages", post(post_message))
        .route("/api/sessions/{id}/resume", post(resume))
        .route("/api/sessions/{id}/plan", get(plan))
        .route("/api/sessions/{id}/activity", get(activity))
        .route("/api/sessions/{id}/transcript", get(transcript))
        .route("/api/sessions/{id}/export", get(export))
}

/// Query of `GET /api/sessions`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// Only these statuses, comma-separated (`active,planning`).
    pub status: Option<String>,
    /// Only sessions with an id greater than this (pagination).
    pub after: Option<Uuid>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<u32>,
    /// `asc` (by id, the default; pages with `after`) or `desc` (newest first; pages with
    /// `before`).
    pub order: Option<crate::api::approvals::Order>,
    /// With `order=desc`: the last session id of the previous page.
    pub before: Option<Uuid>,
    /// Only sessions whose goal or summary contains this text (ASCII case ignored).
    pub q: Option<String>,
    /// CONTROL-6: `exclude` (the default: the board's sessions), `only` (the archive) or
    /// `include` (both).
    pub archived: Option<ArchivedQuery>,
}

/// Which sessions `GET /api/sessions` lists by archive (CONTROL-6).
#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArchivedQuery {
    /// Only sessions not archived.
    #[default]
    Exclude,
    /// Only archived sessions.
    Only,
    /// Both.
    Include,
}

/// Query of `GET /api/sessions/{id}/plan`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct PlanQuery {
    /// Every generation instead of the current one (PLAN-7).
    pub all: Option<bool>,
}

/// Creates a session.
#[utoipa::path(post, path = "/api/sessions", tag = "sessions",
    responses((status = 201, body = SessionDto)))]
pub async fn create(
    State(state): State<AppState>,
    axum::Extension(principal): axum::Extension<crate::auth::Principal>,
) -> Result<(StatusCode, AppJson<SessionDto>), ApiError> {
    // AUTHZ-1: the session records who created it.
    let id = state.agent.create_session_by(Some(&principal.name)).await?;
    let snapshot = state.agent.session(id).await?;
    Ok((
        StatusCode::CREATED,
        AppJson(SessionDto::from(&snapshot.record)),
    ))
}

/// Lists sessions: by id (paged with `after`), or newest first (`order=desc`, paged with
/// `before`); filtered by status and text.
#[utoipa::path(get, path = "/api/sessions", tag = "sessions", params(ListQuery),
    responses((status = 200, body = [SessionDto]), (status = 400, body = crate::error::ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    axum::Extension(principal): axum::Extension<crate::auth::Principal>,
    AppQuery(query): AppQuery<ListQuery>,
) -> Result<AppJson<Vec<SessionDto>>, ApiError> {
    let mut statuses = Vec::new();
    for part in query.status.iter().flat_map(|s| s.split(',')) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let status: SessionStatus = part
            .parse()
            .map_err(|e| ApiError::BadQuery(format!("status: {e}")))?;
        statuses.push(status);
    }
    let limit = query.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::BadQuery(format!(
            "limit: must be between 1 and 1000, got {limit}"
        )));
    }
    let order = match query.order.unwrap_or_default() {
        crate::api::approvals::Order::Asc => ListOrder::OldestFirst,
        crate::api::approvals::Order::Desc => ListOrder::NewestFirst,
    };
    let before = match (query.before, order) {
        (None, _) => None,
        (Some(_), ListOrder::OldestFirst) => {
            return Err(ApiError::BadQuery(
                "before: only pages `order=desc`; an ascending list pages with `after`".into(),
            ));
        }
        (Some(id), ListOrder::NewestFirst) => {
            let Some(snapshot) = state.agent.store().load_session(SessionId(id)).await? else {
                return Err(ApiError::BadQuery(format!(
                    "before: no session has the id {id}"
                )));
            };
            Some(SessionCursor {
                created_at: snapshot.record.created_at,
                id: snapshot.record.id,
            })
        }
    };
    let text = query.q.as_deref().map(str::trim).filter(|q| !q.is_empty());
    let filter = SessionFilter {
        statuses,
        after: query.after.map(SessionId),
        limit: Some(limit),
        order,
        before,
        text: text.map(str::to_owned),
        archived: match query.archived.unwrap_or_default() {
            ArchivedQuery::Exclude => ArchiveFilter::Listed,
            ArchivedQuery::Only => ArchiveFilter::Archived,
            ArchivedQuery::Include => ArchiveFilter::Any,
        },
        // AUTHZ-1: an agent lists only the sessions it created.
        owner: (principal.role == crate::auth::Role::Agent).then(|| principal.name.clone()),
        ..SessionFilter::default()
    };
    let records = state.agent.store().list_sessions(&filter).await?;
    let mut out = Vec::with_capacity(records.len());
    for record in &records {
        out.push(titled(&state, record).await?);
    }
    Ok(AppJson(out))
}

/// Longest title taken from a first message, in characters.
const TITLE_CHARS: usize = 80;

/// The session's DTO; a session without a goal is titled by its first operator message.
async fn titled(
    state: &AppState,
    record: &nomos_core::record::SessionRecord,
) -> Result<SessionDto, ApiError> {
    let mut dto = SessionDto::from(record);
    if record.goal.is_none() && record.n_messages > 0 {
        let messages = state.agent.store().messages(record.id).await?;
        dto.title = messages
            .iter()
            .find(|m| m.role == nomos_core::Role::Operator)
            .map(|m| title_of(&m.content));
    }
    Ok(dto)
}

/// The first line of a message, cut to [`TITLE_CHARS`] characters with an ellipsis.
fn title_of(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default().trim();
    if line.chars().count() <= TITLE_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(TITLE_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// Reads a session.
#[utoipa::path(get, path = "/api/sessions/{id}", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 200, body = SessionDto), (status = 404, body = crate::error::ErrorBody)))]
pub async fn read(
    State(state): State<AppState>,
    AppPath(id): AppPath<Uuid>,
) -> Result<AppJson<SessionDto>, ApiError> {
    let snapshot = state.agent.session(SessionId(id)).await?;
    Ok(AppJson(titled(&state, &snapshot.record).await?))
}

/// Deletes a session and everything it owns; 409 while a turn of the session runs.
///
/// Through the agent, which holds the session and forgets what it cached of it.
#[utoipa::path(delete, path = "/api/sessions/{id}", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 204), (status = 404, body = crate::error::ErrorBody),
        (status = 409, body = crate::error::ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    AppPath(id): AppPath<Uuid>,
) -> Result<StatusCode, ApiError> {
    state.agent.delete_session(SessionId(id)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Posts an operator message; the turn it starts runs in the background (TURN-8: 409
/// while another turn of the session runs).
#[utoipa::path(post, path = "/api/sessions/{id}/messages", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")), request_body = PostMessage,
    responses((status = 202, body = TurnAccepted), (status = 409, body = crate::error::ErrorBody),
        (status = 404, body = crate::error::ErrorBody), (status = 422, body = crate::error::ErrorBody)))]
pub async fn post_message(
    State(state): State<AppState>,
    axum::Extension(principal): axum::Extension<crate::auth::Principal>,
    headers: axum::http::HeaderMap,
    AppPath(id): AppPath<Uuid>,
    AppJson(body): AppJson<PostMessage>,
) -> Result<(StatusCode, AppJson<TurnAccepted>), ApiError> {
    let session_id = SessionId(id);
    if *state.shutdown.borrow() {
        return Err(ApiError::Unavailable("the server is shutting down".into()));
    }
    // The agent releases the session before it publishes `turn.done`, so a client that
    // answers the end of a turn at once is not refused.
    // AUDIT-1: an assent this message opens records who sent it and the request id.
    let by = principal.decider(&headers);
    let handle = state
        .agent
        .spawn_message_by(session_id, &body.text, Some(&by))
        .await?;
    state.turns.track(session_id, handle);
    Ok((StatusCode::ACCEPTED, AppJson(accepted(id))))
}

/// Resumes a session (RESUME-1); the turn runs in the background.
#[utoipa::path(post, path = "/api/sessions/{id}/resume", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 202, body = TurnAccepted), (status = 409, body = crate::error::ErrorBody)))]
pub async fn resume(
    State(state): State<AppState>,
    AppPath(id): AppPath<Uuid>,
) -> Result<(StatusCode, AppJson<TurnAccepted>), ApiError> {
    let handle = state
        .agent
        .spawn_resume(SessionId(id), ResumeKind::Manual)
        .await?;
    state.turns.track(SessionId(id), handle);
    Ok((StatusCode::ACCEPTED, AppJson(accepted(id))))
}

fn accepted(id: Uuid) -> TurnAccepted {
    TurnAccepted {
        session_id: id,
        events: format!("/api/sessions/{id}/events"),
    }
}

/// The plan: the current generation, or every generation with `?all=true` (PLAN-7).
#[utoipa::path(get, path = "/api/sessions/{id}/plan", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id"), PlanQuery),
    responses((status = 200, body = PlanDto)))]
pub async fn plan(
    State(state): State<AppState>,
    AppPath(id): AppPath<Uuid>,
    AppQuery(query): AppQuery<PlanQuery>,
) -> Result<AppJson<PlanDto>, ApiError> {
    let snapshot = state.agent.session(SessionId(id)).await?;
    Ok(AppJson(plan_dto(&snapshot, query.all.unwrap_or(false))))
}

/// The plan of `snapshot` as shown (PLAN-7), with the current generation's digest (GATE-4).
pub(crate) fn plan_dto(snapshot: &nomos_core::ports::store::SessionSnapshot, all: bool) -> PlanDto {
    let generation = snapshot.record.plan_generation;
    let digest = PlanDigest::of(generation, snapshot.plan_steps(false));
    // AUTHZ-3: the count the core fixed at the proposal, and the approvals of this digest.
    let approvals = snapshot
        .record
        .plan_approvals
        .as_ref()
        .filter(|a| a.generation == generation);
    let approved_by = approvals
        .map(|a| a.approved_by_for(generation, digest.as_ref()))
        .unwrap_or_default()
        .iter()
        .map(|d| d.name.clone())
        .collect();
    PlanDto {
        generation,
        approvers_required: approvals.map_or(1, |a| a.required),
        approved_by,
        digest: digest.map(|digest| digest.as_str().to_owned()),
        steps: snapshot
            .plan_steps(all)
            .into_iter()
            .map(StepDto::from)
            .collect(),
    }
}

/// The activity log, derived by the core from persisted facts (ACTIVITY-1).
#[utoipa::path(get, path = "/api/sessions/{id}/activity", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 200, body = [ActivityDto])))]
pub async fn activity(
    State(state): State<AppState>,
    AppPath(id): AppPath<Uuid>,
) -> Result<AppJson<Vec<ActivityDto>>, ApiError> {
    let id = SessionId(id);
    let snapshot = state.agent.session(id).await?;
    let store = state.agent.store();
    let events = store.events_after(Some(id), 0, ACTIVITY_EVENTS).await?;
    let tool_calls = store.tool_calls(id).await?;
    let facts = ActivityFacts {
        session: &snapshot.record,
        events: &events,
        steps: &snapshot.steps,
        executions: &snapshot.executions,
        approvals: &snapshot.approvals,
        tool_calls: &tool_calls,
    };
    let entries = derive_activity(&facts, state.agent.now());
    Ok(AppJson(entries.iter().map(ActivityDto::from).collect()))
}

/// The transcript: messages with their tool calls and results.
#[utoipa::path(get, path = "/api/sessions/{id}/transcript", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 200, body = [TranscriptMessage])))]
pub async fn transcript(
    State(state): State<AppState>,
    AppPath(id): AppPath<Uuid>,
) -> Result<AppJson<Vec<TranscriptMessage>>, ApiError> {
    let id = SessionId(id);
    state.agent.session(id).await?;
    let store = state.agent.store();
    let messages = store.messages(id).await?;
    let calls = store.tool_calls(id).await?;
    Ok(AppJson(
        messages
            .iter()
            .map(|message| TranscriptMessage::join(message, &calls))
            .collect(),
    ))
}

/// One line of `GET /api/sessions/{id}/export`: a stored event with its AUDIT-2 hash.
///
/// `hash` is `SHA-256(prev || canonical)` in hex, where `prev` is the previous line's
/// hash (32 zero bytes before seq 1) and `canonical` is the JSON object of `at_ms` (as
/// `at`), `kind`, `payload`, `seq` and `session_id`, keys sorted at every level, no
/// whitespace.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct ExportLine {
    /// The session.
    pub session_id: Uuid,
    /// Position in the session's log, from 1.
    pub seq: i64,
    /// When it happened (RFC 3339).
    pub at: String,
    /// When it happened, in milliseconds since the Unix epoch (what the hash covers).
    pub at_ms: i64,
    /// The event's kind.
    pub kind: String,
    /// The event as stored, in the stores' versioned form (`v`, the format version,
    /// beside the event's fields; absent in rows written before it), which the hash
    /// covers. The event streams send the API's wire form (`EventRecordDto`) instead.
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
    /// The chain hash (64 hex digits), `null` for a row never hashed.
    pub hash: Option<String>,
}

/// The session's event log as JSON Lines (`application/x-ndjson`), one [`ExportLine`]
/// per event in seq order, with the hash chain (AUDIT-2); streamed page by page.
#[utoipa::path(get, path = "/api/sessions/{id}/export", tag = "sessions",
    params(("id" = Uuid, Path, description = "session id")),
    responses((status = 200, description = "one JSON object per line", body = ExportLine,
        content_type = "application/x-ndjson"),
        (status = 404, body = crate::error::ErrorBody)))]
pub async fn export(
    State(state): State<AppState>,
    AppPath(id): AppPath<Uuid>,
) -> Result<axum::response::Response, ApiError> {
    use nomos_core::chain::ChainCursor;

    let session = SessionId(id);
    state.agent.session(session).await?;
    let store = state.agent.store().clone();
    let pages = futures::stream::try_unfold(Some(0_i64), move |after| {
        let store = store.clone();
        async move {
            let Some(after_seq) = after else {
                return Ok::<_, nomos_core::ports::store::StoreError>(None);
            };
            let events = store
                .chained_events(ChainCursor::Session { session, after_seq }, EXPORT_PAGE)
                .await?;
            let next = match events.last() {
                Some(last) if events.len() == EXPORT_PAGE as usize => Some(last.seq),
                _ => None,
            };
            if events.is_empty() {
                return Ok(None);
            }
            let mut chunk = String::new();
            for event in events {
                let line = ExportLine {
                    session_id: event.session_id.as_uuid(),
                    seq: event.seq,
                    at: event.at.to_rfc3339(),
                    at_ms: event.at.as_millis(),
                    kind: event.kind,
                    payload: event.payload,
                    hash: event.hash,
                };
                chunk.push_str(&serde_json::to_string(&line).unwrap_or_default());
                chunk.push('\n');
            }
            Ok(Some((axum::body::Bytes::from(chunk), next)))
        }
    });
    let response = axum::response::Response::builder()
        .header(axum::http::header::CONTENT_TYPE, "application/x-ndjson")
        .body(axum::body::Body::from_stream(pages))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::{TITLE_CHARS, title_of};

    #[test]
    fn a_title_is_the_first_line_of_the_first_message_cut_short() {
        assert_eq!(
            title_of("  Free disk space on web1\nit is at 95%"),
            "Free disk space on web1"
        );
        let long = "word ".repeat(40);
        let title = title_of(&long);
        assert_eq!(title.chars().count(), TITLE_CHARS);
        assert!(title.ends_with('…'), "{title}");
        assert_eq!(title_of(""), "");
    }
}
