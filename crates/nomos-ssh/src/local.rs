//! The local executor: runs a command on the machine Nomos runs on.
//!
//! The command string is handed unchanged to `/bin/sh -c` (EXEC-7): no quoting,
//! wrapping or prefix is added; the shell's environment is the server's with the pinned
//! variables of [`Pinned::ENVIRONMENT`] set (`GIT_OPTIONAL_LOCKS=0`, CLASSIFY-9). The
//! interpreter is named, never taken from `$SHELL` (CLASSIFY-8); the inventory's `local` host may pin `bash` (`/bin/bash -c`) or
//! `busybox` (`busybox sh -c`), and [`Executor::shell`] says which, so the gate reads the
//! command in that grammar.
//!
//! A shell whose process group could not be listed with the watcher (`reaper.rs`), because
//! the watcher is gone, does not start: the call fails as "could not start", not as a
//! command killed by a signal. The shell runs in a process group of its own, with
//! stdin closed and stdout/stderr captured under the cap (EXEC-5).
//!
//! Stopping (EXEC-2):
//! - on timeout the whole process group gets SIGTERM, then SIGKILL after the stop
//!   grace period, and the call returns [`SshError::Timeout`];
//! - when the caller's future is dropped, the group gets SIGKILL at once (and the
//!   shell itself is killed and reaped when its handle drops);
//! - a command that finishes normally leaves anything it started in the
//!   background alone, as an SSH server would. Such a process that keeps stdout or
//!   stderr open makes the call wait for it until the timeout.
//!
//! A process that leaves the group (`setsid`) escapes these signals.
//!
//! Dying with the server (EXEC-8): the shell gets a parent-death signal (SIGKILL), set in
//! the child before it runs the shell (`spawn.rs`); the signal comes when the thread
//! that started the shell ends, and commands are started from the runtime's worker
//! threads, which live as long as the server. Children the shell started itself do not
//! inherit the signal: the command's process group is killed by a watcher when the
//! server goes (`reaper.rs`),
//! and every process of the command carries the execution's id in [`MARKER_VAR`], so the
//! start-up clean-up stops whatever still escaped (a process that left the group).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use nomos_core::classify::Shell as Pinned;
use nomos_core::ports::exec::{
    ExecError, ExecLimits, Executor, HostInfo, OutputSink, OutputStream,
};
use nomos_core::record::ExecOutput;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::capture::CappedBuffer;
use crate::error::SshError;
use crate::inventory::LOCAL_SLUG;
use crate::spawn::{Program, Shell};
use crate::ssh::check_marker;
use crate::ssh::command::{MARKER_VAR, cleanup_script};

/// The shell the local executor runs commands with.
pub const DEFAULT_SHELL: &str = "/bin/sh";

/// Runs commands on this machine through `sh -c`.
#[derive(Clone, Debug)]
pub struct LocalExecutor {
    shell: String,
    /// Arguments before `-c` (`sh` for `busybox sh -c`).
    shell_args: Vec<String>,
    /// The grammar the shell reads (CLASSIFY-8).
    pinned: Pinned,
    stop_grace: Duration,
    tags: Vec<String>,
}

impl LocalExecutor {
    /// An executor using `/bin/sh` and a 2 s grace between SIGTERM and SIGKILL.
    pub fn new() -> LocalExecutor {
        LocalExecutor {
            shell: DEFAULT_SHELL.to_string(),
            shell_args: Vec::new(),
            pinned: Pinned::Sh,
            stop_grace: Duration::from_secs(2),
            tags: Vec::new(),
        }
    }

    /// Uses another POSIX shell (for example `/bin/bash`); it is called as `SHELL -c CMD`
    /// and classified as POSIX sh unless its file name is `bash`.
    pub fn with_shell(mut self, shell: &str) -> LocalExecutor {
        self.shell = shell.to_string();
        self.shell_args.clear();
        self.pinned = if shell.rsplit('/').next() == Some("bash") {
            Pinned::Bash
        } else {
            Pinned::Sh
        };
        self
    }

    /// CLASSIFY-8: runs commands under the pinned interpreter `shell` (`/bin/sh -c`,
    /// `/bin/bash -c`, `busybox sh -c`).
    pub fn pinned(mut self, shell: Pinned) -> LocalExecutor {
        let (program, args) = shell
            .interpreter()
            .split_first()
            .unwrap_or((&DEFAULT_SHELL, &[]));
        self.shell = (*program).to_string();
        self.shell_args = args.iter().map(|a| (*a).to_string()).collect();
        self.pinned = shell;
        self
    }

