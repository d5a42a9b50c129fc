//! Readers whose subcommands also set state: `systemd-analyze`, `hostnamectl`,
//! `timedatectl`, `localectl`, `resolvectl`, `networkctl`, `busctl`, `coredumpctl`, `nmcli`.
//!
//! Each program has a table: subcommands that only read, and getter-setters that read
//! with at most a given number of operands and set with more (`hostnamectl hostname` prints
//! the name, `hostnamectl hostname X` sets it; `resolvectl dns eth0` shows, `resolvectl dns
//! eth0 1.1.1.1` sets). Every other subcommand changes state.

use super::super::opts::{Opts, Spec};
use super::super::walk::{Arg, Cx, Subject};
use crate::class::CommandClass;

/// The subcommands of one program.
struct Table {
    program: &'static [&'static str],
    /// Options that take a value as the next word.
    spec: Spec,
    /// What runs without a subcommand: `true` when that only reads.
    bare_reads: bool,
    /// Subcommands that only read, whatever their operands.
    reads: &'static [&'static str],
    /// Getter-setters: the subcommand reads with at most this many operands.
    getters: &'static [(&'static str, usize)],
}

const TABLES: &[Table] = &[
    Table {
        program: &["systemd-analyze"],
        spec: Spec {
            short_values: "",
            long_values: &["root", "image", "order", "require", "fuzz", "man", "host"],
        },
        bare_reads: true,
        reads: &[
            "time",
            "blame",
            "critical-chain",
            "dump",
            "plot",
            "dot",
            "unit-paths",
            "unit-files",
            "exit-status",
            "capability",
            "condition",
            "syscall-filter",
            "filesystems",
            "calendar",
            "timestamp",
            "timespan",
            "security",
            "inspect-elf",
            "malloc",
            "fdstore",
            "image-policy",
            "has-tpm2",
            "pcrs",
            "architectures",
            "smbios11",
            "cat-config",
            "verify",
        ],
        // `log-level X`, `log-target X` and `service-watchdogs X` set what they show.
        getters: &[
            ("log-level", 0),
            ("log-target", 0),
            ("service-watchdogs", 0),
        ],
    },
    Table {
        program: &["hostnamectl"],
        spec: Spec {
            short_values: "HM",
            long_values: &["host", "machine"],
        },
        bare_reads: true,
        reads: &["status", "show"],
        getters: &[
            ("hostname", 0),
            ("icon-name", 0),
            ("chassis", 0),
            ("deployment", 0),
            ("location", 0),
        ],
    },
    Table {
        program: &["timedatectl"],
        spec: Spec {
            short_values: "HMp",
            long_values: &["host", "machine", "property"],
        },
        bare_reads: true,
        reads: &[
            "status",
            "show",
            "list-timezones",
            "timesync-status",
            "show-timesync",
        ],
        getters: &[("ntp-servers", 0)],
    },
    Table {
        program: &["localectl"],
        spec: Spec {
            short_values: "HM",
            long_values: &["host", "machine"],
        },
        bare_reads: true,
        reads: &[
            "status",
            "list-locales",
            "list-keymaps",
            "list-x11-keymap-models",
            "list-x11-keymap-layouts",
            "list-x11-keymap-variants",
            "list-x11-keymap-options",
        ],
        getters: &[],
    },
    Table {
        program: &["resolvectl"],
        spec: Spec {
            short_values: "iptc",
            long_values: &["interface", "protocol", "type", "class"],
        },
        bare_reads: true,
        reads: &[
            "status",
            "query",
            "service",
            "openpgp",
            "tlsa",
            "statistics",
            "show-cache",
            "show-server-state",
            "monitor",
        ],
        // `resolvectl dns [IF]` shows, `resolvectl dns IF SERVER...` sets.
        getters: &[
            ("dns", 1),
            ("domain", 1),
            ("default-route", 1),
            ("llmnr", 1),
            ("mdns", 1),
            ("dnssec", 1),
            ("dnsovertls", 1),
            ("nta", 1),
            ("log-level", 0),
        ],
    },
    Table {
        program: &["networkctl"],
        spec: Spec {
            short_values: "n",
            long_values: &["lines"],
        },
        bare_reads: true,
        reads: &["list", "status", "lldp", "label", "cat"],
        getters: &[],
    },
    Table {
        program: &["busctl"],
        spec: Spec {
            short_values: "HM",
            long_values: &["host", "machine", "address", "match", "size", "timeout"],
        },
        bare_reads: true,
        reads: &[
            "list",
            "status",
            "tree",
            "introspect",
            "get-property",
            "monitor",
        ],
        getters: &[],
    },
    Table {
        program: &["coredumpctl"],
        spec: Spec {
            short_values: "SUFnD",
            long_values: &["since", "until", "field", "directory", "file", "output"],
        },
        bare_reads: true,
        // `debug`/`gdb` run a debugger; `dump -o FILE` writes (its option list decides).
        reads: &["list", "info", "dump"],
        getters: &[],
    },
];

