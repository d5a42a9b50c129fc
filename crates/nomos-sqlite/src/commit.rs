//! `commit` and `commit_batch`: the version check, the row upserts and the event
//! append, all inside one `BEGIN IMMEDIATE` transaction on the writer connection.

use nomos_core::SessionId;
use nomos_core::chain::Chainer;
use nomos_core::event::{EventRecord, PendingEvent};
use nomos_core::ports::store::{Commit, CommitReceipt, StoreError};
use nomos_core::record::{Approval, Execution, PlanStep};
use nomos_store_sql::backend::{SqlBackend, SqlWriteTx};
use nomos_store_sql::commit::{last_by_id, write_session};
use nomos_store_sql::event_codec::encode_event;
use sqlx::{Row, SqliteConnection};

use nomos_store_sql::codec::{from_u64, to_json};

use crate::backend::WriteTx;
use crate::codec::ms;
use crate::error::db_error;
use crate::open::SqliteStore;

impl SqliteStore {
    /// Commits one decision in its own transaction.
    pub(crate) async fn commit_one(&self, commit: Commit) -> Result<CommitReceipt, StoreError> {
        let mut tx = self.begin_write().await?;
        let receipt = apply(&mut tx, commit).await?;
        tx.commit().await?;
        Ok(receipt)
    }

    /// Commits several decisions in one transaction, skipping those that conflict.
    pub(crate) async fn commit_all(
        &self,
        commits: Vec<Commit>,
    ) -> Result<Vec<Result<CommitReceipt, StoreError>>, StoreError> {
        let mut tx = self.begin_write().await?;
        let mut results = Vec::with_capacity(commits.len());
        for commit in commits {
            // The version check runs before any write of a commit, so a conflict
            // leaves nothing of it behind and the transaction stays usable.
            match apply(&mut tx, commit).await {
                Err(conflict @ StoreError::Conflict { .. }) => results.push(Err(conflict)),
                Err(other) => return Err(other),
                Ok(receipt) => results.push(Ok(receipt)),
            }
        }
        tx.commit().await?;
        Ok(results)
    }
}