    /// Sets the time between SIGTERM and SIGKILL on timeout.
    pub fn with_stop_grace(mut self, grace: Duration) -> LocalExecutor {
        self.stop_grace = grace;
        self
    }

    /// Sets the tags reported for the `local` host.
    pub fn with_tags(mut self, tags: Vec<String>) -> LocalExecutor {
        self.tags = tags;
        self
    }

    /// Runs `command` exactly as given and captures its output.
    pub async fn execute(&self, command: &str, limits: ExecLimits) -> Result<ExecOutput, SshError> {
        self.execute_marked(command, limits, None).await
    }

    /// [`LocalExecutor::execute`] with the command's processes marked by `marker` (an
    /// execution's id) in their environment, so [`LocalExecutor::stop_marked`] finds
    /// what is left of it after a restart (EXEC-8).
    pub async fn execute_marked(
        &self,
        command: &str,
        limits: ExecLimits,
        marker: Option<&str>,
    ) -> Result<ExecOutput, SshError> {
        self.execute_streamed(command, limits, marker, None).await
    }

    /// [`LocalExecutor::execute_marked`] handing the output to `live` as it arrives
    /// (EXEC-10).
    pub async fn execute_streamed(
        &self,
        command: &str,
        limits: ExecLimits,
        marker: Option<&str>,
        live: Option<OutputSink>,
    ) -> Result<ExecOutput, SshError> {
        let started = Instant::now();
        if let Some(marker) = marker {
            check_marker(marker)?;
        }
        let mut args: Vec<&str> = self.shell_args.iter().map(String::as_str).collect();
        args.extend(["-c", command]);
        let mut env = Pinned::ENVIRONMENT.to_vec();
        env.extend(marker.map(|marker| (MARKER_VAR, marker)));
        let program = Program {
            program: &self.shell,
            args: &args,
            env: &env,
            announce: crate::reaper::pipe(),
        };
        let mut child = Shell::spawn(&program).map_err(|source| {
            if program.announce.is_some() && source.raw_os_error() == Some(nix::libc::EPIPE) {
                // The watcher is gone: a group it cannot list would outlive the server.
                crate::reaper::mark_gone();
                return SshError::Spawn {
                    shell: self.shell.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::BrokenPipe,
                        "the watcher of local command groups is gone, so the command \
                         would not die with the server",
                    ),
                };
            }
            SshError::Spawn {
                shell: self.shell.clone(),
                source,
            }
        })?;
        let mut group = GroupGuard::new(&child);
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let cap = limits.output_cap;

        let finished = tokio::time::timeout(limits.timeout.to_std(), async {
            tokio::join!(
                drain(
                    stdout,
                    CappedBuffer::with_live(cap, live.clone(), OutputStream::Stdout)
                ),
                drain(
                    stderr,
                    CappedBuffer::with_live(cap, live.clone(), OutputStream::Stderr)
                ),
                child.wait()
            )
        })
        .await;
        match finished {
            Ok((stdout, stderr, status)) => {
                group.disarm();
                let status = status.map_err(|source| SshError::Io {
                    context: "waiting for the local command",
                    source,
                })?;
                let stdout = stdout.map_err(|source| SshError::Io {
                    context: "reading stdout",
                    source,
                })?;
                let stderr = stderr.map_err(|source| SshError::Io {
                    context: "reading stderr",
                    source,
                })?;
                let (stdout, stdout_cut) = stdout.into_text();
                let (stderr, stderr_cut) = stderr.into_text();
                Ok(ExecOutput {
                    exit_code: status.code(),
                    signal: signal_name(status),
                    stdout,
                    stderr,
                    stdout_cut,
                    stderr_cut,
                    duration_ms: elapsed_ms(started),
                })
            }
            Err(_) => {
                self.stop(&mut child, &mut group).await;
                Err(SshError::Timeout {
                    after_ms: u64::try_from(limits.timeout.as_millis()).unwrap_or(0),
                })
            }
        }
    }

    /// EXEC-8: stops whatever still runs of the command marked `marker`: the processes
    /// whose environment carries the marker (children the shell left behind when it died
    /// with the server), TERM first, KILL after the stop grace. The same fixed script as
    /// the SSH clean-up, run here.
    pub async fn stop_marked(&self, marker: &str) -> Result<(), SshError> {
        check_marker(marker)?;
        let script = cleanup_script(marker, self.stop_grace);
        let limits = ExecLimits::with_timeout(nomos_core::Span::from_millis(
            i64::try_from(self.stop_grace.as_millis()).unwrap_or(i64::MAX) + 5_000,
        ));
        let output = LocalExecutor::new().execute(&script, limits).await?;
        match output.exit_code {
            Some(0) => Ok(()),
            other => Err(SshError::Io {
                context: "stopping a command left by a previous run",
                source: std::io::Error::other(format!(
                    "the clean-up ended with {other:?}: {}",
                    output.stderr
                )),
            }),
        }
    }

    async fn stop(&self, child: &mut Shell, group: &mut GroupGuard) {
        group.signal(Signal::SIGTERM);
        if tokio::time::timeout(self.stop_grace, child.wait())
            .await
            .is_err()
        {
            tracing::debug!("local command ignored SIGTERM, sending SIGKILL");
        }
        group.signal(Signal::SIGKILL);
        group.disarm();
        let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
    }
}

