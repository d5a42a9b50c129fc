//! The knowledge graph's own PostgreSQL parts: attribute patches, knowledge entries
//! with their full-text index (`tsvector`, GIN, `plainto_tsquery`, `ts_rank`), and the last audit
//! of each host (WRITEBACK-3).

use nomos_core::ports::store::{KnowledgeHit, StoreError};
use nomos_core::record::KnowledgeEntry;
use nomos_store_sql::knowledge::search_words;
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
        let Some(words) = search_words(query, limit).map(|t| t.join(" ")) else {
            return Ok(Vec::new());
        };
        let rows = sqlx::query(
            "SELECT k.*, ts_rank(k.search, q)::float8 AS score
             FROM knowledge k, plainto_tsquery('simple', $1) AS q
             WHERE k.search @@ q
             ORDER BY score DESC, k.key LIMIT $2",
        )
        .bind(words)
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
}
