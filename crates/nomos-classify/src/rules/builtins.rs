//! Shell builtins that set variables or change the shell itself (CLASSIFY-6).
//!
//! Setting a variable is read-only unless the variable changes what runs or how
//! ([`changes_program`]), however it is set: `export`, `declare`, `typeset`, `readonly`,
//! `local`, `read`, `mapfile`, `printf -v`, `unset`. Builtins that change the shell (`set`
//! with arguments, `shopt -s`, `enable`, `umask MODE`, `ulimit N`, `history -c`, `hash -p`,
//! `complete`, `unalias`) are never read-only; only their listing forms are.

use super::super::walk::{Arg, Cx};
use super::env::changes_program;

/// CLASSIFY-8: the builtins whose operands bash evaluates as arithmetic, where a subscript
/// `a[$(cmd)]` runs `cmd`: `let`, `declare` and its kin, `read`, `unset`, `printf -v`,
/// `test -v`.
/// Each operand's code counts (only in a bash reading; see `grammar.rs`).
pub(crate) fn evaluation_contexts(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    data_and_arithmetic(cx, args);
    let operands: Vec<&str> = match program {
        "let" | "declare" | "typeset" | "local" | "readonly" | "export" | "read" | "unset" => {
            args[1..].iter().map(|arg| arg.text).collect()
        }
        "printf" => args
            .windows(2)
            .filter(|pair| pair[0].text == "-v")
            .map(|pair| pair[1].text)
            .chain(
                args[1..]
                    .iter()
                    .filter_map(|arg| arg.text.strip_prefix("-v").filter(|rest| !rest.is_empty())),
            )
            .collect(),
        "test" | "[" if args.iter().any(|arg| arg.text == "-v") => {
            args[1..].iter().map(|arg| arg.text).collect()
        }
        _ => return,
    };
    for operand in operands {
        if program == "export" {
            // Exported: any bash a later program starts evaluates it too.
            cx.evaluated_by_child(operand, program);
        } else {
            cx.evaluated(operand, program);
        }
    }
}

/// CLASSIFY-8: builtins that assign data to variables (`read`, `mapfile`, `getopts`,
/// `printf -v`) and those that read their operands as arithmetic (`let`, `declare -i`).
fn data_and_arithmetic(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let names = args[1..]
        .iter()
        .map(|arg| arg.text)
        .filter(|text| crate::ast::is_name(text));
    match program {
        "read" => {
            cx.assigned_from_data("REPLY");
            names.for_each(|name| cx.assigned_from_data(name));
        }
        "mapfile" | "readarray" => {
            cx.assigned_from_data("MAPFILE");
            names.for_each(|name| cx.assigned_from_data(name));
        }
        "getopts" => {
            cx.assigned_from_data("OPTARG");
            if let Some(name) = args.get(2) {
                cx.assigned_from_data(name.text);
            }
        }
        "printf" => {
            let mut words = args[1..].iter().map(|arg| arg.text);
            while let Some(word) = words.next() {
                match word.strip_prefix("-v") {
                    Some("") => {
                        if let Some(name) = words.next() {
                            cx.assigned_from_data(name);
                        }
                    }
                    Some(name) => cx.assigned_from_data(name),
                    None => {}
                }
            }
        }
        "let" => {
            for arg in &args[1..] {
                cx.arithmetic(arg.text, program);
            }
        }
        "declare" | "typeset" | "local" | "readonly" | "export" => {
            let integer = args[1..].iter().any(|arg| {
                arg.text.starts_with('-') && !arg.text.starts_with("--") && arg.text.contains('i')
            });
            for arg in &args[1..] {
                if integer || arg.text.contains("=(") {
                    cx.arithmetic(arg.text, program);
                }
                // `local x=$(cmd)` holds data, like `x=$(cmd)`.
                if let Some((name, _)) = arg.text.split_once('=')
                    && arg.dynamic
                    && crate::ast::is_name(name)
                {
                    cx.assigned_from_data(name);
                }
            }
        }
        _ => {}
    }
}

