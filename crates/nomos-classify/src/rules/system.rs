//! The host itself: `systemctl`, `service`, `journalctl`, power, `kill`, `crontab`, `mount`,
//! users, `sysctl`, `hostname`, `date`, `dmesg`, kernel modules and swap.

use super::super::opts::{Opts, Spec};
use super::super::walk::{Arg, Cx, Subject};
use super::{Verbs, by_verb};
use crate::class::CommandClass;

const SYSTEMCTL: Verbs = Verbs {
    read_only: &[
        "status",
        "is-active",
        "is-enabled",
        "is-failed",
        "is-system-running",
        "list-units",
        "list-unit-files",
        "list-sockets",
        "list-timers",
        "list-jobs",
        "list-dependencies",
        "list-machines",
        "list-automounts",
        "list-paths",
        "show",
        "show-environment",
        "cat",
        "help",
        "get-default",
        "--version",
        "--help",
    ],
    destructive: &[
        "stop",
        "disable",
        "mask",
        "kill",
        "poweroff",
        "reboot",
        "halt",
        "kexec",
        "soft-reboot",
        "emergency",
        "rescue",
        "isolate",
        "suspend",
        "hibernate",
        "hybrid-sleep",
        "suspend-then-hibernate",
        "clean",
        "default",
    ],
    destroys: "stops, disables or removes a unit, or takes the host down",
};

const SYSTEMCTL_SPEC: Spec = Spec {
    short_values: "tpsHMnoP",
    long_values: &[
        "type",
        "property",
        "signal",
        "host",
        "machine",
        "lines",
        "output",
        "state",
        "kill-whom",
        "kill-value",
        "root",
        "job-mode",
        "what",
        "timestamp",
        "boot-loader-entry",
        "reboot-argument",
        "image",
        "drop-in",
        "when",
        "message",
    ],
};

