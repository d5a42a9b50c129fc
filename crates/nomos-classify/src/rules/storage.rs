//! Disks, filesystems and volumes: `zfs`, `zpool`, `mkfs*`, `wipefs`, partitioning tools,
//! LVM, `mdadm`, `cryptsetup`, `fsck`, `smartctl`, `hdparm`.

use super::super::opts::{Opts, Spec};
use super::super::walk::{Arg, Cx};
use super::{Verbs, by_verb};
use crate::class::CommandClass;

const ZFS: Verbs = Verbs {
    read_only: &[
        "list",
        "get",
        "holds",
        "userspace",
        "groupspace",
        "projectspace",
        "diff",
        "version",
        "help",
        "send",
        "-?",
        "--version",
    ],
    destructive: &["destroy", "rollback"],
    destroys: "destroys datasets or snapshots, or rolls back data",
};

const ZPOOL: Verbs = Verbs {
    read_only: &[
        "status",
        "list",
        "iostat",
        "get",
        "history",
        "events",
        "version",
        "help",
        "-?",
        "--version",
        "wait",
    ],
    destructive: &[
        "destroy",
        "labelclear",
        "create",
        "add",
        "attach",
        "replace",
        "split",
        "reguid",
    ],
    destroys: "destroys a pool or writes labels over disks",
};

/// Handles storage programs; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    match program {
        "zfs" => zfs(cx, args),
        "zpool" => zpool(cx, args),
        "mkswap" | "wipefs" | "blkdiscard" | "mke2fs" | "mkdosfs" | "sgdisk-zap" | "zerofree" => {
            cx.destructive(program, "overwrites a disk or filesystem");
        }
        _ if program.starts_with("mkfs") => {
            cx.destructive(program, "creates a filesystem, erasing what was there")
        }
        "fdisk" | "sfdisk" | "gdisk" | "cfdisk" | "sgdisk" => {
            let opts = Opts::parse(&args[1..], &Spec::FLAGS_ONLY);
            let lists = opts.either('l', "list")
                || opts.either('d', "dump")
                || opts.either('p', "print")
                || opts.long("version")
                || opts.long("help")
                || opts.short('V');
            if lists {
                cx.read_only(program, "only lists partitions");
            } else {
                cx.destructive(program, "rewrites a partition table");
            }
        }
        "parted" => parted(cx, args),
        "lvremove" | "vgremove" | "pvremove" | "lvreduce" => {
            cx.destructive(program, "removes or shrinks a volume")
        }
        "lvcreate" | "lvextend" | "lvresize" | "lvrename" | "lvchange" | "vgcreate"
        | "vgextend" | "vgreduce" | "vgchange" | "vgrename" | "pvcreate" | "pvmove"
        | "pvresize" | "lvconvert" => {
            cx.mutation(program, "changes volumes");
        }
        "mdadm" => {
            let opts = Opts::parse(&args[1..], &Spec::FLAGS_ONLY);
            if opts.either('D', "detail")
                || opts.either('E', "examine")
                || opts.either('Q', "query")
                || opts.long("detail-platform")
            {
                cx.read_only(program, "only reads");
            } else if opts.long("zero-superblock")
                || opts.either('C', "create")
                || opts.either('S', "stop")
                || opts.either('f', "fail")
                || opts.either('r', "remove")
            {
                cx.destructive(program, "destroys or stops an array");
            } else {
                cx.mutation(program, "changes an array");
            }
        }
        "cryptsetup" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "cdhklsSt",
                    long_values: &["cipher", "key-file", "hash", "key-size", "key-slot", "type"],
                },
            );
            match opts.first_positional() {
                Some(
                    "status" | "luksDump" | "isLuks" | "luksUUID" | "tcryptDump" | "bitlkDump"
                    | "benchmark",
                ) => cx.read_only(program, "only reads"),
                Some(
                    "luksFormat" | "erase" | "luksErase" | "luksKillSlot" | "luksRemoveKey"
                    | "reencrypt",
                ) => {
                    cx.destructive(program, "erases encryption keys or data");
                }
                _ => cx.mutation(program, "changes an encrypted volume"),
            }
        }
        "fsck" | "e2fsck" | "xfs_repair" | "btrfsck" | "fsck.ext4" | "fsck.vfat" => {
            let opts = Opts::parse(&args[1..], &Spec::FLAGS_ONLY);
            if opts.short('n') || opts.short('N') {
                cx.read_only(program, "only checks (-n)");
            } else {
                cx.mutation(program, "repairs a filesystem");
            }
        }
        "tune2fs" | "xfs_admin" => {
            let only_lists = args.len() == 3 && args[1].text == "-l";
            if only_lists {
                cx.read_only(program, "only lists settings (-l)");
            } else {
                cx.mutation(program, "changes filesystem settings");
            }
        }
        "resize2fs" | "xfs_growfs" | "fstrim" | "e4defrag" | "btrfs" => {
            cx.mutation(program, "changes a filesystem")
        }
        "smartctl" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "dT",
                    long_values: &["device", "tolerance"],
                },
            );
            if opts.either('t', "test")
                || opts.either('s', "smart")
                || opts.either('o', "offlineauto")
                || opts.either('S', "saveauto")
                || opts.short('X')
                || opts.long("set")
            {
                cx.mutation(program, "starts a test or changes drive settings");
            } else {
                cx.read_only(program, "only reads drive health");
            }
        }
        "hdparm" => {
            let reads = args[1..].iter().all(|arg| {
                !arg.text.starts_with('-')
                    || matches!(
                        arg.text,
                        "-I" | "-i" | "-t" | "-T" | "-tT" | "-g" | "-C" | "-v" | "-h" | "--help"
                    )
            });
            if reads {
                cx.read_only(program, "only reads drive information");
            } else {
                cx.destructive(program, "changes drive settings");
            }
        }
        "badblocks" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "bcdeiopt",
                    long_values: &[],
                },
            );
            if opts.short('w') {
                cx.destructive(program, "overwrites the disk (-w)");
            } else if opts.short('n') {
                cx.mutation(program, "rewrites blocks in place (-n)");
            } else {
                cx.read_only(program, "only reads the disk");
            }
        }
        "sync" => cx.read_only(program, "only flushes buffers"),
        _ => return false,
    }
    true
}

