//! Knowledge-graph reads: entities, their relations, and knowledge search.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::dto::{EntityDto, KnowledgeHitDto, RelationDto};
use crate::error::{ApiError, AppJson, AppPath, AppQuery};
use crate::state::AppState;

/// The routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/entities", axum::routing::get(entities))
        .route("/api/entities/{slug}", get(entity))
        .route("/api/entities/{slug}/relations", get(relations))
        .route("/api/knowledge", get(search))
}

/// Query of `GET /api/entities`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct EntityQuery {
    /// Only entities of this kind (`host`, `lxc`...).
    pub kind: Option<String>,
}

/// Query of `GET /api/knowledge`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct SearchQuery {
    /// The search text.
    pub q: String,
    /// At most this many (default 20, at most 200).
    pub limit: Option<u32>,
}

/// Lists entities, ordered by slug.
#[utoipa::path(get, path = "/api/entities", tag = "knowledge", params(EntityQuery),
    responses((status = 200, body = [EntityDto])))]
pub async fn entities(
    State(state): State<AppState>,
    AppQuery(query): AppQuery<EntityQuery>,
) -> Result<AppJson<Vec<EntityDto>>, ApiError> {
    let entities = state
        .agent
        .store()
        .list_entities(query.kind.as_deref())
        .await?;
    Ok(AppJson(entities.iter().map(EntityDto::from).collect()))
}

/// One entity.
#[utoipa::path(get, path = "/api/entities/{slug}", tag = "knowledge",
    params(("slug" = String, Path, description = "entity slug")),
    responses((status = 200, body = EntityDto), (status = 404, body = crate::error::ErrorBody)))]
pub async fn entity(
    State(state): State<AppState>,
    AppPath(slug): AppPath<String>,
) -> Result<AppJson<EntityDto>, ApiError> {
    let entity = state
        .agent
        .store()
        .entity(&slug)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("entity {slug} not found")))?;
    Ok(AppJson(EntityDto::from(&entity)))
}

/// The relationships touching an entity, in either direction.
#[utoipa::path(get, path = "/api/entities/{slug}/relations", tag = "knowledge",
    params(("slug" = String, Path, description = "entity slug")),
    responses((status = 200, body = [RelationDto])))]
pub async fn relations(
    State(state): State<AppState>,
    AppPath(slug): AppPath<String>,
) -> Result<AppJson<Vec<RelationDto>>, ApiError> {
    let relations = state.agent.store().relations(&slug).await?;
    Ok(AppJson(relations.iter().map(RelationDto::from).collect()))
}

/// Full-text search over knowledge entries, best first.
#[utoipa::path(get, path = "/api/knowledge", tag = "knowledge", params(SearchQuery),
    responses((status = 200, body = [KnowledgeHitDto]), (status = 400, body = crate::error::ErrorBody)))]
pub async fn search(
    State(state): State<AppState>,
    AppQuery(query): AppQuery<SearchQuery>,
) -> Result<AppJson<Vec<KnowledgeHitDto>>, ApiError> {
    if query.q.trim().is_empty() {
        return Err(ApiError::BadQuery("q: the search text is empty".into()));
    }
    let limit = query.limit.unwrap_or(20);
    if !(1..=200).contains(&limit) {
        return Err(ApiError::BadQuery(format!(
            "limit: must be between 1 and 200, got {limit}"
        )));
    }
    let hits = state
        .agent
        .store()
        .search_knowledge(&query.q, limit)
        .await?;
    Ok(AppJson(hits.iter().map(KnowledgeHitDto::from).collect()))
}