/// Handles the builtins; `false` when `args[0]` is none of them.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    let program = args[0].text;
    match program {
        "export" => variables(cx, args, "fnp", ""),
        "declare" | "typeset" | "local" => variables(cx, args, "aAfFgilprtux", ""),
        "readonly" => variables(cx, args, "aAfp", ""),
        "unset" => variables(cx, args, "fvn", ""),
        "read" => variables(cx, args, "ers", "adinNptu"),
        "mapfile" | "readarray" => {
            if let Some(option) = args[1..].iter().find(|arg| arg.text.starts_with("-C")) {
                let predicate = format!("runs a callback (`{}`)", option.text);
                cx.mutation(program, &predicate);
            } else {
                variables(cx, args, "t", "dnOsuc");
            }
        }
        "printf" => printf(cx, args),
        // `getopts OPTSTRING NAME` sets NAME; `let NAME=EXPR` assigns.
        "getopts" => match args.get(2) {
            Some(name) if changes_program(name.text) || name.dynamic => {
                report_variable(cx, program, name.text);
            }
            _ => cx.read_only(program, "only parses options"),
        },
        "let" => {
            let assigned = args[1..].iter().find_map(|arg| {
                let name = arg.text.split(['=', '+', '-', '*', '/', '%', '[']).next()?;
                (changes_program(name) || arg.dynamic && arg.text.starts_with('$')).then_some(name)
            });
            match assigned {
                Some(name) => report_variable(cx, program, name),
                None => cx.read_only(program, "only computes"),
            }
        }
        "set" => match args.get(1) {
            None => cx.read_only(program, "only lists variables"),
            Some(first) => {
                let predicate = format!(
                    "changes the shell's options or arguments (`{}`)",
                    first.text
                );
                cx.mutation(program, &predicate);
            }
        },
        "shopt" => {
            let listing = args[1..]
                .iter()
                .all(|arg| matches!(arg.text, "-p" | "-q") || !arg.text.starts_with('-'));
            listing_or_change(cx, args, listing, "changes the shell's options");
        }
        "enable" => {
            let listing = args[1..]
                .iter()
                .all(|arg| matches!(arg.text, "-a" | "-p" | "-s"));
            listing_or_change(cx, args, listing, "turns builtins on or off or loads one");
        }
        "umask" => {
            let listing = args[1..].iter().all(|arg| matches!(arg.text, "-S" | "-p"));
            listing_or_change(cx, args, listing, "changes the file-creation mask");
        }
        "ulimit" => {
            let listing = args[1..]
                .iter()
                .all(|arg| arg.text.starts_with('-') && !arg.dynamic);
            listing_or_change(cx, args, listing, "changes the shell's resource limits");
        }
        "history" => {
            let listing = args[1..]
                .iter()
                .all(|arg| !arg.dynamic && arg.text.bytes().all(|b| b.is_ascii_digit()));
            listing_or_change(cx, args, listing, "changes or writes the history");
        }
        "hash" => {
            let listing = args[1..].iter().all(|arg| matches!(arg.text, "-l" | "-t"))
                || args.get(1).is_some_and(|arg| arg.text == "-t");
            listing_or_change(cx, args, listing, "changes which program a name runs");
        }
        "complete" | "compopt" => {
            let listing = args[1..].iter().all(|arg| arg.text == "-p");
            listing_or_change(cx, args, listing, "sets how words complete");
        }
        "compgen" => {
            let runs = args[1..]
                .iter()
                .any(|arg| arg.text.starts_with("-C") || arg.text.starts_with("-F"));
            listing_or_change(cx, args, !runs, "runs a command or function to complete");
        }
        "unalias" => cx.mutation(program, "removes aliases, which changes what a word runs"),
        _ => return false,
    }
    true
}

fn listing_or_change(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>], listing: bool, change: &str) {
    let program = args[0].text;
    if listing {
        cx.read_only(program, "only lists");
    } else {
        cx.mutation(program, change);
    }
}

/// A builtin whose operands are variable names, with or without `=VALUE`: the options must
/// be known (`flags` take no value, `values` take one, which may itself be a name), and no
/// name may change what runs.
fn variables(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>], flags: &str, values: &str) {
    let program = args[0].text;
    let mut idx = 1;
    let mut options_done = false;
    while idx < args.len() {
        let arg = args[idx];
        idx += 1;
        let text = arg.text;
        if !options_done && text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && text.len() > 1 && (text.starts_with('-') || text.starts_with('+')) {
            for (at, c) in text[1..].char_indices() {
                if values.contains(c) {
                    let rest = &text[1 + at + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        idx += 1;
                        args.get(idx - 1).map(|arg| arg.text)
                    } else {
                        Some(rest)
                    };
                    // `read -a NAME` and `mapfile -u FD`: a name is checked like an operand.
                    if let Some(value) = value
                        && changes_program(value)
                    {
                        report_variable(cx, program, value);
                        return;
                    }
                    break;
                }
                if !flags.contains(c) {
                    let predicate =
                        format!("has option `{text}`, which is not known to be read-only");
                    cx.mutation(program, &predicate);
                    return;
                }
            }
            continue;
        }
        options_done = true;
        // A name known only at run time (`"$x=1"`, `a[$i]=1`) may hold a subscript that bash
        // evaluates (CLASSIFY-8).
        let dynamic_name = text
            .split_once('=')
            .is_none_or(|(name, _)| name.contains(['$', '`']));
        if arg.dynamic && dynamic_name {
            let predicate = format!("sets a variable named only at run time (`{text}`)");
            cx.mutation(program, &predicate);
            return;
        }
        let name = text.split_once('=').map_or(text, |(name, _)| name);
        let name = name.strip_suffix('+').unwrap_or(name);
        let name = name.split_once('[').map_or(name, |(name, _)| name);
        if changes_program(name) {
            report_variable(cx, program, name);
            return;
        }
    }
    cx.read_only(program, "only sets or lists shell variables");
}

fn report_variable(cx: &mut Cx<'_, '_, '_, '_>, program: &str, name: &str) {
    let predicate = format!("sets `{name}`, which changes what programs run or how");
    cx.mutation(program, &predicate);
}

/// `printf -v NAME` assigns a variable.
fn printf(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) {
    let program = args[0].text;
    let name = match args.get(1).map(|arg| arg.text) {
        Some("-v") => args.get(2).map(|arg| arg.text),
        Some(text) => text.strip_prefix("-v").filter(|rest| !rest.is_empty()),
        None => None,
    };
    match name {
        Some(name) if changes_program(name) || name.starts_with('$') => {
            report_variable(cx, program, name);
        }
        _ => cx.read_only(program, "only prints or sets a shell variable"),
    }
}
