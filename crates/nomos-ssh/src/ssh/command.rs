//! Running one command on one channel: exec, capture, exit status, timeout, and the
//! clean-up when the caller goes away.
//!
//! How a command is run:
//! - It is sent as an SSH `exec` request without a pty, as the fixed line
//!   `/bin/sh -c 'COMMAND'` (or the host's pinned shell, CLASSIFY-8, written by
//!   [`super::exec_request`]). The server hands that line to the user's login shell as
//!   `$SHELL -c "<line>"`, which only starts the named shell; the command string
//!   reaches it unchanged as one word (EXEC-7), so whatever the login shell is, the
//!   command is read by the shell it was classified for. Its stdin is closed at once (EOF),
//!   so a command that reads stdin sees end-of-file instead of waiting.
//! - Before the exec, the channel asks the server to set one environment variable,
//!   [`MARKER_VAR`], to an id unique to this command. It changes nothing about what
//!   runs; it only lets Nomos find the command's processes again to stop them. The
//!   server accepts it only if its `AcceptEnv` allows it; Debian's and most other
//!   distributions' default `AcceptEnv LANG LC_*` does.
//!
//! How a command is stopped (on timeout, and when the caller's future is dropped):
//! 1. A `signal TERM` request on the channel. OpenSSH (7.9 and later) delivers it
//!    to the command's process group, but only for non-root logins: for a root
//!    login sshd runs the session without privilege separation and refuses signal
//!    requests ("session signalling requires privilege separation").
//! 2. EOF and close on the channel. Without a pty, closing the channel does not
//!    stop the command on an OpenSSH server: it runs on until it exits or writes
//!    to its closed output (SIGPIPE), and keeps its server session slot meanwhile.
//! 3. Therefore a clean-up command on a second channel: a small POSIX `sh` script
//!    that finds the processes whose environment carries this command's marker
//!    (Linux `/proc/PID/environ`), sends them SIGTERM, waits up to the stop grace
//!    and sends SIGKILL to any left. This is Nomos's own fixed script, never the
//!    operator's command, and it can only match processes of that one command.
//!
//! Limits: where the server refuses the marker variable (no matching `AcceptEnv`)
//! and the signal request (root logins, old servers), or has no `/proc`, or the
//! command clears its environment, a stopped command may keep running on the host
//! after Nomos has reported the timeout. When the caller's future is dropped, the
//! stop runs in a task on the current tokio runtime; if that runtime is shutting
//! down the channel is only closed, with the limits of step 2.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nomos_core::record::ExecOutput;
use russh::client::Msg;
use russh::{Channel, ChannelMsg, ChannelOpenFailure, Sig};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use crate::capture::Captured;
use crate::error::SshError;
use crate::local::elapsed_ms;
use crate::ssh::connect::SshHandle;
use crate::ssh::pool::{Connection, Lease};

/// The environment variable that marks a command's processes (see the module docs).
pub const MARKER_VAR: &str = "LC_NOMOS_EXEC_ID";

/// How long the clean-up command may take beyond the stop grace.
const CLEANUP_SLACK: Duration = Duration::from_secs(5);

/// What the server said the command ended with.
#[derive(Debug, Default)]
struct Ending {
    exit_code: Option<i32>,
    signal: Option<String>,
}

/// Why a session channel could not be opened.
pub(crate) enum OpenFailure {
    /// The server kept refusing until the deadline.
    Refused(ChannelOpenFailure),
    /// The connection is dead or did not answer.
    Dead(String),
    /// The command's deadline passed.
    Deadline,
}

/// Opens a session channel. A refusal for lack of server sessions (OpenSSH frees a
/// closed channel's session slot a moment after the close) is retried with a short
/// back-off until `deadline`; each single request is bounded by `per_try`.
pub(crate) async fn open_session(
    handle: &SshHandle,
    per_try: Duration,
    deadline: Instant,
) -> Result<Channel<Msg>, OpenFailure> {
    let mut backoff = Duration::from_millis(5);
    loop {
        let try_deadline = deadline.min(Instant::now() + per_try);
        match tokio::time::timeout_at(try_deadline, handle.channel_open_session()).await {
            Ok(Ok(channel)) => return Ok(channel),
            Ok(Err(russh::Error::ChannelOpenFailure(reason))) => {
                let retriable = matches!(
                    reason,
                    ChannelOpenFailure::AdministrativelyProhibited
                        | ChannelOpenFailure::ConnectFailed
                        | ChannelOpenFailure::ResourceShortage
                );
                if !retriable || Instant::now() + backoff >= deadline {
                    return Err(OpenFailure::Refused(reason));
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(100));
            }
            Ok(Err(error)) => return Err(OpenFailure::Dead(error.to_string())),
            Err(_) if Instant::now() >= deadline => return Err(OpenFailure::Deadline),
            Err(_) => {
                return Err(OpenFailure::Dead(
                    "the server did not answer a channel open".into(),
                ));
            }
        }
    }
}

