//! `commit` and `commit_batch`: the version check, bulk upserts through `UNNEST`
//! (one round trip per table), and the event append, in one transaction that is run
//! again on a serialization failure or deadlock.

use nomos_core::SessionId;
use nomos_core::chain::Chainer;
use nomos_core::event::{EventRecord, PendingEvent};
use nomos_core::ports::store::{Commit, CommitReceipt, StoreError};
use nomos_core::record::{Approval, Execution, PlanStep};
use nomos_store_sql::backend::{SqlBackend, SqlWriteTx};
use nomos_store_sql::commit::{last_by_id, write_session};
use nomos_store_sql::event_codec::encode_event;
use sqlx::{PgConnection, Row};
use uuid::Uuid;

use nomos_store_sql::codec::from_u64;

use crate::backend::WriteTx;
use crate::codec::{dt, opt_dt, to_json};
use crate::error::{db_error, is_retryable};
use crate::open::PgStore;

/// The advisory lock that orders event appends, so `global_seq` order is commit order
/// and a reader following `global_seq` never skips an event committed late.
pub(crate) const EVENT_LOG_LOCK: i64 = 0x6e6f_6d6f_7365_7631;

impl PgStore {
    /// Commits one decision in its own transaction.
    pub(crate) async fn commit_one(&self, commit: Commit) -> Result<CommitReceipt, StoreError> {
        let mut results = self.commit_many(vec![commit], Mode::Single).await?;
        results
            .pop()
            .unwrap_or_else(|| Err(StoreError::Backend("commit produced no result".into())))
    }

    /// Commits several decisions in one transaction, skipping those that conflict.
    pub(crate) async fn commit_all(
        &self,
        commits: Vec<Commit>,
    ) -> Result<Vec<Result<CommitReceipt, StoreError>>, StoreError> {
        self.commit_many(commits, Mode::Batch).await
    }

    /// Commits several decisions in one transaction, retried as a whole when the
    /// database asks for it.
    async fn commit_many(
        &self,
        commits: Vec<Commit>,
        mode: Mode,
    ) -> Result<Vec<Result<CommitReceipt, StoreError>>, StoreError> {
        let mut attempt = 0;
        loop {
            match self.try_commit_many(commits.clone(), mode).await {
                Err(err) if is_retryable(&err) && attempt < self.retries => {
                    attempt += 1;
                    tracing::debug!(attempt, error = %err, "retrying a commit");
                    // A short, growing pause lets the transaction that won finish.
                    tokio::time::sleep(std::time::Duration::from_millis(5 * u64::from(attempt)))
                        .await;
                }
                other => return other,
            }
        }
    }

    async fn try_commit_many(
        &self,
        commits: Vec<Commit>,
        mode: Mode,
    ) -> Result<Vec<Result<CommitReceipt, StoreError>>, StoreError> {
        let mut tx = self.begin_write().await?;
        let mut results = Vec::with_capacity(commits.len());
        let mut pending: Vec<(usize, SessionId, Vec<PendingEvent>)> = Vec::new();
        for (index, commit) in commits.into_iter().enumerate() {
            // The version check runs before any write of a commit, so a conflict leaves
            // nothing of it behind and the transaction stays usable.
            match apply_rows(&mut tx, commit).await {
                Ok((session, version, events)) => {
                    results.push(Ok(CommitReceipt {
                        version,
                        events: Vec::new(),
                    }));
                    pending.push((index, session, events));
                }
                Err(conflict @ StoreError::Conflict { .. }) if mode == Mode::Batch => {
                    results.push(Err(conflict));
                }
                Err(other) => return Err(other),
            }
        }
        if pending.iter().any(|(_, _, events)| !events.is_empty()) {
            // Taken last, so it is held only for the append and the commit.
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(EVENT_LOG_LOCK)
                .execute(tx.conn())
                .await
                .map_err(|e| db_error(e, "locking the event log"))?;
            for (index, session, events) in pending {
                let appended = append_events(tx.conn(), session, events).await?;
                if let Some(Ok(receipt)) = results.get_mut(index) {
                    receipt.events = appended;
                }
            }
        }
        tx.commit().await?;
        Ok(results)
    }
}

/// Whether a conflict fails the call (single commit) or only its slot (batch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Single,
    Batch,
}