/// Handles the readers with setter subcommands; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    if program == "nmcli" {
        nmcli(cx, args);
        return true;
    }
    if program == "systemd-resolve" {
        // The old spelling: no subcommands, its setters are options (`--set-dns`,
        // `--flush-caches`), which its option list does not vouch for.
        cx.read_only(program, "only queries names or shows the resolver");
        return true;
    }
    let Some(table) = TABLES.iter().find(|table| table.program.contains(&program)) else {
        return false;
    };
    let opts = Opts::parse(&args[1..], &table.spec);
    let mut positionals = opts.positionals();
    let Some(verb) = positionals.next() else {
        if table.bare_reads {
            cx.read_only(program, "only reads");
        } else {
            cx.mutation(program, "changes state");
        }
        return true;
    };
    let operands: Vec<Arg<'_>> = positionals.collect();
    // An unquoted `$X` may be several words: a getter given one may be setting.
    let dynamic_operand = operands.iter().any(|operand| operand.dynamic);
    let subject = Subject::Command(program, verb.text);
    if verb.dynamic {
        cx.mutation(program, "has a subcommand known only when it runs");
    } else if table.reads.contains(&verb.text) {
        cx.report(CommandClass::ReadOnly, subject, "only reads");
    } else if let Some((_, most)) = table.getters.iter().find(|(name, _)| *name == verb.text) {
        if operands.len() <= *most && !dynamic_operand {
            cx.report(CommandClass::ReadOnly, subject, "only shows the setting");
        } else {
            cx.report(
                CommandClass::ConfigMutation,
                subject,
                "sets what it shows when given a value",
            );
        }
    } else {
        cx.report(CommandClass::ConfigMutation, subject, "changes state");
    }
    true
}

/// `nmcli OBJECT [COMMAND [ARGS]]`; objects and commands may be abbreviated (`g`, `c s`).
fn nmcli(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "mcfgew",
        long_values: &["mode", "colors", "fields", "get-values", "escape", "wait"],
    };
    let opts = Opts::parse(&args[1..], &spec);
    let words: Vec<Arg<'_>> = opts.positionals().collect();
    if words.iter().any(|word| word.dynamic) {
        cx.mutation(program, "has a subcommand known only when it runs");
        return;
    }
    let words: Vec<&str> = words.iter().map(|word| word.text).collect();
    let is = |word: &str, full: &str| !word.is_empty() && full.starts_with(word);
    let reads = match words.as_slice() {
        [] => true,
        [object, rest @ ..] if is(object, "general") => match rest {
            [] => true,
            [verb] => ["status", "permissions", "hostname", "logging"]
                .iter()
                .any(|full| is(verb, full)),
            _ => false,
        },
        [object, rest @ ..] if is(object, "networking") => match rest {
            [] => true,
            [verb, ..] => is(verb, "connectivity"),
        },
        [object, rest @ ..] if is(object, "radio") => match rest {
            [] => true,
            [kind] => ["all", "wifi", "wwan"].iter().any(|full| is(kind, full)),
            _ => false,
        },
        [object, rest @ ..] if is(object, "connection") => match rest {
            [] => true,
            [verb, ..] => is(verb, "show"),
        },
        [object, rest @ ..] if is(object, "device") => match rest {
            [] => true,
            [verb, ..] if is(verb, "status") || is(verb, "show") || is(verb, "lldp") => true,
            [verb, list, ..] if is(verb, "wifi") => is(list, "list"),
            [verb] => is(verb, "wifi"),
            _ => false,
        },
        [object] => is(object, "monitor"),
        _ => false,
    };
    if reads {
        cx.read_only(program, "only reads");
    } else {
        cx.mutation(program, "changes network settings");
    }
}

#[cfg(test)]
mod tests {
    use crate::class::CommandClass::{self, ConfigMutation, ReadOnly};
    use crate::classify;

    #[track_caller]
    fn check(command: &str, expected: CommandClass) {
        let got = classify(command);
        assert_eq!(got.class, expected, "`{command}`: {}", got.reason);
    }

    // rule: CLASSIFY-8
    #[test]
    fn getter_subcommands_set_state_when_given_a_value() {
        check("systemd-analyze log-level", ReadOnly);
        check("systemd-analyze log-level debug", ConfigMutation);
        check("systemd-analyze set-log-target kmsg", ConfigMutation);
        check("systemd-analyze service-watchdogs no", ConfigMutation);
        check("systemd-analyze unit-shell nginx", ConfigMutation);
        check("systemd-analyze blame", ReadOnly);
        check("hostnamectl hostname", ReadOnly);
        check("hostnamectl hostname web1", ConfigMutation);
        check("hostnamectl chassis server", ConfigMutation);
        check("timedatectl set-ntp true", ConfigMutation);
        check("timedatectl ntp-servers eth0 pool.ntp.org", ConfigMutation);
        check("timedatectl timesync-status", ReadOnly);
        check("resolvectl dns eth0", ReadOnly);
        check("resolvectl dns eth0 1.1.1.1", ConfigMutation);
        check("resolvectl dns $IF", ConfigMutation);
        check("systemd-resolve --flush-caches", ConfigMutation);
        check("systemd-resolve --status", ReadOnly);
        check("coredumpctl dump -o /tmp/core", ConfigMutation);
        check("resolvectl flush-caches", ConfigMutation);
        check("resolvectl log-level debug", ConfigMutation);
        check("networkctl reconfigure eth0", ConfigMutation);
        check("busctl call org.x / org.x M", ConfigMutation);
        check("coredumpctl gdb", ConfigMutation);
        check("coredumpctl list", ReadOnly);
        check("docker compose config --output /tmp/x.yml", ConfigMutation);
        check("docker compose config", ReadOnly);
    }

    // rule: CLASSIFY-8
    #[test]
    fn nmcli_setters_are_mutations_in_every_abbreviation() {
        check("nmcli general hostname", ReadOnly);
        check("nmcli general hostname web1", ConfigMutation);
        check("nmcli g h web1", ConfigMutation);
        check("nmcli general logging level DEBUG", ConfigMutation);
        check("nmcli radio wifi", ReadOnly);
        check("nmcli radio wifi off", ConfigMutation);
        check("nmcli r all off", ConfigMutation);
        check("nmcli networking off", ConfigMutation);
        check("nmcli device wifi rescan", ConfigMutation);
        check("nmcli c s", ReadOnly);
        check("nmcli con up x", ConfigMutation);
    }
}
