//! Decides from a command's trace whether it changed anything (CLASSIFY-9): the system
//! calls that write, create, rename, link or remove a path, change an attribute, a process,
//! a mount or a kernel setting, signal a process outside the command's own tree, open a
//! network socket, or execute a program the command does not name.
//!
//! The judge reads only the trace and the command's text, never the classifier: a proof must
//! not use the code it proves. Attempts count as much as successes (the sandbox's root is
//! read-only, so most writes fail with `EROFS`; the attempt is what refutes the verdict).
//!
//! What is not a change, and why:
//! * The launcher: the root process's first program may be `env`, which starts the
//!   interpreter with the pinned environment (`/usr/bin/env GIT_OPTIONAL_LOCKS=0 /bin/sh`);
//!   the program it executes is the interpreter.
//! * Opening `/dev/null`, `/dev/tty`, `/dev/std{in,out,err}`, `/dev/fd/N` or
//!   `/proc/self/fd/N` for writing: those are the standard streams and the bit bucket.
//! * The interpreter's own here-document files (`/tmp/sh-thd*`, created and removed by the
//!   shell process itself, never by a program it runs), and bash's `fchmod` of such a file
//!   once written: a shell itself changes the mode of no other descriptor. Such a file is
//!   how the pinned shell makes a standard stream (the command's standard input), which
//!   CLASSIFY-9 excepts.
//!
//! What is a change although it looks harmless: a temporary file a program creates and
//! removes for itself (BusyBox's `diff` copying a pipe to `/tmp/difXXXXXX`, GNU `tac`
//! copying a pipe to `/tmp/tacXXXXXX`, `zgrep --file`'s copy, `sort`'s spill files).
//! CLASSIFY-9 excepts only `/dev/null` and the standard streams; a program's own file in
//! `/tmp` is created, written and removed like any other (it fills the disk, shows in another
//! user's `/tmp`), so the judge counts it and the classifier does not call such a command
//! `read_only`, with one known gap: `sort` spills only once its input outgrows its buffer,
//! which the command's text does not say, so `sort` stays `read_only` and an unbounded input
//! (`yes x | sort`) is refuted (the README's oracle row).
//! * A signal to a process of the command's own tree (every pid in the trace is one: `strace
//!   -f` follows only descendants), to its own process group (`kill 0`), or signal 0, which
//!   sends nothing.
//! * A socket that never leaves the host. `AF_UNIX`/`AF_LOCAL` (local IPC: the docker
//!   socket of `docker ps`, `psql` without a host), `AF_NETLINK` (the kernel: `ss`, `ip addr`)
//!   and `AF_ALG` (the kernel's crypto API) talk to this host only; a netlink *request that
//!   changes* something (`RTM_NEW*`, `RTM_DEL*`, `RTM_SET*`, `SOCK_DESTROY`, audit rule
//!   changes, or a request carrying `NLM_F_CREATE`/`NLM_F_REPLACE`/`NLM_F_EXCL`/
//!   `NLM_F_APPEND`) is still a change.
//! * An IP socket (`AF_INET`, `AF_INET6`) that is never pointed at an address: `ifconfig`,
//!   `arp`, `netstat -i` and `ip -6 addr` open one only to ask the kernel about interfaces
//!   (`ioctl`s, judged on their own). An IP socket reaches a network when it is connected,
//!   bound or sent to an address (`connect`, `bind`, `sendto`, `sendmsg`, `sendmmsg` with an
//!   `AF_INET`/`AF_INET6` address: a DNS lookup, a TCP connection, a loopback server all
//!   count, attempts included, since the sandbox has no network), and a raw one
//!   (`SOCK_RAW`, `SOCK_PACKET`) as soon as it exists, since it sends and sees packets of
//!   the wire. Every other family leaves the host as soon as it exists: `AF_PACKET` (the
//!   link layer), `AF_VSOCK` (a hypervisor or a guest), `AF_BLUETOOTH`, `AF_CAN`,
//!   `AF_TIPC`, `AF_XDP`, ... and any family the trace names by number; a family is counted
//!   unless it is one of the local ones above.
//! * Executing a program is seen when the command's text names it (its basename or its
//!   `argv[0]` is one of the command's words, substitutions and quoted strings included),
//!   when it is the dynamic loader, a `NAME-VERB` plugin of a named program and verb
//!   (`docker compose` runs `docker-compose`), or a helper in [`HELPERS`]: programs a named
//!   reader runs as its own implementation (the `z*` scripts run `gzip`, `man` runs its
//!   formatters). A helper is still traced, so whatever it writes refutes the command too.
//!   No terminal is attached (like Nomos's SSH exec requests), so pagers do not start; if
//!   one does, it is an unseen program unless the command names it.
//! * The sockets of `ssh` when the command names `ssh` as a word of its own (`ssh HOST
//!   CMD`, `/usr/bin/ssh`, not a part of a URL such as `git+ssh://`): that is the transport
//!   Nomos itself uses (CLASSIFY-2), and the remote command is what the classifier reads;
//!   the sandbox has no network, so the remote side is never run. A program that starts
//!   `ssh` unseen (`scp`, `rsync HOST:PATH`, `tar -f HOST:PATH`, `git fetch
//!   ssh://HOST/REPO`) is refuted by that `execve`, and its connection too.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::trace::{Call, Event, string_arg};

/// What apt runs as part of itself: dpkg, its configuration reader, and its acquire methods.
const APT_HELPERS: &[&str] = &[
    "dpkg",
    "apt-config",
    "http",
    "https",
    "file",
    "copy",
    "store",
    "gpgv",
    "rred",
    "cdrom",
    "mirror",
];

