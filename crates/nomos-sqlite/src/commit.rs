//! `commit` and `commit_batch`: the version check, the row upserts and the event
//! append, all inside one `BEGIN IMMEDIATE` transaction on the commit connection
//! (`writer.rs`): the check, then one script of every write.

use nomos_core::SessionId;
use nomos_core::chain::Chainer;
use nomos_core::event::{EventRecord, PendingEvent};
use nomos_core::ports::store::{Commit, CommitReceipt, StoreError};
use nomos_core::record::{Approval, Execution, PlanStep, SessionRecord};
use nomos_store_sql::backend::Arg;
use nomos_store_sql::commit::{commit_session, last_by_id, new_session_row, session_args};
use nomos_store_sql::event_codec::encode_event;
use nomos_store_sql::sql::SHARED;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension};

use nomos_store_sql::codec::{from_u64, to_json};

use crate::codec::ms;
use crate::error::sqlite_error;
use crate::open::SqliteStore;
use crate::script::{Bound, Script};

impl SqliteStore {
    /// Commits one decision in its own transaction.
    pub(crate) async fn commit_one(&self, commit: Commit) -> Result<CommitReceipt, StoreError> {
        self.writer
            .transaction(&self.write, |db| apply(db, commit))
            .await
    }

    /// Commits several decisions in one transaction, skipping those that conflict.
    pub(crate) async fn commit_all(
        &self,
        commits: Vec<Commit>,
    ) -> Result<Vec<Result<CommitReceipt, StoreError>>, StoreError> {
        self.writer
            .transaction(&self.write, |db| {
                let mut results = Vec::with_capacity(commits.len());
                for commit in commits {
                    // The version check runs before any write of a commit, so a conflict
                    // leaves nothing of it behind and the transaction stays usable.
                    match apply(db, commit) {
                        Err(conflict @ StoreError::Conflict { .. }) => results.push(Err(conflict)),
                        Err(other) => return Err(other),
                        Ok(receipt) => results.push(Ok(receipt)),
                    }
                }
                Ok(results)
            })
            .await
    }
}

/// One commit inside the open transaction: the version check with the event chain's
/// tail, then every write of the commit as one [`Script`]. The check runs before
/// anything is written, so a conflict leaves nothing of the commit behind and the
/// transaction stays usable (`commit_batch`).
fn apply(db: &Connection, commit: Commit) -> Result<CommitReceipt, StoreError> {
    let session_id = commit_session(&commit)?;
    let sid = session_id.to_string();
    let (version, tail) = match commit.expected_version {
        // A new session has no events; an id already taken fails its insert.
        None => (1, Tail::default()),
        Some(expected) => {
            let head = head(db, &sid)?;
            let found = head.as_ref().map_or(0, |(version, _)| *version);
            if found != expected {
                return Err(StoreError::Conflict {
                    session: session_id,
                    expected,
                    found,
                });
            }
            (expected + 1, head.map(|(_, tail)| tail).unwrap_or_default())
        }
    };

    let mut script = Script::default();
    let mut checks = Vec::new();
    push_session(&mut script, &commit, session_id, version)?;
    checks.push((script.len() - 1, Check::Version));
    for id in &commit.removed_steps {
        script.push(
            "DELETE FROM plan_steps WHERE id = ?1 AND session_id = ?2",
            vec![id.to_string().into(), sid.as_str().into()],
            format!("deleting plan step {id}"),
        );
    }
    for step in last_by_id(&commit.steps, |s| s.id) {
        push_step(&mut script, step)?;
        checks.push((
            script.len() - 1,
            Check::Owned("plan step", step.id.to_string()),
        ));
    }
    for execution in last_by_id(&commit.executions, |e| e.id) {
        push_execution(&mut script, execution)?;
        checks.push((
            script.len() - 1,
            Check::Owned("execution", execution.id.to_string()),
        ));
    }
    for approval in last_by_id(&commit.approvals, |a| a.id) {
        push_approval(&mut script, approval)?;
        checks.push((
            script.len() - 1,
            Check::Owned("approval", approval.id.to_string()),
        ));
    }
    crate::fanout::push_fanouts(&mut script, &commit.fanouts)?;
    for message in &commit.messages {
        script.push(
            "INSERT INTO messages (id, session_id, role, content, tool_calls, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            vec![
                message.id.to_string().into(),
                sid.as_str().into(),
                message.role.as_str().into(),
                message.content.clone().into(),
                to_json(&message.tool_calls, "message tool calls")?.into(),
                message.created_at.as_millis().into(),
            ],
            format!("message {}", message.id),
        );
    }
    for call in &commit.tool_calls {
        script.push(
            "INSERT INTO tool_calls
               (session_id, call_id, name, arguments, result, outcome, started_at, duration_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            vec![
                sid.as_str().into(),
                call.call_id.clone().into(),
                call.name.clone().into(),
                call.arguments.clone().into(),
                call.result.clone().into(),
                call.outcome.as_str().into(),
                call.started_at.as_millis().into(),
                from_u64(call.duration_ms, "tool call duration")?.into(),
            ],
            format!("tool call {} of session {sid}", call.call_id),
        );
    }
    let first_event_statement = script.len();
    let pending = commit.events;
    push_events(&mut script, session_id, &sid, tail, &pending)?;

    let outcomes = script.run(db)?;
    for (index, check) in checks {
        let changes = outcomes[index].changes;
        match check {
            // Nobody else writes inside this transaction, so the row checked above is
            // still at `expected`; a miss would be a broken invariant, reported as the
            // conflict it is.
            Check::Version if changes != 1 => {
                return Err(StoreError::Conflict {
                    session: session_id,
                    expected: version - 1,
                    found: 0,
                });
            }
            Check::Owned(what, id) if changes == 0 => {
                return Err(StoreError::Invalid(format!(
                    "{what} {id} belongs to another session"
                )));
            }
            _ => {}
        }
    }
    let mut numbered: Vec<(i64, i64)> = Vec::with_capacity(pending.len());
    for outcome in &outcomes[first_event_statement..] {
        for row in &outcome.rows {
            numbered.push((
                integer(row, 0, "events.seq")?,
                integer(row, 1, "events.global_seq")?,
            ));
        }
    }
    if numbered.len() != pending.len() {
        return Err(StoreError::Backend(format!(
            "appending {} events returned {} rows",
            pending.len(),
            numbered.len()
        )));
    }
    // RETURNING gives rows in no promised order.
    numbered.sort_unstable();
    let events = numbered
        .into_iter()
        .zip(pending)
        .map(|((seq, global_seq), event)| EventRecord {
            global_seq,
            session_id,
            seq,
            at: event.at,
            event: event.event,
        })
        .collect();
    Ok(CommitReceipt { version, events })
}

