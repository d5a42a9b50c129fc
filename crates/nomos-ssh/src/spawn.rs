//! Starting a local command's shell without copying the server's memory map.
//!
//! EXEC-8 needs the parent-death signal set in the child before it runs the shell, and
//! the standard library starts such a child with `fork`, whose cost grows with the
//! server's memory: on a server holding long sessions it was the largest part of a
//! local command's start. Here the child is started the way `posix_spawn` starts one:
//! `clone(CLONE_VM | CLONE_VFORK)`, which shares the parent's memory and suspends the
//! parent until the child has called `execve` (or failed to). Between the two the child
//! calls only plain system calls, on a stack of its own, with every signal blocked and
//! every caught signal set back to its default, so no handler of the server runs in it:
//! - its own process group (`setpgid(0, 0)`), listed with the watcher of command
//!   groups (`reaper.rs`) once the parent-death signal is armed;
//! - the parent-death signal (`PR_SET_PDEATHSIG`, SIGKILL), then a check that the parent
//!   is still the server, since the server may have died before the signal was armed;
//! - stdin from `/dev/null`, stdout and stderr into pipes;
//! - the server's signal mask restored, and `execve`.
//!
//! The clone itself happens on one thread kept for the life of the process (the
//! spawner), never on the caller's: the parent-death signal fires when the *thread* that
//! created the child exits, not the process, and a runtime's threads come and go (a
//! blocking-pool thread ends after a while idle), which would kill a live command.
//!
//! A failure before `execve` is reported through memory the child shares with the
//! parent. The parent waits for the child on a pidfd, so the wait is an ordinary
//! readiness event of the async runtime, and a child whose [`Shell`] is dropped before
//! it was waited for is killed and reaped in the background.

#![allow(unsafe_code)]

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock, mpsc};

use nix::libc;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

/// The child's stack: it calls a handful of system call wrappers and nothing else.
const CHILD_STACK: usize = 64 * 1024;

/// What to run: a program, its arguments (the first is its name) and the variables to
/// add to the server's environment.
#[derive(Debug)]
pub(crate) struct Program<'a> {
    /// The program: a path, or a name looked up in `PATH`.
    pub program: &'a str,
    /// Its arguments after its name.
    pub args: &'a [&'a str],
    /// Variables set for it on top of the server's environment (a later one of a name
    /// wins).
    pub env: &'a [(&'a str, &'a str)],
    /// A pipe the child lists its own process group on (`reaper::watch_line`) before
    /// it runs the program.
    pub announce: Option<RawFd>,
}

/// A started shell: its pid, its output pipes and the handle to wait for it.
#[derive(Debug)]
pub(crate) struct Shell {
    pid: libc::pid_t,
    pidfd: Option<AsyncFd<OwnedFd>>,
    status: Option<ExitStatus>,
    /// The read end of its stdout.
    pub stdout: Option<pipe::Receiver>,
    /// The read end of its stderr.
    pub stderr: Option<pipe::Receiver>,
}

/// What the child reads, prepared by the parent before the clone, and where it writes
/// why it could not run the program.
struct ChildArgs {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    stdin: RawFd,
    stdout: RawFd,
    stderr: RawFd,
    server: libc::pid_t,
    announce: RawFd,
    mask: libc::sigset_t,
    errno: AtomicI32,
}

