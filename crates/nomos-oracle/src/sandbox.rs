//! The throwaway sandbox (CLASSIFY-9): `bwrap` with a read-only root, its own `/tmp`, `/run`
//! and `/dev`, no network and its own pid namespace, dying with its parent; inside it each
//! command runs under its interpreter, traced by `strace -f`, with a time limit and a cap on
//! its output.
//!
//! Commands run in batches: one sandbox per batch, and inside it the driver
//! ([`crate::driver`]) runs each command in turn, each with its own trace file, its own time
//! limit (past it the whole process group is killed) and its own output cap. A batch whose
//! sandbox dies (a command that kills everything it can) leaves the rest of its commands
//! without a trace; the caller runs those again, each in a sandbox of its own.
//!
//! The host's secrets are masked inside (SECRET-1's defaults): a command that reads
//! `/etc/shadow` or a private key opens the path and reads a stand-in.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use nomos_classify::Shell;

use crate::judge::Ending;
use crate::scratch;
use crate::trace::{Call, parse_trace};

/// Where the scratch directory is mounted inside the sandbox, and the commands' directory.
pub const SCRATCH: &str = "/run/scratch";
/// Where the batch's traces are written inside the sandbox.
const TRACES: &str = "/run/oracle-trace";
/// Where the oracle's own binary, the driver, is inside the sandbox.
const DRIVER: &str = "/run/nomos-oracle-driver";

/// The system calls the tracer stops on; `?` lets a name this kernel lacks pass.
const TRACED: &[&str] = &[
    "execve",
    "execveat",
    "open",
    "openat",
    "openat2",
    "creat",
    "clone",
    "clone3",
    "fork",
    "vfork",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "mkdir",
    "mkdirat",
    "mknod",
    "mknodat",
    "rmdir",
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "setxattrat",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "removexattrat",
    "truncate",
    "mount",
    "umount2",
    "pivot_root",
    "move_mount",
    "fsmount",
    "mount_setattr",
    "swapon",
    "swapoff",
    "chroot",
    "sethostname",
    "setdomainname",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "reboot",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "acct",
    "syslog",
    "quotactl",
    "bpf",
    "ioctl",
    "ptrace",
    "process_vm_writev",
    "pidfd_send_signal",
    "setpriority",
    "ioprio_set",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setaffinity",
    "sched_setattr",
    "migrate_pages",
    "move_pages",
    "prlimit64",
    "kill",
    "tkill",
    "tgkill",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "socket",
    "connect",
    "bind",
    "sendto",
    "sendmsg",
    "sendmmsg",
];

/// The tools the sandbox needs, and the Debian package of each.
const TOOLS: &[(&str, &str)] = &[
    ("bwrap", "bubblewrap"),
    ("strace", "strace"),
    ("busybox", "busybox"),
    ("git", "git"),
    ("tar", "tar"),
    ("gzip", "gzip"),
];

/// Why the sandbox could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A tool the oracle needs is not installed.
    #[error(
        "`{tool}` is not installed (install the Debian package `{package}`): the oracle cannot run without it"
    )]
    Missing {
        /// The program looked for.
        tool: &'static str,
        /// The package that provides it.
        package: &'static str,
    },
    /// `bwrap` cannot build a sandbox here (no user namespaces, a seccomp policy).
    #[error("bwrap cannot build a sandbox here: {stderr}")]
    Refused {
        /// What bwrap said.
        stderr: String,
    },
    /// A file of the scratch directory could not be written.
    #[error("building the scratch directory failed at `{step}`: {source}")]
    Scratch {
        /// What was being done.
        step: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A command that builds the scratch directory failed.
    #[error("building the scratch directory failed at `{step}`: {stderr}")]
    ScratchCommand {
        /// The command.
        step: String,
        /// What it said.
        stderr: String,
    },
    /// A batch's files could not be written or read.
    #[error("the batch directory failed at `{step}`: {source}")]
    Batch {
        /// What was being done.
        step: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// How long a command may run and how much it may print.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Each command's time limit; past it the command's process group is stopped.
    pub timeout: Duration,
    /// Bytes of output kept; a command printing more is cut (and gets `SIGPIPE`).
    pub output_cap: usize,
}

/// One command to run under one interpreter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Job {
    /// The command, as `sh -c` gets it.
    pub command: String,
    /// The interpreter.
    pub shell: Shell,
}

/// What one traced run left behind.
#[derive(Clone, Debug)]
pub struct Traced {
    /// The system calls.
    pub calls: Vec<Call>,
    /// Whether the command ended or was stopped at its time limit.
    pub ending: Ending,
}

/// What a trace records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceMode {
    /// The calls that can change something (`TRACED`), descriptors as numbers: the
    /// judge's trace.
    Changes,
    /// Those, and the `stat` family, with the path behind each descriptor (`strace -y`): what
    /// a command reads and where, about twice as slow (the secret-read table's trace).
    Reads,
}

