//! The knowledge-graph tools, run against the store (WRITEBACK-1, WRITEBACK-3).

use nomos_core::Timestamp;
use nomos_core::ports::exec::Executor;
use nomos_core::ports::store::{Store, StoreError};
use nomos_core::record::{Entity, KnowledgeEntry, Relationship};
use serde_json::json;

use super::args::KnowledgeCall;

/// Runs one knowledge tool; `Ok` is the result text, `Err` an error result for the model.
pub async fn run_knowledge_call(
    store: &dyn Store,
    executor: &dyn Executor,
    call: KnowledgeCall,
    now: Timestamp,
) -> Result<String, String> {
    let value = match call {
        KnowledgeCall::ListHosts => {
            // WRITEBACK-3: each host with its last audit.
            let hosts = executor.hosts();
            let slugs: Vec<String> = hosts.iter().map(|h| h.slug.clone()).collect();
            let marks = store.last_audited(&slugs).await.map_err(store_error)?;
            let rows: Vec<_> = hosts
                .iter()
                .zip(marks)
                .map(|(host, mark)| {
                    json!({
                        "slug": host.slug,
                        "address": host.address,
                        "tags": host.tags,
                        "last_audited_at": mark.last_audited_at.map(|t| t.to_rfc3339()),
                    })
                })
                .collect();
            json!({ "hosts": rows })
        }
        KnowledgeCall::GetEntity { slug } => {
            match store.entity(&slug).await.map_err(store_error)? {
                Some(entity) => entity_json(&entity),
                None => {
                    return Err(format!(
                        "entity `{slug}` not found; list_entities shows the known ones"
                    ));
                }
            }
        }
        KnowledgeCall::ListEntities { kind } => {
            let entities = store
                .list_entities(kind.as_deref())
                .await
                .map_err(store_error)?;
            json!({ "entities": entities.iter().map(entity_json).collect::<Vec<_>>() })
        }
        KnowledgeCall::GetRelations { slug } => {
            let relations = store.relations(&slug).await.map_err(store_error)?;
            json!({
                "relations": relations
                    .iter()
                    .map(|r| json!({ "from": r.from, "kind": r.kind, "to": r.to }))
                    .collect::<Vec<_>>()
            })
        }
        KnowledgeCall::Search { query, limit } => {
            let hits = store
                .search_knowledge(&query, limit)
                .await
                .map_err(store_error)?;
            json!({
                "results": hits
                    .iter()
                    .map(|h| json!({
                        "key": h.entry.key,
                        "title": h.entry.title,
                        "tags": h.entry.tags,
                        "about": h.entry.about,
                        "updated_at": h.entry.updated_at.to_rfc3339(),
                        "excerpt": excerpt(&h.entry.content, 300),
                    }))
                    .collect::<Vec<_>>()
            })
        }
        KnowledgeCall::GetContent { key } => {
            match store.knowledge(&key).await.map_err(store_error)? {
                Some(entry) => json!({
                    "key": entry.key,
                    "title": entry.title,
                    "content": entry.content,
                    "tags": entry.tags,
                    "about": entry.about,
                    "updated_at": entry.updated_at.to_rfc3339(),
                }),
                None => {
                    return Err(format!(
                        "knowledge entry `{key}` not found; use search_knowledge"
                    ));
                }
            }
        }
        KnowledgeCall::Upsert {
            key,
            title,
            content,
            tags,
            about,
        } => {
            let key = key
                .filter(|k| !k.trim().is_empty())
                .unwrap_or_else(|| slugify(&title));
            let created_at = match store.knowledge(&key).await.map_err(store_error)? {
                Some(existing) => existing.created_at,
                None => now,
            };
            let entry = KnowledgeEntry {
                key: key.clone(),
                title,
                content,
                tags,
                about,
                created_at,
                updated_at: now,
            };
            store.upsert_knowledge(&entry).await.map_err(store_error)?;
            json!({ "saved": key })
        }
        KnowledgeCall::UpdateAttributes {
            slug,
            attributes,
            kind,
        } => {
            if store.entity(&slug).await.map_err(store_error)?.is_none() {
                let kind =
                    kind.unwrap_or_else(|| slug.split(':').next().unwrap_or("entity").to_owned());
                let entity = Entity {
                    slug: slug.clone(),
                    kind,
                    name: slug.rsplit(':').next().unwrap_or(&slug).to_owned(),
                    attributes: json!({}),
                    updated_at: now,
                };
                store.upsert_entity(&entity).await.map_err(store_error)?;
            }
            let entity = store
                .update_entity_attributes(&slug, &attributes, now)
                .await
                .map_err(store_error)?;
            json!({ "updated": entity_json(&entity) })
        }
        KnowledgeCall::CreateRelationship { from, kind, to } => {
            let relationship = Relationship {
                from: from.clone(),
                kind: kind.clone(),
                to: to.clone(),
                created_at: now,
            };
            store
                .create_relationship(&relationship)
                .await
                .map_err(store_error)?;
            json!({ "recorded": format!("{from} {kind} {to}") })
        }
    };
    Ok(value.to_string())
}

fn entity_json(entity: &Entity) -> serde_json::Value {
    json!({
        "slug": entity.slug,
        "kind": entity.kind,
        "name": entity.name,
        "attributes": entity.attributes,
        "updated_at": entity.updated_at.to_rfc3339(),
    })
}

fn store_error(error: StoreError) -> String {
    error.to_string()
}

fn excerpt(text: &str, max_chars: usize) -> String {
    let mut out: String = text.chars().take(max_chars).collect();
    if text.chars().count() > max_chars {
        out.push('…');
    }
    out
}

fn slugify(title: &str) -> String {
    let mut slug = String::with_capacity(title.len());
    for c in title.chars() {
        if c.is_alphanumeric() {
            slug.extend(c.to_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_matches('-').to_owned()
}
