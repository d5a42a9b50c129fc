//! REPLICA-2: the server processes sharing the database. Each has a row in `instances`
//! whose heartbeat it renews; the database's clock decides which have lapsed. A process's
//! connections name it (`nomos.instance`), so triggers record it as the owner of the
//! executions it dispatches and of the sessions it writes (migration 5).

use std::collections::HashSet;

use async_trait::async_trait;
use nomos_core::ports::replica::{InstanceId, Instances, LiveClaims};
use nomos_core::ports::store::StoreError;
use nomos_core::{ExecutionId, SessionId};
use sqlx::{PgPool, Row};
use uuid::Uuid;

use crate::error::db_error;
use crate::open::PgStore;

/// The instance rows, seen from one process.
#[derive(Clone, Debug)]
pub struct PgInstances {
    pool: PgPool,
    me: InstanceId,
}

impl PgStore {
    /// The instances port of a store opened with [`PgStore::connect_instance`]; `None`
    /// for a store whose connections name no instance.
    pub fn instances(&self) -> Option<PgInstances> {
        self.instance.map(|me| PgInstances {
            pool: self.pool.clone(),
            me,
        })
    }
}

fn ids(rows: &[sqlx::postgres::PgRow]) -> Result<HashSet<InstanceId>, StoreError> {
    rows.iter()
        .map(|row| {
            row.try_get::<Uuid, _>("id")
                .map(InstanceId)
                .map_err(|e| db_error(e, "reading instances"))
        })
        .collect()
}

#[async_trait]
impl Instances for PgInstances {
    fn me(&self) -> InstanceId {
        self.me
    }

    async fn heartbeat(&self) -> Result<(), StoreError> {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| "unknown".to_owned());
        sqlx::query(
            "INSERT INTO instances (id, host, pid) VALUES ($1, $2, $3)
             ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()",
        )
        .bind(self.me.0)
        .bind(host)
        .bind(std::process::id() as i32)
        .execute(&self.pool)
        .await
        .map_err(|e| db_error(e, "renewing the heartbeat"))?;
        Ok(())
    }

    async fn lapsed(&self, lapse_secs: u64) -> Result<HashSet<InstanceId>, StoreError> {
        let rows = sqlx::query(
            "SELECT id FROM instances WHERE heartbeat_at < now() - make_interval(secs => $1)",
        )
        .bind(lapse_secs as f64)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| db_error(e, "reading lapsed instances"))?;
        ids(&rows)
    }

    async fn live_claims(
        &self,
        lapse_secs: u64,
        executions: &[ExecutionId],
        sessions: &[SessionId],
    ) -> Result<LiveClaims, StoreError> {
        let live =
            "SELECT id FROM instances WHERE heartbeat_at >= now() - make_interval(secs => $1)";
        let execution_ids: Vec<Uuid> = executions.iter().map(|id| id.as_uuid()).collect();
        let session_ids: Vec<Uuid> = sessions.iter().map(|id| id.as_uuid()).collect();
        let executions = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT id, owner FROM executions WHERE id = ANY($2) AND owner IN ({live})"
        )))
        .bind(lapse_secs as f64)
        .bind(execution_ids)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| db_error(e, "reading who owns executions"))?;
        let sessions = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT id, owner FROM sessions WHERE id = ANY($2) AND owner IN ({live})"
        )))
        .bind(lapse_secs as f64)
        .bind(session_ids)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| db_error(e, "reading who owns sessions"))?;
        let pair = |row: &sqlx::postgres::PgRow| -> Result<(Uuid, Uuid), StoreError> {
            let id = row
                .try_get("id")
                .map_err(|e| db_error(e, "reading owners"))?;
            let owner = row
                .try_get("owner")
                .map_err(|e| db_error(e, "reading owners"))?;
            Ok((id, owner))
        };
        let mut claims = LiveClaims::default();
        for row in &executions {
            let (id, owner) = pair(row)?;
            claims.executions.insert(ExecutionId(id), InstanceId(owner));
        }
        for row in &sessions {
            let (id, owner) = pair(row)?;
            claims.sessions.insert(SessionId(id), InstanceId(owner));
        }
        Ok(claims)
    }

    async fn forget(&self, ids: &HashSet<InstanceId>) -> Result<(), StoreError> {
        let ids: Vec<Uuid> = ids.iter().map(|id| id.0).collect();
        sqlx::query("DELETE FROM instances WHERE id = ANY($1)")
            .bind(ids)
            .execute(&self.pool)
            .await
            .map_err(|e| db_error(e, "forgetting lapsed instances"))?;
        Ok(())
    }
}
