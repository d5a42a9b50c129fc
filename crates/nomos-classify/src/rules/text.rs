//! Text tools with dangerous flags: `find`, `sed`, `sort`, `uniq`, `awk`, `xxd`, `yq`,
//! BusyBox's `diff` of an input that is not a regular file, and `tac` of its standard input.

use super::super::opts::{Opt, Opts, Spec};
use super::super::walk::{Arg, Cx};
use super::sed::{self, SedEffect};
use crate::grammar::Grammar;
use crate::shell::Shell;

/// Handles text tools; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    // A system whose shell is BusyBox ash (`shell = "busybox"`, a nested `busybox sh`, or
    // the pinned `/bin/sh` on Alpine, which is why `sh` is read as ash too) has BusyBox's
    // `diff`; only a host pinned to bash is taken to have GNU diffutils.
    if program == "diff"
        && (cx.shell() != Shell::Bash || cx.grammar() == Grammar::Ash)
        && let Some(input) = busybox_diff_copies(&args[1..])
    {
        cx.mutation(program, &busybox_diff_predicate(input));
        return true;
    }
    if program == "tac"
        && let Some(input) = tac_copies(&args[1..])
    {
        cx.mutation(program, &tac_predicate(&input));
        return true;
    }
    match program {
        "find" => find(cx, args),
        "sed" | "gsed" => sed(cx, args),
        "sort" => {
            let spec = Spec {
                short_values: "kotST",
                long_values: &[
                    "key",
                    "output",
                    "field-separator",
                    "buffer-size",
                    "temporary-directory",
                    "compress-program",
                    "files0-from",
                ],
            };
            let opts = Opts::parse(&args[1..], &spec);
            if opts.either('o', "output") {
                cx.mutation(program, "writes its output to a file (-o)");
            } else if opts.long("compress-program") {
                cx.mutation(program, "runs a compression program");
            } else {
                cx.read_only(program, "only reads");
            }
        }
        "uniq" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "fsw",
                    long_values: &["skip-fields", "skip-chars", "check-chars"],
                },
            );
            if opts.positionals().count() >= 2 {
                cx.mutation(program, "writes its output to a file");
            } else {
                cx.read_only(program, "only reads");
            }
        }
        "awk" | "gawk" | "mawk" | "nawk" => awk(cx, args),
        "xxd" => {
            let opts = Opts::parse(
                &args[1..],
                &Spec {
                    short_values: "cglosn",
                    long_values: &[],
                },
            );
            if opts.short('r') || opts.positionals().count() >= 2 {
                cx.mutation(program, "writes a file");
            } else {
                cx.read_only(program, "only reads");
            }
        }
        "yq" => {
            let opts = Opts::parse(&args[1..], &Spec::FLAGS_ONLY);
            if opts.either('i', "inplace") {
                cx.mutation(program, "edits files in place (-i)");
            } else {
                cx.read_only(program, "only reads");
            }
        }
        _ => return false,
    }
    true
}

/// `find`: read-only unless an action runs a command, deletes or writes a file (CLASSIFY-3).
fn find(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let mut idx = 1;
    let mut acted = false;
    while idx < args.len() {
        let action = args[idx].text;
        match action {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = idx + 1;
                let mut end = start;
                while end < args.len() && !matches!(args[end].text, ";" | "+") {
                    end += 1;
                }
                let predicate = format!("runs a command for each file ({action})");
                cx.mutation(program, &predicate);
                let inner: Vec<Arg<'_>> = args[start..end]
                    .iter()
                    .map(|arg| {
                        if arg.text.contains("{}") {
                            Arg::dynamic(arg.text)
                        } else {
                            *arg
                        }
                    })
                    .collect();
                if !inner.is_empty() {
                    cx.run(&inner);
                }
                acted = true;
                idx = end + 1;
                continue;
            }
            "-delete" => {
                cx.destructive(program, "deletes the files it finds (-delete)");
                acted = true;
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                let predicate = format!("writes a file ({action})");
                cx.mutation(program, &predicate);
                acted = true;
            }
            _ => {}
        }
        idx += 1;
    }
    if !acted {
        cx.read_only(program, "only searches");
    }
}

/// `sed`: read-only unless it edits in place (`-i`) or its program writes, executes or
/// reads a file it names (`sed.rs` reads the program, all `-e` parts as one).
fn sed(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "efl",
        long_values: &["expression", "file", "line-length"],
    };
    let opts = Opts::parse(&args[1..], &spec);
    if opts.short('i') || opts.long_prefixed("in-place").is_some() {
        cx.mutation(program, "edits files in place (-i)");
        return;
    }
    if opts.short('f') || opts.long("file") {
        cx.mutation(
            program,
            "runs a script file the classifier cannot read (-f)",
        );
        return;
    }
    let mut scripts: Vec<&str> = opts
        .items
        .iter()
        .filter_map(|item| match item {
            Opt::Short('e', value) => *value,
            Opt::Long("expression", value) => *value,
            _ => None,
        })
        .collect();
    if scripts.is_empty() {
        scripts.extend(opts.first_positional());
    }
    // `--sandbox` makes sed refuse `e`, `w` and `r` before it runs anything.
    let effect = if opts.long("sandbox") {
        SedEffect::ReadOnly
    } else {
        sed::effect(&scripts)
    };
    match effect {
        SedEffect::ReadOnly => cx.read_only(program, "only prints"),
        SedEffect::ReadsFile => {
            cx.mutation(program, "reads a file its script names (`r`, `R`)");
        }
        SedEffect::Writes => cx.mutation(program, "writes a file from its script (`w`)"),
        SedEffect::Executes => cx.mutation(program, "runs commands from its script (`e`)"),
        SedEffect::Unsure => cx.mutation(program, "has a script the classifier cannot read"),
    }
}