impl Shell {
    /// Starts `program` (see the module docs). Must be called inside a tokio runtime.
    pub(crate) fn spawn(program: &Program<'_>) -> io::Result<Shell> {
        let path = resolve(program.program)?;
        let path = cstring(path.into_os_string())?;
        let mut argv = Vec::with_capacity(program.args.len() + 1);
        argv.push(cstring(OsString::from(program.program))?);
        for arg in program.args {
            argv.push(cstring(OsString::from(arg))?);
        }
        let envp = environment(program.env)?;
        let argv_ptrs = pointers(&argv);
        let envp_ptrs = pointers(&envp);

        let stdin = above_stdio(open_dev_null()?)?;
        let (stdout_read, stdout_write) = pipe_pair()?;
        let (stderr_read, stderr_write) = pipe_pair()?;

        // SAFETY: plain system calls on values owned here; the arguments outlive the
        // spawner's use of them, since this thread waits for its answer; see
        // `clone_child` for the child's side.
        let pid = unsafe {
            let mut args = ChildArgs {
                path: path.as_ptr(),
                argv: argv_ptrs.as_ptr(),
                envp: envp_ptrs.as_ptr(),
                stdin: stdin.as_raw_fd(),
                stdout: stdout_write.as_raw_fd(),
                stderr: stderr_write.as_raw_fd(),
                server: libc::getpid(),
                announce: program.announce.unwrap_or(-1),
                mask: caller_mask()?,
                errno: AtomicI32::new(0),
            };
            on_spawner(&mut args)?
        };
        drop((stdin, stdout_write, stderr_write));
        let pidfd = pidfd_open(pid).and_then(|pidfd| {
            // SAFETY: an `OwnedFd` keeps the same descriptor open until it drops, with
            // the `AsyncFd` that owns it.
            unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) }
                .map_err(|e| e.into_parts().1)
        });
        let mut shell = Shell {
            pid,
            pidfd: None,
            status: None,
            stdout: None,
            stderr: None,
        };
        match pidfd {
            Ok(pidfd) => shell.pidfd = Some(pidfd),
            Err(error) => {
                kill_and_reap(pid);
                shell.status = Some(ExitStatus::from_raw(libc::SIGKILL));
                return Err(error);
            }
        }
        // From here a failure drops `shell`, which kills and reaps the child.
        shell.stdout = Some(pipe::Receiver::from_owned_fd(stdout_read)?);
        shell.stderr = Some(pipe::Receiver::from_owned_fd(stderr_read)?);
        Ok(shell)
    }

    /// The shell's pid, which is also its process group's id.
    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// Waits for the shell to end and reaps it; cancel-safe, and once it has ended every
    /// later call returns the same status at once.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let Some(pidfd) = self.pidfd.as_ref() else {
            return Err(io::Error::other("the shell was not started"));
        };
        loop {
            let mut ready = pidfd.readable().await?;
            if let Some(status) = try_reap(self.pid)? {
                self.status = Some(status);
                self.pidfd = None;
                return Ok(status);
            }
            ready.clear_ready();
        }
    }
}

impl Drop for Shell {
    /// A shell nobody waited for is killed (the caller went away) and reaped in the
    /// background, so it leaves no zombie.
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        // SAFETY: the pid is our unreaped child, so it names no other process.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
        }
        let pid = self.pid;
        match (self.pidfd.take(), tokio::runtime::Handle::try_current()) {
            (Some(pidfd), Ok(runtime)) => {
                runtime.spawn(async move {
                    loop {
                        let Ok(mut ready) = pidfd.readable().await else {
                            return kill_and_reap(pid);
                        };
                        match try_reap(pid) {
                            Ok(None) => ready.clear_ready(),
                            _ => return,
                        }
                    }
                });
            }
            _ => kill_and_reap(pid),
        }
    }
}

/// The calling thread's signal mask, which the child restores before `execve`.
fn caller_mask() -> io::Result<libc::sigset_t> {
    // SAFETY: reads this thread's mask into a zeroed set.
    unsafe {
        let mut mask: libc::sigset_t = std::mem::zeroed();
        let read = libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask);
        if read != 0 {
            return Err(io::Error::from_raw_os_error(read));
        }
        Ok(mask)
    }
}

/// One clone for the spawner: the arguments, and where its answer goes.
struct Request {
    args: SendArgs,
    answer: mpsc::SyncSender<io::Result<libc::pid_t>>,
}

/// The caller's `ChildArgs`, handed to the spawner thread.
struct SendArgs(*mut ChildArgs);

// SAFETY: the caller blocks until the spawner answers, so the pointer and everything it
// points at stay valid and untouched by the caller while the spawner uses them.
unsafe impl Send for SendArgs {}

/// Clones the child on the spawner thread (see the module docs), starting that thread on
/// first use; blocks until the child has exec'd or failed to.
///
/// # Safety
/// As [`clone_child`].
unsafe fn on_spawner(args: &mut ChildArgs) -> io::Result<libc::pid_t> {
    static SPAWNER: OnceLock<Option<Mutex<mpsc::Sender<Request>>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (requests, incoming) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("nomos-spawner".to_owned())
            .spawn(move || {
                for request in incoming {
                    // SAFETY: the requester keeps `args` alive and waits (`SendArgs`).
                    let pid = unsafe { clone_child(&mut *request.args.0) };
                    let _ = request.answer.send(pid);
                }
            })
            .ok()
            .map(|_| Mutex::new(requests))
    });
    let gone = || io::Error::other("the thread that starts commands could not start or is gone");
    let (answer, answered) = mpsc::sync_channel(1);
    let request = Request {
        args: SendArgs(std::ptr::from_mut(args)),
        answer,
    };
    spawner
        .as_ref()
        .ok_or_else(gone)?
        .lock()
        .map_err(|_| gone())?
        .send(request)
        .map_err(|_| gone())?;
    answered.recv().map_err(|_| gone())?
}

