//! EXEC-8: the process groups of local commands die with the server, however it dies.
//!
//! The parent-death signal reaches only the shell a command runs in, not the processes
//! it started. So the first local command starts one small watcher: a fixed POSIX `sh`
//! script, in a process group of its own, that reads `+ PGID` and `- PGID` lines on its
//! stdin as commands start and end. Only the server holds the other end of that pipe;
//! when the server exits for any reason (`kill -9` included) the kernel closes it, the
//! watcher reads end-of-file and sends SIGKILL to every group still listed, then exits.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The watcher's script (see the module docs).
const SCRIPT: &str = r#"trap '' HUP INT TERM
g=' '
while read -r op pg; do
  case "$op" in
    +) g="$g$pg " ;;
    -) n=' '; for x in $g; do [ "$x" = "$pg" ] || n="$n$x "; done; g=$n ;;
  esac
done
for pg in $g; do kill -s KILL -- "-$pg" 2>/dev/null; done
"#;

/// The write end of the watcher's stdin; `None` when it could not be started or died.
static WATCHER: OnceLock<Mutex<Option<ChildStdin>>> = OnceLock::new();

fn watcher() -> &'static Mutex<Option<ChildStdin>> {
    WATCHER.get_or_init(|| {
        let started = Command::new("/bin/sh")
            .args(["-c", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        match started {
            Ok(mut child) => Mutex::new(child.stdin.take()),
            Err(error) => {
                tracing::warn!(%error, "cannot start the watcher of local command groups");
                Mutex::new(None)
            }
        }
    })
}

fn send(line: &str) {
    let mut stdin = match watcher().lock() {
        Ok(stdin) => stdin,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(pipe) = stdin.as_mut()
        && pipe.write_all(line.as_bytes()).is_err()
    {
        tracing::warn!("the watcher of local command groups is gone");
        *stdin = None;
    }
}

/// Lists a command's process group: it is killed if the server dies before it ends.
pub(crate) fn watch(pgid: i32) {
    send(&format!("+ {pgid}\n"));
}

/// Takes a finished command's group off the list.
pub(crate) fn forget(pgid: i32) {
    send(&format!("- {pgid}\n"));
}
