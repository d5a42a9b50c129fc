//! Running one command on one channel: exec, capture, exit status, timeout, and the
//! clean-up when the caller goes away.
//!
//! How a command is stopped, and its limits:
//! - The command is sent as an SSH `exec` request without a pty. The server hands
//!   the string, unchanged, to the user's login shell as `$SHELL -c "<string>"`
//!   (EXEC-7); no quoting or wrapping is added here.
//! - On timeout the client sends a `signal TERM` request, EOF, waits up to the stop
//!   grace for the command to end, sends `signal KILL` if it has not, and closes the
//!   channel. OpenSSH (since 7.9) delivers a signal request to the command's whole
//!   process group (`killpg`, as sshd starts each command in a session of its own),
//!   unless the session runs a forced command or a subsystem. Servers that ignore
//!   signal requests (older OpenSSH, dropbear, some appliances) only see the channel
//!   close: without a pty the command then keeps running until it exits or writes
//!   to its closed output (SIGPIPE). Nomos cannot stop it there.
//! - When the caller's future is dropped mid-command, the same stop sequence runs
//!   in a background task so the channel is always closed (EXEC-2). It needs a
//!   tokio runtime; if the runtime itself is shutting down, the channel is dropped
//!   with the connection, which closes it, with the same limits as above.

use std::time::Duration;

use nomos_core::record::ExecOutput;
use russh::client::Msg;
use russh::{Channel, ChannelMsg, Sig};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use crate::capture::Captured;
use crate::error::SshError;
use crate::local::elapsed_ms;
use crate::ssh::pool::Lease;

/// What the server said the command ended with.
#[derive(Debug, Default)]
struct Ending {
    exit_code: Option<i32>,
    signal: Option<String>,
}

/// Owns an open channel; closes it (stopping the command) unless it finished.
pub(crate) struct ChannelGuard {
    channel: Option<Channel<Msg>>,
    grace: Duration,
    // Released only once the channel is closed, so the server's session slot is free.
    permit: Option<OwnedSemaphorePermit>,
    lease: Option<Lease>,
}

impl ChannelGuard {
    pub(crate) fn new(
        channel: Channel<Msg>,
        grace: Duration,
        permit: OwnedSemaphorePermit,
        lease: Lease,
    ) -> ChannelGuard {
        ChannelGuard {
            channel: Some(channel),
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
    ) -> Result<ExecOutput, SshError> {
        let Some(channel) = self.channel.as_mut() else {
            return Err(SshError::Disconnected {
                message: "channel already closed".into(),
            });
        };
        let started = std::time::Instant::now();
        channel.exec(true, command.as_bytes()).await.map_err(lost)?;
        let mut captured = Captured::new(output_cap);
        let mut ending = Ending::default();
        loop {
            let message = tokio::select! {
                message = channel.wait() => message,
                () = tokio::time::sleep_until(deadline) => {
                    if let Some(channel) = self.channel.take() {
                        stop(channel, self.grace).await;
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
        let grace = self.grace;
        let permit = self.permit.take();
        let lease = self.lease.take();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            tracing::debug!("caller went away mid-command; stopping it and closing the channel");
            runtime.spawn(async move {
                stop(channel, grace).await;
                drop(permit);
                drop(lease);
            });
        }
    }
}

/// TERM, EOF, wait up to `grace` for the end, KILL if still running, close.
async fn stop(mut channel: Channel<Msg>, grace: Duration) {
    let _ = channel.signal(Sig::TERM).await;
    let _ = channel.eof().await;
    let ended = tokio::time::timeout(grace, async {
        loop {
            match channel.wait().await {
                Some(ChannelMsg::ExitStatus { .. } | ChannelMsg::ExitSignal { .. }) => return true,
                Some(ChannelMsg::Close) | None => return true,
                Some(_) => {}
            }
        }
    })
    .await
    .unwrap_or(false);
    if !ended {
        let _ = channel.signal(Sig::KILL).await;
    }
    let _ = channel.close().await;
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
}