/// Programs a named program runs as part of itself: `(program, helpers)`. A helper ending in
/// `*` is a prefix.
pub const HELPERS: &[(&str, &[&str])] = &[
    ("egrep", &["grep"]),
    ("fgrep", &["grep"]),
    ("rgrep", &["grep"]),
    ("zcat", &["gzip"]),
    ("zgrep", &["gzip", "grep", "sed", "expr", "mktemp", "rm"]),
    ("zegrep", &["zgrep", "gzip", "grep", "sed", "expr"]),
    ("zfgrep", &["zgrep", "gzip", "grep", "sed", "expr"]),
    // `zless` sets `LESSOPEN` to a `gzip` pipe, which `less` starts through `sh`.
    ("zless", &["gzip", "less", "sh"]),
    ("zmore", &["gzip", "more"]),
    ("zdiff", &["gzip", "diff", "cmp", "zcmp"]),
    ("zcmp", &["zdiff", "gzip", "diff", "cmp"]),
    ("zhead", &["gzip", "head"]),
    ("gunzip", &["gzip"]),
    ("uncompress", &["gzip"]),
    (
        "man",
        &[
            "preconv", "tbl", "nroff", "groff", "troff", "grotty", "eqn", "neqn", "pic", "refer",
            "col", "zsoelim", "manconv", "gzip", "cat", "less", "pager", "more", "whatis",
            "apropos", "locale",
        ],
    ),
    // apt starts its acquire methods (`/usr/lib/apt/methods/http`, ...) to read their
    // capabilities even for a simulation; a method that reached the network would still
    // be refuted by its own sockets.
    ("apt", APT_HELPERS),
    ("apt-get", APT_HELPERS),
    ("apt-cache", APT_HELPERS),
    ("dpkg", &["dpkg-query", "dpkg-deb"]),
    ("lsb_release", &["python3*"]),
    // `service` finds its name and cleans the environment; the init script it then runs is
    // not one of its helpers.
    ("service", &["basename", "env", "systemctl"]),
    ("git", &["git", "git-*"]),
    // `tar -z`, `-j`, `-J`, ... and `--auto-compress` run the compressor.
    (
        "tar",
        &[
            "gzip", "bzip2", "xz", "lzip", "lzma", "lzop", "zstd", "compress", "gunzip",
        ],
    ),
    // Debian's `yq` is a `jq` wrapper.
    ("yq", &["jq", "python3*"]),
];

/// The class of a change a trace shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Breach {
    /// A file opened for writing (`O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_TRUNC`, `O_APPEND`).
    WritesFile,
    /// A path created, renamed, linked or removed.
    ChangesPath,
    /// A mode, owner, time stamp, extended attribute or size changed.
    ChangesAttribute,
    /// Another process traced, written or re-prioritised.
    ChangesProcess,
    /// A mount, unmount or swap change.
    ChangesMount,
    /// A kernel setting: host name, clock, modules, reboot, a device's state.
    ChangesKernel,
    /// A signal to a process outside the command's own tree.
    SignalsOutside,
    /// A socket that reaches a network (see the module comment), or a netlink request that
    /// changes something.
    OpensSocket,
    /// A program the command does not name executed.
    ExecutesUnseen,
    /// The trace ended before the command did: the command killed its tracer or sandbox.
    TraceCut,
}

impl Breach {
    /// The stable spelling used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Breach::WritesFile => "writes a file",
            Breach::ChangesPath => "creates, renames, links or removes a path",
            Breach::ChangesAttribute => "changes an attribute",
            Breach::ChangesProcess => "changes another process",
            Breach::ChangesMount => "changes a mount",
            Breach::ChangesKernel => "changes a kernel setting",
            Breach::SignalsOutside => "signals a process outside its own",
            Breach::OpensSocket => "opens a network socket",
            Breach::ExecutesUnseen => "executes a program the command does not name",
            Breach::TraceCut => "ended its own trace",
        }
    }
}

impl fmt::Display for Breach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One change a trace shows, with the system call that made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What kind of change.
    pub breach: Breach,
    /// The trace line of the system call (or a note for a cut trace).
    pub syscall: String,
    /// The program that made the call (for an execution, the program executed); empty
    /// when the trace does not say.
    pub program: String,
}

/// How a traced run ended, as far as the judge needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The command ended by itself (or its output was cut).
    Finished,
    /// The run was stopped at its time limit, so a missing end of trace says nothing.
    TimedOut,
}

/// Every change the trace of `command` shows.
pub fn judge(command: &str, calls: &[Call], ending: Ending) -> Vec<Finding> {
    let Some(root) = calls.first().map(|call| call.pid) else {
        return vec![Finding {
            breach: Breach::TraceCut,
            syscall: "the trace is empty".to_owned(),
            program: String::new(),
        }];
    };
    let named = named_words(command);
    let words = program_words(command);
    let tree: HashSet<u32> = calls.iter().map(|call| call.pid).collect();
    let mut programs: HashMap<u32, String> = HashMap::new();
    let parents: HashMap<u32, u32> = calls
        .iter()
        .filter(|call| matches!(call.name(), Some("clone" | "clone3" | "fork" | "vfork")))
        .filter_map(|call| {
            let child = u32::try_from(call.returned()?).ok()?;
            Some((child, call.pid))
        })
        .collect();
    let mut interpreter = String::new();
    let mut root_started = false;
    let mut launched = false;
    let mut root_exited = false;
    let mut findings = Vec::new();
    for call in calls {
        let Event::Syscall { name, .. } = &call.event else {
            if call.pid == root {
                root_exited = true;
            }
            continue;
        };
        // A child's first calls can come before its parent's `clone` returns in the trace:
        // until the child executes a program of its own, it runs its parent's.
        if !programs.contains_key(&call.pid)
            && let Some(parent) = parents.get(&call.pid)
            && let Some(inherited) = programs.get(parent).cloned()
        {
            programs.insert(call.pid, inherited);
        }
        let program = programs.get(&call.pid).cloned().unwrap_or_default();
        let cx = Cx {
            call,
            program: &program,
            interpreter: &interpreter,
            tree: &tree,
            named: &named,
            words: &words,
        };
        match name.as_str() {
            "clone" | "clone3" | "fork" | "vfork" => {
                if let Some(child) = call.returned().and_then(|pid| u32::try_from(pid).ok()) {
                    programs.entry(child).or_insert_with(|| program.clone());
                }
            }
            "execve" | "execveat" => {
                let path_idx = usize::from(name == "execveat");
                let path = call.arg(path_idx).and_then(string_arg).unwrap_or_default();
                let base = basename(&path).to_owned();
                if call.pid == root && !root_started {
                    // `/usr/bin/env VAR=VALUE SHELL` starts every pinned shell (its
                    // environment, `Shell::argv`): the interpreter is what `env` executes,
                    // once its search of `PATH` (`busybox`) finds it.
                    let searching = launched && call.returned() != Some(0);
                    if (launched || base != "env") && !searching {
                        root_started = true;
                        interpreter.clone_from(&base);
                    }
                    launched = true;
                } else if !exec_is_seen(&cx, &base, call.arg(path_idx + 1)) {
                    let mut finding = cx.finding(Breach::ExecutesUnseen);
                    finding.program.clone_from(&base);
                    findings.push(finding);
                }
                if call.returned() == Some(0) {
                    programs.insert(call.pid, base);
                }
            }
            _ => {
                if let Some(breach) = breach_of(&cx, name) {
                    findings.push(cx.finding(breach));
                }
            }
        }
    }
    if !root_exited && ending == Ending::Finished {
        findings.push(Finding {
            breach: Breach::TraceCut,
            syscall: "the trace ends before the shell exited".to_owned(),
            program: interpreter,
        });
    }
    findings
}