fn zfs(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let Some((at, verb)) = by_verb_quiet(args) else {
        cx.read_only(args[0].text, "prints its usage");
        return;
    };
    let rest = Opts::parse(
        &args[at + 1..],
        &Spec {
            short_values: "o",
            long_values: &[],
        },
    );
    if matches!(verb, "recv" | "receive") && rest.short('F') {
        cx.destructive(
            args[0].text,
            "forces a receive that rolls back and destroys snapshots (-F)",
        );
        return;
    }
    if verb == "allow" && args.len() <= at + 2 {
        cx.read_only(args[0].text, "only shows permissions");
        return;
    }
    ZFS.report(cx, args[0].text, verb);
}

fn zpool(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    if args.get(1).is_some_and(|arg| arg.text == "import") && args.len() == 2 {
        cx.read_only(args[0].text, "only lists importable pools");
        return;
    }
    by_verb(
        cx,
        args,
        &Spec::FLAGS_ONLY,
        &ZPOOL,
        (CommandClass::ReadOnly, "prints its usage"),
    );
}

/// The index and text of the first non-option argument.
fn by_verb_quiet<'a>(args: &[Arg<'a>]) -> Option<(usize, &'a str)> {
    let (_, at) = Opts::leading(&args[1..], &Spec::FLAGS_ONLY);
    args.get(at + 1).map(|arg| (at + 1, arg.text))
}

fn parted(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let opts = Opts::parse(
        &args[1..],
        &Spec {
            short_values: "a",
            long_values: &["align"],
        },
    );
    if opts.either('l', "list") || opts.either('v', "version") || opts.either('h', "help") {
        cx.read_only(program, "only lists partitions");
        return;
    }
    let mut positionals = opts.positionals().skip(1);
    match positionals.next().map(|arg| arg.text) {
        Some("print" | "p" | "unit")
            if positionals.all(|arg| {
                matches!(
                    arg.text,
                    "print"
                        | "free"
                        | "list"
                        | "all"
                        | "s"
                        | "B"
                        | "MB"
                        | "MiB"
                        | "GB"
                        | "GiB"
                        | "TB"
                        | "TiB"
                        | "%"
                        | "cyl"
                        | "chs"
                        | "compact"
                )
            }) =>
        {
            cx.read_only(program, "only prints the partition table");
        }
        _ => cx.destructive(program, "rewrites a partition table"),
    }
}