/// What a statement's count of changed rows must show.
enum Check {
    /// The session row was written at the checked version.
    Version,
    /// An upsert touched its row: none means the id belongs to another session.
    Owned(&'static str, String),
}

/// The seq and hash of a session's last event (`0` and none without events).
#[derive(Debug, Default)]
struct Tail {
    seq: i64,
    hash: Option<String>,
}

/// A session's stored version and the tail of its event chain, in one statement; `None`
/// when there is no such session.
fn head(db: &Connection, sid: &str) -> Result<Option<(i64, Tail)>, StoreError> {
    let failed = |e| sqlite_error(e, "reading the session version and its last event");
    db.prepare_cached(
        "SELECT s.version, e.seq, e.hash FROM sessions s
         LEFT JOIN (SELECT seq, hash FROM events WHERE session_id = ?1
                    ORDER BY seq DESC LIMIT 1) e
         WHERE s.id = ?1",
    )
    .and_then(|mut head| {
        head.query_row([sid], |row| {
            let seq: Option<i64> = row.get(1)?;
            Ok((
                row.get(0)?,
                Tail {
                    seq: seq.unwrap_or(0),
                    hash: row.get(2)?,
                },
            ))
        })
        .optional()
    })
    .map_err(failed)
}

/// The integer in column `index` of a returned row; `what` names it in an error.
fn integer(row: &[Value], index: usize, what: &str) -> Result<i64, StoreError> {
    match row.get(index) {
        Some(Value::Integer(n)) => Ok(*n),
        other => Err(StoreError::Invalid(format!(
            "{what}: expected an integer, found {other:?}"
        ))),
    }
}

/// The session row's statement: the insert at version 1 for a new session, otherwise
/// the rewrite (or the bare version bump) from the checked version to `version`.
fn push_session(
    script: &mut Script,
    commit: &Commit,
    session_id: SessionId,
    version: i64,
) -> Result<(), StoreError> {
    let what = format!("session {session_id}");
    let args = |extra: Vec<Arg>, s: &SessionRecord| -> Result<Vec<Bound>, StoreError> {
        let mut args = session_args(s)?;
        args.extend(extra);
        Ok(args.into_iter().map(Bound::from).collect())
    };
    match (commit.expected_version, commit.session.as_ref()) {
        (None, _) => {
            let s = new_session_row(commit, session_id)?;
            let extra = vec![
                Arg::OptText(s.client.clone()),
                Arg::OptText(s.owner.clone()),
            ];
            let args = args(extra, s)?;
            script.push(SHARED.insert_session, args, what);
        }
        (Some(expected), Some(s)) => {
            let args = args(vec![Arg::Int(version), Arg::Int(expected)], s)?;
            script.push(SHARED.update_session, args, what);
        }
        (Some(expected), None) => {
            let args = vec![
                Bound::Int(version),
                Arg::Id(session_id.as_uuid()).into(),
                Bound::Int(expected),
            ];
            script.push(SHARED.bump_version, args, what);
        }
    }
    Ok(())
}

/// Events per `INSERT`: six parameters each, well under SQLite's limit of 32,766.
const EVENTS_PER_STATEMENT: usize = 256;

/// Appends a commit's events after the session's last one, chaining their hashes
/// (AUDIT-2), as one multi-row `INSERT ... RETURNING seq, global_seq` per 256 events.
fn push_events(
    script: &mut Script,
    session_id: SessionId,
    sid: &str,
    tail: Tail,
    pending: &[PendingEvent],
) -> Result<(), StoreError> {
    let mut chainer = Chainer::after(tail.hash.as_deref());
    let mut rows = Vec::with_capacity(pending.len());
    for (offset, event) in pending.iter().enumerate() {
        let seq = tail.seq + 1 + offset as i64;
        let value = encode_event(&event.event)?;
        let kind = event.event.kind();
        let hash = chainer.next(session_id, seq, event.at, kind, &value);
        rows.push((seq, event.at.as_millis(), kind, value.to_string(), hash));
    }
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
        let mut args = Vec::with_capacity(chunk.len() * 6);
        for (seq, at, kind, payload, hash) in chunk {
            args.extend([
                Bound::from(sid),
                Bound::Int(*seq),
                Bound::Int(*at),
                Bound::from(*kind),
                Bound::Text(payload.clone()),
                Bound::Text(hash.clone()),
            ]);
        }
        script.push(&sql, args, "appending events");
    }
    Ok(())
}