struct Cx<'a> {
    call: &'a Call,
    program: &'a str,
    interpreter: &'a str,
    tree: &'a HashSet<u32>,
    named: &'a HashSet<String>,
    words: &'a HashSet<String>,
}

impl Cx<'_> {
    fn finding(&self, breach: Breach) -> Finding {
        Finding {
            breach,
            syscall: self.call.line.clone(),
            program: self.program.to_owned(),
        }
    }

    fn arg(&self, idx: usize) -> &str {
        self.call.arg(idx).unwrap_or("")
    }

    fn path(&self, idx: usize) -> String {
        string_arg(self.arg(idx)).unwrap_or_default()
    }

    /// Whether a pid argument names the caller itself, its tree or its group.
    fn pid_is_own(&self, idx: usize) -> bool {
        match self.arg(idx).parse::<i64>() {
            Ok(0) => true,
            Ok(pid) if pid > 0 => u32::try_from(pid).is_ok_and(|pid| self.tree.contains(&pid)),
            Ok(-1) => false,
            Ok(group) => u32::try_from(-group).is_ok_and(|pid| self.tree.contains(&pid)),
            Err(_) => false,
        }
    }

    /// Whether the call is the interpreter's own (not a program it runs).
    fn is_interpreter(&self) -> bool {
        !self.interpreter.is_empty() && self.program == self.interpreter
    }

    fn is_heredoc_file(&self, path: &str) -> bool {
        !self.interpreter.is_empty()
            && self.program == self.interpreter
            && path.starts_with("/tmp/sh-thd")
    }
}

fn breach_of(cx: &Cx<'_>, name: &str) -> Option<Breach> {
    match name {
        "open" | "creat" => open_breach(cx, 0, if name == "creat" { None } else { Some(1) }),
        "openat" => open_breach(cx, 1, Some(2)),
        "openat2" => open_breach(cx, 1, Some(2)),
        "unlink" | "rmdir" => (!cx.is_heredoc_file(&cx.path(0))).then_some(Breach::ChangesPath),
        "unlinkat" => (!cx.is_heredoc_file(&cx.path(1))).then_some(Breach::ChangesPath),
        "rename" | "renameat" | "renameat2" | "link" | "linkat" | "symlink" | "symlinkat"
        | "mkdir" | "mkdirat" | "mknod" | "mknodat" => Some(Breach::ChangesPath),
        "fchmod" if cx.is_interpreter() => None,
        "chmod" | "fchmod" | "fchmodat" | "fchmodat2" | "chown" | "fchown" | "lchown"
        | "fchownat" | "utime" | "utimes" | "utimensat" | "futimesat" | "setxattr"
        | "lsetxattr" | "fsetxattr" | "setxattrat" | "removexattr" | "lremovexattr"
        | "fremovexattr" | "removexattrat" | "truncate" => Some(Breach::ChangesAttribute),
        "mount" | "umount" | "umount2" | "pivot_root" | "move_mount" | "fsmount"
        | "mount_setattr" | "swapon" | "swapoff" | "chroot" => Some(Breach::ChangesMount),
        "sethostname" | "setdomainname" | "settimeofday" | "clock_settime" | "clock_adjtime"
        | "reboot" | "init_module" | "finit_module" | "delete_module" | "kexec_load"
        | "kexec_file_load" | "acct" => Some(Breach::ChangesKernel),
        "adjtimex" => (!cx.arg(0).contains("modes=0,")).then_some(Breach::ChangesKernel),
        "syslog" => {
            let action = cx.arg(0);
            (action.contains("CLEAR") || action.contains("CONSOLE"))
                .then_some(Breach::ChangesKernel)
        }
        "quotactl" => {
            let cmd = cx.arg(0);
            (cmd.contains("Q_SET")
                || cmd.contains("QUOTAON")
                || cmd.contains("QUOTAOFF")
                || cmd.contains("Q_XQUOTARM"))
            .then_some(Breach::ChangesKernel)
        }
        "bpf" => {
            let cmd = cx.arg(0);
            [
                "LOAD", "CREATE", "UPDATE", "DELETE", "ATTACH", "DETACH", "PIN", "FREEZE",
            ]
            .iter()
            .any(|verb| cmd.contains(verb))
            .then_some(Breach::ChangesKernel)
        }
        "ioctl" => ioctl_changes(cx.arg(1)).then_some(Breach::ChangesKernel),
        "ptrace" | "process_vm_writev" | "pidfd_send_signal" => Some(Breach::ChangesProcess),
        "setpriority" | "ioprio_set" => (!cx.pid_is_own(1)).then_some(Breach::ChangesProcess),
        "sched_setscheduler" | "sched_setparam" | "sched_setaffinity" | "sched_setattr"
        | "migrate_pages" | "move_pages" => (!cx.pid_is_own(0)).then_some(Breach::ChangesProcess),
        "prlimit64" => (!cx.pid_is_own(0) && cx.arg(2) != "NULL").then_some(Breach::ChangesProcess),
        "kill" | "tkill" | "rt_sigqueueinfo" => signal_breach(cx, 0, 1),
        "tgkill" | "rt_tgsigqueueinfo" => signal_breach(cx, 0, 2),
        // The SSH transport's own connection: the remote command is what the command runs
        // and what is classified; it cannot be traced here (the sandbox has no network).
        "socket" | "connect" | "bind" | "sendto" | "sendmsg" | "sendmmsg"
            if cx.program == "ssh" && cx.words.contains("ssh") =>
        {
            None
        }
        "socket" => socket_reaches_network(cx.arg(0), cx.arg(1)).then_some(Breach::OpensSocket),
        "connect" | "bind" => addresses_network(&cx.call.line).then_some(Breach::OpensSocket),
        "sendto" | "sendmsg" | "sendmmsg" => (netlink_changes(cx.arg(1))
            || addresses_network(&cx.call.line))
        .then_some(Breach::OpensSocket),
        _ => None,
    }
}

