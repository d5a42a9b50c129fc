//! Files and archives: `rm`, `cp`/`mv`/`ln`/`mkdir`/`touch`, `chmod`/`chown`, `tee`, `dd`,
//! `tar`, compressors, `rsync`/`scp`.

use super::super::opts::{Opts, Spec};
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
        "scp" | "sftp" => cx.mutation(program, "copies files between hosts"),
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

fn tar(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    // Old style: `tar xzf file.tgz` is `tar -xzf file.tgz`.
    let bundled;
    let mut owned: Vec<Arg<'_>> = args[1..].to_vec();
    if let Some(first) = owned.first()
        && !first.text.starts_with('-')
        && !first.dynamic
    {
        bundled = format!("-{}", first.text);
        owned[0] = Arg::literal(&bundled);
    }
    let spec = Spec {
        short_values: "fCTXbgKLNVHI",
        long_values: &[
            "file",
            "directory",
            "files-from",
            "exclude-from",
            "use-compress-program",
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
    let to_stdout = matches!(
        opts.short_value('f').or(opts.long_value("file")),
        None | Some("-")
    );
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

fn rsync(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "eBfTM",
        long_values: &[
            "rsh",
            "filter",
            "exclude",
            "include",
            "temp-dir",
            "log-file",
            "write-batch",
            "only-write-batch",
        ],
    };
    let opts = Opts::parse(&args[1..], &spec);
    let writes_log =
        opts.long("log-file") || opts.long("write-batch") || opts.long("only-write-batch");
    if opts.either('n', "dry-run") && !writes_log {
        cx.read_only(program, "only shows what it would copy (--dry-run)");
    } else if opts.long_prefixed("delete").is_some() || opts.long("remove-source-files") {
        cx.destructive(program, "deletes files (--delete or --remove-source-files)");
    } else {
        cx.mutation(program, "copies files");
    }
}
