//! The knowledge graph: entities, relationships, knowledge entries with their
//! full-text index (`tsvector`, GIN, `plainto_tsquery`, `ts_rank`), and the last audit
//! of each host (WRITEBACK-3).

use nomos_core::Timestamp;
use nomos_core::ports::store::{AuditMark, KnowledgeHit, StoreError};
use nomos_core::record::{Entity, KnowledgeEntry, Relationship};
use nomos_store_sql::RecordRow;
use nomos_store_sql::knowledge::{
    attribute_patch, merge_attributes, require_attributes_object, search_terms,
};
use nomos_store_sql::record;
use sqlx::Row;
use sqlx::postgres::PgRow;

use crate::codec::{dt, texts};
use crate::error::db_error;
use crate::open::PgStore;

/// A `knowledge` row, tags and subjects included (`text[]` columns).
fn knowledge_entry(row: &PgRow) -> Result<KnowledgeEntry, StoreError> {
    record::knowledge_entry(row, texts(row, "tags")?, texts(row, "about")?)
}

impl PgStore {
    pub(crate) async fn write_entity(&self, entity: &Entity) -> Result<(), StoreError> {
        require_attributes_object(&entity.slug, &entity.attributes)?;
        sqlx::query(
            "INSERT INTO entities (slug, kind, name, attributes, updated_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (slug) DO UPDATE SET kind = EXCLUDED.kind, name = EXCLUDED.name,
               attributes = EXCLUDED.attributes, updated_at = EXCLUDED.updated_at",
        )
        .bind(&entity.slug)
        .bind(&entity.kind)
        .bind(&entity.name)
        .bind(&entity.attributes)
        .bind(dt(entity.updated_at))
        .execute(&self.pool)
        .await
        .map_err(|e| db_error(e, &format!("entity {}", entity.slug)))?;
        Ok(())
    }

