//! Files and archives: `rm`, `cp`/`mv`/`ln`/`mkdir`/`touch`, `chmod`/`chown`, `tee`, `dd`,
//! `tar`, compressors, `rsync`/`scp`.

use super::super::opts::{Opt, Opts, Spec};
use super::super::walk::{Arg, Cx, Subject};
use super::paths;
use crate::class::CommandClass;

/// Handles file programs; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    match program {
        "rm" => cx.destructive(program, "deletes files"),
        "unlink" => cx.destructive(program, "deletes a file"),
        "shred" | "wipe" | "srm" => cx.destructive(program, "overwrites and deletes files"),
        "truncate" => cx.destructive(program, "cuts files short"),
        "rmdir" => cx.mutation(program, "removes directories"),
        "cp" | "mv" | "install" | "ln" => copy(cx, args),
        "mkdir" | "touch" | "mkfifo" | "mknod" | "split" | "csplit" | "patch" | "chattr"
        | "setfacl" | "zip" | "7z" | "rename" => cx.mutation(program, "writes files"),
        "mktemp" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "p",
                    long_values: &["tmpdir", "suffix"],
                },
            );
            if opts.either('u', "dry-run") {
                cx.read_only(program, "only prints a name");
            } else {
                cx.mutation(program, "creates a file");
            }
        }
        "chmod" | "chown" | "chgrp" => ownership(cx, args),
        "tee" => tee(cx, args),
        "dd" => dd(cx, args),
        "tar" => tar(cx, args),
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd" | "lz4"
        | "pigz" | "lzma" | "unlzma" => compressor(cx, args),
        "unzip" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "dx",
                    long_values: &[],
                },
            );
            if opts.short('l')
                || opts.short('v')
                || opts.short('t')
                || opts.short('Z')
                || opts.short('p')
            {
                cx.read_only(program, "only lists or tests the archive");
            } else {
                cx.mutation(program, "extracts files");
            }
        }
        "getfacl" => cx.read_only(program, "only reads"),
        "rsync" => rsync(cx, args),
        _ => return false,
    }
    true
}

fn copy(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "tSmogb",
        long_values: &[
            "target-directory",
            "suffix",
            "mode",
            "owner",
            "group",
            "backup",
        ],
    };
    let opts = Opts::parse(&args[1..], &spec);
    let target = opts
        .short_value('t')
        .or(opts.long_value("target-directory"))
        .map(Arg::literal)
        .or_else(|| opts.positionals().last());
    if let Some(target) = target
        && !target.dynamic
        && paths::is_block_device(target.text)
    {
        cx.destructive(program, "overwrites a block device");
        return;
    }
    cx.mutation(program, "writes files");
}

fn ownership(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "",
        long_values: &[],
    };
    let opts = Opts::parse(&args[1..], &spec);
    if opts.either('R', "recursive")
        && opts
            .positionals()
            .any(|arg| paths::is_system_root(arg.text))
    {
        cx.destructive(
            program,
            "recursively changes every file under a system root",
        );
    } else {
        cx.mutation(program, "changes file permissions or owners");
    }
}

fn tee(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let opts = Opts::parse(
        &args[1..],
        &Spec {
            short_values: "",
            long_values: &["output-error"],
        },
    );
    let mut worst = (CommandClass::ReadOnly, "copies its input to its output");
    for file in opts.positionals() {
        let found = paths::write_target(file);
        if found.0 > worst.0 {
            worst = found;
        }
    }
    cx.report(worst.0, Subject::Word(program), worst.1);
}

fn dd(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    match args[1..].iter().find(|arg| arg.text.starts_with("of=")) {
        Some(_) => cx.destructive(program, "writes raw data (of=)"),
        None => cx.read_only(program, "only reads (writes to its output)"),
    }
}

/// The letters of `tar` that take a value: `-f ARCHIVE`, `-C DIR`, `-b N`, ...
const TAR_VALUES: &str = "bCfFgHIKLNTVX";