/// Clones the child, which runs `child_main` on a stack of its own until `execve`;
/// returns its pid once it has exec'd, or why it could not. The child restores
/// `args.mask` before `execve`.
///
/// # Safety
/// `args` must point at valid, NUL-terminated strings and arrays that outlive the call.
unsafe fn clone_child(args: &mut ChildArgs) -> io::Result<libc::pid_t> {
    let mut stack = vec![0u8; CHILD_STACK];
    // SAFETY: the stack grows down from its end, aligned to 16 bytes as the ABI wants.
    let top = unsafe { stack.as_mut_ptr().add(CHILD_STACK) };
    let top = (top as usize & !15) as *mut libc::c_void;
    // SAFETY: all signals are blocked around the clone, so no handler of the server
    // runs on the child's stack; this thread's own mask comes back after it.
    // With CLONE_VFORK this thread is suspended until the child exec'd or exited, so
    // `args` and the stack outlive every use the child makes of them.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let mut own: libc::sigset_t = std::mem::zeroed();
        let blocked = libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut own);
        if blocked != 0 {
            return Err(io::Error::from_raw_os_error(blocked));
        }
        let pid = libc::clone(
            child_main,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            std::ptr::from_mut(args).cast(),
        );
        let clone_error = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &own, std::ptr::null_mut());
        drop(stack);
        if pid < 0 {
            return Err(clone_error);
        }
        let errno = args.errno.load(Ordering::Acquire);
        if errno != 0 {
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            return Err(io::Error::from_raw_os_error(errno));
        }
        Ok(pid)
    }
}

/// The child's side, from the clone to `execve`. It shares the parent's memory, so it
/// calls only async-signal-safe system calls, allocates nothing and touches nothing but
/// `ChildArgs`.
extern "C" fn child_main(raw: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `raw` is the `ChildArgs` the parent keeps alive while suspended.
    let args = unsafe { &*raw.cast::<ChildArgs>() };
    let fail = |errno: i32| -> libc::c_int {
        args.errno.store(errno.max(1), Ordering::Release);
        // SAFETY: `_exit` ends the child without running anything of the parent's.
        unsafe { libc::_exit(127) }
    };
    let last = || {
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    };
    // SAFETY: each call below is a plain system call wrapper on values the child owns
    // or on `args`' valid pointers.
    unsafe {
        for signal in 1..=libc::SIGRTMAX() {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            // A caught signal gets its default back; SIGPIPE too, which the server
            // ignores and a shell pipeline needs.
            if old.sa_sigaction != libc::SIG_DFL
                && (old.sa_sigaction != libc::SIG_IGN || signal == libc::SIGPIPE)
            {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        if libc::setpgid(0, 0) != 0 {
            return fail(last());
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
            return fail(last());
        }
        if libc::getppid() != args.server {
            return fail(libc::ESRCH);
        }
        if args.announce >= 0 {
            let own = libc::syscall(libc::SYS_getpid) as libc::pid_t;
            let mut buf = [0u8; 16];
            let line = crate::reaper::watch_line(own, &mut buf);
            // A group the watcher does not list would outlive the server (EXEC-8): when
            // the write fails (the watcher is gone: EPIPE, its SIGPIPE still blocked
            // here) the program does not start, and the parent reports why instead of
            // a death by that signal.
            if libc::write(args.announce, line.as_ptr().cast(), line.len()) < 0 {
                return fail(last());
            }
        }
        for (from, to) in [(args.stdin, 0), (args.stdout, 1), (args.stderr, 2)] {
            if libc::dup2(from, to) < 0 {
                return fail(last());
            }
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &args.mask, std::ptr::null_mut());
        libc::execve(args.path, args.argv, args.envp);
        fail(last())
    }
}

/// Reaps `pid` if it has ended.
fn try_reap(pid: libc::pid_t) -> io::Result<Option<ExitStatus>> {
    let mut status = 0;
    // SAFETY: waits for our own child only.
    let reaped = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    match reaped {
        0 => Ok(None),
        n if n == pid => Ok(Some(ExitStatus::from_raw(status))),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Kills and reaps a child at once, blocking until it is gone (a SIGKILL'd process ends
/// promptly).
fn kill_and_reap(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: our own unreaped child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, &mut status, 0);
    }
}

fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: a plain system call; the pid is our unreaped child, so it cannot have been
    // reused.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = RawFd::try_from(fd).map_err(io::Error::other)?;
    // SAFETY: a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A pipe, both ends close-on-exec and above the standard descriptors.
fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: writes two new descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: new descriptors nobody else owns.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_stdio(read)?, above_stdio(write)?))
}