/// The calls a [`TraceMode::Reads`] trace adds: a read of a path that is not here shows as
/// a failed `stat` of it.
const READ_CALLS: &[&str] = &[
    "stat",
    "lstat",
    "newfstatat",
    "statx",
    "access",
    "faccessat",
    "faccessat2",
];

/// Host files that hold secrets (SECRET-1): inside the sandbox each is an empty file, so a
/// command opens the path and reads nothing real.
const MASKED_FILES: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
];

/// Host directories that hold secrets: inside the sandbox each is an empty directory.
const MASKED_DIRS: &[&str] = &[
    "/root",
    "/home",
    "/etc/ssl/private",
    "/etc/letsencrypt",
    "/etc/kubernetes",
];

/// A sandbox factory: the scratch directory, the limits and the driver, shared by every
/// batch.
pub struct Sandbox {
    scratch: tempfile::TempDir,
    /// Holds the stand-in files bound over the host's secret files.
    mask: tempfile::TempDir,
    limits: Limits,
    driver: PathBuf,
}

impl Sandbox {
    /// Checks the tools, builds the scratch directory and proves that a sandbox starts.
    /// `driver` is the oracle's own binary, which runs each batch inside the sandbox
    /// (`nomos-oracle --drive DIR`, see [`crate::driver`]).
    pub fn new(limits: Limits, driver: PathBuf) -> Result<Sandbox, SandboxError> {
        for (tool, package) in TOOLS {
            if !on_path(tool) {
                return Err(SandboxError::Missing { tool, package });
            }
        }
        let scratch = tempfile::Builder::new()
            .prefix("nomos-oracle-scratch")
            .tempdir()
            .map_err(|source| SandboxError::Scratch {
                step: "create the scratch directory".to_owned(),
                source,
            })?;
        scratch::build(scratch.path())?;
        let mask = tempfile::Builder::new()
            .prefix("nomos-oracle-mask")
            .tempdir()
            .map_err(|source| SandboxError::Scratch {
                step: "create the mask directory".to_owned(),
                source,
            })?;

        let sandbox = Sandbox {
            scratch,
            mask,
            limits,
            driver,
        };
        let probe = Job {
            command: "true".to_owned(),
            shell: Shell::Sh,
        };
        let (outcomes, stderr) =
            sandbox.run_batch_with_errors(std::slice::from_ref(&probe), TraceMode::Changes)?;
        let started = outcomes
            .first()
            .and_then(Option::as_ref)
            .is_some_and(|traced| {
                traced
                    .calls
                    .iter()
                    .any(|call| call.name() == Some("execve"))
            });
        if !started {
            return Err(SandboxError::Refused { stderr });
        }
        Ok(sandbox)
    }

    /// The limits every command runs under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Runs `jobs` in one sandbox; a job whose run left no trace (the sandbox died first)
    /// is `None`.
    pub fn run_batch(
        &self,
        jobs: &[Job],
        mode: TraceMode,
    ) -> Result<Vec<Option<Traced>>, SandboxError> {
        Ok(self.run_batch_with_errors(jobs, mode)?.0)
    }

