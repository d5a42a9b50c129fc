//! Checks of a [`Commit`] made before anything of it is written, and the row choices
//! both backends make the same way.

use std::collections::HashSet;
use std::hash::Hash;

use nomos_core::SessionId;
use nomos_core::ports::store::{Commit, StoreError};
use nomos_core::record::SessionRecord;

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
