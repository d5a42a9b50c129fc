//! Fan-out rows (FLEET-1): written once in the commit that creates them, read with the
//! session's snapshot.

use nomos_core::fanout::Fanout;
use nomos_core::ports::store::StoreError;
use nomos_store_sql::json_error;
use sqlx::{PgConnection, Row};
use uuid::Uuid;

use crate::codec::{dt, to_json};
use crate::error::db_error;

/// Inserts new fan-outs; one already stored is left as it is (a fan-out never changes).
pub(crate) async fn insert_fanouts(
    conn: &mut PgConnection,
    fanouts: &[Fanout],
) -> Result<(), StoreError> {
    for fanout in fanouts {
        sqlx::query(
            "INSERT INTO fanouts (id, session_id, created_at, body) VALUES ($1, $2, $3, $4)
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(fanout.id.0)
        .bind(fanout.session_id.as_uuid())
        .bind(dt(fanout.created_at))
        .bind(to_json(fanout, "fan-out")?)
        .execute(&mut *conn)
        .await
        .map_err(|e| db_error(e, &format!("fan-out {}", fanout.id)))?;
    }
    Ok(())
}

/// The fan-outs of one session, oldest first.
pub(crate) async fn load_fanouts(
    conn: &mut PgConnection,
    session_id: Uuid,
) -> Result<Vec<Fanout>, StoreError> {
    sqlx::query("SELECT body FROM fanouts WHERE session_id = $1 ORDER BY created_at, id")
        .bind(session_id)
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| db_error(e, "loading fan-outs"))?
        .iter()
        .map(|row| {
            let body: serde_json::Value = row.try_get("body").map_err(|e| db_error(e, "body"))?;
            serde_json::from_value(body).map_err(|e| json_error(e, "fan-out body"))
        })
        .collect()
}