    fn run_batch_with_errors(
        &self,
        jobs: &[Job],
        mode: TraceMode,
    ) -> Result<(Vec<Option<Traced>>, String), SandboxError> {
        let dir = tempfile::Builder::new()
            .prefix("nomos-oracle-batch")
            .tempdir()
            .map_err(|source| batch_error("create the batch directory", source))?;
        for (idx, job) in jobs.iter().enumerate() {
            write(&dir.path().join(format!("cmd.{idx}")), &job.command)?;
            write(
                &dir.path().join(format!("shell.{idx}")),
                &job.shell.argv().join(" "),
            )?;
        }
        crate::driver::write_settings(
            dir.path(),
            self.limits.timeout,
            self.limits.output_cap,
            &strace_args(mode),
        )
        .map_err(|source| batch_error("write the batch's limits", source))?;
        let mut child = Command::new("bwrap")
            .args(self.bwrap_args(dir.path()))
            .arg(DRIVER)
            .arg("--drive")
            .arg(TRACES)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                fs::File::create(dir.path().join("bwrap.err"))
                    .map_err(|source| batch_error("create bwrap.err", source))?,
            )
            .spawn()
            .map_err(|source| batch_error("start bwrap", source))?;
        let per_job = self.limits.timeout + Duration::from_secs(2);
        let deadline = Instant::now()
            + per_job * u32::try_from(jobs.len()).unwrap_or(u32::MAX)
            + Duration::from_secs(5);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() >= deadline => {
                    // The batch is stuck (a command escaped its process group and holds
                    // the output pipe): the jobs without a status run again on their own.
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                Ok(None) => thread::sleep(Duration::from_millis(5)),
                Err(source) => return Err(batch_error("wait for bwrap", source)),
            }
        }
        let mut outcomes = Vec::with_capacity(jobs.len());
        for idx in 0..jobs.len() {
            let trace = fs::read(dir.path().join(format!("trace.{idx}")));
            let status = fs::read_to_string(dir.path().join(format!("status.{idx}")));
            let outcome = match (trace, status) {
                (Ok(trace), Ok(status)) => Some(Traced {
                    calls: parse_trace(&String::from_utf8_lossy(&trace)),
                    ending: if status.trim() == "124" || status.trim() == "137" {
                        Ending::TimedOut
                    } else {
                        Ending::Finished
                    },
                }),
                // Traced but never given a status: the batch was stopped while it ran.
                (Ok(trace), Err(_)) if !trace.is_empty() => Some(Traced {
                    calls: parse_trace(&String::from_utf8_lossy(&trace)),
                    ending: Ending::TimedOut,
                }),
                _ => None,
            };
            outcomes.push(outcome);
        }
        let stderr = fs::read_to_string(dir.path().join("bwrap.err")).unwrap_or_default();
        Ok((outcomes, stderr))
    }

    /// The host's secrets, hidden: a stand-in file over each secret file (the SSH host keys
    /// among them) and an empty directory over each secret directory and the homes; `/srv`
    /// is an empty directory too, with `/srv/app` in it, where the secret-read table's
    /// commands look for an application's files.
    ///
    /// Each stand-in is a file of its own and not empty: a program may skip a file it knows
    /// to be empty (`tar`) or the same as another (`diff`), and then the trace would not show
    /// the read it makes on a host.
    fn mask_args(&self) -> Vec<String> {
        let mut files: Vec<String> = MASKED_FILES.iter().map(|f| (*f).to_owned()).collect();
        if let Ok(entries) = fs::read_dir("/etc/ssh") {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with("ssh_host_") && name.ends_with("_key") {
                    files.push(format!("/etc/ssh/{name}"));
                }
            }
        }
        files.sort();
        let mut args = Vec::new();
        for (idx, file) in files.into_iter().enumerate() {
            let stand_in = self.mask.path().join(format!("stand-in.{idx}"));
            if Path::new(&file).is_file()
                && fs::write(&stand_in, format!("stand-in for {file}\n")).is_ok()
            {
                args.extend(["--ro-bind".to_owned(), path_text(&stand_in), file]);
            }
        }
        for dir in MASKED_DIRS {
            if Path::new(dir).is_dir() {
                args.extend(["--tmpfs".to_owned(), (*dir).to_owned()]);
            }
        }
        if Path::new("/srv").is_dir() {
            args.extend(["--tmpfs", "/srv", "--dir", "/srv/app"].map(str::to_owned));
        }
        args
    }

    fn bwrap_args(&self, traces: &Path) -> Vec<String> {
        let mut args: Vec<String> = [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--tmpfs",
            "/run",
            "--tmpfs",
            "/var/tmp",
        ]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect();
        args.extend(self.mask_args());
        args.extend([
            "--ro-bind".to_owned(),
            path_text(self.scratch.path()),
            SCRATCH.to_owned(),
            "--bind".to_owned(),
            path_text(traces),
            TRACES.to_owned(),
            // The driver is bound at a fixed path: the directory it was built in may be
            // one the sandbox masks (a target directory under `/root`).
            "--ro-bind".to_owned(),
            path_text(&self.driver),
            DRIVER.to_owned(),
        ]);
        args.extend(
            [
                "--unshare-all",
                "--die-with-parent",
                "--new-session",
                "--clearenv",
                "--setenv",
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "--setenv",
                "HOME",
                "/tmp",
                "--setenv",
                "LANG",
                "C.UTF-8",
                "--setenv",
                "USER",
                "root",
                "--chdir",
                SCRATCH,
            ]
            .iter()
            .map(|arg| (*arg).to_owned()),
        );
        args
    }
}

/// The tracer's options: follow children, filter in the kernel, long strings, and only the
/// calls the judge reads.
fn strace_args(mode: TraceMode) -> Vec<String> {
    let mut traced: Vec<String> = TRACED.iter().map(|name| format!("?{name}")).collect();
    if mode == TraceMode::Reads {
        traced.extend(READ_CALLS.iter().map(|name| format!("?{name}")));
    }
    // Signal lines stay on: with `-e signal=none` strace 6.1 also drops the `+++ killed by
    // SIG +++` line of a process a signal ends, which would read as a cut trace.
    let mut args: Vec<String> = ["--seccomp-bpf", "-f", "-q", "-s", "512"]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect();
    if mode == TraceMode::Reads {
        args.push("-y".to_owned());
    }
    args.push("-e".to_owned());
    args.push(format!("trace={}", traced.join(",")));
    args
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            let candidate: PathBuf = dir.join(tool);
            candidate.is_file()
        })
    })
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn write(path: &Path, text: &str) -> Result<(), SandboxError> {
    fs::write(path, text)
        .map_err(|source| batch_error(&format!("write {}", path.display()), source))
}

fn batch_error(step: &str, source: std::io::Error) -> SandboxError {
    SandboxError::Batch {
        step: step.to_owned(),
        source,
    }
}