impl Default for LocalExecutor {
    fn default() -> Self {
        LocalExecutor::new()
    }
}

#[async_trait]
impl Executor for LocalExecutor {
    async fn run(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
    ) -> Result<ExecOutput, ExecError> {
        local_only(host)?;
        self.execute(command, limits)
            .await
            .map_err(|e| e.into_exec_error(host))
    }

    async fn run_marked(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
        marker: &str,
    ) -> Result<ExecOutput, ExecError> {
        local_only(host)?;
        self.execute_marked(command, limits, Some(marker))
            .await
            .map_err(|e| e.into_exec_error(host))
    }

    async fn run_streamed(
        &self,
        host: &str,
        command: &str,
        limits: ExecLimits,
        marker: &str,
        live: OutputSink,
    ) -> Result<ExecOutput, ExecError> {
        local_only(host)?;
        self.execute_streamed(command, limits, Some(marker), Some(live))
            .await
            .map_err(|e| e.into_exec_error(host))
    }

    async fn stop_marked(&self, host: &str, marker: &str) -> Result<(), ExecError> {
        local_only(host)?;
        LocalExecutor::stop_marked(self, marker)
            .await
            .map_err(|e| e.into_exec_error(host))
    }

    fn shell(&self, host: &str) -> Pinned {
        let _ = host;
        self.pinned
    }

    fn hosts(&self) -> Vec<HostInfo> {
        vec![HostInfo {
            slug: LOCAL_SLUG.to_string(),
            address: LOCAL_SLUG.to_string(),
            tags: self.tags.clone(),
            host_keys: Vec::new(),
        }]
    }
}

fn local_only(host: &str) -> Result<(), ExecError> {
    if host != LOCAL_SLUG {
        return Err(ExecError::UnknownHost {
            host: host.to_string(),
            known: vec![LOCAL_SLUG.to_string()],
        });
    }
    Ok(())
}

/// Kills the command's process group when dropped while armed (the caller went away).
struct GroupGuard {
    pgid: Option<Pid>,
}

impl GroupGuard {
    /// The guard of `child`'s group, which the child listed with the watcher itself.
    fn new(child: &Shell) -> GroupGuard {
        GroupGuard {
            pgid: Some(Pid::from_raw(child.pid())),
        }
    }

    fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already gone) is the expected outcome when racing exit.
            let _ = killpg(pgid, signal);
        }
    }

    fn disarm(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            crate::reaper::forget(pgid.as_raw());
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.signal(Signal::SIGKILL);
        self.disarm();
    }
}

async fn drain<R: AsyncRead + Unpin>(
    reader: Option<R>,
    mut buffer: CappedBuffer,
) -> std::io::Result<CappedBuffer> {
    let Some(mut reader) = reader else {
        return Ok(buffer);
    };
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let n = reader.read(&mut chunk).await?;
        if n == 0 {
            return Ok(buffer);
        }
        buffer.push(&chunk[..n]);
    }
}

/// The signal that ended a process, spelled as SSH does (`TERM`, `KILL`).
fn signal_name(status: ExitStatus) -> Option<String> {
    let number = status.signal()?;
    Some(match Signal::try_from(number) {
        Ok(signal) => signal.as_str().trim_start_matches("SIG").to_string(),
        Err(_) => number.to_string(),
    })
}

