//! Proxmox VE: `pct` (containers), `qm` (VMs), `pvesm` (storage), `pvecm` (cluster), `pvesh`,
//! `pveam`, `vzdump`, `ha-manager`.
//!
//! `pct exec` and `qm guest exec` are never read-only; the command they run is classified too.

use super::super::opts::{Opts, Spec};
use super::super::walk::{Arg, Cx, Subject};
use super::Verbs;
use crate::class::CommandClass;

const PCT: Verbs = Verbs {
    read_only: &[
        "list",
        "config",
        "status",
        "pending",
        "df",
        "listsnapshot",
        "help",
        "cpusets",
        "--help",
    ],
    destructive: &[
        "destroy",
        "stop",
        "shutdown",
        "rollback",
        "delsnapshot",
        "restore",
    ],
    destroys: "stops, destroys or rolls back a container",
};

const QM: Verbs = Verbs {
    read_only: &[
        "list",
        "config",
        "status",
        "pending",
        "showcmd",
        "listsnapshot",
        "help",
        "--help",
    ],
    destructive: &[
        "destroy",
        "stop",
        "shutdown",
        "reset",
        "rollback",
        "delsnapshot",
        "unlink",
    ],
    destroys: "stops, resets, destroys or rolls back a VM",
};

const PVESM: Verbs = Verbs {
    read_only: &[
        "status",
        "list",
        "scan",
        "path",
        "help",
        "apiinfo",
        "nfsscan",
        "cifsscan",
        "iscsiscan",
        "lvmscan",
        "lvmthinscan",
        "zfsscan",
        "glusterfsscan",
    ],
    destructive: &["free", "prune-backups"],
    destroys: "deletes volumes or backups",
};

const PVECM: Verbs = Verbs {
    read_only: &["status", "nodes", "help", "qdevice-status"],
    destructive: &["delnode"],
    destroys: "removes a node from the cluster",
};

const PVEAM: Verbs = Verbs {
    read_only: &["list", "available", "help"],
    destructive: &["remove"],
    destroys: "deletes a template",
};

/// Handles Proxmox programs; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    let verb = args.get(1).map(|arg| arg.text);
    match (program, verb) {
        (_, None)
            if matches!(
                program,
                "pct" | "qm" | "pvesm" | "pvecm" | "pveam" | "pvesh"
            ) =>
        {
            cx.read_only(program, "prints its usage");
        }
        ("pct", Some("exec")) => {
            cx.report(
                CommandClass::ConfigMutation,
                Subject::Command(program, "exec"),
                "runs a command in a container",
            );
            if let Some(at) = args.iter().position(|arg| arg.text == "--")
                && at + 1 < args.len()
            {
                // The container's command gets the container's environment (CLASSIFY-9).
                cx.run_without_pinned_environment(&args[at + 1..]);
            }
        }
        ("pct", Some("enter" | "console")) => {
            cx.report(
                CommandClass::ConfigMutation,
                Subject::Command(program, "enter"),
                "opens a shell in a container",
            );
        }
        ("pct", Some(verb)) => PCT.report(cx, program, verb),
        ("qm", Some("guest")) => match args.get(2).map(|arg| arg.text) {
            Some("exec") => {
                cx.report(
                    CommandClass::ConfigMutation,
                    Subject::Command(program, "guest exec"),
                    "runs a command in a VM",
                );
                if let Some(at) = args.iter().position(|arg| arg.text == "--")
                    && at + 1 < args.len()
                {
                    cx.run(&args[at + 1..]);
                }
            }
            Some("cmd")
                if matches!(
                    args.get(4).map(|arg| arg.text),
                    Some(
                        "info"
                            | "ping"
                            | "get-osinfo"
                            | "get-fsinfo"
                            | "get-host-name"
                            | "get-time"
                            | "get-timezone"
                            | "get-users"
                            | "get-vcpus"
                            | "get-memory-blocks"
                            | "network-get-interfaces"
                    )
                ) =>
            {
                cx.report(
                    CommandClass::ReadOnly,
                    Subject::Command(program, "guest cmd"),
                    "only reads",
                );
            }
            _ => cx.report(
                CommandClass::ConfigMutation,
                Subject::Command(program, "guest"),
                "acts inside a VM",
            ),
        },
        ("qm", Some("cloudinit")) if args.get(2).is_some_and(|arg| arg.text == "dump") => {
            cx.report(
                CommandClass::ReadOnly,
                Subject::Command(program, "cloudinit dump"),
                "only reads",
            );
        }
        ("qm", Some("disk")) if args.get(2).is_some_and(|arg| arg.text == "unlink") => {
            cx.report(
                CommandClass::Destructive,
                Subject::Command(program, "disk unlink"),
                "deletes a disk",
            );
        }
        ("qm", Some(verb)) => QM.report(cx, program, verb),
        ("pvesm", Some(verb)) => {
            if verb == "prune-backups" && args.iter().any(|arg| arg.text == "--dry-run") {
                cx.report(
                    CommandClass::ReadOnly,
                    Subject::Command(program, verb),
                    "only shows what it would prune (--dry-run)",
                );
            } else {
                PVESM.report(cx, program, verb);
            }
        }
        ("pvecm", Some(verb)) => PVECM.report(cx, program, verb),
        ("pveam", Some(verb)) => PVEAM.report(cx, program, verb),
        ("pvesh", Some(verb)) => {
            let class = match verb {
                "get" | "ls" | "usage" | "help" => CommandClass::ReadOnly,
                "delete" => CommandClass::Destructive,
                _ => CommandClass::ConfigMutation,
            };
            cx.report(
                class,
                Subject::Command(program, verb),
                match class {
                    CommandClass::ReadOnly => "only reads the API",
                    CommandClass::ConfigMutation => "changes the cluster through the API",
                    CommandClass::Destructive => "deletes through the API",
                },
            );
        }
        ("vzdump", _) => cx.mutation(program, "writes a backup"),
        ("pvesr" | "ha-manager", Some("status" | "list" | "config" | "read" | "help")) => {
            cx.read_only(program, "only reads")
        }
        ("pvesr" | "ha-manager", _) => cx.mutation(program, "changes replication or HA"),
        ("pvereport" | "pvenode-status" | "pveperf", _) => cx.read_only(program, "only reads"),
        ("pvenode" | "pveum" | "pvesubscription" | "pveceph" | "pve-firewall", _) => {
            let opts = Opts::parse(&args[1..], &Spec::FLAGS_ONLY);
            match opts.first_positional() {
                Some("status" | "list" | "help" | "compile") => cx.read_only(program, "only reads"),
                _ => cx.mutation(program, "changes the cluster"),
            }
        }
        _ => return false,
    }
    true
}
