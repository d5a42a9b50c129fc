//! The interpreter a command runs under (CLASSIFY-8): the classifier reads a command in the
//! grammar of the shell that will run it, and the executors name that same shell.
//!
//! It is also the one owner of the environment every command starts with
//! ([`Shell::ENVIRONMENT`]): the local executor puts it in the shell's environment, and the
//! command lines (an SSH exec request, `pct exec`, the execution oracle's sandbox) start the
//! shell through `/usr/bin/env` with it ([`Shell::argv`]). The script itself is never
//! rewritten, so what is classified and shown is what the operator's command says.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The shell Nomos names to run a command: never a host's login shell (CLASSIFY-8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    /// POSIX sh as `/bin/sh` (dash on Debian): the default everywhere.
    #[default]
    Sh,
    /// GNU bash as `/bin/bash`, when an inventory host says `shell = "bash"`.
    Bash,
    /// BusyBox ash as `busybox sh`, when an inventory host says `shell = "busybox"`.
    Busybox,
}

impl Shell {
    /// Every pinned interpreter, in a fixed order.
    pub const ALL: [Shell; 3] = [Shell::Sh, Shell::Bash, Shell::Busybox];

    /// The name the inventory uses (`sh`, `bash`, `busybox`).
    pub fn as_str(self) -> &'static str {
        match self {
            Shell::Sh => "sh",
            Shell::Bash => "bash",
            Shell::Busybox => "busybox",
        }
    }

    /// The variables every command Nomos runs starts with, whatever runs it.
    ///
    /// `GIT_OPTIONAL_LOCKS=0`: `git status` (a reader, CLASSIFY-3) otherwise takes
    /// `.git/index.lock` to write back the stat information it refreshed, which writes the
    /// repository and makes a `git commit` that runs at the same time fail (found by the
    /// execution oracle, CLASSIFY-9). A command that sets, unsets or clears it again is
    /// classified for what it then runs (`rules/env.rs`, `rules/git.rs`).
    pub const ENVIRONMENT: &'static [(&'static str, &'static str)] = &[("GIT_OPTIONAL_LOCKS", "0")];

    /// The interpreter itself and its arguments before `-c SCRIPT`: `/bin/sh`, `/bin/bash`,
    /// or `busybox sh`.
    pub fn interpreter(self) -> &'static [&'static str] {
        match self {
            Shell::Sh => &["/bin/sh"],
            Shell::Bash => &["/bin/bash"],
            Shell::Busybox => &["busybox", "sh"],
        }
    }

    /// The program and the arguments that come before `-c SCRIPT` on a command line: the
    /// interpreter started by `/usr/bin/env` with [`Shell::ENVIRONMENT`], as in
    /// `/usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/sh`.
    pub fn argv(self) -> &'static [&'static str] {
        match self {
            Shell::Sh => &["/usr/bin/env", "GIT_OPTIONAL_LOCKS=0", "/bin/sh"],
            Shell::Bash => &["/usr/bin/env", "GIT_OPTIONAL_LOCKS=0", "/bin/bash"],
            Shell::Busybox => &["/usr/bin/env", "GIT_OPTIONAL_LOCKS=0", "busybox", "sh"],
        }
    }

    /// The command line that runs `script` under this shell, `script` quoted as one word for
    /// a POSIX shell that reads the line (an SSH server's login shell, `pct exec`'s `sh`):
    /// `/usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/sh -c 'uptime'`.
    pub fn wrap(self, script: &str) -> String {
        let mut line = self.argv().join(" ");
        line.push_str(" -c ");
        line.push_str(&crate::preview::quote_always(script));
        line
    }
}

impl fmt::Display for Shell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A shell name that is not one of `sh`, `bash`, `busybox`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown shell `{0}`: expected one of `sh`, `bash`, `busybox`")]
pub struct UnknownShell(pub String);

impl FromStr for Shell {
    type Err = UnknownShell;

    fn from_str(s: &str) -> Result<Shell, UnknownShell> {
        match s {
            "sh" | "dash" | "posix" => Ok(Shell::Sh),
            "bash" => Ok(Shell::Bash),
            "busybox" | "ash" => Ok(Shell::Busybox),
            other => Err(UnknownShell(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: CLASSIFY-8
    #[test]
    fn each_shell_is_named_and_wraps_its_script_as_one_word() {
        assert_eq!(Shell::default(), Shell::Sh);
        assert_eq!(
            Shell::Sh.wrap("uptime"),
            "/usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/sh -c 'uptime'"
        );
        assert_eq!(
            Shell::Bash.wrap("echo 'a'"),
            r#"/usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/bash -c 'echo '\''a'\'''"#
        );
        assert_eq!(
            Shell::Busybox.wrap("id"),
            "/usr/bin/env GIT_OPTIONAL_LOCKS=0 busybox sh -c 'id'"
        );
        for shell in Shell::ALL {
            assert_eq!(shell.as_str().parse::<Shell>(), Ok(shell));
        }
        assert!("zsh".parse::<Shell>().is_err());
    }

    // rule: CLASSIFY-9
    #[test]
    fn every_command_line_starts_the_interpreter_with_the_pinned_environment() {
        for shell in Shell::ALL {
            let mut expected = vec!["/usr/bin/env".to_owned()];
            expected.extend(
                Shell::ENVIRONMENT
                    .iter()
                    .map(|(name, value)| format!("{name}={value}")),
            );
            expected.extend(shell.interpreter().iter().map(|arg| (*arg).to_owned()));
            assert_eq!(shell.argv(), expected, "{shell}");
        }
        assert_eq!(Shell::ENVIRONMENT, &[("GIT_OPTIONAL_LOCKS", "0")]);
    }
}
