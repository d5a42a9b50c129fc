//! The session's row collections, each keeping track of what changed since the last
//! commit, so that [`super::Session::take_commit`] costs what the decision changed and
//! not what the session holds.
//!
//! Reading goes through `Deref` to a slice; every write goes through a method that
//! remembers it. [`Rows`] (executions, approvals, fan-outs: rows are only appended and
//! changed in place) keeps the committed copy of each row it hands out for writing and,
//! at the commit, yields the rows that are new or differ from that copy. [`Steps`] (a plan
//! may replace and reorder its steps) keeps a copy of the whole list from the first write
//! after a commit and diffs against it only then.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hash;
use std::ops::Deref;

use crate::id::StepId;
use crate::record::PlanStep;

/// Rows that are appended and changed in place, never removed or reordered.
#[derive(Clone, Debug)]
pub(crate) struct Rows<T> {
    rows: Vec<T>,
    /// The committed value of each row written since the last commit, by index.
    before: BTreeMap<usize, T>,
    /// Rows from this index on were appended since the last commit.
    committed_len: usize,
}

impl<T> Default for Rows<T> {
    fn default() -> Rows<T> {
        Rows {
            rows: Vec::new(),
            before: BTreeMap::new(),
            committed_len: 0,
        }
    }
}

impl<T: Clone + PartialEq> Rows<T> {
    /// Rows as the store holds them (nothing changed yet).
    pub(crate) fn committed(rows: Vec<T>) -> Rows<T> {
        let committed_len = rows.len();
        Rows {
            rows,
            before: BTreeMap::new(),
            committed_len,
        }
    }

    /// Appends a row (written at the next commit).
    pub(crate) fn push(&mut self, row: T) {
        self.rows.push(row);
    }

    /// The row at `idx`, for writing.
    ///
    /// # Panics
    ///
    /// If `idx` is out of bounds, as indexing a slice does.
    pub(crate) fn edit(&mut self, idx: usize) -> &mut T {
        if idx < self.committed_len && !self.before.contains_key(&idx) {
            self.before.insert(idx, self.rows[idx].clone());
        }
        &mut self.rows[idx]
    }

    /// The first row `matches` accepts, for writing.
    pub(crate) fn find_edit(&mut self, matches: impl Fn(&T) -> bool) -> Option<&mut T> {
        let idx = self.rows.iter().position(matches)?;
        Some(self.edit(idx))
    }

    /// The rows that are new or differ from their committed value, in order; what is
    /// left is taken as committed.
    pub(crate) fn take_changed(&mut self) -> Vec<T> {
        let before = std::mem::take(&mut self.before);
        let mut changed: Vec<T> = before
            .into_iter()
            .filter(|(idx, old)| self.rows[*idx] != *old)
            .map(|(idx, _)| self.rows[idx].clone())
            .collect();
        changed.extend_from_slice(&self.rows[self.committed_len..]);
        self.committed_len = self.rows.len();
        changed
    }
}

impl<T> Deref for Rows<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.rows
    }
}

/// A session's plan steps, every generation, kept ordered by `(generation, seq)`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Steps {
    steps: Vec<PlanStep>,
    /// The committed steps, copied at the first write since the last commit.
    before: Option<Vec<PlanStep>>,
}

impl Steps {
    /// Steps as the store holds them, put in `(generation, seq)` order.
    pub(crate) fn committed(mut steps: Vec<PlanStep>) -> Steps {
        steps.sort_by_key(|s| (s.generation, s.seq));
        Steps {
            steps,
            before: None,
        }
    }

    /// The steps, for writing (the caller keeps them ordered by `(generation, seq)`).
    pub(crate) fn edit(&mut self) -> &mut Vec<PlanStep> {
        if self.before.is_none() {
            self.before = Some(self.steps.clone());
        }
        &mut self.steps
    }

    /// The steps that are new or changed, and the ids of those removed, since the last
    /// commit; what is left is taken as committed.
    pub(crate) fn take_changed(&mut self) -> (Vec<PlanStep>, Vec<StepId>) {
        let Some(before) = self.before.take() else {
            return (Vec::new(), Vec::new());
        };
        let changed = changed(&before, &self.steps, |s| s.id);
        let current: HashSet<StepId> = self.steps.iter().map(|s| s.id).collect();
        let removed = before
            .iter()
            .filter(|old| !current.contains(&old.id))
            .map(|s| s.id)
            .collect();
        (changed, removed)
    }
}

impl Deref for Steps {
    type Target = [PlanStep];

    fn deref(&self) -> &[PlanStep] {
        &self.steps
    }
}

/// The rows of `current` that are new or differ from their row in `base` (by key).
fn changed<T: Clone + PartialEq, K: Eq + Hash>(
    base: &[T],
    current: &[T],
    key: impl Fn(&T) -> K,
) -> Vec<T> {
    let before: HashMap<K, &T> = base.iter().map(|row| (key(row), row)).collect();
    current
        .iter()
        .filter(|row| before.get(&key(row)).is_none_or(|old| *old != *row))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Rows;

    #[test]
    fn rows_yield_only_what_was_appended_or_changed_since_the_last_commit() {
        let mut rows = Rows::committed(vec![1, 2, 3]);
        assert!(rows.take_changed().is_empty());
        *rows.edit(1) = 20;
        *rows.edit(2) = 3; // written back unchanged: not a change
        rows.push(4);
        assert_eq!(rows.take_changed(), vec![20, 4]);
        assert!(rows.take_changed().is_empty(), "all of it is committed now");
        *rows.edit(3) = 40;
        *rows.edit(3) = 41;
        assert_eq!(rows.take_changed(), vec![41]);
        assert_eq!(&*rows, &[1, 20, 3, 41]);
    }

    #[test]
    fn a_row_appended_and_then_changed_is_written_once_with_its_last_value() {
        let mut rows = Rows::committed(Vec::new());
        rows.push(1);
        *rows.edit(0) = 2;
        assert_eq!(rows.take_changed(), vec![2]);
    }
}
