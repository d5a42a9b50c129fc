//! Checks of a [`Commit`] made before anything of it is written, and the row choices
//! both backends make the same way.

use std::collections::HashSet;
use std::hash::Hash;

use nomos_core::SessionId;
use nomos_core::ports::store::{Commit, StoreError};
use nomos_core::record::SessionRecord;

use crate::RecordRow;
use crate::backend::{Arg, SqlBackend, SqlWriteTx, Statement};
use crate::codec::from_u64;
use crate::sql::SHARED;

/// The session a commit belongs to, checked to be the same for every row it carries.
pub fn commit_session(commit: &Commit) -> Result<SessionId, StoreError> {
    let ids = commit
        .session
        .iter()
        .map(|s| s.id)
        .chain(commit.steps.iter().map(|s| s.session_id))
        .chain(commit.executions.iter().map(|e| e.session_id))
        .chain(commit.approvals.iter().map(|a| a.session_id))
        .chain(commit.messages.iter().map(|m| m.session_id))
        .chain(commit.tool_calls.iter().map(|t| t.session_id));
    let mut found: Option<SessionId> = None;
    for id in ids {
        match found {
            None => found = Some(id),
            Some(first) if first != id => {
                return Err(StoreError::Invalid(format!(
                    "commit mixes rows of sessions {first} and {id}"
                )));
            }
            Some(_) => {}
        }
    }
    found.ok_or_else(|| StoreError::Invalid("commit names no session (no row carries one)".into()))
}

/// The session row a commit that creates its session must carry.
pub fn new_session_row(
    commit: &Commit,
    session_id: SessionId,
) -> Result<&SessionRecord, StoreError> {
    commit
        .session
        .as_ref()
        .ok_or_else(|| StoreError::Invalid(format!("new session {session_id} has no session row")))
}

/// A session row's columns in table order: id, status, goal, summary, board outcome,
/// plan generation, assent window, knowledge, nudged at, message count, created at,
/// last activity at, archived at and the plan's approvals (`$1` to `$14` of the session
/// statements).
pub fn session_args(s: &SessionRecord) -> Result<Vec<Arg>, StoreError> {
    let assent = s
        .assent
        .as_ref()
        .map(|a| serde_json::to_value(a).map_err(|e| crate::json_error(e, "assent window")))
        .transpose()?;
    let plan_approvals = s
        .plan_approvals
        .as_ref()
        .map(|a| serde_json::to_value(a).map_err(|e| crate::json_error(e, "plan approvals")))
        .transpose()?;
    Ok(vec![
        Arg::Id(s.id.as_uuid()),
        Arg::Text(s.status.as_str().to_owned()),
        Arg::OptText(s.goal.clone()),
        Arg::OptText(s.summary.clone()),
        Arg::OptText(s.board_outcome.map(|o| o.as_str().to_owned())),
        Arg::Int(i64::from(s.plan_generation)),
        Arg::OptJson(assent),
        Arg::Text(s.knowledge.as_str().to_owned()),
        Arg::OptTime(s.nudged_at),
        Arg::Int(from_u64(s.n_messages, "message count")?),
        Arg::Time(s.created_at),
        Arg::Time(s.last_activity_at),
        Arg::OptTime(s.archived_at),
        Arg::OptJson(plan_approvals),
    ])
}

/// The session row of a commit: inserted at version 1 for a new session, otherwise
/// the version check (and the row rewrite when the commit carries one). Returns the
/// session and its new version; runs before any other write of the commit, so a
/// conflict leaves nothing of it behind.
pub async fn write_session<B: SqlBackend>(
    tx: &mut B::WriteTx,
    commit: &Commit,
) -> Result<(SessionId, i64), StoreError> {
    let session_id = commit_session(commit)?;
    match commit.expected_version {
        None => {
            insert_session::<B>(tx, new_session_row(commit, session_id)?).await?;
            Ok((session_id, 1))
        }
        Some(expected) => {
            let version =
                bump_version::<B>(tx, session_id, expected, commit.session.as_ref()).await?;
            Ok((session_id, version))
        }
    }
}

/// Inserts a new session's row at version 1 (the client and the owner are set at creation
/// only).
pub async fn insert_session<B: SqlBackend>(
    tx: &mut B::WriteTx,
    s: &SessionRecord,
) -> Result<(), StoreError> {
    let mut args = session_args(s)?;
    args.push(Arg::OptText(s.client.clone()));
    args.push(Arg::OptText(s.owner.clone()));
    let what = format!("session {}", s.id);
    tx.execute(Statement::new(SHARED.insert_session, args, what))
        .await?;
    Ok(())
}

/// The optimistic version check: bumps the version (and rewrites the row when given)
/// only if the stored version is `expected`; otherwise a conflict naming the version
/// found (0: no such session). On PostgreSQL the row lock the update takes orders
/// concurrent writers of one session; the loser sees the new version.
pub async fn bump_version<B: SqlBackend>(
    tx: &mut B::WriteTx,
    session_id: SessionId,
    expected: i64,
    record: Option<&SessionRecord>,
) -> Result<i64, StoreError> {
    let next = expected + 1;
    let sid = session_id.as_uuid();
    let statement = match record {
        Some(s) => {
            let mut args = session_args(s)?;
            args.extend([Arg::Int(next), Arg::Int(expected)]);
            Statement::new(SHARED.update_session, args, format!("session {session_id}"))
        }
        None => Statement::new(
            SHARED.bump_version,
            vec![Arg::Int(next), Arg::Id(sid), Arg::Int(expected)],
            format!("session {session_id}"),
        ),
    };
    if tx.execute(statement).await? == 1 {
        return Ok(next);
    }
    // A statement of its own, so it sees the version the winning writer committed.
    let found = tx
        .fetch_optional(Statement::new(
            SHARED.session_version,
            vec![Arg::Id(sid)],
            "reading the session version",
        ))
        .await?;
    Err(StoreError::Conflict {
        session: session_id,
        expected,
        found: found.map_or(Ok(0), |row| row.int("version"))?,
    })
}

/// Keeps the last of several rows with the same id, in the order of those last rows (a
/// later row of a commit supersedes an earlier one, and one statement may not upsert a
/// row twice).
pub fn last_by_id<T, K: Hash + Eq + Copy>(rows: &[T], key: fn(&T) -> K) -> Vec<&T> {
    let mut seen = HashSet::new();
    let mut kept: Vec<&T> = rows
        .iter()
        .rev()
        .filter(|row| seen.insert(key(row)))
        .collect();
    kept.reverse();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_by_id_keeps_the_last_row_of_each_id_in_its_place() {
        let rows = [(1, "a"), (2, "b"), (1, "c"), (3, "d"), (2, "e")];
        let kept: Vec<&str> = last_by_id(&rows, |r| r.0)
            .into_iter()
            .map(|r| r.1)
            .collect();
        assert_eq!(kept, ["c", "d", "e"]);
    }

    #[test]
    fn an_empty_commit_names_no_session() {
        let err = commit_session(&Commit::default()).unwrap_err();
        assert_eq!(
            err,
            StoreError::Invalid("commit names no session (no row carries one)".into())
        );
    }
}
