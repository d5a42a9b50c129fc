//! The interpreter a command runs under (CLASSIFY-8): the classifier reads a command in the
//! grammar of the shell that will run it, and the executors name that same shell.

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

    /// The program and the arguments that come before `-c SCRIPT`: `/bin/sh`, `/bin/bash`,
    /// or `busybox sh`.
    pub fn argv(self) -> &'static [&'static str] {
        match self {
            Shell::Sh => &["/bin/sh"],
            Shell::Bash => &["/bin/bash"],
            Shell::Busybox => &["busybox", "sh"],
        }
    }

    /// The command line that runs `script` under this shell, `script` quoted as one word for
    /// a POSIX shell that reads the line (an SSH server's login shell, `pct exec`'s `sh`):
    /// `/bin/sh -c 'uptime'`.
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
        assert_eq!(Shell::Sh.wrap("uptime"), "/bin/sh -c 'uptime'");
        assert_eq!(
            Shell::Bash.wrap("echo 'a'"),
            r#"/bin/bash -c 'echo '\''a'\'''"#
        );
        assert_eq!(Shell::Busybox.wrap("id"), "busybox sh -c 'id'");
        for shell in Shell::ALL {
            assert_eq!(shell.as_str().parse::<Shell>(), Ok(shell));
        }
        assert!("zsh".parse::<Shell>().is_err());
    }
}