    pub(crate) async fn select_entity(&self, slug: &str) -> Result<Option<Entity>, StoreError> {
        sqlx::query("SELECT * FROM entities WHERE slug = $1")
            .bind(slug)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| db_error(e, "loading an entity"))?
            .as_ref()
            .map(record::entity)
            .transpose()
    }

    pub(crate) async fn select_entities(
        &self,
        kind: Option<&str>,
    ) -> Result<Vec<Entity>, StoreError> {
        sqlx::query("SELECT * FROM entities WHERE ($1::text IS NULL OR kind = $1) ORDER BY slug")
            .bind(kind)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| db_error(e, "listing entities"))?
            .iter()
            .map(record::entity)
            .collect()
    }

    pub(crate) async fn patch_entity(
        &self,
        slug: &str,
        patch: &serde_json::Value,
        now: Timestamp,
    ) -> Result<Entity, StoreError> {
        let patch = attribute_patch(slug, patch)?;
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(|e| db_error(e, "beginning a transaction"))?;
        let row = sqlx::query("SELECT * FROM entities WHERE slug = $1 FOR UPDATE")
            .bind(slug)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(e, "loading an entity"))?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("entity {slug}"),
            })?;
        let mut entity = record::entity(&row)?;
        merge_attributes(&mut entity.attributes, patch);
        entity.updated_at = now;
        sqlx::query("UPDATE entities SET attributes = $1, updated_at = $2 WHERE slug = $3")
            .bind(&entity.attributes)
            .bind(dt(now))
            .bind(slug)
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(e, &format!("entity {slug}")))?;
        tx.commit().await.map_err(|e| db_error(e, "committing"))?;
        Ok(entity)
    }

    pub(crate) async fn write_relationship(&self, rel: &Relationship) -> Result<(), StoreError> {
        let found: Vec<String> = sqlx::query("SELECT slug FROM entities WHERE slug = ANY($1)")
            .bind(vec![rel.from.as_str(), rel.to.as_str()])
            .fetch_all(&self.pool)
            .await
            .map_err(|e| db_error(e, "loading entities"))?
            .iter()
            .map(|row| row.text("slug"))
            .collect::<Result<_, _>>()?;
        for slug in [&rel.from, &rel.to] {
            if !found.contains(slug) {
                return Err(StoreError::NotFound {
                    what: format!("entity {slug}"),
                });
            }
        }
        // The foreign keys still guard against an entity deleted in between.
        sqlx::query(
            "INSERT INTO relationships (from_slug, kind, to_slug, created_at)
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(&rel.from)
        .bind(&rel.kind)
        .bind(&rel.to)
        .bind(dt(rel.created_at))
        .execute(&self.pool)
        .await
        .map_err(|e| {
            db_error(
                e,
                &format!("relationship {} {} {}", rel.from, rel.kind, rel.to),
            )
        })?;
        Ok(())
    }

    pub(crate) async fn select_relations(
        &self,
        slug: &str,
    ) -> Result<Vec<Relationship>, StoreError> {
        sqlx::query(
            "SELECT * FROM relationships WHERE from_slug = $1 OR to_slug = $1
             ORDER BY from_slug, kind, to_slug",
        )
        .bind(slug)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| db_error(e, "loading relationships"))?
        .iter()
        .map(record::relationship)
        .collect()
    }

    pub(crate) async fn write_knowledge(&self, entry: &KnowledgeEntry) -> Result<(), StoreError> {
        // Words split on anything but letters and digits, the same way queries are split.
        sqlx::query(
            "INSERT INTO knowledge (key, title, content, tags, about, search, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5,
               setweight(to_tsvector('simple', regexp_replace($2, '[^[:alnum:]]+', ' ', 'g')), 'A')
               || setweight(to_tsvector('simple', regexp_replace(array_to_string($4, ' '), '[^[:alnum:]]+', ' ', 'g')), 'B')
               || setweight(to_tsvector('simple', regexp_replace($3, '[^[:alnum:]]+', ' ', 'g')), 'D'),
               $6, $7)
             ON CONFLICT (key) DO UPDATE SET title = EXCLUDED.title, content = EXCLUDED.content,
               tags = EXCLUDED.tags, about = EXCLUDED.about, search = EXCLUDED.search,
               created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at",
        )
        .bind(&entry.key)
        .bind(&entry.title)
        .bind(&entry.content)
        .bind(&entry.tags)
        .bind(&entry.about)
        .bind(dt(entry.created_at))
        .bind(dt(entry.updated_at))
        .execute(&self.pool)
        .await
        .map_err(|e| db_error(e, &format!("knowledge entry {}", entry.key)))?;
        Ok(())
    }

    pub(crate) async fn select_knowledge(
        &self,
        key: &str,
    ) -> Result<Option<KnowledgeEntry>, StoreError> {
        sqlx::query("SELECT * FROM knowledge WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| db_error(e, "loading a knowledge entry"))?
            .as_ref()
            .map(knowledge_entry)
            .transpose()
    }

    pub(crate) async fn search(
        &self,
        query: &str,
        limit: u32,
    ) -> Result<Vec<KnowledgeHit>, StoreError> {
        let terms = search_terms(query);
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT k.*, ts_rank(k.search, q)::float8 AS score
             FROM knowledge k, plainto_tsquery('simple', $1) AS q
             WHERE k.search @@ q
             ORDER BY score DESC, k.key LIMIT $2",
        )
        .bind(terms.join(" "))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(|e| db_error(e, "searching knowledge"))?;
        rows.iter()
            .map(|row| {
                Ok(KnowledgeHit {
                    entry: knowledge_entry(row)?,
                    rank: row.try_get("score").map_err(|e| db_error(e, "score"))?,
                })
            })
            .collect()
    }

    pub(crate) async fn select_last_audited(
        &self,
        slugs: &[String],
    ) -> Result<Vec<AuditMark>, StoreError> {
        if slugs.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT s.slug,
               (SELECT MAX(k.updated_at) FROM knowledge k
                WHERE s.slug = ANY(k.about) AND k.tags && ARRAY['audit', 'update']
               ) AS last_audited_at
             FROM UNNEST($1::text[]) WITH ORDINALITY AS s(slug, n)
             ORDER BY s.n",
        )
        .bind(slugs)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| db_error(e, "reading last audits"))?;
        rows.iter().map(record::audit_mark).collect()
    }
}