fn push_step(script: &mut Script, step: &PlanStep) -> Result<(), StoreError> {
    let commands = if step.commands.is_empty() {
        None
    } else {
        Some(to_json(&step.commands, "declared commands")?)
    };
    let check = match &step.check {
        None => None,
        Some(check) => Some(to_json(check, "step check")?),
    };
    script.push(
        concat!(
            "INSERT INTO plan_steps (id, session_id, generation, seq, title, detail, status, note,
               started_at, finished_at, updated_at, commands, step_check)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ",
            nomos_store_sql::step_upsert!()
        ),
        vec![
            step.id.to_string().into(),
            step.session_id.to_string().into(),
            i64::from(step.generation).into(),
            i64::from(step.seq).into(),
            step.title.clone().into(),
            step.detail.clone().into(),
            step.status.as_str().into(),
            step.note.clone().into(),
            ms(step.started_at).into(),
            ms(step.finished_at).into(),
            step.updated_at.as_millis().into(),
            commands.into(),
            check.into(),
        ],
        format!(
            "plan step {} (generation {}, seq {})",
            step.id, step.generation, step.seq
        ),
    );
    Ok(())
}

fn push_execution(script: &mut Script, e: &Execution) -> Result<(), StoreError> {
    let output = e
        .output
        .as_ref()
        .map(|o| to_json(o, "execution output"))
        .transpose()?;
    script.push(
        concat!(
            "INSERT INTO executions (id, session_id, tool_call_id, host, command, class, reason,
               generation, step_seq, status, created_at, started_at, finished_at, output, error, kind)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) ",
            nomos_store_sql::execution_upsert!()
        ),
        vec![
            e.id.to_string().into(),
            e.session_id.to_string().into(),
            e.tool_call_id.clone().into(),
            e.host.clone().into(),
            e.command.clone().into(),
            e.class.as_str().into(),
            e.reason.clone().into(),
            i64::from(e.generation).into(),
            e.step_seq.map(i64::from).into(),
            e.status.as_str().into(),
            e.created_at.as_millis().into(),
            ms(e.started_at).into(),
            ms(e.finished_at).into(),
            output.into(),
            e.error.clone().into(),
            e.kind.as_str().into(),
        ],
        format!("execution {}", e.id),
    );
    Ok(())
}

/// AUTHZ-3: who approved so far, as JSON; NULL while nobody has.
fn approved_by(a: &Approval) -> Result<Option<String>, StoreError> {
    if a.approved_by.is_empty() {
        return Ok(None);
    }
    to_json(&a.approved_by, "approvers").map(Some)
}

fn push_approval(script: &mut Script, a: &Approval) -> Result<(), StoreError> {
    script.push(
        concat!(
            "INSERT INTO approvals (id, session_id, execution_id, binding, binding_hash, status,
               requested_at, expires_at, decided_at, decided_by, approvers_required, approved_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ",
            nomos_store_sql::approval_upsert!()
        ),
        vec![
            a.id.to_string().into(),
            a.session_id.to_string().into(),
            a.execution_id.to_string().into(),
            to_json(&a.binding, "approval binding")?.into(),
            a.binding_hash.clone().into(),
            a.status.as_str().into(),
            a.requested_at.as_millis().into(),
            a.expires_at.as_millis().into(),
            ms(a.decided_at).into(),
            a.decided_by.clone().into(),
            i64::from(a.approvers_required).into(),
            approved_by(a)?.into(),
        ],
        format!("approval {}", a.id),
    );
    Ok(())
}