fn open_breach(cx: &Cx<'_>, path_idx: usize, flags_idx: Option<usize>) -> Option<Breach> {
    let path = cx.path(path_idx);
    let writes = match flags_idx {
        None => true,
        Some(idx) => cx
            .arg(idx)
            .split(['|', ',', '=', '{', '}', ' '])
            .any(|flag| {
                matches!(
                    flag,
                    "O_WRONLY" | "O_RDWR" | "O_CREAT" | "O_TRUNC" | "O_APPEND"
                )
            }),
    };
    // `O_TMPFILE` makes a file with no name, which is gone when it is closed; giving it a
    // name takes a `linkat`, which is judged on its own.
    let unnamed = cx
        .arg(flags_idx.unwrap_or(usize::MAX))
        .contains("O_TMPFILE");
    if !writes || unnamed || harmless_stream(&path) || cx.is_heredoc_file(&path) {
        return None;
    }
    Some(Breach::WritesFile)
}

/// The standard streams and the bit bucket.
fn harmless_stream(path: &str) -> bool {
    const FIXED: &[&str] = &[
        "/dev/null",
        "/dev/tty",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
    ];
    if FIXED.contains(&path) {
        return true;
    }
    ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"]
        .iter()
        .any(|prefix| {
            path.strip_prefix(prefix)
                .is_some_and(|fd| !fd.is_empty() && fd.chars().all(|c| c.is_ascii_digit()))
        })
}

fn signal_breach(cx: &Cx<'_>, pid_idx: usize, sig_idx: usize) -> Option<Breach> {
    if cx.arg(sig_idx) == "0" || cx.pid_is_own(pid_idx) {
        return None;
    }
    Some(Breach::SignalsOutside)
}

/// `ioctl` requests that change a device, a file's flags or a network interface.
fn ioctl_changes(request: &str) -> bool {
    const EXACT: &[&str] = &[
        "RTC_SET_TIME",
        "RTC_ALM_SET",
        "RTC_WKALM_SET",
        "RTC_IRQP_SET",
        "RTC_EPOCH_SET",
        "TIOCSTI",
        "TIOCCONS",
        "FS_IOC_SETFLAGS",
        "FS_IOC_FSSETXATTR",
        "FS_IOC_SETVERSION",
        "FIFREEZE",
        "FITHAW",
        "FITRIM",
        "BLKRRPART",
        "BLKDISCARD",
        "BLKSECDISCARD",
        "BLKZEROOUT",
        "BLKPG",
        "BLKFLSBUF",
        "BLKRESETZONE",
        "TUNSETIFF",
        "TUNSETPERSIST",
        "LOOP_SET_FD",
        "LOOP_CLR_FD",
        "LOOP_CONFIGURE",
        "LOOP_CTL_ADD",
        "LOOP_CTL_REMOVE",
        "VT_ACTIVATE",
        "KDSETMODE",
    ];
    let request = request.trim();
    EXACT.contains(&request)
        || request.starts_with("SIOCS")
        || request.starts_with("SIOCADD")
        || request.starts_with("SIOCDEL")
        || (request.starts_with("BLK") && request.contains("SET"))
}

/// Whether a netlink message in a `sendto`/`sendmsg` argument asks for a change.
fn netlink_changes(message: &str) -> bool {
    if !message.contains("nlmsg_type=") || is_newlink_probe(message) {
        return false;
    }
    let mut rest = message;
    while let Some(at) = rest.find("nlmsg_type=") {
        rest = &rest[at + "nlmsg_type=".len()..];
        let kind: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let changing = [
            "RTM_NEW",
            "RTM_DEL",
            "RTM_SET",
            "AUDIT_SET",
            "AUDIT_ADD",
            "AUDIT_DEL",
        ]
        .iter()
        .any(|prefix| kind.starts_with(prefix))
            || kind == "SOCK_DESTROY"
            || kind.starts_with("AUDIT_TTY_SET");
        if changing {
            return true;
        }
    }
    [
        "NLM_F_CREATE",
        "NLM_F_REPLACE",
        "NLM_F_EXCL",
        "NLM_F_APPEND",
    ]
    .iter()
    .any(|flag| message.contains(flag))
}

/// Socket families that never leave the host: local IPC, the kernel's netlink and crypto
/// interfaces.
pub const LOCAL_FAMILIES: &[&str] = &[
    "AF_UNIX",
    "AF_LOCAL",
    "AF_FILE",
    "AF_NETLINK",
    "AF_ROUTE",
    "AF_ALG",
];

/// The IP families: a socket of one reaches a network once it is given an address (or is raw).
const IP_FAMILIES: &[&str] = &["AF_INET", "AF_INET6"];