/// Owns an open channel; stops the command and closes the channel unless it finished.
pub(crate) struct ChannelGuard {
    channel: Option<Channel<Msg>>,
    conn: Arc<Connection>,
    marker: String,
    grace: Duration,
    // Released only once the command is stopped, so the server's session slot is free.
    permit: Option<OwnedSemaphorePermit>,
    lease: Option<Lease>,
}

impl ChannelGuard {
    /// A guard for a command marked with `marker` (an execution's id, EXEC-8), or with a
    /// fresh marker of its own.
    pub(crate) fn new(
        channel: Channel<Msg>,
        conn: Arc<Connection>,
        grace: Duration,
        permit: OwnedSemaphorePermit,
        lease: Lease,
        marker: Option<&str>,
    ) -> ChannelGuard {
        ChannelGuard {
            channel: Some(channel),
            conn,
            marker: marker.map_or_else(new_marker, str::to_owned),
            grace,
            permit: Some(permit),
            lease: Some(lease),
        }
    }

    /// Runs `command` on the channel until it ends or `deadline` passes.
    pub(crate) async fn run(
        mut self,
        command: &str,
        output_cap: usize,
        deadline: Instant,
        timeout_ms: u64,
        live: Option<nomos_core::ports::exec::OutputSink>,
    ) -> Result<ExecOutput, SshError> {
        let Some(channel) = self.channel.as_mut() else {
            return Err(SshError::Disconnected {
                message: "channel already closed".into(),
            });
        };
        let started = std::time::Instant::now();
        channel
            .set_env(false, MARKER_VAR, self.marker.as_str())
            .await
            .map_err(lost)?;
        channel.exec(true, command.as_bytes()).await.map_err(lost)?;
        // Nothing is ever sent to the command: close its stdin as the local executor does.
        channel.eof().await.map_err(lost)?;
        let mut captured = Captured::with_live(output_cap, live);
        let mut ending = Ending::default();
        loop {
            let message = tokio::select! {
                message = channel.wait() => message,
                () = tokio::time::sleep_until(deadline) => {
                    if let Some(channel) = self.channel.take() {
                        stop(channel, &self.conn, &self.marker, self.grace).await;
                    }
                    return Err(SshError::Timeout { after_ms: timeout_ms });
                }
            };
            match message {
                Some(ChannelMsg::Data { data }) => captured.stdout.push(&data),
                Some(ChannelMsg::ExtendedData { data, ext: 1 }) => captured.stderr.push(&data),
                Some(ChannelMsg::ExitStatus { exit_status }) => {
                    ending.exit_code = Some(i32::try_from(exit_status).unwrap_or(i32::MAX));
                }
                Some(ChannelMsg::ExitSignal { signal_name, .. }) => {
                    ending.signal = Some(signal_text(&signal_name));
                }
                Some(ChannelMsg::Failure) => {
                    self.channel = None;
                    return Err(SshError::ExecRefused);
                }
                Some(ChannelMsg::Close) => break,
                None if ending.exit_code.is_some() || ending.signal.is_some() => break,
                None => {
                    self.channel = None;
                    return Err(SshError::Disconnected {
                        message: "the connection closed before the command finished".into(),
                    });
                }
                Some(_) => {}
            }
        }
        // The server closed the channel and russh answered the close: nothing to stop.
        self.channel = None;
        if ending.exit_code.is_none() && ending.signal.is_none() {
            return Err(SshError::Disconnected {
                message: "the server closed the channel without an exit status".into(),
            });
        }
        Ok(captured.finish(ending.exit_code, ending.signal, elapsed_ms(started)))
    }
}

impl Drop for ChannelGuard {
    fn drop(&mut self) {
        let Some(channel) = self.channel.take() else {
            return;
        };
        let conn = self.conn.clone();
        let marker = std::mem::take(&mut self.marker);
        let grace = self.grace;
        let permit = self.permit.take();
        let lease = self.lease.take();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            tracing::debug!("caller went away mid-command; stopping it and closing the channel");
            runtime.spawn(async move {
                stop(channel, &conn, &marker, grace).await;
                drop(permit);
                drop(lease);
            });
        }
    }
}