fn open_dev_null() -> io::Result<OwnedFd> {
    let file = std::fs::File::open("/dev/null")?;
    Ok(OwnedFd::from(file))
}

/// The same descriptor numbered 3 or more, so moving it onto 0, 1 or 2 in the child
/// never overwrites another one the child still needs (a server started with a standard
/// descriptor closed hands those numbers out).
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: duplicates a descriptor we own into a new one nobody else owns.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if moved < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the new descriptor is ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

/// `program` itself when it names a path, otherwise the first executable file of that
/// name in `PATH`, as a shell would find it.
fn resolve(program: &str) -> io::Result<PathBuf> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{program} is not in PATH")))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The server's environment with `extra` set (replacing variables of those names).
fn environment(extra: &[(&str, &str)]) -> io::Result<Vec<CString>> {
    let mut vars = Vec::new();
    for (name, value) in std::env::vars_os() {
        if extra.iter().any(|(extra, _)| OsStr::new(extra) == name) {
            continue;
        }
        vars.push(pair(&name, &value)?);
    }
    for (idx, (name, value)) in extra.iter().enumerate() {
        if extra[idx + 1..].iter().any(|(later, _)| later == name) {
            continue;
        }
        vars.push(pair(OsStr::new(name), OsStr::new(value))?);
    }
    Ok(vars)
}

fn pair(name: &OsStr, value: &OsStr) -> io::Result<CString> {
    let mut bytes = Vec::with_capacity(name.len() + value.len() + 1);
    bytes.extend_from_slice(name.as_bytes());
    bytes.push(b'=');
    bytes.extend_from_slice(value.as_bytes());
    cstring(OsString::from_vec(bytes))
}

fn cstring(text: OsString) -> io::Result<CString> {
    CString::new(text.into_vec()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a program, argument or variable holds a NUL byte",
        )
    })
}

