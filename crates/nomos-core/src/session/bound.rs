//! GATE-9 inside the gate: whether a command run in the assent window is one the approved
//! plan declared, and whether the window still stands for the declared set it approved.

use crate::classification::Classification;
use crate::declared::{AssentScope, DeclaredCommand, DeclaredDigest, RequestOrigin};
use crate::event::AssentCloseReason;
use crate::status::CommandClass;
use crate::time::Timestamp;

use super::Session;

/// What GATE-5 and GATE-9 make of a command that passed GATE-2 and GATE-3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// It runs now (read-only, or a covered `config_mutation`).
    Runs,
    /// It waits for its own approval, for this reason.
    Asks(RequestOrigin),
}

/// GATE-5 and SECRET-1: whether a command asks for its own approval whatever its class:
/// its program is known to nobody (CLASSIFY-7), or it reads a secret path, whose content
/// would reach the model.
pub(crate) fn asks_alone(classification: &Classification) -> bool {
    classification.program_unknown() || classification.secret_read().is_some()
}

impl Session {
    /// The declared commands of the current generation, in step order, with their step.
    pub(crate) fn declared_commands(&self) -> impl Iterator<Item = (u32, &DeclaredCommand)> {
        self.current_steps()
            .flat_map(|s| s.commands.iter().map(move |c| (s.seq, c)))
    }

    /// The digest of the current generation's declared commands (the window binds to it).
    pub(crate) fn declared_digest(&self) -> DeclaredDigest {
        DeclaredDigest::of(self.declared_commands().map(|(_, c)| c))
    }

    /// GATE-9: closes a window whose generation's declared commands differ from those the
    /// operator assented to. Returns whether it closed one.
    pub(crate) fn void_window_if_declared_changed(&mut self, now: Timestamp) -> bool {
        let Some(window) = self.record.assent else {
            return false;
        };
        if window.generation != self.record.plan_generation {
            return false;
        }
        match window.declared {
            Some(digest) if digest == self.declared_digest() => false,
            // A window from before declared commands existed binds to nothing declared.
            None if self.declared_commands().next().is_none() => false,
            _ => {
                self.close_assent(now, AssentCloseReason::DeclaredChanged);
                true
            }
        }
    }

    /// GATE-5 (rev. 2) and GATE-9: whether `command` runs now or asks on its own, given
    /// its class, whether it asks alone anyway ([`asks_alone`]: an unknown program, a
    /// secret read), and what the approved plan declared.
    pub(crate) fn bound(
        &self,
        host: &str,
        command: &str,
        class: CommandClass,
        alone: bool,
    ) -> Bound {
        let declared_by = self
            .declared_commands()
            .find(|(_, c)| c.covers(host, command, class))
            .map(|(seq, _)| seq);
        if class == CommandClass::Destructive || alone {
            return Bound::Asks(match declared_by {
                Some(step_seq) => RequestOrigin::Declared { step_seq },
                None => RequestOrigin::OwnClass,
            });
        }
        if class == CommandClass::ReadOnly
            || self.config.assent_scope == AssentScope::Window
            || declared_by.is_some()
        {
            return Bound::Runs;
        }
        Bound::Asks(RequestOrigin::NotInPlan {
            step_seq: self.running_step(),
        })
    }
}
