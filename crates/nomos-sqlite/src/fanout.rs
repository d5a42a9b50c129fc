//! Fan-out rows (FLEET-1): written once in the commit that creates them, read with the
//! session's snapshot (`nomos-store-sql`).

use nomos_core::fanout::Fanout;
use nomos_core::ports::store::StoreError;
use sqlx::SqliteConnection;

use crate::error::db_error;
use nomos_store_sql::codec::to_json;

/// Inserts new fan-outs; one already stored is left as it is (a fan-out never changes).
pub(crate) async fn insert_fanouts(
    conn: &mut SqliteConnection,
    fanouts: &[Fanout],
) -> Result<(), StoreError> {
    for fanout in fanouts {
        sqlx::query(
            "INSERT INTO fanouts (id, session_id, created_at, body) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(fanout.id.to_string())
        .bind(fanout.session_id.to_string())
        .bind(fanout.created_at.as_millis())
        .bind(to_json(fanout, "fan-out")?)
        .execute(&mut *conn)
        .await
        .map_err(|e| db_error(e, &format!("fan-out {}", fanout.id)))?;
    }
    Ok(())
}
