//! Repairs of what older code left open in a session that is already terminal
//! (PLAN-8, BACKFILL-2): plan steps still `pending` or `running` after the completion.

use crate::status::{SessionStatus, StepStatus};
use crate::time::Timestamp;

use super::Session;

/// The note left on a step closed by [`Session::close_leftover_steps`].
pub const LEFTOVER_STEP_NOTE: &str = "closed by backfill: the task was already complete";

impl Session {
    /// PLAN-8, BACKFILL-2: closes the plan steps left open in a session that is already
    /// terminal, as the completion should have closed them. Returns how many it closed
    /// (0 for a session that is not terminal: completing it closes its plan).
    ///
    /// Steps of the current generation close as PLAN-8 closes them at completion: `done`
    /// when the session is `done`; otherwise a running step `failed` and a pending one
    /// `skipped`. Open steps of older generations belong to an abandoned plan: a pending
    /// one becomes `replaced` (what the revision should have done, PLAN-3) and a running
    /// one `failed`. Each closed step gets `finished_at = now`, `started_at = now` where it
    /// had none (never a time earlier than the close), and one `plan.step.finished`.
    pub fn close_leftover_steps(&mut self, now: Timestamp) -> usize {
        if !self.record.status.is_terminal() {
            return 0;
        }
        let generation = self.record.plan_generation;
        let success = self.record.status == SessionStatus::Done;
        let open: Vec<usize> = (0..self.steps.len())
            .filter(|&i| !self.steps[i].status.is_closed())
            .collect();
        for &idx in &open {
            let step = &self.steps[idx];
            let status = match (step.generation == generation, step.status, success) {
                (true, _, true) => StepStatus::Done,
                (true, StepStatus::Running, false) => StepStatus::Failed,
                (true, _, false) => StepStatus::Skipped,
                (false, StepStatus::Running, _) => StepStatus::Failed,
                (false, _, _) => StepStatus::Replaced,
            };
            if status != StepStatus::Replaced {
                self.steps.edit()[idx].started_at.get_or_insert(now);
            }
            self.set_step_status(now, idx, status, Some(LEFTOVER_STEP_NOTE.to_owned()));
        }
        open.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::event::DomainEvent;
    use crate::status::{CommandClass, Outcome, StepStatus};
    use crate::time::Span;

    use super::super::tests::Harness;
    use super::LEFTOVER_STEP_NOTE;

    /// A session whose generation-1 step 1 older code left running through a revision
    /// and the completion (today both close it, SESSION-5), as the store still holds it.
    fn terminal_with_leftover(outcome: Outcome) -> Harness {
        let mut h = Harness::new();
        h.goal();
        h.plan(&["inspect", "fix"]);
        h.say("approved");
        h.step(1, StepStatus::Running);
        h.run("df -h", CommandClass::ReadOnly);
        h.revise(&["inspect again", "write back"], "disk changed");
        h.complete(outcome);
        h.commit();
        assert!(h.session.status().is_terminal(), "{:?}", h.session.status());
        let mut snapshot = h.session.snapshot();
        let step = snapshot
            .steps
            .iter_mut()
            .find(|s| s.generation == 1 && s.seq == 1)
            .unwrap();
        step.status = StepStatus::Running;
        step.finished_at = None;
        step.note = None;
        h.session = super::super::Session::from_snapshot(snapshot, *h.session.config());
        h
    }

    // rule: PLAN-8
    // rule: BACKFILL-2
    #[test]
    fn a_step_left_running_by_a_revision_is_failed_in_a_terminal_session() {
        let mut h = terminal_with_leftover(Outcome::Partial);
        assert_eq!(h.step_status(1, 1), StepStatus::Running);
        h.advance(Span::from_mins(60 * 24 * 3));
        let n_closed = h.session.close_leftover_steps(h.now);
        assert_eq!(n_closed, 1);
        assert_eq!(h.step_status(1, 1), StepStatus::Failed);
        let step = &h.session.all_steps()[0];
        assert_eq!(step.finished_at, Some(h.now));
        assert_eq!(step.note.as_deref(), Some(LEFTOVER_STEP_NOTE));
        // It had started: its start is kept, not re-stamped.
        assert!(step.started_at.is_some_and(|at| at < h.now));
    }

    // rule: PLAN-8
    #[test]
    fn closing_leftovers_emits_one_step_finished_per_closed_step() {
        let mut h = terminal_with_leftover(Outcome::Partial);
        let n_events = h.events().len();
        let n_closed = h.session.close_leftover_steps(h.now);
        let finished: Vec<&DomainEvent> = h.events()[n_events..]
            .iter()
            .copied()
            .filter(|e| matches!(e, DomainEvent::StepFinished { .. }))
            .collect();
        assert_eq!(finished.len(), n_closed);
        assert_eq!(
            finished,
            vec![&DomainEvent::StepFinished {
                generation: 1,
                seq: 1,
                status: StepStatus::Failed,
            }]
        );
    }

    // rule: PLAN-8
    #[test]
    fn a_pending_step_without_a_start_gets_the_close_time_never_an_earlier_one() {
        let mut h = Harness::new();
        h.goal();
        h.plan(&["inspect"]);
        h.complete(Outcome::Failure);
        h.commit();
        // Simulate older code that completed without closing the plan.
        let mut snapshot = h.session.snapshot();
        for step in &mut snapshot.steps {
            step.status = StepStatus::Pending;
            step.started_at = None;
            step.finished_at = None;
        }
        let mut session = super::Session::from_snapshot(snapshot, *h.session.config());
        let close = h.now + Span::from_mins(5);
        assert_eq!(session.close_leftover_steps(close), 2);
        for step in session.all_steps() {
            assert_eq!(step.status, StepStatus::Skipped);
            assert_eq!(step.started_at, Some(close));
            assert_eq!(step.finished_at, Some(close));
        }
    }

    // rule: BACKFILL-2
    #[test]
    fn closing_leftovers_twice_changes_nothing_the_second_time() {
        let mut h = terminal_with_leftover(Outcome::Partial);
        assert_eq!(h.session.close_leftover_steps(h.now), 1);
        h.commit();
        assert_eq!(h.session.close_leftover_steps(h.now), 0);
        assert!(h.session.take_commit().is_empty());
    }

    #[test]
    fn an_open_session_keeps_its_steps() {
        let mut h = Harness::new();
        h.goal();
        h.plan(&["inspect"]);
        h.say("approved");
        h.step(1, StepStatus::Running);
        assert_eq!(h.session.close_leftover_steps(h.now), 0);
        assert_eq!(h.step_status(1, 1), StepStatus::Running);
    }
}