/// Handles host programs; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    match program {
        "systemctl" => {
            by_verb(
                cx,
                args,
                &SYSTEMCTL_SPEC,
                &SYSTEMCTL,
                (CommandClass::ReadOnly, "only lists units"),
            );
        }
        "service" => service(cx, args),
        // Traced, `man` writes formatted pages to its cache and `top` creates its
        // configuration directory; `man -k`/`-f` only search the index.
        "man" => {
            let searches = args[1..].iter().any(|arg| {
                matches!(
                    arg.text,
                    "-k" | "-f" | "--apropos" | "--whatis" | "-w" | "--where"
                )
            });
            if searches {
                cx.read_only(program, "only searches the manual's index");
            } else {
                cx.mutation(program, "writes formatted pages to its cache");
            }
        }
        "top" => cx.mutation(program, "creates its configuration directory"),
        "journalctl" => journalctl(cx, args),
        "shutdown" => {
            let opts = Opts::parse(&args[1..], &Spec::FLAGS_ONLY);
            if opts.short('c') {
                cx.mutation(program, "cancels a scheduled shutdown");
            } else {
                cx.destructive(program, "takes the host down");
            }
        }
        "reboot" | "poweroff" | "halt" => cx.destructive(program, "takes the host down"),
        "init" | "telinit" => match args.get(1).map(|arg| arg.text) {
            Some("0" | "6" | "1" | "s" | "S" | "single") => {
                cx.destructive(program, "takes the host down")
            }
            Some("q" | "Q" | "u" | "U") | None => {
                cx.mutation(program, "re-reads its configuration")
            }
            Some(_) => cx.destructive(program, "switches runlevel"),
        },
        "runlevel" => cx.read_only(program, "only reads"),
        "kill" => kill(cx, args),
        "killall" | "pkill" | "skill" | "xkill" => cx.mutation(program, "signals processes"),
        "killall5" => cx.destructive(program, "kills every process"),
        "crontab" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "u",
                    long_values: &[],
                },
            );
            if opts.short('r') {
                cx.destructive(program, "removes the crontab (-r)");
            } else if opts.short('l') || opts.short('V') {
                cx.read_only(program, "only lists the crontab (-l)");
            } else {
                cx.mutation(program, "edits or replaces the crontab");
            }
        }
        "atq" => cx.read_only(program, "only lists jobs"),
        "at" | "batch" | "atrm" => cx.mutation(program, "schedules or removes jobs"),
        "mount" => {
            let spec = Spec {
                short_values: "tOoLU",
                long_values: &["types", "test-opts", "options", "label", "uuid"],
            };
            let opts = Opts::parse(&args[1..], &spec);
            let only_lists = opts.positionals().next().is_none()
                && !opts.either('a', "all")
                && !opts.short('o')
                && !opts.long("options")
                && !opts.long("move")
                && !opts.long("bind");
            if only_lists {
                cx.read_only(program, "only lists mounts");
            } else {
                cx.mutation(program, "mounts a filesystem");
            }
        }
        "umount" | "swapoff" => cx.mutation(program, "detaches a filesystem or swap"),
        "swapon" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "o",
                    long_values: &["options", "priority"],
                },
            );
            if opts.positionals().next().is_none() && !opts.either('a', "all") {
                cx.read_only(program, "only lists swap");
            } else {
                cx.mutation(program, "enables swap");
            }
        }
        "useradd"
        | "adduser"
        | "usermod"
        | "groupadd"
        | "addgroup"
        | "groupmod"
        | "passwd"
        | "chpasswd"
        | "gpasswd"
        | "chsh"
        | "chfn"
        | "chage"
        | "newusers"
        | "visudo"
        | "update-alternatives"
        | "update-grub"
        | "update-initramfs"
        | "grub-install"
        | "ldconfig"
        | "locale-gen"
        | "dpkg-reconfigure"
        | "timedatectl-set"
        | "a2enmod"
        | "a2dismod"
        | "a2ensite"
        | "a2dissite"
        | "nginx"
        | "apachectl"
        | "certbot"
        | "sysctl-reload" => {
            cx.mutation(program, "changes system configuration");
        }
        "userdel" | "deluser" | "groupdel" | "delgroup" => {
            cx.destructive(program, "deletes accounts")
        }
        "sysctl" => {
            let spec = Spec {
                short_values: "p",
                long_values: &["load", "pattern"],
            };
            let opts = Opts::parse(&args[1..], &spec);
            let sets = opts.either('w', "write")
                || opts.either('p', "load")
                || opts.long("system")
                || opts.positionals().any(|arg| arg.text.contains('='));
            if sets {
                cx.mutation(program, "sets kernel parameters");
            } else {
                cx.read_only(program, "only reads kernel parameters");
            }
        }
        "hostname" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "F",
                    long_values: &["file"],
                },
            );
            if opts.positionals().next().is_some() || opts.either('F', "file") || opts.short('b') {
                cx.mutation(program, "sets the host name");
            } else {
                cx.read_only(program, "only prints the host name");
            }
        }
        "loginctl" => match args.get(1).map(|arg| arg.text) {
            None
            | Some(
                "list-sessions" | "list-users" | "list-seats" | "show-session" | "show-user"
                | "show-seat" | "session-status" | "user-status" | "seat-status",
            ) => {
                cx.read_only(program, "only reads");
            }
            Some("terminate-session" | "terminate-user" | "kill-session" | "kill-user") => {
                cx.destructive(program, "ends sessions");
            }
            Some(_) => cx.mutation(program, "changes sessions"),
        },
        "date" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "dfrI",
                    long_values: &["date", "file", "reference"],
                },
            );
            let sets =
                opts.either('s', "set") || opts.positionals().any(|arg| !arg.text.starts_with('+'));
            if sets {
                cx.mutation(program, "sets the clock");
            } else {
                cx.read_only(program, "only prints the date");
            }
        }
        "hwclock" => {
            let opts = Opts::parse(&args[1..], &Spec::FLAGS_ONLY);
            if opts.either('w', "systohc") || opts.either('s', "hctosys") || opts.long("set") {
                cx.mutation(program, "sets a clock");
            } else {
                cx.read_only(program, "only reads the clock");
            }
        }
        "dmesg" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "fFlns",
                    long_values: &["facility", "file", "level", "console-level", "buffer-size"],
                },
            );
            if opts.either('c', "read-clear")
                || opts.either('C', "clear")
                || opts.short('D')
                || opts.short('E')
                || opts.short('n')
                || opts.long("console-off")
                || opts.long("console-on")
                || opts.long("console-level")
            {
                cx.mutation(program, "clears or reconfigures the kernel log");
            } else {
                cx.read_only(program, "only reads the kernel log");
            }
        }
        "modprobe" | "insmod" | "rmmod" | "depmod" => {
            let opts = Opts::parse(&args[1..], &Spec::FLAGS_ONLY);
            // Only modprobe and depmod honour `-n`; only modprobe shows its configuration.
            let simulates = matches!(program, "modprobe" | "depmod") && opts.either('n', "dry-run");
            let shows = program == "modprobe"
                && (opts.short('c') || opts.long("showconfig") || opts.long("show-depends"));
            if simulates || shows {
                cx.read_only(program, "only shows what it would do");
            } else {
                cx.mutation(program, "loads or unloads kernel modules");
            }
        }
        "modinfo" => cx.read_only(program, "only reads"),
        "stty" => {
            if args.len() == 1
                || args[1..]
                    .iter()
                    .all(|arg| matches!(arg.text, "-a" | "--all" | "-g" | "size"))
            {
                cx.read_only(program, "only prints terminal settings");
            } else {
                cx.mutation(program, "changes terminal settings");
            }
        }
        _ => return false,
    }
    true
}