pub(crate) fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use nomos_core::time::Span;

    use super::*;

    fn limits(timeout_ms: i64, cap: usize) -> ExecLimits {
        ExecLimits {
            timeout: Span::from_millis(timeout_ms),
            output_cap: cap,
        }
    }

    async fn run(command: &str) -> ExecOutput {
        LocalExecutor::new()
            .execute(command, limits(10_000, 1024))
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn captures_stdout_stderr_and_exit_code() {
        let output = run("echo out; echo err >&2; exit 3").await;
        assert_eq!(output.stdout, "out\n");
        assert_eq!(output.stderr, "err\n");
        assert_eq!(output.exit_code, Some(3));
        assert_eq!(output.signal, None);
    }

    // rule: EXEC-7
    #[tokio::test]
    async fn command_string_reaches_the_shell_unchanged() {
        let command = r#"printf '%s|' "a b" '$HOME' "it's"; echo "$0""#;
        let output = run(command).await;
        assert_eq!(output.stdout, "a b|$HOME|it's|/bin/sh\n");
    }

    // rule: CLASSIFY-9
    #[tokio::test]
    async fn every_pinned_shell_starts_with_git_optional_locks_off() {
        for shell in Pinned::ALL {
            if shell == Pinned::Busybox && std::process::Command::new("busybox").output().is_err() {
                continue;
            }
            let output = LocalExecutor::new()
                .pinned(shell)
                .execute(r#"echo "[$GIT_OPTIONAL_LOCKS] $0""#, limits(10_000, 1000))
                .await
                .unwrap();
            let interpreter = shell.interpreter().last().copied().unwrap_or_default();
            assert_eq!(output.stdout, format!("[0] {interpreter}\n"), "{shell}");
        }
    }

    // rule: EXEC-5
    #[tokio::test]
    async fn output_past_the_cap_is_cut_and_counted() {
        let output = LocalExecutor::new()
            .execute(
                "head -c 100000 /dev/zero | tr '\\0' x",
                limits(10_000, 1000),
            )
            .await
            .unwrap();
        assert_eq!(output.stdout.len(), 1000);
        assert_eq!(output.stdout_cut, 99_000);
        assert_eq!(output.exit_code, Some(0));
    }

    #[tokio::test]
    async fn a_signal_death_reports_the_signal_name() {
        let output = run("kill -TERM $$").await;
        assert_eq!(output.exit_code, None);
        assert_eq!(output.signal.as_deref(), Some("TERM"));
    }

    // rule: EXEC-2
    #[tokio::test]
    async fn timeout_returns_an_error_and_kills_the_group() {
        let marker = format!("sleep 60.{}1", std::process::id());
        let command = format!("{marker}; echo never");
        let error = LocalExecutor::new()
            .execute(&command, limits(300, 1024))
            .await
            .unwrap_err();
        assert!(
            matches!(error, SshError::Timeout { after_ms: 300 }),
            "{error}"
        );
        assert!(wait_gone(&marker).await, "`{marker}` still running");
    }

    // rule: EXEC-2
    #[tokio::test]
    async fn dropping_the_call_kills_the_group() {
        let marker = format!("sleep 60.{}2", std::process::id());
        let executor = LocalExecutor::new();
        let call = executor.execute(&marker, limits(60_000, 1024));
        let dropped = tokio::time::timeout(Duration::from_millis(300), call).await;
        assert!(dropped.is_err(), "the call should still have been running");
        assert!(wait_gone(&marker).await, "`{marker}` still running");
    }

    // rule: EXEC-8
    #[tokio::test]
    async fn a_marked_command_carries_its_marker_and_a_bad_marker_is_refused() {
        let marker = "0f0e-1d2c";
        let output = LocalExecutor::new()
            .execute_marked(
                &format!("echo ${MARKER_VAR}"),
                limits(10_000, 1024),
                Some(marker),
            )
            .await
            .unwrap();
        assert_eq!(output.stdout, "0f0e-1d2c\n");
        let error = LocalExecutor::new()
            .execute_marked("true", limits(1_000, 16), Some("x; rm -rf /"))
            .await
            .unwrap_err();
        assert!(matches!(error, SshError::BadMarker { .. }), "{error}");
        assert!(matches!(
            LocalExecutor::new().stop_marked("$(id)").await,
            Err(SshError::BadMarker { .. })
        ));
    }

    #[tokio::test]
    async fn missing_shell_is_a_spawn_error() {
        let error = LocalExecutor::new()
            .with_shell("/nonexistent/sh")
            .execute("true", limits(1_000, 16))
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("could not start /nonexistent/sh:"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn other_hosts_are_unknown_to_the_local_executor() {
        let error = LocalExecutor::new()
            .run("vm:db", "true", limits(1_000, 16))
            .await
            .unwrap_err();
        assert_eq!(
            error,
            ExecError::UnknownHost {
                host: "vm:db".into(),
                known: vec!["local".into()]
            }
        );
    }

    /// Waits up to 5 s for no live process to have `needle` in its command line.
    async fn wait_gone(needle: &str) -> bool {
        for _ in 0..100 {
            if nomos_test_support::sshd::processes_matching(needle).is_empty() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }
}
