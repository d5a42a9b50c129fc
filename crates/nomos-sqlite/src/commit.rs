//! `commit` and `commit_batch`: the version check, the row upserts and the event
//! append, all inside one `BEGIN IMMEDIATE` transaction on the writer connection.

use nomos_core::SessionId;
use nomos_core::chain::Chainer;
use nomos_core::event::EventRecord;
use nomos_core::ports::store::{Commit, CommitReceipt, StoreError};
use nomos_core::record::{Approval, Execution, PlanStep, SessionRecord};
use nomos_store_sql::commit::{commit_session, last_by_id, new_session_row};
use sqlx::{Row, SqliteConnection};

use crate::codec::{from_u64, ms, to_json};
use crate::error::db_error;
use crate::open::SqliteStore;

impl SqliteStore {
    /// Commits one decision in its own transaction.
    pub(crate) async fn commit_one(&self, commit: Commit) -> Result<CommitReceipt, StoreError> {
        let mut tx = self
            .write
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| db_error(e, "beginning a transaction"))?;
        let receipt = apply(&mut tx, commit).await?;
        tx.commit().await.map_err(|e| db_error(e, "committing"))?;
        Ok(receipt)
    }

    /// Commits several decisions in one transaction, skipping those that conflict.
    pub(crate) async fn commit_many(
        &self,
        commits: Vec<Commit>,
    ) -> Result<Vec<Result<CommitReceipt, StoreError>>, StoreError> {
        let mut tx = self
            .write
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| db_error(e, "beginning a transaction"))?;
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
        tx.commit().await.map_err(|e| db_error(e, "committing"))?;
        Ok(results)
    }
}

async fn apply(conn: &mut SqliteConnection, commit: Commit) -> Result<CommitReceipt, StoreError> {
    let session_id = commit_session(&commit)?;
    let sid = session_id.to_string();
    let version = match commit.expected_version {
        None => {
            insert_session(conn, new_session_row(&commit, session_id)?).await?;
            1
        }
        Some(expected) => {
            bump_version(conn, &sid, session_id, expected, commit.session.as_ref()).await?
        }
    };

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

    let mut events = Vec::with_capacity(commit.events.len());
    if !commit.events.is_empty() {
        let (last, last_hash) = last_event(conn, &sid).await?;
        // AUDIT-2: each event's hash chains on its predecessor's, in this transaction.
        let mut chainer = Chainer::after(last_hash.as_deref());
        for (offset, pending) in commit.events.into_iter().enumerate() {
            let seq = last + 1 + offset as i64;
            let payload = to_json(&pending.event, "event payload")?;
            let value = serde_json::from_str(&payload)
                .map_err(|e| StoreError::Invalid(format!("event payload: {e}")))?;
            let kind = pending.event.kind();
            let hash = chainer.next(session_id, seq, pending.at, kind, &value);
            let global_seq: i64 = sqlx::query(
                "INSERT INTO events (session_id, seq, at, kind, payload, hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING global_seq",
            )
            .bind(&sid)
            .bind(seq)
            .bind(pending.at.as_millis())
            .bind(kind)
            .bind(payload)
            .bind(hash)
            .fetch_one(&mut *conn)
            .await
            .and_then(|row| row.try_get("global_seq"))
            .map_err(|e| db_error(e, "appending an event"))?;
            events.push(EventRecord {
                global_seq,
                session_id,
                seq,
                at: pending.at,
                event: pending.event,
            });
        }
    }
    Ok(CommitReceipt { version, events })
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

async fn insert_session(conn: &mut SqliteConnection, s: &SessionRecord) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO sessions (id, status, goal, summary, board_outcome, plan_generation, assent,
           knowledge, nudged_at, n_messages, created_at, last_activity_at, version, client)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 1, ?13)",
    )
    .bind(s.id.to_string())
    .bind(s.status.as_str())
    .bind(&s.goal)
    .bind(&s.summary)
    .bind(s.board_outcome.map(|o| o.as_str()))
    .bind(i64::from(s.plan_generation))
    .bind(
        s.assent
            .as_ref()
            .map(|a| to_json(a, "assent window"))
            .transpose()?,
    )
    .bind(s.knowledge.as_str())
    .bind(ms(s.nudged_at))
    .bind(from_u64(s.n_messages, "message count")?)
    .bind(s.created_at.as_millis())
    .bind(s.last_activity_at.as_millis())
    .bind(&s.client)
    .execute(&mut *conn)
    .await
    .map_err(|e| db_error(e, &format!("session {}", s.id)))?;
    Ok(())
}