fn service(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    match (
        args.get(1).map(|arg| arg.text),
        args.get(2).map(|arg| arg.text),
    ) {
        // `--status-all` runs every init script with `status`.
        (Some("--status-all"), _) => cx.mutation(program, "runs every init script (--status-all)"),
        (Some("--help" | "--version"), _) | (None, _) => {
            cx.read_only(program, "only lists services")
        }
        (Some(_), Some(verb @ "status")) => cx.report(
            CommandClass::ReadOnly,
            Subject::Command(program, verb),
            "only reads",
        ),
        (Some(_), Some(verb @ ("stop" | "force-stop"))) => {
            cx.report(
                CommandClass::Destructive,
                Subject::Command(program, verb),
                "stops a service",
            );
        }
        (Some(_), Some(verb)) => cx.report(
            CommandClass::ConfigMutation,
            Subject::Command(program, verb),
            "changes a service",
        ),
        (Some(_), None) => cx.mutation(program, "changes a service"),
    }
}

/// `journalctl`: read-only except the flags that delete, rotate or move journal files.
fn journalctl(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "uptSUnoFbkgIDMm",
        long_values: &[
            "unit",
            "user-unit",
            "priority",
            "identifier",
            "since",
            "until",
            "lines",
            "output",
            "field",
            "boot",
            "grep",
            "directory",
            "file",
            "root",
            "namespace",
            "cursor",
            "after-cursor",
            "output-fields",
            "facility",
            "machine",
        ],
    };
    let opts = Opts::parse(&args[1..], &spec);
    if let Some(flag) = opts.long_prefixed("vacuum-") {
        let predicate = format!("deletes archived journal files (--{flag})");
        cx.destructive(program, &predicate);
        return;
    }
    const CHANGES: [&str; 7] = [
        "rotate",
        "flush",
        "sync",
        "relinquish-var",
        "smart-relinquish-var",
        "setup-keys",
        "update-catalog",
    ];
    if let Some(flag) = CHANGES.iter().find(|flag| opts.long(flag)) {
        let predicate = format!("changes the journal (--{flag})");
        cx.mutation(program, &predicate);
        return;
    }
    cx.read_only(program, "only reads the journal");
}

/// `kill`: signalling processes changes state; killing init or every process is destructive.
fn kill(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let mut idx = 1;
    let mut signal = "TERM";
    match args.get(1).map(|arg| arg.text) {
        Some("-l" | "-L" | "--list" | "--table") => {
            cx.read_only(program, "only lists signals");
            return;
        }
        Some("-s" | "-n" | "--signal") => {
            signal = args.get(2).map_or("", |arg| arg.text);
            idx = 3;
        }
        Some(text) if text.starts_with('-') && text.len() > 1 && text != "--" => {
            signal = &text[1..];
            idx = 2;
        }
        _ => {}
    }
    if args.get(idx).is_some_and(|arg| arg.text == "--") {
        idx += 1;
    }
    let signal = signal.trim_start_matches("SIG");
    let targets = &args[idx.min(args.len())..];
    if signal == "0" {
        cx.read_only(program, "only checks that a process exists (-0)");
        return;
    }
    if targets.iter().any(|arg| matches!(arg.text, "1" | "-1")) {
        cx.destructive(program, "kills init or every process");
        return;
    }
    if matches!(signal, "9" | "KILL") {
        cx.mutation(program, "kills processes (SIGKILL)");
        return;
    }
    cx.mutation(program, "signals processes");
}