/// Signal, close, then stop whatever still carries the marker (see the module docs).
async fn stop(channel: Channel<Msg>, conn: &Connection, marker: &str, grace: Duration) {
    let _ = channel.signal(Sig::TERM).await;
    let _ = channel.eof().await;
    let _ = channel.close().await;
    drop(channel);
    if let Err(why) = clean_up(conn, marker, grace).await {
        tracing::warn!("{why}");
    }
}

/// Runs the clean-up script for `marker` on a channel of its own and waits for it: step
/// 3 of a stop, and at start-up the stop of a command a previous run left (EXEC-8).
pub(crate) async fn clean_up(
    conn: &Connection,
    marker: &str,
    grace: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + grace + CLEANUP_SLACK;
    let Ok(mut cleanup) = open_session(&conn.handle, CLEANUP_SLACK, deadline).await else {
        return Err("could not open a channel to stop a command".into());
    };
    if let Err(error) = cleanup
        .exec(true, cleanup_script(marker, grace).as_bytes())
        .await
    {
        return Err(format!(
            "could not start the clean-up of a command: {error}"
        ));
    }
    let _ = cleanup.eof().await;
    let mut exit = None;
    let finished = tokio::time::timeout_at(deadline, async {
        while let Some(message) = cleanup.wait().await {
            match message {
                ChannelMsg::ExitStatus { exit_status } => exit = Some(exit_status),
                ChannelMsg::Close => break,
                _ => {}
            }
        }
    })
    .await;
    if finished.is_err() {
        let _ = cleanup.close().await;
        return Err("the clean-up of a command did not finish in time".into());
    }
    match exit {
        Some(0) => Ok(()),
        other => Err(format!("the clean-up of a command ended with {other:?}")),
    }
}

/// The fixed clean-up script: TERM the marked processes, wait up to `grace`, KILL
/// the rest. The marker holds only hex digits and `-`, so it needs no quoting.
pub(crate) fn cleanup_script(marker: &str, grace: Duration) -> String {
    let rounds = (grace.as_millis() / 100).max(1);
    format!(
        "/bin/sh -c 'm={MARKER_VAR}={marker}; \
         pids() {{ for f in /proc/[0-9]*/environ; do \
         tr \"\\000\" \"\\n\" <\"$f\" 2>/dev/null | grep -qx \"$m\" && {{ p=${{f#/proc/}}; echo \"${{p%/environ}}\"; }}; \
         done; }}; \
         l=$(pids); [ -z \"$l\" ] && exit 0; kill -TERM $l 2>/dev/null; \
         i=0; while [ $i -lt {rounds} ]; do sleep 0.1; l=$(pids); [ -z \"$l\" ] && exit 0; i=$((i+1)); done; \
         kill -KILL $l 2>/dev/null; exit 0'"
    )
}

/// A marker unique to this process and command: `PID-NANOS-COUNTER`, in hex.
fn new_marker() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{:x}-{:x}-{:x}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn lost(error: russh::Error) -> SshError {
    SshError::Disconnected {
        message: error.to_string(),
    }
}

/// The signal's name as SSH spells it (`TERM`, `KILL`).
fn signal_text(signal: &Sig) -> String {
    match signal {
        Sig::ABRT => "ABRT",
        Sig::ALRM => "ALRM",
        Sig::FPE => "FPE",
        Sig::HUP => "HUP",
        Sig::ILL => "ILL",
        Sig::INT => "INT",
        Sig::KILL => "KILL",
        Sig::PIPE => "PIPE",
        Sig::QUIT => "QUIT",
        Sig::SEGV => "SEGV",
        Sig::TERM => "TERM",
        Sig::USR1 => "USR1",
        Sig::Custom(name) => name,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names_match_the_local_spelling() {
        assert_eq!(signal_text(&Sig::TERM), "TERM");
        assert_eq!(signal_text(&Sig::Custom("USR2".into())), "USR2");
    }

    #[test]
    fn markers_are_unique_and_need_no_quoting() {
        let a = new_marker();
        let b = new_marker();
        assert_ne!(a, b);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit() || c == '-'), "{a}");
    }

    #[tokio::test]
    async fn cleanup_script_stops_only_the_marked_processes() {
        let marker = new_marker();
        let spawn = |value: &str| {
            std::process::Command::new("sleep")
                .arg("30")
                .env(MARKER_VAR, value)
                .spawn()
                .unwrap()
        };
        let mut marked = spawn(&marker);
        let mut other = spawn("someone-else");
        let status = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(cleanup_script(&marker, Duration::from_millis(300)))
            .status()
            .unwrap();
        assert!(status.success());
        let marked_status = marked.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&marked_status),
            Some(15)
        );
        assert_eq!(
            other.try_wait().unwrap(),
            None,
            "an unmarked process was stopped"
        );
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