/// A NULL-terminated array of pointers into `strings`, which must outlive it.
fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    /// What a finished program showed.
    struct Ran {
        pid: i32,
        status: ExitStatus,
        out: String,
        err: String,
    }

    async fn run(program: &Program<'_>) -> Ran {
        let mut shell = Shell::spawn(program).unwrap();
        let pid = shell.pid();
        let (mut out, mut err) = (String::new(), String::new());
        let mut stdout = shell.stdout.take().unwrap();
        let mut stderr = shell.stderr.take().unwrap();
        let (a, b, status) = tokio::join!(
            stdout.read_to_string(&mut out),
            stderr.read_to_string(&mut err),
            shell.wait()
        );
        a.unwrap();
        b.unwrap();
        Ran {
            pid,
            status: status.unwrap(),
            out,
            err,
        }
    }

    fn sh<'a>(args: &'a [&'a str]) -> Program<'a> {
        Program {
            program: "/bin/sh",
            args,
            env: &[],
            announce: None,
        }
    }

    #[tokio::test]
    async fn runs_the_program_with_its_arguments_output_and_status() {
        let ran = run(&sh(&["-c", "echo \"$0 $1\"; echo e >&2; exit 7", "a", "b"])).await;
        assert_eq!(ran.status.code(), Some(7));
        assert_eq!(ran.out, "a b\n");
        assert_eq!(ran.err, "e\n");
    }

    #[tokio::test]
    async fn the_child_leads_its_own_group_has_no_stdin_and_sees_the_extra_variable() {
        let program = Program {
            program: "sh",
            args: &["-c", "ps -o pgid= -p $$; cat; echo \"[$NOMOS_SPAWN_TEST]\""],
            env: &[("NOMOS_SPAWN_TEST", "marked")],
            announce: None,
        };
        let ran = run(&program).await;
        assert!(ran.status.success());
        let mut lines = ran.out.lines();
        assert_eq!(
            lines.next().map(str::trim),
            Some(ran.pid.to_string().as_str())
        );
        assert_eq!(lines.next(), Some("[marked]"));
    }

    // rule: EXEC-8
    #[tokio::test]
    async fn the_child_lists_its_group_before_it_runs_the_program() {
        let (read, write) = pipe_pair().unwrap();
        // The program reads what the child wrote: it was there before the program ran.
        // It opens the test's own read end through /proc, which needs neither a
        // descriptor it inherits nor a shell that redirects descriptors above 9.
        let script = format!(
            "IFS= read -r line < /proc/{}/fd/{}; printf '%s' \"$line\"",
            std::process::id(),
            read.as_raw_fd()
        );
        let program = Program {
            program: "/bin/sh",
            args: &["-c", &script],
            env: &[],
            announce: Some(write.as_raw_fd()),
        };
        let ran = run(&program).await;
        assert!(ran.status.success(), "{:?}: {}", ran.status, ran.err);
        assert_eq!(ran.out, format!("+ {}", ran.pid));
        drop((read, write));
    }

    // rule: EXEC-8
    #[tokio::test]
    async fn a_child_whose_group_the_gone_watcher_cannot_list_does_not_start() {
        let (read, write) = pipe_pair().unwrap();
        // The watcher is gone: nobody holds the read end.
        drop(read);
        let program = Program {
            program: "/bin/sh",
            args: &["-c", "echo ran"],
            env: &[],
            announce: Some(write.as_raw_fd()),
        };
        // Not a program killed by SIGPIPE: a start that failed, saying why.
        let error = Shell::spawn(&program).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::EPIPE), "{error}");
        drop(write);
    }

    #[tokio::test]
    async fn signals_reach_the_child_with_their_default_action() {
        // A blocked or ignored TERM would leave the shell running into `sleep`.
        let ran = run(&sh(&["-c", "kill -TERM $$; sleep 30"])).await;
        assert_eq!(ran.status.signal(), Some(libc::SIGTERM));
        // The test process ignores SIGPIPE, as every Rust program does; the program gets
        // it back at its default, and no signal blocked.
        let out = run(&sh(&[
            "-c",
            "exec grep -E '^Sig(Blk|Ign)' /proc/self/status",
        ]))
        .await
        .out;
        let mask = |name: &str| {
            let line = out.lines().find(|l| l.starts_with(name)).unwrap();
            u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
        };
        assert_eq!(mask("SigBlk:"), 0, "{out}");
        assert_eq!(mask("SigIgn:") & (1 << (libc::SIGPIPE - 1)), 0, "{out}");
    }

    #[tokio::test]
    async fn a_program_that_cannot_run_is_an_error() {
        let missing = Program {
            program: "/nonexistent/shell",
            args: &[],
            env: &[],
            announce: None,
        };
        let error = Shell::spawn(&missing).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound, "{error}");
        let unnamed = Program {
            program: "no-such-shell-anywhere",
            args: &[],
            env: &[],
            announce: None,
        };
        assert_eq!(
            Shell::spawn(&unnamed).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    // rule: EXEC-8
    #[test]
    fn a_command_outlives_the_thread_that_started_it() {
        // The parent-death signal follows the thread that created the child: started from
        // a thread that then ends (as a runtime's blocking threads do), a command must
        // still run to its end.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let handle = runtime.handle().clone();
        let shell = std::thread::spawn(move || {
            let _entered = handle.enter();
            Shell::spawn(&sh(&["-c", "sleep 1; echo alive"])).unwrap()
        })
        .join()
        .unwrap();
        let (status, out) = runtime.block_on(async move {
            let mut shell = shell;
            let mut out = String::new();
            let mut stdout = shell.stdout.take().unwrap();
            let (read, status) = tokio::join!(stdout.read_to_string(&mut out), shell.wait());
            read.unwrap();
            (status.unwrap(), out)
        });
        assert_eq!(status.signal(), None, "killed: {status:?}");
        assert_eq!((status.code(), out.as_str()), (Some(0), "alive\n"));
    }

    #[tokio::test]
    async fn a_dropped_shell_is_killed_and_reaped() {
        let shell = Shell::spawn(&sh(&["-c", "sleep 30"])).unwrap();
        let pid = shell.pid();
        drop(shell);
        // The background reaper ends it; until then its pid still names a process.
        for _ in 0..500 {
            // SAFETY: signal 0 only asks whether the pid names a process.
            if unsafe { libc::kill(pid, 0) } != 0 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the dropped shell {pid} is still there");
    }
}
