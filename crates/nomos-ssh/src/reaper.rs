//! EXEC-8: the process groups of local commands die with the server, however it dies.
//!
//! The parent-death signal reaches only the shell a command runs in, not the processes
//! it started. So the first local command starts one small watcher: a fixed POSIX `sh`
//! script, in a process group of its own, that reads `+ PGID` and `- PGID` lines on its
//! stdin as commands start and end. A command's shell writes its own `+` line before it
//! runs anything (`spawn.rs`), so its group is listed before any process of it exists;
//! the server writes the `-` line when the command ends. Only the server holds the other end of that pipe;
//! when the server exits for any reason (`kill -9` included) the kernel closes it, the
//! watcher reads end-of-file and sends SIGKILL to every group still listed, then exits.

use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
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

/// The write end of the watcher's stdin; `None` when it could not be started. It is
/// never closed, so its descriptor stays valid for a child that writes to it.
static WATCHER: OnceLock<Mutex<Option<ChildStdin>>> = OnceLock::new();

/// Set once a write to the watcher failed: it is gone, and nothing is sent to it again.
static GONE: AtomicBool = AtomicBool::new(false);

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
    if GONE.load(Ordering::Acquire) {
        return;
    }
    let mut stdin = match watcher().lock() {
        Ok(stdin) => stdin,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(pipe) = stdin.as_mut()
        && pipe.write_all(line.as_bytes()).is_err()
    {
        tracing::warn!("the watcher of local command groups is gone");
        GONE.store(true, Ordering::Release);
    }
}

/// Records that the watcher is gone (a child's write to its pipe failed), so no command
/// is handed its pipe again.
pub(crate) fn mark_gone() {
    if !GONE.swap(true, Ordering::AcqRel) {
        tracing::warn!("the watcher of local command groups is gone");
    }
}

/// The watcher's pipe, for a child to list its own group on before it runs anything
/// ([`watch_line`]); `None` when there is no watcher.
pub(crate) fn pipe() -> Option<RawFd> {
    if GONE.load(Ordering::Acquire) {
        return None;
    }
    let stdin = match watcher().lock() {
        Ok(stdin) => stdin,
        Err(poisoned) => poisoned.into_inner(),
    };
    stdin.as_ref().map(AsRawFd::as_raw_fd)
}

/// The line that lists process group `pgid`, written into `buf` without allocating (a
/// child about to exec writes it); a pipe takes a line this short whole.
pub(crate) fn watch_line(pgid: i32, buf: &mut [u8; 16]) -> &[u8] {
    let mut digits = [0u8; 10];
    let mut n = pgid.unsigned_abs();
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf[0] = b'+';
    buf[1] = b' ';
    for i in 0..len {
        buf[2 + i] = digits[len - 1 - i];
    }
    buf[2 + len] = b'\n';
    &buf[..3 + len]
}

/// Takes a finished command's group off the list.
pub(crate) fn forget(pgid: i32) {
    send(&format!("- {pgid}\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_line_names_the_group_in_decimal() {
        let mut buf = [0u8; 16];
        assert_eq!(watch_line(0, &mut buf), b"+ 0\n");
        assert_eq!(watch_line(7, &mut buf), b"+ 7\n");
        assert_eq!(watch_line(4_194_304, &mut buf), b"+ 4194304\n");
        assert_eq!(watch_line(i32::MAX, &mut buf), b"+ 2147483647\n");
    }
}