/// `tar`: lists, compares and archives to its output read; extracting, archiving to a file
/// and a remote archive (`-f HOST:FILE`, which GNU tar reaches through a remote shell) do
/// not.
fn tar(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    // Old style: in `tar tfC ARCHIVE DIR` each letter that takes a value takes the next
    // word, in order: it is `tar -t -f ARCHIVE -C DIR`.
    let mut spelled: Vec<String> = Vec::new();
    let mut owned: Vec<Arg<'_>> = args[1..].to_vec();
    if let Some(first) = args.get(1)
        && !first.text.starts_with('-')
        && !first.dynamic
    {
        let mut next = 2;
        let mut taken = Vec::new();
        for letter in first.text.chars() {
            spelled.push(format!("-{letter}"));
            if TAR_VALUES.contains(letter) {
                taken.push((spelled.len(), next));
                next += 1;
            }
        }
        owned = Vec::new();
        let mut values = taken.iter().peekable();
        for (at, flag) in spelled.iter().enumerate() {
            owned.push(Arg::literal(flag));
            if let Some((_, word)) = values.next_if(|(after, _)| *after == at + 1)
                && let Some(arg) = args.get(*word)
            {
                owned.push(*arg);
            }
        }
        owned.extend(args.iter().skip(next).copied());
    }
    let spec = Spec {
        short_values: TAR_VALUES,
        long_values: &[
            "file",
            "directory",
            "files-from",
            "exclude-from",
            "use-compress-program",
            "info-script",
            "new-volume-script",
            "rsh-command",
            "rmt-command",
        ],
    };
    let opts = Opts::parse(&owned, &spec);
    if opts.long("remove-files") {
        cx.destructive(program, "deletes the files it archives (--remove-files)");
        return;
    }
    if opts.long_prefixed("to-command").is_some()
        || opts.long_prefixed("checkpoint-action").is_some()
    {
        cx.mutation(program, "runs a command for each file");
        return;
    }
    let archives: Vec<&str> = opts
        .items
        .iter()
        .filter_map(|item| match item {
            Opt::Short('f', value) => *value,
            Opt::Long(name, value) if "file".starts_with(name) && name.len() >= 3 => *value,
            _ => None,
        })
        .collect();
    let force_local = opts.long_prefixed("force-l").is_some();
    if let Some(remote) = archives
        .iter()
        .find(|name| !force_local && remote_name(name))
    {
        let predicate = format!("reaches the archive `{remote}` through a remote shell");
        cx.mutation(program, &predicate);
        return;
    }
    let to_stdout = archives.iter().all(|name| *name == "-");
    if opts.either('t', "list") || opts.either('d', "diff") || opts.long("compare") {
        cx.read_only(program, "only lists or compares the archive");
    } else if opts.either('c', "create") && to_stdout {
        cx.read_only(program, "writes the archive to its output");
    } else if opts.either('x', "extract") && opts.either('O', "to-stdout") {
        cx.read_only(program, "extracts to its output");
    } else if opts.either('x', "extract") || opts.long("get") {
        cx.mutation(program, "extracts files");
    } else {
        cx.mutation(program, "writes an archive");
    }
}

/// Whether an archive or file name is remote the way GNU tar, `rsync` and `scp` read it:
/// a `:` with no `/` before it (`host:file`, `user@host:/x`), or a URL.
pub(crate) fn remote_name(name: &str) -> bool {
    match name.find(':') {
        Some(colon) => !name[..colon].contains('/'),
        None => false,
    }
}

fn compressor(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let opts = Opts::parse(
        &args[1..],
        &Spec {
            short_values: "S",
            long_values: &["suffix"],
        },
    );
    let reads_only = opts.either('c', "stdout")
        || opts.either('l', "list")
        || opts.either('t', "test")
        || opts.either('h', "help")
        || opts.either('V', "version")
        || opts.positionals().next().is_none();
    if reads_only {
        cx.read_only(program, "writes to its output only");
    } else {
        cx.mutation(program, "replaces files with (de)compressed copies");
    }
}

/// `rsync`: read-only only as a local dry run (`-n`). A remote operand (`HOST:PATH`,
/// `HOST::MODULE`, `rsync://`) starts a remote shell or a daemon connection even in a dry
/// run, `-e`/`--rsh` and `--rsync-path` name programs to run, and a log or batch file is
/// written whatever `-n` says.
fn rsync(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "eBfTM",
        long_values: &[
            "rsh",
            "rsync-path",
            "filter",
            "exclude",
            "include",
            "exclude-from",
            "include-from",
            "files-from",
            "temp-dir",
            "partial-dir",
            "backup-dir",
            "compare-dest",
            "copy-dest",
            "link-dest",
            "log-file",
            "log-file-format",
            "write-batch",
            "only-write-batch",
            "read-batch",
            "remote-option",
            "password-file",
            "chmod",
            "chown",
            "usermap",
            "groupmap",
            "out-format",
            "max-size",
            "min-size",
            "timeout",
            "contimeout",
            "port",
            "sockopts",
            "address",
            "config",
            "dparam",
        ],
    };
    let opts = Opts::parse(&args[1..], &spec);
    if opts.long_prefixed("delete").is_some() || opts.long("remove-source-files") {
        cx.destructive(program, "deletes files (--delete or --remove-source-files)");
        return;
    }
    let runs = opts.either('e', "rsh")
        || opts.long_prefixed("rsh").is_some()
        || opts.long_prefixed("rsync-p").is_some()
        || opts.long("daemon")
        || opts.long("server");
    if runs {
        cx.mutation(program, "runs the program it is given (-e, --rsync-path)");
        return;
    }
    // A remote operand (`HOST:PATH`, `HOST::MODULE`, `rsync://`) is the network table's
    // (`reach.rs`): it reaches the other host even in a dry run.
    let writes_anyway = opts.items.iter().any(|item| {
        matches!(item, Opt::Long(name, _)
            if (name.starts_with("log-file") && *name != "log-file-format")
                || name.starts_with("write-b")
                || name.starts_with("only-write")
                || name.starts_with("read-b"))
    });
    if opts.either('n', "dry-run") && !writes_anyway {
        cx.read_only(program, "only shows what it would copy (--dry-run)");
    } else {
        cx.mutation(program, "copies files");
    }
}