async fn apply(tx: &mut WriteTx, commit: Commit) -> Result<CommitReceipt, StoreError> {
    let (session_id, version) = write_session::<SqliteStore>(tx, &commit).await?;
    let sid = session_id.to_string();
    let conn = tx.conn();

    for id in &commit.removed_steps {
        sqlx::query("DELETE FROM plan_steps WHERE id = ?1 AND session_id = ?2")
            .bind(id.to_string())
            .bind(&sid)
            .execute(&mut *conn)
            .await
            .map_err(|e| db_error(e, "deleting a plan step"))?;
    }
    for step in last_by_id(&commit.steps, |s| s.id) {
        upsert_step(conn, step).await?;
    }
    for execution in last_by_id(&commit.executions, |e| e.id) {
        upsert_execution(conn, execution).await?;
    }
    for approval in last_by_id(&commit.approvals, |a| a.id) {
        upsert_approval(conn, approval).await?;
    }
    crate::fanout::insert_fanouts(conn, &commit.fanouts).await?;
    for message in &commit.messages {
        sqlx::query(
            "INSERT INTO messages (id, session_id, role, content, tool_calls, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .bind(message.id.to_string())
        .bind(&sid)
        .bind(message.role.as_str())
        .bind(&message.content)
        .bind(to_json(&message.tool_calls, "message tool calls")?)
        .bind(message.created_at.as_millis())
        .execute(&mut *conn)
        .await
        .map_err(|e| db_error(e, &format!("message {}", message.id)))?;
    }
    for call in &commit.tool_calls {
        sqlx::query(
            "INSERT INTO tool_calls
               (session_id, call_id, name, arguments, result, outcome, started_at, duration_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )
        .bind(&sid)
        .bind(&call.call_id)
        .bind(&call.name)
        .bind(&call.arguments)
        .bind(&call.result)
        .bind(call.outcome.as_str())
        .bind(call.started_at.as_millis())
        .bind(from_u64(call.duration_ms, "tool call duration")?)
        .execute(&mut *conn)
        .await
        .map_err(|e| db_error(e, &format!("tool call {} of session {sid}", call.call_id)))?;
    }

    let events = append_events(conn, session_id, &sid, commit.events).await?;
    Ok(CommitReceipt { version, events })
}

/// Events per `INSERT`: six parameters each, well under SQLite's limit of 32,766.
const EVENTS_PER_STATEMENT: usize = 256;

/// Appends a commit's events after the session's last one, chaining their hashes
/// (AUDIT-2), in one multi-row `INSERT` per 256 events: one round trip to the writer
/// for a commit's events, not one per event.
async fn append_events(
    conn: &mut SqliteConnection,
    session_id: SessionId,
    sid: &str,
    pending: Vec<PendingEvent>,
) -> Result<Vec<EventRecord>, StoreError> {
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    let (last, last_hash) = last_event(conn, sid).await?;
    let mut chainer = Chainer::after(last_hash.as_deref());
    let mut rows = Vec::with_capacity(pending.len());
    for (offset, event) in pending.iter().enumerate() {
        let seq = last + 1 + offset as i64;
        let value = encode_event(&event.event)?;
        let payload = value.to_string();
        let kind = event.event.kind();
        let hash = chainer.next(session_id, seq, event.at, kind, &value);
        rows.push((seq, event.at.as_millis(), kind, payload, hash));
    }
    let mut numbered: Vec<(i64, i64)> = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(EVENTS_PER_STATEMENT) {
        let placeholders: Vec<String> = (0..chunk.len())
            .map(|row| {
                let p = row * 6;
                format!(
                    "(?{}, ?{}, ?{}, ?{}, ?{}, ?{})",
                    p + 1,
                    p + 2,
                    p + 3,
                    p + 4,
                    p + 5,
                    p + 6
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO events (session_id, seq, at, kind, payload, hash) VALUES {}
             RETURNING seq, global_seq",
            placeholders.join(", ")
        );
        // The text holds only numbered placeholders; every value is bound.
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (seq, at, kind, payload, hash) in chunk {
            query = query
                .bind(sid)
                .bind(*seq)
                .bind(*at)
                .bind(*kind)
                .bind(payload.as_str())
                .bind(hash.as_str());
        }
        for row in query
            .fetch_all(&mut *conn)
            .await
            .map_err(|e| db_error(e, "appending events"))?
        {
            numbered.push((
                row.try_get("seq").map_err(|e| db_error(e, "events.seq"))?,
                row.try_get("global_seq")
                    .map_err(|e| db_error(e, "events.global_seq"))?,
            ));
        }
    }
    // RETURNING gives rows in no promised order.
    numbered.sort_unstable();
    Ok(numbered
        .into_iter()
        .zip(pending)
        .map(|((seq, global_seq), event)| EventRecord {
            global_seq,
            session_id,
            seq,
            at: event.at,
            event: event.event,
        })
        .collect())
}

/// The seq and hash of a session's last event (`(0, None)` without events).
async fn last_event(
    conn: &mut SqliteConnection,
    sid: &str,
) -> Result<(i64, Option<String>), StoreError> {
    let row =
        sqlx::query("SELECT seq, hash FROM events WHERE session_id = ?1 ORDER BY seq DESC LIMIT 1")
            .bind(sid)
            .fetch_optional(&mut *conn)
            .await
            .map_err(|e| db_error(e, "reading the last event"))?;
    match row {
        None => Ok((0, None)),
        Some(row) => Ok((
            row.try_get("seq").map_err(|e| db_error(e, "events.seq"))?,
            row.try_get("hash")
                .map_err(|e| db_error(e, "events.hash"))?,
        )),
    }
}

async fn upsert_step(conn: &mut SqliteConnection, step: &PlanStep) -> Result<(), StoreError> {
    let done = sqlx::query(concat!(
        "INSERT INTO plan_steps (id, session_id, generation, seq, title, detail, status, note,
           started_at, finished_at, updated_at, commands)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ",
        nomos_store_sql::step_upsert!()
    ))
    .bind(step.id.to_string())
    .bind(step.session_id.to_string())
    .bind(i64::from(step.generation))
    .bind(i64::from(step.seq))
    .bind(&step.title)
    .bind(&step.detail)
    .bind(step.status.as_str())
    .bind(&step.note)
    .bind(ms(step.started_at))
    .bind(ms(step.finished_at))
    .bind(step.updated_at.as_millis())
    .bind(if step.commands.is_empty() {
        None
    } else {
        Some(to_json(&step.commands, "declared commands")?)
    })
    .execute(&mut *conn)
    .await
    .map_err(|e| {
        db_error(
            e,
            &format!(
                "plan step {} (generation {}, seq {})",
                step.id, step.generation, step.seq
            ),
        )
    })?;
    owned(done.rows_affected(), "plan step", &step.id.to_string())
}

async fn upsert_execution(conn: &mut SqliteConnection, e: &Execution) -> Result<(), StoreError> {
    let done = sqlx::query(concat!(
        "INSERT INTO executions (id, session_id, tool_call_id, host, command, class, reason,
           generation, step_seq, status, created_at, started_at, finished_at, output, error, kind)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) ",
        nomos_store_sql::execution_upsert!()
    ))
    .bind(e.id.to_string())
    .bind(e.session_id.to_string())
    .bind(&e.tool_call_id)
    .bind(&e.host)
    .bind(&e.command)
    .bind(e.class.as_str())
    .bind(&e.reason)
    .bind(i64::from(e.generation))
    .bind(e.step_seq.map(i64::from))
    .bind(e.status.as_str())
    .bind(e.created_at.as_millis())
    .bind(ms(e.started_at))
    .bind(ms(e.finished_at))
    .bind(
        e.output
            .as_ref()
            .map(|o| to_json(o, "execution output"))
            .transpose()?,
    )
    .bind(&e.error)
    .bind(e.kind.as_str())
    .execute(&mut *conn)
    .await
    .map_err(|err| db_error(err, &format!("execution {}", e.id)))?;
    owned(done.rows_affected(), "execution", &e.id.to_string())
}

async fn upsert_approval(conn: &mut SqliteConnection, a: &Approval) -> Result<(), StoreError> {
    let done = sqlx::query(concat!(
        "INSERT INTO approvals (id, session_id, execution_id, binding, binding_hash, status,
           requested_at, expires_at, decided_at, decided_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ",
        nomos_store_sql::approval_upsert!()
    ))
    .bind(a.id.to_string())
    .bind(a.session_id.to_string())
    .bind(a.execution_id.to_string())
    .bind(to_json(&a.binding, "approval binding")?)
    .bind(&a.binding_hash)
    .bind(a.status.as_str())
    .bind(a.requested_at.as_millis())
    .bind(a.expires_at.as_millis())
    .bind(ms(a.decided_at))
    .bind(&a.decided_by)
    .execute(&mut *conn)
    .await
    .map_err(|e| db_error(e, &format!("approval {}", a.id)))?;
    owned(done.rows_affected(), "approval", &a.id.to_string())
}

/// An upsert that touched no row hit an id owned by another session.
fn owned(rows: u64, what: &str, id: &str) -> Result<(), StoreError> {
    if rows == 0 {
        return Err(StoreError::Invalid(format!(
            "{what} {id} belongs to another session"
        )));
    }
    Ok(())
}
