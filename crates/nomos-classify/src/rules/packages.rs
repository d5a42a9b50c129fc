//! Package managers: `apt`, `apt-get`, `apt-cache`, `dpkg`, `yum`/`dnf`, `rpm`, `snap`, `pip`.
//!
//! Installing and upgrading change state; removing packages deletes files and can break the
//! host, so it is destructive. A simulated run (`-s`, `--dry-run`) only reads, for the
//! subcommands that honour it (`install`, `remove`, `upgrade`..., not `update` or `download`).

use super::super::opts::{Opt, Opts, Spec};
use super::super::walk::{Arg, Cx, Subject};
use super::Verbs;
use crate::class::CommandClass;

const APT: Verbs = Verbs {
    read_only: &[
        "list",
        "search",
        "show",
        "showsrc",
        "policy",
        "depends",
        "rdepends",
        "madison",
        "changelog",
        "check",
        "indextargets",
        "help",
        "moo",
        "--version",
        "--help",
    ],
    destructive: &["remove", "purge", "autoremove", "autopurge"],
    destroys: "removes packages",
};

/// The subcommands `-s` really simulates: those that go through the package solver. `update`,
/// `download`, `source`, `clean` and the rest do their work whatever `-s` says.
const APT_SIMULATES: &[&str] = &[
    "install",
    "reinstall",
    "remove",
    "purge",
    "upgrade",
    "dist-upgrade",
    "full-upgrade",
    "autoremove",
    "autopurge",
    "build-dep",
    "satisfy",
    "dselect-upgrade",
];

/// The apt option that keeps a simulation from writing its planner log: with the log on,
/// `apt-get -s install` rotates and rewrites `/var/log/apt/eipp.log.xz` on every run once
/// that file exists (CLASSIFY-9 found it by running the simulation).
pub(crate) const PLANNER_LOG_OFF: &str = "Dir::Log::Planner=";

/// Whether an apt `-o`/`--option` value turns the planner log off. apt reads
/// configuration names without regard to case, and only the empty value writes nothing.
pub(crate) fn turns_planner_log_off(value: &str) -> bool {
    value.eq_ignore_ascii_case(PLANNER_LOG_OFF)
}

const APT_SPEC: Spec = Spec {
    short_values: "oct",
    long_values: &["option", "config-file", "target-release", "default-release"],
};

const YUM: Verbs = Verbs {
    read_only: &[
        "list",
        "info",
        "search",
        "check-update",
        "repolist",
        "provides",
        "whatprovides",
        "history",
        "deplist",
        "repoquery",
        "help",
        "--version",
    ],
    destructive: &["remove", "erase", "autoremove"],
    destroys: "removes packages",
};

const PIP: Verbs = Verbs {
    read_only: &[
        "list",
        "show",
        "freeze",
        "check",
        "search",
        "help",
        "--version",
        "-V",
        "inspect",
        "index",
        "debug",
    ],
    destructive: &["uninstall"],
    destroys: "removes packages",
};

const SNAP: Verbs = Verbs {
    read_only: &[
        "list",
        "info",
        "find",
        "search",
        "services",
        "logs",
        "changes",
        "version",
        "help",
        "connections",
        "interfaces",
        "aliases",
        "warnings",
    ],
    destructive: &["remove"],
    destroys: "removes packages",
};

