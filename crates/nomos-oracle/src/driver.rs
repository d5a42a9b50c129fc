//! The driver that runs inside one sandbox (`nomos-oracle --drive DIR`): it runs each command
//! of the batch in turn under `strace -f`, in a process group of its own, with its time limit
//! and its output cap, and leaves `trace.N` and `status.N` in the batch directory.
//!
//! It is the oracle's own binary rather than a shell script, so a command costs one `strace`
//! and its shell, not also a `timeout`, a wrapping shell and a `head` (about half the time of
//! a short command on a loaded machine).

use std::fs;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The exit status a run stopped at its time limit is given (as `timeout` does).
pub const TIMED_OUT: i32 = 124;

/// The batch's settings, as the sandbox writes them into `limits`: time limit in
/// milliseconds, output cap in bytes, and the `strace` arguments, one per line.
pub fn write_settings(
    dir: &Path,
    timeout: Duration,
    output_cap: usize,
    strace: &[String],
) -> io::Result<()> {
    let mut text = format!("{}\n{}\n", timeout.as_millis(), output_cap);
    for arg in strace {
        text.push_str(arg);
        text.push('\n');
    }
    fs::write(dir.join("limits"), text)
}

/// Runs every `cmd.N` of `dir` under the interpreter in `shell.N`, in `workdir`.
pub fn drive(dir: &Path, workdir: &Path) -> io::Result<()> {
    let settings = fs::read_to_string(dir.join("limits"))?;
    let mut lines = settings.lines();
    let timeout = Duration::from_millis(lines.next().unwrap_or("2000").parse().unwrap_or(2000));
    let cap: usize = lines.next().unwrap_or("65536").parse().unwrap_or(65536);
    let strace: Vec<&str> = lines.collect();
    for idx in 0.. {
        let Ok(command) = fs::read_to_string(dir.join(format!("cmd.{idx}"))) else {
            break;
        };
        let shell = fs::read_to_string(dir.join(format!("shell.{idx}")))?;
        let trace = dir.join(format!("trace.{idx}"));
        let status = run_one(&command, &shell, &trace, &strace, workdir, timeout, cap)?;
        fs::write(dir.join(format!("status.{idx}")), format!("{status}\n"))?;
        // Each command finds the sandbox's scratch space as the first one did: what one
        // wrote there must not change what the next one does or fails to do.
        for scratch in ["/tmp", "/var/tmp"] {
            empty(Path::new(scratch));
        }
    }
    Ok(())
}

fn empty(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let _ = match entry.file_type() {
            Ok(kind) if kind.is_dir() => fs::remove_dir_all(&path),
            _ => fs::remove_file(&path),
        };
    }
}

fn run_one(
    command: &str,
    shell: &str,
    trace: &Path,
    strace: &[&str],
    workdir: &Path,
    timeout: Duration,
    cap: usize,
) -> io::Result<i32> {
    let (reader, writer) = io::pipe()?;
    let mut child = {
        let mut strace_cmd = Command::new("strace");
        strace_cmd
            .args(strace)
            .arg("-o")
            .arg(trace)
            .args(shell.split_whitespace())
            .arg("-c")
            .arg(command)
            .current_dir(workdir)
            .stdin(Stdio::null())
            .stdout(writer)
            // Not the capped pipe: `strace` writes its own notes there, and a closed pipe
            // would kill the tracer and cut the trace of a command that only printed a lot.
            .stderr(Stdio::null())
            .process_group(0);
        strace_cmd.spawn()?
    };
    // The output is drained up to the cap and then dropped, so an endless printer gets
    // `SIGPIPE` as it would under `| head -c CAP`. The thread is never joined: a process
    // that escapes the group may hold the pipe open until the sandbox ends.
    thread::spawn(move || drain(reader, cap));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status.code().unwrap_or(128);
        }
        if Instant::now() >= deadline {
            kill_group(&child);
            child.wait()?;
            break TIMED_OUT;
        }
        thread::sleep(Duration::from_millis(1));
    };
    // Whatever the command left running in its group (`cmd &`) is stopped before the next.
    if group_alive(child.id()) {
        kill_group(&child);
    }
    Ok(status)
}

fn drain(mut reader: io::PipeReader, cap: usize) {
    let mut buf = [0u8; 8192];
    let mut seen = 0usize;
    while seen < cap {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => seen += n,
        }
    }
}

/// Kills the command's whole process group, with the shell's `kill` builtin (no `unsafe`
/// here, and no `procps` needed).
fn kill_group(child: &Child) {
    let _ = Command::new("/bin/sh")
        .args(["-c", &format!("kill -9 -{}", child.id())])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Whether a process of group `pgid` still runs (read from `/proc`, which is the sandbox's).
fn group_alive(pgid: u32) -> bool {
    let Ok(entries) = fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // `pid (comm) state ppid pgrp ...`: comm may hold spaces, so read after its `)`.
        // A zombie is already gone; it waits only for its reaper.
        stat.rsplit_once(')').is_some_and(|(_, rest)| {
            let fields: Vec<&str> = rest.split_whitespace().take(3).collect();
            fields.len() == 3 && fields[0] != "Z" && fields[2] == pgid.to_string()
        })
    })
}