/// The optimistic version check: bumps the version (and rewrites the row when given)
/// only if the stored version is `expected`.
async fn bump_version(
    conn: &mut SqliteConnection,
    sid: &str,
    session_id: SessionId,
    expected: i64,
    record: Option<&SessionRecord>,
) -> Result<i64, StoreError> {
    let next = expected + 1;
    let updated = match record {
        Some(s) => {
            sqlx::query(
                "UPDATE sessions SET status = ?1, goal = ?2, summary = ?3, board_outcome = ?4,
               plan_generation = ?5, assent = ?6, knowledge = ?7, nudged_at = ?8,
               n_messages = ?9, created_at = ?10, last_activity_at = ?11, version = ?12
             WHERE id = ?13 AND version = ?14",
            )
            .bind(s.status.as_str())
            .bind(&s.goal)
            .bind(&s.summary)
            .bind(s.board_outcome.map(|o| o.as_str()))
            .bind(i64::from(s.plan_generation))
            .bind(
                s.assent
                    .as_ref()
                    .map(|a| to_json(a, "assent window"))
                    .transpose()?,
            )
            .bind(s.knowledge.as_str())
            .bind(ms(s.nudged_at))
            .bind(from_u64(s.n_messages, "message count")?)
            .bind(s.created_at.as_millis())
            .bind(s.last_activity_at.as_millis())
            .bind(next)
            .bind(sid)
            .bind(expected)
            .execute(&mut *conn)
            .await
        }
        None => {
            sqlx::query("UPDATE sessions SET version = ?1 WHERE id = ?2 AND version = ?3")
                .bind(next)
                .bind(sid)
                .bind(expected)
                .execute(&mut *conn)
                .await
        }
    }
    .map_err(|e| db_error(e, &format!("session {session_id}")))?;
    if updated.rows_affected() == 1 {
        return Ok(next);
    }
    let found: Option<i64> = sqlx::query("SELECT version FROM sessions WHERE id = ?1")
        .bind(sid)
        .fetch_optional(&mut *conn)
        .await
        .map_err(|e| db_error(e, "reading the session version"))?
        .map(|row| row.try_get("version"))
        .transpose()
        .map_err(|e| db_error(e, "sessions.version"))?;
    Err(StoreError::Conflict {
        session: session_id,
        expected,
        found: found.unwrap_or(0),
    })
}

async fn upsert_step(conn: &mut SqliteConnection, step: &PlanStep) -> Result<(), StoreError> {
    let done = sqlx::query(
        "INSERT INTO plan_steps (id, session_id, generation, seq, title, detail, status, note,
           started_at, finished_at, updated_at, commands)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
         ON CONFLICT (id) DO UPDATE SET generation = excluded.generation, seq = excluded.seq,
           title = excluded.title, detail = excluded.detail, status = excluded.status,
           commands = excluded.commands,
           note = excluded.note, started_at = excluded.started_at,
           finished_at = excluded.finished_at, updated_at = excluded.updated_at
         WHERE plan_steps.session_id = excluded.session_id",
    )
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
    let done = sqlx::query(
        "INSERT INTO executions (id, session_id, tool_call_id, host, command, class, reason,
           generation, step_seq, status, created_at, started_at, finished_at, output, error)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
         ON CONFLICT (id) DO UPDATE SET tool_call_id = excluded.tool_call_id,
           host = excluded.host, command = excluded.command, class = excluded.class,
           reason = excluded.reason, generation = excluded.generation,
           step_seq = excluded.step_seq, status = excluded.status,
           created_at = excluded.created_at, started_at = excluded.started_at,
           finished_at = excluded.finished_at, output = excluded.output, error = excluded.error
         WHERE executions.session_id = excluded.session_id",
    )
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
    .execute(&mut *conn)
    .await
    .map_err(|err| db_error(err, &format!("execution {}", e.id)))?;
    owned(done.rows_affected(), "execution", &e.id.to_string())
}

async fn upsert_approval(conn: &mut SqliteConnection, a: &Approval) -> Result<(), StoreError> {
    let done = sqlx::query(
        "INSERT INTO approvals (id, session_id, execution_id, binding, binding_hash, status,
           requested_at, expires_at, decided_at, decided_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (id) DO UPDATE SET execution_id = excluded.execution_id,
           binding = excluded.binding, binding_hash = excluded.binding_hash,
           status = excluded.status, requested_at = excluded.requested_at,
           expires_at = excluded.expires_at, decided_at = excluded.decided_at,
           decided_by = excluded.decided_by
         WHERE approvals.session_id = excluded.session_id",
    )
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