/// Handles package managers; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    match program {
        "apt" | "apt-get" | "aptitude" => {
            let opts = Opts::parse(&args[1..], &APT_SPEC);
            let simulated = opts.either('s', "simulate")
                || opts.long("dry-run")
                || opts.long("just-print")
                || opts.long("no-act")
                || opts.long("recon")
                || opts.long("print-uris");
            let planner_log_off = opts.items.iter().any(|item| {
                matches!(item, Opt::Short('o', Some(value)) | Opt::Long("option", Some(value))
                    if turns_planner_log_off(value))
            });
            match opts.first_positional() {
                Some(verb) if simulated && APT_SIMULATES.contains(&verb) && planner_log_off => {
                    cx.report(
                        CommandClass::ReadOnly,
                        Subject::Command(program, verb),
                        "only simulates (-s) with its planner log off",
                    );
                }
                Some(verb) if simulated && APT_SIMULATES.contains(&verb) => {
                    cx.report(
                        CommandClass::ConfigMutation,
                        Subject::Command(program, verb),
                        "simulates (-s) but rewrites apt's planner log /var/log/apt/eipp.log.xz; \
                         add `-o Dir::Log::Planner=` to simulate without writing",
                    );
                }
                Some(verb) => APT.report(cx, program, verb),
                None => cx.read_only(program, "prints its usage"),
            }
        }
        "apt-cache" => match args.get(1).map(|arg| arg.text) {
            Some("gencaches") => cx.mutation(program, "rebuilds the package cache"),
            _ => cx.read_only(program, "only reads the package cache"),
        },
        "apt-key" | "add-apt-repository" | "apt-mark" => match args.get(1).map(|arg| arg.text) {
            Some(
                "list" | "finger" | "fingerprint" | "showhold" | "showauto" | "showmanual"
                | "--list",
            ) => {
                cx.read_only(program, "only lists");
            }
            _ => cx.mutation(program, "changes package sources or marks"),
        },
        "dpkg" => dpkg(cx, args),
        "dpkg-query" => cx.read_only(program, "only queries the package database"),
        "yum" | "dnf" | "microdnf" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "cdex",
                    long_values: &["config", "exclude", "enablerepo", "disablerepo", "setopt"],
                },
            );
            match opts.first_positional() {
                Some(verb) => YUM.report(cx, program, verb),
                None => cx.read_only(program, "prints its usage"),
            }
        }
        "rpm" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "D",
                    long_values: &["root", "define", "dbpath"],
                },
            );
            if opts.either('e', "erase") {
                cx.destructive(program, "removes packages (-e)");
            } else if opts.either('q', "query")
                || opts.either('V', "verify")
                || opts.long("version")
                || opts.long("checksig")
                || opts.short('K')
            {
                cx.read_only(program, "only queries packages");
            } else {
                cx.mutation(program, "installs or changes packages");
            }
        }
        "pip" | "pip3" | "pipx" => {
            let opts = Opts::parse(&args[1..], &Spec::FLAGS_ONLY);
            match opts.first_positional() {
                Some(verb) => PIP.report(cx, program, verb),
                None if opts.either('V', "version") => {
                    cx.read_only(program, "only prints its version")
                }
                None => cx.read_only(program, "prints its usage"),
            }
        }
        "snap" => match args.get(1).map(|arg| arg.text) {
            Some(verb) => SNAP.report(cx, program, verb),
            None => cx.read_only(program, "prints its usage"),
        },
        _ => return false,
    }
    true
}

fn dpkg(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let opts = Opts::parse(
        &args[1..],
        &Spec {
            short_values: "",
            long_values: &["admindir", "root", "instdir"],
        },
    );
    if opts.either('r', "remove") || opts.either('P', "purge") {
        cx.destructive(program, "removes packages");
        return;
    }
    const QUERIES: [(char, &str); 9] = [
        ('l', "list"),
        ('L', "listfiles"),
        ('s', "status"),
        ('S', "search"),
        ('p', "print-avail"),
        ('c', "contents"),
        ('I', "info"),
        ('C', "audit"),
        ('V', "verify"),
    ];
    const LONG_QUERIES: [&str; 7] = [
        "get-selections",
        "print-architecture",
        "print-foreign-architectures",
        "version",
        "help",
        "compare-versions",
        "yet-to-unpack",
    ];
    let queries = QUERIES
        .iter()
        .any(|(short, long)| opts.either(*short, long))
        || LONG_QUERIES.iter().any(|long| opts.long(long));
    if queries
        && !opts.either('i', "install")
        && !opts.long("configure")
        && !opts.long("unpack")
        && !opts.long("set-selections")
    {
        cx.read_only(program, "only queries the package database");
    } else {
        cx.mutation(program, "installs or configures packages");
    }
}