/// Whether `socket(domain, type, ...)` reaches a network by existing: a raw IP socket, or
/// any family that is neither local nor IP.
fn socket_reaches_network(domain: &str, kind: &str) -> bool {
    let domain = domain.trim();
    if LOCAL_FAMILIES.contains(&domain) {
        return false;
    }
    if IP_FAMILIES.contains(&domain) {
        return kind
            .split(['|', ' '])
            .any(|flag| matches!(flag, "SOCK_RAW" | "SOCK_PACKET"));
    }
    true
}

/// Whether a socket address in a call's arguments is one of a family that reaches a
/// network (`sa_family=AF_INET`, `AF_INET6`, or any family that is not local).
fn addresses_network(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find("sa_family=") {
        rest = &rest[at + "sa_family=".len()..];
        let family: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // `AF_UNSPEC` on `connect` dissolves an association; it sends nothing.
        if !family.is_empty() && family != "AF_UNSPEC" && !LOCAL_FAMILIES.contains(&family.as_str())
        {
            return true;
        }
    }
    false
}

/// iproute2's probe of the kernel's link support: an `RTM_NEWLINK` with no attributes
/// (32 bytes: the header and an empty `ifinfomsg`), no interface (`ifi_index=0`) and no
/// create flag, which the kernel refuses; it names nothing it could change.
fn is_newlink_probe(message: &str) -> bool {
    message.matches("nlmsg_type=").count() == 1
        && message.contains("nlmsg_len=32,")
        && message.contains("nlmsg_type=RTM_NEWLINK,")
        && message.contains("ifi_index=0,")
        && message.contains("ifi_change=0}")
        && ![
            "NLM_F_CREATE",
            "NLM_F_REPLACE",
            "NLM_F_EXCL",
            "NLM_F_APPEND",
        ]
        .iter()
        .any(|flag| message.contains(flag))
}

fn exec_is_seen(cx: &Cx<'_>, base: &str, argv: Option<&str>) -> bool {
    if cx.named.contains(base) || base.starts_with("ld-linux") || base.starts_with("ld.so") {
        return true;
    }
    let argv0 = argv
        .and_then(|argv| argv.strip_prefix('['))
        .and_then(|argv| {
            crate::trace::split_args(argv.trim_end_matches(']'))
                .first()
                .cloned()
        })
        .and_then(|first| string_arg(&first))
        .unwrap_or_default();
    if cx.named.contains(basename(&argv0)) {
        return true;
    }
    if let Some((program, verb)) = base.split_once('-')
        && cx.named.contains(program)
        && cx.named.contains(verb)
    {
        return true;
    }
    HELPERS.iter().any(|(program, helpers)| {
        (*program == cx.program || cx.named.contains(*program))
            && helpers.iter().any(|helper| match helper.strip_suffix('*') {
                Some(prefix) => base.starts_with(prefix),
                None => *helper == base,
            })
    })
}

/// How many quoting levels of nested scripts (`bash -c '...'` in `sh -c "..."`) the judge
/// reads through for ANSI-C strings.
const NESTED_LEVELS: usize = 4;

/// Every word of a command's text, quoted strings and substitutions included, split at
/// anything that cannot be part of a program's name; path words give their parts too, the
/// text of an ANSI-C string gives its decoded words (`$'\x6c\x73'` names `ls`), also when
/// it is quoted inside the script of a nested shell (in `bash -c '$'\''\x6c\x73'\'''` the
/// `bash` reads the string once the outer shell removed a level of quotes), and `[` or `:`
/// standing alone is a word (`xargs :` runs `:`).
pub fn named_words(command: &str) -> HashSet<String> {
    let mut levels = vec![command.to_owned()];
    for _ in 0..NESTED_LEVELS {
        let Some(last) = levels.last() else { break };
        let next = unquote_once(last);
        if next == *last {
            break;
        }
        levels.push(next);
    }
    let decoded: Vec<String> = levels.iter().map(|text| ansi_c_strings(text)).collect();
    let mut words: HashSet<String> = levels
        .iter()
        .chain(&decoded)
        .flat_map(|text| {
            text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '+' | '-')))
        })
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect();
    // A word of punctuation alone names a program too: `[`, and `:` run by `xargs :`.
    for level in &levels {
        for word in level.split_whitespace() {
            if matches!(word, "[" | ":" | "[[") {
                words.insert(word.to_owned());
            }
        }
    }
    words
}