/// Writes a commit's rows; returns its session, new version and events to append.
async fn apply_rows(
    tx: &mut WriteTx,
    commit: Commit,
) -> Result<(SessionId, i64, Vec<PendingEvent>), StoreError> {
    let (session_id, version) = write_session::<PgStore>(tx, &commit).await?;
    let sid = session_id.as_uuid();
    let conn = tx.conn();
    if !commit.removed_steps.is_empty() {
        let ids: Vec<Uuid> = commit.removed_steps.iter().map(|s| s.as_uuid()).collect();
        sqlx::query("DELETE FROM plan_steps WHERE session_id = $1 AND id = ANY($2)")
            .bind(sid)
            .bind(ids)
            .execute(&mut *conn)
            .await
            .map_err(|e| db_error(e, "deleting plan steps"))?;
    }
    upsert_steps(conn, &last_by_id(&commit.steps, |s| s.id)).await?;
    upsert_executions(conn, &last_by_id(&commit.executions, |e| e.id)).await?;
    upsert_approvals(conn, &last_by_id(&commit.approvals, |a| a.id)).await?;
    crate::fanout::insert_fanouts(conn, &commit.fanouts).await?;
    if !commit.messages.is_empty() {
        let m = &commit.messages;
        let tool_calls = m
            .iter()
            .map(|m| to_json(&m.tool_calls, "message tool calls"))
            .collect::<Result<Vec<_>, _>>()?;
        sqlx::query(
            "INSERT INTO messages (id, session_id, role, content, tool_calls, created_at)
             SELECT id, $1, role, content, tool_calls, created_at
             FROM UNNEST($2::uuid[], $3::text[], $4::text[], $5::jsonb[], $6::timestamptz[])
               WITH ORDINALITY AS u(id, role, content, tool_calls, created_at, n)
             ORDER BY n",
        )
        .bind(sid)
        .bind(m.iter().map(|m| m.id.as_uuid()).collect::<Vec<_>>())
        .bind(m.iter().map(|m| m.role.as_str()).collect::<Vec<_>>())
        .bind(m.iter().map(|m| m.content.as_str()).collect::<Vec<_>>())
        .bind(tool_calls)
        .bind(m.iter().map(|m| dt(m.created_at)).collect::<Vec<_>>())
        .execute(&mut *conn)
        .await
        .map_err(|e| db_error(e, &format!("messages of session {session_id}")))?;
    }
    if !commit.tool_calls.is_empty() {
        let t = &commit.tool_calls;
        let durations = t
            .iter()
            .map(|c| from_u64(c.duration_ms, "tool call duration"))
            .collect::<Result<Vec<_>, _>>()?;
        let call_ids: Vec<&str> = t.iter().map(|c| c.call_id.as_str()).collect();
        sqlx::query(
            "INSERT INTO tool_calls
               (session_id, call_id, name, arguments, result, outcome, started_at, duration_ms)
             SELECT $1, call_id, name, arguments, result, outcome, started_at, duration_ms
             FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                         $7::timestamptz[], $8::int8[])
               WITH ORDINALITY AS u(call_id, name, arguments, result, outcome, started_at,
                                    duration_ms, n)
             ORDER BY n",
        )
        .bind(sid)
        .bind(&call_ids)
        .bind(t.iter().map(|c| c.name.as_str()).collect::<Vec<_>>())
        .bind(t.iter().map(|c| c.arguments.as_str()).collect::<Vec<_>>())
        .bind(t.iter().map(|c| c.result.as_str()).collect::<Vec<_>>())
        .bind(t.iter().map(|c| c.outcome.as_str()).collect::<Vec<_>>())
        .bind(t.iter().map(|c| dt(c.started_at)).collect::<Vec<_>>())
        .bind(durations)
        .execute(&mut *conn)
        .await
        .map_err(|e| {
            db_error(
                e,
                &format!("tool calls {} of session {session_id}", call_ids.join(", ")),
            )
        })?;
    }
    Ok((session_id, version, commit.events))
}