/// `awk`: read-only unless it edits in place, runs a program file, or its program can run
/// commands (`system`, `|`) or write files (`print > file`).
fn awk(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let spec = Spec {
        short_values: "fvFilE",
        long_values: &[
            "file",
            "assign",
            "field-separator",
            "include",
            "load",
            "exec",
        ],
    };
    let opts = Opts::parse(&args[1..], &spec);
    if opts.short_value('i') == Some("inplace") || opts.long_value("include") == Some("inplace") {
        cx.mutation(program, "edits files in place");
        return;
    }
    if opts.either('f', "file") || opts.either('E', "exec") {
        cx.mutation(program, "runs a program file the classifier cannot read");
        return;
    }
    match opts.first_positional() {
        Some(source) if awk_may_act(source) => {
            cx.mutation(
                program,
                "has a program that can run commands or write files",
            );
        }
        _ => cx.read_only(program, "only prints"),
    }
}

/// Whether an awk program may run a command or write a file (strings are skipped).
fn awk_may_act(source: &str) -> bool {
    let bytes = source.as_bytes();
    let mut at = 0;
    let mut in_print = false;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
            }
            b'|' if bytes.get(at + 1) == Some(&b'|') => at += 1,
            b'|' => return true,
            b'>' if in_print => return true,
            b';' | b'{' | b'}' | b'\n' => in_print = false,
            b if b.is_ascii_alphabetic() => {
                let start = at;
                while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                    at += 1;
                }
                match &source[start..at] {
                    "system" => return true,
                    "print" | "printf" => in_print = true,
                    _ => {}
                }
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    false
}

/// The input of BusyBox's `diff` that it copies to a file of its own under `/tmp` before it
/// compares (CLASSIFY-9: traced as `openat("/tmp/difXXXXXX", O_CREAT)` and `unlink`): one
/// that is not a regular file, as `-` (standard input), `/dev/stdin`, `/dev/fd/N` or a
/// process substitution `<(...)`. That temporary file is a file the command creates and
/// removes, which CLASSIFY-9 counts like any other: nothing exempts a program's own
/// scratch files, so such a `diff` is not `read_only`.
pub(crate) fn busybox_diff_copies<'a>(args: &[Arg<'a>]) -> Option<&'a str> {
    let mut operands = false;
    args.iter().map(|arg| arg.text).find(|text| {
        if *text == "--" {
            operands = true;
            return false;
        }
        (operands || !text.starts_with('-') || *text == "-")
            && (*text == "-"
                || *text == "/dev/stdin"
                || text.starts_with("/dev/fd/")
                || text.starts_with("/proc/self/fd/")
                || text.starts_with("<(")
                || text.starts_with(">("))
    })
}

/// The input GNU `tac` copies to a file of its own under `/tmp` before it prints it backwards
/// (CLASSIFY-9: traced as `openat("/tmp/tacXXXXXX", O_CREAT|O_EXCL)` and `unlink`): its
/// standard input (no file operand, `-`, `/dev/stdin`, `/dev/fd/N`) or a process
/// substitution, which it cannot seek. Under Nomos a command's standard input is a pipe or
/// an SSH channel, and `tac < FILE` is read the same way here since the redirection is not
/// an operand; `tac FILE` reads the file in place. Says which input, or `None` when every
/// input is a named file.
pub(crate) fn tac_copies(args: &[Arg<'_>]) -> Option<String> {
    let opts = Opts::parse(
        args,
        &Spec {
            short_values: "s",
            long_values: &["separator"],
        },
    );
    if opts.long("help") || opts.long("version") {
        return None;
    }
    let mut operands = opts.positionals().map(|arg| arg.text).peekable();
    if operands.peek().is_none() {
        return Some("its standard input".to_owned());
    }
    operands
        .find(|text| {
            *text == "-"
                || *text == "/dev/stdin"
                || text.starts_with("/dev/fd/")
                || text.starts_with("/proc/self/fd/")
                || text.starts_with("<(")
        })
        .map(|text| format!("`{text}`"))
}

/// Why `tac` of `input` (as [`tac_copies`] names it) is not `read_only`.
pub(crate) fn tac_predicate(input: &str) -> String {
    format!(
        "copies {input}, which it cannot seek, to a temporary file in /tmp; `tac FILE` reads a file in place"
    )
}

/// Why BusyBox's `diff` of `input` is not `read_only`.
pub(crate) fn busybox_diff_predicate(input: &str) -> String {
    format!(
        "copies `{input}`, which is not a regular file, to a temporary file in /tmp (BusyBox's diff)"
    )
}
