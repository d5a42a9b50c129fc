//! The knowledge graph's own SQLite parts: attribute patches, knowledge entries with
//! their full-text index (FTS5, bm25), and the last audit of each host (WRITEBACK-3).

use nomos_core::ports::store::{KnowledgeHit, StoreError};
use nomos_core::record::KnowledgeEntry;
use nomos_store_sql::RecordRow;
use nomos_store_sql::knowledge::search_words;
use nomos_store_sql::record;
use sqlx::{Row, SqliteConnection};

use crate::error::db_error;
use crate::open::SqliteStore;

/// An FTS5 match expression: every term quoted as a string, all required.
fn fts_expression(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

impl SqliteStore {
    pub(crate) async fn write_knowledge(&self, entry: &KnowledgeEntry) -> Result<(), StoreError> {
        let mut tx = self
            .write
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| db_error(e, "beginning a transaction"))?;
        let context = format!("knowledge entry {}", entry.key);
        sqlx::query(
            "INSERT INTO knowledge (key, title, content, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (key) DO UPDATE SET title = excluded.title, content = excluded.content,
               created_at = excluded.created_at, updated_at = excluded.updated_at",
        )
        .bind(&entry.key)
        .bind(&entry.title)
        .bind(&entry.content)
        .bind(entry.created_at.as_millis())
        .bind(entry.updated_at.as_millis())
        .execute(&mut *tx)
        .await
        .map_err(|e| db_error(e, &context))?;
        for statement in [
            "DELETE FROM knowledge_tags WHERE key = ?1",
            "DELETE FROM knowledge_about WHERE key = ?1",
            "DELETE FROM knowledge_fts WHERE key = ?1",
        ] {
            sqlx::query(statement)
                .bind(&entry.key)
                .execute(&mut *tx)
                .await
                .map_err(|e| db_error(e, &context))?;
        }
        for (position, tag) in entry.tags.iter().enumerate() {
            sqlx::query("INSERT INTO knowledge_tags (key, position, tag) VALUES (?1, ?2, ?3)")
                .bind(&entry.key)
                .bind(position as i64)
                .bind(tag)
                .execute(&mut *tx)
                .await
                .map_err(|e| db_error(e, &context))?;
        }
        for (position, slug) in entry.about.iter().enumerate() {
            sqlx::query("INSERT INTO knowledge_about (key, position, slug) VALUES (?1, ?2, ?3)")
                .bind(&entry.key)
                .bind(position as i64)
                .bind(slug)
                .execute(&mut *tx)
                .await
                .map_err(|e| db_error(e, &context))?;
        }
        sqlx::query(
            "INSERT INTO knowledge_fts (key, title, content, tags) VALUES (?1, ?2, ?3, ?4)",
        )
        .bind(&entry.key)
        .bind(&entry.title)
        .bind(&entry.content)
        .bind(entry.tags.join(" "))
        .execute(&mut *tx)
        .await
        .map_err(|e| db_error(e, &context))?;
        tx.commit().await.map_err(|e| db_error(e, "committing"))?;
        Ok(())
    }

    pub(crate) async fn select_knowledge(
        &self,
        key: &str,
    ) -> Result<Option<KnowledgeEntry>, StoreError> {
        let mut conn = self
            .read
            .acquire()
            .await
            .map_err(|e| db_error(e, "connecting"))?;
        load_entry(&mut conn, key).await
    }

    pub(crate) async fn search(
        &self,
        query: &str,
        limit: u32,
    ) -> Result<Vec<KnowledgeHit>, StoreError> {
        let Some(expression) = search_words(query, limit).map(|t| fts_expression(&t)) else {
            return Ok(Vec::new());
        };
        let mut tx = self
            .read
            .begin()
            .await
            .map_err(|e| db_error(e, "beginning a read"))?;
        // bm25 is lower-is-better; the port wants higher-is-better. Title and tags
        // weigh more than the body.
        let ranked = sqlx::query(
            "SELECT key, -bm25(knowledge_fts, 0.0, 4.0, 1.0, 2.0) AS score
             FROM knowledge_fts WHERE knowledge_fts MATCH ?1
             ORDER BY score DESC, key LIMIT ?2",
        )
        .bind(expression)
        .bind(i64::from(limit))
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| db_error(e, "searching knowledge"))?;
        let mut hits = Vec::with_capacity(ranked.len());
        for row in &ranked {
            let key = row.text("key")?;
            let rank: f64 = row.try_get("score").map_err(|e| db_error(e, "score"))?;
            if let Some(entry) = load_entry(&mut tx, &key).await? {
                hits.push(KnowledgeHit { entry, rank });
            }
        }
        tx.commit()
            .await
            .map_err(|e| db_error(e, "ending a read"))?;
        Ok(hits)
    }
}

async fn load_entry(
    conn: &mut SqliteConnection,
    key: &str,
) -> Result<Option<KnowledgeEntry>, StoreError> {
    let Some(row) = sqlx::query("SELECT * FROM knowledge WHERE key = ?1")
        .bind(key)
        .fetch_optional(&mut *conn)
        .await
        .map_err(|e| db_error(e, "loading a knowledge entry"))?
    else {
        return Ok(None);
    };
    let tags = sqlx::query("SELECT tag FROM knowledge_tags WHERE key = ?1 ORDER BY position")
        .bind(key)
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| db_error(e, "loading knowledge tags"))?
        .iter()
        .map(|r| r.text("tag"))
        .collect::<Result<_, _>>()?;
    let about = sqlx::query("SELECT slug FROM knowledge_about WHERE key = ?1 ORDER BY position")
        .bind(key)
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| db_error(e, "loading knowledge subjects"))?
        .iter()
        .map(|r| r.text("slug"))
        .collect::<Result<_, _>>()?;
    record::knowledge_entry(&row, tags, about).map(Some)
}

#[cfg(test)]
mod tests {
    use nomos_store_sql::knowledge::search_terms;

    use super::*;

    #[test]
    fn fts_expression_quotes_every_term() {
        assert_eq!(
            fts_expression(&search_terms("Disk-Full")),
            r#""disk" "full""#
        );
        assert_eq!(fts_expression(&["a\"b".to_owned()]), r#""a""b""#);
    }
}
