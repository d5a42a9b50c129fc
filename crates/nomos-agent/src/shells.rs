//! CLASSIFY-8 in the runtime: a command is classified in the grammar of the shell that
//! will run it, which the executor names per host ([`Executor::shell`]). A command for a
//! group is classified once per pinned shell among its hosts, and the strictest reading
//! is the one the gate gets.
//!
//! [`Executor::shell`]: nomos_core::ports::exec::Executor::shell

use nomos_core::Classification;
use nomos_core::classify::Shell;
use nomos_core::ports::exec::Executor;

use crate::config::Classifier;

/// `command` classified for `hosts` (one host, or a group's members): in each distinct
/// shell the executor pins for them, the strictest reading (the highest class; on a tie,
/// the one that knows less of the command's programs). No hosts reads it as POSIX sh.
pub(crate) fn classify_for(
    classifier: &Classifier,
    executor: &dyn Executor,
    hosts: &[&str],
    command: &str,
) -> Classification {
    let mut shells: Vec<Shell> = hosts.iter().map(|host| executor.shell(host)).collect();
    if shells.is_empty() {
        shells.push(Shell::default());
    }
    shells.sort_by_key(|shell| Shell::ALL.iter().position(|s| s == shell));
    shells.dedup();
    let mut strictest: Option<Classification> = None;
    for shell in shells {
        let classification = classifier(command, shell);
        let stricter = strictest.as_ref().is_none_or(|known| {
            (classification.class, classification.program_unknown())
                > (known.class, known.program_unknown())
        });
        if stricter {
            strictest = Some(classification);
        }
    }
    strictest.unwrap_or_else(|| classifier(command, Shell::default()))
}
