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
            let declared: Vec<(u32, String, String, String)> = self
                .declared_commands()
                .map(|(seq, c)| {
                    (
                        seq,
                        c.class().as_str().to_owned(),
                        c.host.clone(),
                        c.command.clone(),
                    )
                })
                .collect();
            let declared: Vec<(u32, &str, &str, &str)> = declared
                .iter()
                .map(|(seq, class, host, command)| {
                    (*seq, class.as_str(), host.as_str(), command.as_str())
                })
                .collect();
            let note = plan_approved_note(message, generation, n_steps, &declared);
            self.append_note(now, &note);
            return;
        }
        let waits = self.record.plan_generation > 0
            && !self.record.status.is_terminal()
            && self.plan_open()
            && !self.assent_open(now);
        if waits {
            let note = plan_waits_note(message, self.record.plan_generation);
            self.append_note(now, &note);
        }
    }
}