/// `text` with one level of POSIX quotes removed, as a shell does before it hands a word to
/// a nested shell: `'...'` is taken as it is, `"..."` keeps its text with `\$`, `` \` ``,
/// `\"` and `\\` unescaped, and an unquoted `\c` is `c`.
fn unquote_once(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                for inner in chars.by_ref() {
                    if inner == '\'' {
                        break;
                    }
                    out.push(inner);
                }
            }
            '"' => {
                while let Some(inner) = chars.next() {
                    match inner {
                        '"' => break,
                        '\\' => match chars.peek() {
                            Some(&next @ ('$' | '`' | '"' | '\\')) => {
                                out.push(next);
                                chars.next();
                            }
                            _ => out.push('\\'),
                        },
                        other => out.push(other),
                    }
                }
            }
            '\\' => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The decoded text of every `$'...'` string of `command` (`\xHH`, `\NNN` octal, and the
/// one-letter escapes), joined by blanks.
fn ansi_c_strings(command: &str) -> String {
    let mut out = String::new();
    let mut rest = command;
    while let Some(at) = rest.find("$'") {
        rest = &rest[at + 2..];
        let mut chars = rest.char_indices();
        let mut end = rest.len();
        while let Some((idx, c)) = chars.next() {
            match c {
                '\'' => {
                    end = idx + 1;
                    break;
                }
                '\\' => {
                    let tail = &rest[idx + 1..];
                    let (radix, digits) = if let Some(hex) = tail.strip_prefix('x') {
                        (
                            16,
                            hex.chars()
                                .take_while(char::is_ascii_hexdigit)
                                .take(2)
                                .collect::<String>(),
                        )
                    } else {
                        (
                            8,
                            tail.chars()
                                .take_while(|c| c.is_digit(8))
                                .take(3)
                                .collect::<String>(),
                        )
                    };
                    match u32::from_str_radix(&digits, radix)
                        .ok()
                        .and_then(char::from_u32)
                    {
                        Some(decoded) => {
                            out.push(decoded);
                            let skip = digits.len() + usize::from(radix == 16);
                            for _ in 0..skip {
                                chars.next();
                            }
                        }
                        None => {
                            if let Some((_, escaped)) = chars.next() {
                                out.push(escaped);
                            }
                        }
                    }
                }
                c => out.push(c),
            }
        }
        out.push(' ');
        rest = &rest[end.min(rest.len())..];
    }
    out
}

/// The basenames of the command's whole words, split at blanks and shell operators only and
/// read with their quotes and backslashes removed, so `ssh` is one for `ssh HOST`, `\ssh`,
/// `'ssh'` and `/usr/bin/ssh`, but not for `git+ssh://HOST`.
pub fn program_words(command: &str) -> HashSet<String> {
    command
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    ';' | '|' | '&' | '(' | ')' | '<' | '>' | '`' | '$' | '{' | '}'
                )
        })
        .map(|word| word.replace(['\\', '\'', '"'], ""))
        .filter(|word| !word.is_empty() && !word.contains(':'))
        .map(|word| basename(&word).to_owned())
        .collect()
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse_trace;

    fn breaches(command: &str, trace: &str) -> Vec<Breach> {
        judge(command, &parse_trace(trace), Ending::Finished)
            .into_iter()
            .map(|finding| finding.breach)
            .collect()
    }

    const START: &str = "5 execve(\"/bin/sh\", [\"/bin/sh\", \"-c\", \"x\"], 0x1) = 0\n";
    const END: &str = "5 +++ exited with 0 +++\n";

    #[test]
    fn a_write_open_is_a_breach_and_dev_null_is_not() {
        let trace = format!(
            "{START}5 openat(AT_FDCWD, \"/dev/null\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3\n\
             5 openat(AT_FDCWD, \"/etc/passwd\", O_RDONLY|O_CLOEXEC) = 3\n\
             5 openat(AT_FDCWD, \"out\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EROFS (x)\n{END}"
        );
        assert_eq!(breaches("echo > out", &trace), vec![Breach::WritesFile]);
    }

    #[test]
    fn a_signal_inside_the_tree_is_fine_and_outside_it_is_a_breach() {
        let trace = format!(
            "{START}5 clone(child_stack=NULL, flags=SIGCHLD) = 6\n6 +++ exited with 0 +++\n\
             5 kill(6, SIGTERM) = 0\n5 kill(5, 0) = 0\n5 kill(0, SIGHUP) = 0\n\
             5 kill(1, SIGTERM) = 0\n{END}"
        );
        assert_eq!(breaches("kill 1", &trace), vec![Breach::SignalsOutside]);
    }

    #[test]
    fn an_unnamed_program_is_a_breach_and_a_named_one_is_not() {
        let trace = format!(
            "{START}5 vfork() = 6\n6 execve(\"/usr/bin/ls\", [\"ls\"], 0x1) = 0\n\
             6 execve(\"/bin/sh\", [\"sh\", \"-c\", \"id\"], 0x1) = 0\n{END}"
        );
        let found = judge("echo $(ls)", &parse_trace(&trace), Ending::Finished);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].breach, Breach::ExecutesUnseen);
        assert!(found[0].syscall.contains("/bin/sh"), "{found:?}");
    }

    #[test]
    fn an_ansi_c_string_and_a_lone_bracket_name_their_programs() {
        let named = named_words("$'\\x6c\\x73' -l; $'\\143at' x; echo x | xargs [ -f x; xargs : x");
        for word in ["ls", "cat", "[", ":"] {
            assert!(named.contains(word), "{word}: {named:?}");
        }
    }

    // rule: CLASSIFY-9
    #[test]
    fn the_env_launcher_and_its_path_search_start_the_interpreter() {
        let launch = "5 execve(\"/usr/bin/env\", [\"/usr/bin/env\", \"GIT_OPTIONAL_LOCKS=0\", \"busybox\", \"sh\", \"-c\", \"x\"], 0x1) = 0\n\
             5 execve(\"/usr/local/bin/busybox\", [\"busybox\", \"sh\", \"-c\", \"x\"], 0x1) = -1 ENOENT (No such file or directory)\n\
             5 execve(\"/usr/bin/busybox\", [\"busybox\", \"sh\", \"-c\", \"x\"], 0x1) = 0\n";
        let trace =
            format!("{launch}5 vfork() = 6\n6 execve(\"/usr/bin/ls\", [\"ls\"], 0x1) = 0\n{END}");
        assert_eq!(breaches("ls", &trace), vec![]);
        // The interpreter's own here-document file is recognised after the launcher too.
        let trace = format!(
            "{launch}5 openat(AT_FDCWD, \"/tmp/sh-thd.ab12\", O_RDWR|O_CREAT|O_EXCL, 0600) = 3\n{END}"
        );
        assert_eq!(breaches("cat <<EOF", &trace), vec![]);
        // What the interpreter executes after that is judged as before.
        let trace =
            format!("{launch}5 vfork() = 6\n6 execve(\"/usr/bin/id\", [\"id\"], 0x1) = 0\n{END}");
        assert_eq!(breaches("ls", &trace), vec![Breach::ExecutesUnseen]);
    }

    // rule: CLASSIFY-9
    #[test]
    fn an_ansi_c_string_quoted_inside_a_nested_shells_script_names_its_program() {
        for command in [
            r"bash -c '$'\''\x6c\x73'\'' notes.txt'",
            r#"bash -c "\$'\\x6c\\x73' notes.txt""#,
            r#"sh -c 'bash -c "\$'\''\\x6c\\x73'\'' notes.txt"'"#,
        ] {
            let named = named_words(command);
            assert!(named.contains("ls"), "{command}: {named:?}");
        }
        assert!(!named_words(r"bash -c 'echo \x6c\x73'").contains("ls"));
    }

    #[test]
    fn a_helper_of_a_named_program_is_seen() {
        let trace = format!(
            "{START}5 vfork() = 6\n6 execve(\"/usr/bin/zcat\", [\"zcat\", \"a.gz\"], 0x1) = 0\n\
             6 clone() = 7\n7 execve(\"/usr/bin/gzip\", [\"gzip\", \"-cd\"], 0x1) = 0\n{END}"
        );
        assert_eq!(breaches("zcat a.gz", &trace), vec![]);
    }

    // rule: CLASSIFY-9
    #[test]
    fn apts_acquire_method_is_apts_own_but_its_socket_is_not() {
        let method =
            "6 execve(\"/usr/lib/apt/methods/http\", [\"/usr/lib/apt/methods/http\"], 0x1) = 0";
        let trace = format!("{START}5 vfork() = 6\n{method}\n{END}");
        assert_eq!(breaches("apt-get -s upgrade", &trace), vec![]);
        let connected = format!(
            "{START}5 vfork() = 6\n{method}\n6 socket(AF_INET, SOCK_STREAM, IPPROTO_TCP) = 3\n\
             6 connect(3, {{sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr(\"151.101.2.132\")}}, 16) = -1 ENETUNREACH (Network is unreachable)\n{END}"
        );
        assert!(!breaches("apt-get -s upgrade", &connected).is_empty());
        assert!(
            !breaches("cat notes.txt", &trace).is_empty(),
            "only apt's own"
        );
    }

    /// The breaches of one call, inside a trace that starts and ends the shell.
    fn one(command: &str, line: &str) -> Vec<Breach> {
        breaches(command, &format!("{START}{line}\n{END}"))
    }

    // rule: CLASSIFY-9
    #[test]
    fn a_changing_netlink_request_is_a_breach_and_a_query_is_not() {
        let trace = format!(
            "{START}5 socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_ROUTE) = 4\n\
             5 sendto(4, [{{nlmsg_len=40, nlmsg_type=RTM_GETLINK, nlmsg_flags=NLM_F_REQUEST|NLM_F_DUMP}}], 40, 0, NULL, 0) = 40\n\
             5 sendto(4, [{{nlmsg_len=40, nlmsg_type=RTM_NEWADDR, nlmsg_flags=NLM_F_REQUEST}}], 40, 0, NULL, 0) = 40\n{END}"
        );
        assert_eq!(breaches("ip addr", &trace), vec![Breach::OpensSocket]);
    }

    // rule: CLASSIFY-9
    #[test]
    fn an_af_unix_socket_stays_on_the_host() {
        assert_eq!(
            one(
                "docker ps",
                "5 socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0) = 3"
            ),
            vec![]
        );
        assert_eq!(
            one(
                "docker ps",
                "5 connect(3, {sa_family=AF_UNIX, sun_path=\"/var/run/docker.sock\"}, 23) = 0"
            ),
            vec![]
        );
        assert_eq!(one("x", "5 socket(AF_LOCAL, SOCK_DGRAM, 0) = 3"), vec![]);
    }

    // rule: CLASSIFY-9
    #[test]
    fn an_af_netlink_socket_stays_on_the_host() {
        assert_eq!(
            one(
                "ss",
                "5 socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_SOCK_DIAG) = 3"
            ),
            vec![]
        );
        assert_eq!(
            one(
                "ss",
                "5 sendmsg(3, {msg_name={sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, msg_namelen=12, msg_iov=[{iov_base=[{nlmsg_len=72, nlmsg_type=SOCK_DIAG_BY_FAMILY, nlmsg_flags=NLM_F_REQUEST|NLM_F_DUMP, nlmsg_seq=1, nlmsg_pid=0}], iov_len=72}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 72"
            ),
            vec![]
        );
    }

    // rule: CLASSIFY-9
    #[test]
    fn an_af_alg_socket_stays_on_the_host() {
        assert_eq!(one("x", "5 socket(AF_ALG, SOCK_SEQPACKET, 0) = 3"), vec![]);
    }

    // rule: CLASSIFY-9
    #[test]
    fn an_af_inet_socket_reaches_a_network_when_it_is_given_an_address() {
        // `ifconfig` asks the kernel about interfaces through an IP socket it never points
        // anywhere: no network is reached.
        assert_eq!(
            one("ifconfig", "5 socket(AF_INET, SOCK_DGRAM, IPPROTO_IP) = 4"),
            vec![]
        );
        for line in [
            "5 connect(3, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr(\"10.0.0.53\")}, 16) = -1 ENETUNREACH (Network is unreachable)",
            "5 connect(3, {sa_family=AF_INET, sin_port=htons(6379), sin_addr=inet_addr(\"127.0.0.1\")}, 16) = -1 ECONNREFUSED (Connection refused)",
            "5 bind(3, {sa_family=AF_INET, sin_port=htons(0), sin_addr=inet_addr(\"0.0.0.0\")}, 16) = 0",
            "5 sendto(3, \"x\", 1, 0, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr(\"10.0.0.53\")}, 16) = 1",
            "5 sendmmsg(3, [{msg_hdr={msg_name={sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr(\"10.0.0.53\")}, msg_namelen=16}, msg_len=29}], 1, MSG_NOSIGNAL) = 1",
            "5 socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) = 3",
        ] {
            assert_eq!(one("curl x", line), vec![Breach::OpensSocket], "{line}");
        }
    }

    // rule: CLASSIFY-9
    #[test]
    fn an_af_inet6_socket_reaches_a_network_when_it_is_given_an_address() {
        assert_eq!(
            one(
                "ip -6 addr",
                "5 socket(AF_INET6, SOCK_DGRAM, IPPROTO_IP) = 5"
            ),
            vec![]
        );
        for line in [
            "5 connect(3, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, \"::1\", &sin6_addr), sin6_scope_id=0}, 28) = -1 ECONNREFUSED (x)",
            "5 bind(3, {sa_family=AF_INET6, sin6_port=htons(0), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, \"::1\", &sin6_addr), sin6_scope_id=0}, 28) = 0",
            "5 socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6) = 3",
        ] {
            assert_eq!(one("pip list", line), vec![Breach::OpensSocket], "{line}");
        }
    }

    // rule: CLASSIFY-9
    #[test]
    fn an_af_packet_socket_reaches_a_network_as_it_opens() {
        assert_eq!(
            one(
                "tcpdump",
                "5 socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)) = 3"
            ),
            vec![Breach::OpensSocket]
        );
    }

    // rule: CLASSIFY-9
    #[test]
    fn every_other_family_leaves_the_host_as_it_opens() {
        for family in [
            "AF_VSOCK",
            "AF_BLUETOOTH",
            "AF_CAN",
            "AF_TIPC",
            "AF_XDP",
            "AF_RDS",
            "AF_KEY",
            "AF_QIPCRTR",
            "0x2e /* AF_??? */",
        ] {
            let line = format!("5 socket({family}, SOCK_STREAM, 0) = 3");
            assert_eq!(one("x", &line), vec![Breach::OpensSocket], "{family}");
        }
    }

    // rule: CLASSIFY-2
    #[test]
    fn the_ssh_transport_is_not_a_breach_but_ssh_in_a_url_is() {
        let trace = format!(
            "{START}5 vfork() = 6\n6 execve(\"/usr/bin/ssh\", [\"ssh\", \"h\"], 0x1) = 0\n\
             6 socket(AF_INET, SOCK_STREAM, IPPROTO_TCP) = 3\n\
             6 connect(3, {{sa_family=AF_INET, sin_port=htons(22), sin_addr=inet_addr(\"10.0.0.5\")}}, 16) = -1 ENETUNREACH (x)\n{END}"
        );
        assert_eq!(breaches("ssh web1 uptime", &trace), vec![]);
        assert_eq!(breaches("/usr/bin/ssh web1 uptime", &trace), vec![]);
        assert_eq!(breaches("\\ssh web1 uptime", &trace), vec![]);
        assert_eq!(breaches("bash -c 'ssh web1 uptime'", &trace), vec![]);
        // `ssh` in a URL names the program (its `execve` is seen) but not the transport.
        assert_eq!(
            breaches("git fetch ssh://web1/repo", &trace),
            vec![Breach::OpensSocket]
        );
    }

    #[test]
    fn the_shells_here_document_file_is_not_a_write_but_a_programs_is() {
        let trace = format!(
            "5 execve(\"/bin/bash\", [\"/bin/bash\", \"-c\", \"x\"], 0x1) = 0\n\
             5 openat(AT_FDCWD, \"/tmp/sh-thd.ab12\", O_RDWR|O_CREAT|O_EXCL, 0600) = 3\n\
             5 unlink(\"/tmp/sh-thd.ab12\") = 0\n\
             5 vfork() = 6\n6 execve(\"/usr/bin/cat\", [\"cat\"], 0x1) = 0\n\
             6 openat(AT_FDCWD, \"/tmp/sh-thd.cd34\", O_WRONLY|O_CREAT, 0600) = 3\n{END}"
        );
        assert_eq!(breaches("cat <<EOF", &trace), vec![Breach::WritesFile]);
    }

    #[test]
    fn bashs_fchmod_of_its_here_string_file_is_not_a_change_but_a_programs_is() {
        let trace = format!(
            "5 execve(\"/bin/bash\", [\"/bin/bash\", \"-c\", \"x\"], 0x1) = 0\n\
             5 openat(AT_FDCWD, \"/tmp/sh-thd.ab12\", O_RDWR|O_CREAT|O_EXCL, 0600) = 3\n\
             5 fchmod(3, 0400) = 0\n\
             5 vfork() = 6\n6 execve(\"/usr/bin/cat\", [\"cat\"], 0x1) = 0\n\
             6 fchmod(0, 0777) = 0\n{END}"
        );
        assert_eq!(
            breaches("cat <<< x", &trace),
            vec![Breach::ChangesAttribute]
        );
    }

    #[test]
    fn an_unnamed_temporary_file_and_iproutes_link_probe_change_nothing() {
        let trace = format!(
            "{START}5 openat(AT_FDCWD, \"/tmp\", O_RDWR|O_EXCL|O_CLOEXEC|O_TMPFILE, 0600) = 4\n\
             5 socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_ROUTE) = 3\n\
             5 sendto(3, [{{nlmsg_len=32, nlmsg_type=RTM_NEWLINK, nlmsg_flags=NLM_F_REQUEST|NLM_F_ACK, nlmsg_seq=0, nlmsg_pid=0}}, {{ifi_family=AF_UNSPEC, ifi_type=ARPHRD_NETROM, ifi_index=0, ifi_flags=0, ifi_change=0}}], 32, 0, NULL, 0) = 32\n{END}"
        );
        assert_eq!(breaches("apt list", &trace), vec![]);
        let named = format!(
            "{START}5 sendto(3, [{{nlmsg_len=32, nlmsg_type=RTM_NEWLINK, nlmsg_flags=NLM_F_REQUEST|NLM_F_ACK, nlmsg_seq=0, nlmsg_pid=0}}, {{ifi_family=AF_UNSPEC, ifi_type=ARPHRD_NETROM, ifi_index=2, ifi_flags=IFF_UP, ifi_change=0x1}}], 32, 0, NULL, 0) = 32\n{END}"
        );
        assert_eq!(breaches("ip link show", &named), vec![Breach::OpensSocket]);
    }

    #[test]
    fn a_trace_that_ends_before_the_shell_is_cut_unless_the_run_timed_out() {
        let trace = format!("{START}5 kill(-1, SIGKILL <unfinished ...>\n");
        assert_eq!(
            breaches("kill -9 -1", &trace),
            vec![Breach::SignalsOutside, Breach::TraceCut]
        );
        let timed_out = judge("sleep 9", &parse_trace(START), Ending::TimedOut);
        assert_eq!(timed_out, vec![]);
    }
}