async fn append_events(
    conn: &mut PgConnection,
    session: SessionId,
    events: Vec<PendingEvent>,
) -> Result<Vec<EventRecord>, StoreError> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let payloads = events
        .iter()
        .map(|e| encode_event(&e.event))
        .collect::<Result<Vec<_>, _>>()?;
    // AUDIT-2: each event's hash chains on its predecessor's, in this transaction
    // (appends are serialised by the event-log lock taken before this).
    let last =
        sqlx::query("SELECT seq, hash FROM events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1")
            .bind(session.as_uuid())
            .fetch_optional(&mut *conn)
            .await
            .map_err(|e| db_error(e, "reading the last event"))?;
    let (last_seq, last_hash): (i64, Option<String>) = match last {
        None => (0, None),
        Some(row) => (
            row.try_get("seq").map_err(|e| db_error(e, "events.seq"))?,
            row.try_get("hash")
                .map_err(|e| db_error(e, "events.hash"))?,
        ),
    };
    let mut chainer = Chainer::after(last_hash.as_deref());
    let hashes = events
        .iter()
        .zip(&payloads)
        .enumerate()
        .map(|(offset, (pending, payload))| {
            let seq = last_seq + 1 + offset as i64;
            let kind = pending.event.kind();
            Ok(chainer.next(session, seq, pending.at, kind, payload))
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    let rows = sqlx::query(
        "INSERT INTO events (session_id, seq, at, kind, payload, hash)
         SELECT $1, $2 + u.n, u.at, u.kind, u.payload, u.hash
         FROM UNNEST($3::timestamptz[], $4::text[], $5::jsonb[], $6::text[])
              WITH ORDINALITY AS u(at, kind, payload, hash, n)
         ORDER BY u.n
         RETURNING global_seq, seq",
    )
    .bind(session.as_uuid())
    .bind(last_seq)
    .bind(events.iter().map(|e| dt(e.at)).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.event.kind()).collect::<Vec<_>>())
    .bind(payloads)
    .bind(hashes)
    .fetch_all(&mut *conn)
    .await
    .map_err(|e| db_error(e, &format!("events of session {session}")))?;
    let mut numbered = rows
        .iter()
        .map(|row| {
            Ok((
                row.try_get::<i64, _>("seq")?,
                row.try_get::<i64, _>("global_seq")?,
            ))
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()
        .map_err(|e| db_error(e, "numbering events"))?;
    numbered.sort_unstable();
    Ok(numbered
        .into_iter()
        .zip(events)
        .map(|((seq, global_seq), pending)| EventRecord {
            global_seq,
            session_id: session,
            seq,
            at: pending.at,
            event: pending.event,
        })
        .collect())
}

/// An upsert that touched fewer rows than it carried hit ids owned by another session.
fn all_owned(done: u64, carried: usize, what: &str) -> Result<(), StoreError> {
    if done != carried as u64 {
        return Err(StoreError::Invalid(format!(
            "{} of {carried} {what} belong to another session",
            carried as u64 - done.min(carried as u64)
        )));
    }
    Ok(())
}

async fn upsert_steps(conn: &mut PgConnection, steps: &[&PlanStep]) -> Result<(), StoreError> {
    if steps.is_empty() {
        return Ok(());
    }
    let commands = steps
        .iter()
        .map(|s| {
            if s.commands.is_empty() {
                Ok(None)
            } else {
                to_json(&s.commands, "declared commands").map(Some)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let checks = steps
        .iter()
        .map(|s| match &s.check {
            None => Ok(None),
            Some(check) => to_json(check, "step check").map(Some),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let done = sqlx::query(concat!(
        "INSERT INTO plan_steps (id, session_id, generation, seq, title, detail, status, note,
           started_at, finished_at, updated_at, commands, step_check)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::int8[], $4::int8[], $5::text[],
           $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::timestamptz[],
           $11::timestamptz[], $12::jsonb[], $13::jsonb[]) ",
        nomos_store_sql::step_upsert!()
    ))
    .bind(steps.iter().map(|s| s.id.as_uuid()).collect::<Vec<_>>())
    .bind(
        steps
            .iter()
            .map(|s| s.session_id.as_uuid())
            .collect::<Vec<_>>(),
    )
    .bind(
        steps
            .iter()
            .map(|s| i64::from(s.generation))
            .collect::<Vec<_>>(),
    )
    .bind(steps.iter().map(|s| i64::from(s.seq)).collect::<Vec<_>>())
    .bind(steps.iter().map(|s| s.title.as_str()).collect::<Vec<_>>())
    .bind(
        steps
            .iter()
            .map(|s| s.detail.as_deref())
            .collect::<Vec<_>>(),
    )
    .bind(steps.iter().map(|s| s.status.as_str()).collect::<Vec<_>>())
    .bind(steps.iter().map(|s| s.note.as_deref()).collect::<Vec<_>>())
    .bind(
        steps
            .iter()
            .map(|s| opt_dt(s.started_at))
            .collect::<Vec<_>>(),
    )
    .bind(
        steps
            .iter()
            .map(|s| opt_dt(s.finished_at))
            .collect::<Vec<_>>(),
    )
    .bind(steps.iter().map(|s| dt(s.updated_at)).collect::<Vec<_>>())
    .bind(commands)
    .bind(checks)
    .execute(&mut *conn)
    .await
    .map_err(|e| {
        let which: Vec<String> = steps
            .iter()
            .map(|s| format!("{}.{}", s.generation, s.seq))
            .collect();
        db_error(e, &format!("plan steps {}", which.join(", ")))
    })?;
    all_owned(done.rows_affected(), steps.len(), "plan steps")
}

async fn upsert_executions(
    conn: &mut PgConnection,
    execs: &[&Execution],
) -> Result<(), StoreError> {
    if execs.is_empty() {
        return Ok(());
    }
    let outputs = execs
        .iter()
        .map(|e| {
            e.output
                .as_ref()
                .map(|o| to_json(o, "execution output"))
                .transpose()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let done = sqlx::query(concat!(
        "INSERT INTO executions (id, session_id, tool_call_id, host, command, class, reason,
           generation, step_seq, status, created_at, started_at, finished_at, output, error, kind)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[],
           $6::text[], $7::text[], $8::int8[], $9::int8[], $10::text[], $11::timestamptz[],
           $12::timestamptz[], $13::timestamptz[], $14::jsonb[], $15::text[], $16::text[]) ",
        nomos_store_sql::execution_upsert!()
    ))
    .bind(execs.iter().map(|e| e.id.as_uuid()).collect::<Vec<_>>())
    .bind(
        execs
            .iter()
            .map(|e| e.session_id.as_uuid())
            .collect::<Vec<_>>(),
    )
    .bind(
        execs
            .iter()
            .map(|e| e.tool_call_id.as_deref())
            .collect::<Vec<_>>(),
    )
    .bind(execs.iter().map(|e| e.host.as_str()).collect::<Vec<_>>())
    .bind(execs.iter().map(|e| e.command.as_str()).collect::<Vec<_>>())
    .bind(execs.iter().map(|e| e.class.as_str()).collect::<Vec<_>>())
    .bind(execs.iter().map(|e| e.reason.as_str()).collect::<Vec<_>>())
    .bind(
        execs
            .iter()
            .map(|e| i64::from(e.generation))
            .collect::<Vec<_>>(),
    )
    .bind(
        execs
            .iter()
            .map(|e| e.step_seq.map(i64::from))
            .collect::<Vec<_>>(),
    )
    .bind(execs.iter().map(|e| e.status.as_str()).collect::<Vec<_>>())
    .bind(execs.iter().map(|e| dt(e.created_at)).collect::<Vec<_>>())
    .bind(
        execs
            .iter()
            .map(|e| opt_dt(e.started_at))
            .collect::<Vec<_>>(),
    )
    .bind(
        execs
            .iter()
            .map(|e| opt_dt(e.finished_at))
            .collect::<Vec<_>>(),
    )
    .bind(outputs)
    .bind(execs.iter().map(|e| e.error.as_deref()).collect::<Vec<_>>())
    .bind(execs.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>())
    .execute(&mut *conn)
    .await
    .map_err(|e| db_error(e, "executions"))?;
    all_owned(done.rows_affected(), execs.len(), "executions")
}

async fn upsert_approvals(
    conn: &mut PgConnection,
    approvals: &[&Approval],
) -> Result<(), StoreError> {
    if approvals.is_empty() {
        return Ok(());
    }
    let bindings = approvals
        .iter()
        .map(|a| to_json(&a.binding, "approval binding"))
        .collect::<Result<Vec<_>, _>>()?;
    // AUTHZ-3: who approved so far; NULL while nobody has.
    let approvers = approvals
        .iter()
        .map(|a| {
            if a.approved_by.is_empty() {
                Ok(None)
            } else {
                to_json(&a.approved_by, "approvers").map(Some)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let done = sqlx::query(concat!(
        "INSERT INTO approvals (id, session_id, execution_id, binding, binding_hash, status,
           requested_at, expires_at, decided_at, decided_by, approvers_required, approved_by)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::jsonb[], $5::text[],
           $6::text[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::text[],
           $11::int8[], $12::jsonb[]) ",
        nomos_store_sql::approval_upsert!()
    ))
    .bind(approvals.iter().map(|a| a.id.as_uuid()).collect::<Vec<_>>())
    .bind(
        approvals
            .iter()
            .map(|a| a.session_id.as_uuid())
            .collect::<Vec<_>>(),
    )
    .bind(
        approvals
            .iter()
            .map(|a| a.execution_id.as_uuid())
            .collect::<Vec<_>>(),
    )
    .bind(bindings)
    .bind(
        approvals
            .iter()
            .map(|a| a.binding_hash.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(
        approvals
            .iter()
            .map(|a| a.status.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(
        approvals
            .iter()
            .map(|a| dt(a.requested_at))
            .collect::<Vec<_>>(),
    )
    .bind(
        approvals
            .iter()
            .map(|a| dt(a.expires_at))
            .collect::<Vec<_>>(),
    )
    .bind(
        approvals
            .iter()
            .map(|a| opt_dt(a.decided_at))
            .collect::<Vec<_>>(),
    )
    .bind(
        approvals
            .iter()
            .map(|a| a.decided_by.as_deref())
            .collect::<Vec<_>>(),
    )
    .bind(
        approvals
            .iter()
            .map(|a| i64::from(a.approvers_required))
            .collect::<Vec<_>>(),
    )
    .bind(approvers)
    .execute(&mut *conn)
    .await
    .map_err(|e| db_error(e, "approvals"))?;
    all_owned(done.rows_affected(), approvals.len(), "approvals")
}
