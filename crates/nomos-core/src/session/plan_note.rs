//! RESUME-4: what the operator's message meant for the plan, told to the model as a note
//! in the transcript (the next model request carries it).

use crate::resume::{plan_approved_note, plan_waits_note};
use crate::time::Timestamp;

use super::Session;

impl Session {
    /// After an operator message: the approved generation and its declared commands when
    /// the message opened the window, or that the plan still waits when it did not.
    pub(crate) fn note_plan_meaning(
        &mut self,
        now: Timestamp,
        message: &str,
        assented: Option<u32>,
    ) {
        if let Some(generation) = assented {
            let n_steps = self.current_steps().count() as u32;
            let note = self.with_declared(|declared| {
                plan_approved_note(message, generation, n_steps, declared)
            });
            self.append_note(now, &note);
            return;
        }
        if self.plan_waits(now) {
            let note = plan_waits_note(message, self.record.plan_generation);
            self.append_note(now, &note);
        }
    }

    /// GATE-4: whether the current plan waits for the operator's decision: it exists, some
    /// step of it is open, the session is not terminal, and no window is open for it.
    pub fn plan_waits(&self, now: Timestamp) -> bool {
        self.record.plan_generation > 0
            && !self.record.status.is_terminal()
            && self.plan_open()
            && !self.assent_open(now)
    }

    /// Calls `f` with the current generation's declared commands as `(step seq, class,
    /// host, command)`, the shape the RESUME-4 notes take.
    pub(crate) fn with_declared<T>(&self, f: impl FnOnce(&[(u32, &str, &str, &str)]) -> T) -> T {
        let declared: Vec<(u32, &str, &str, &str)> = self
            .declared_commands()
            .map(|(seq, c)| (seq, c.class().as_str(), c.host.as_str(), c.command.as_str()))
            .collect();
        f(&declared)
    }
}
