//! SECRET-1: which arguments of a command are paths whose content it reads, per program.
//!
//! Every program's operands are read paths (`cat F`, `xxd F`, `openssl rsa -in F`), and so
//! are the values of `--opt=F`, `KEY=F` (`dd if=F`), `@F` (`curl -d @F`) and `HOST:F`
//! (`scp`, `docker cp`), except where this table knows better:
//! * programs that look only at a file's name or metadata, never at its content: `ls`,
//!   `stat`, `du`, `file`, `wc` (it prints counts), checksums, `chmod`, `chown`, `touch`,
//!   `rm`, `echo`, `test`, `find` without an action, the `ssh` tools, which use a key
//!   without printing it;
//! * programs whose first operand is a pattern or a program (`grep`, `rg`, `sed`, `awk`,
//!   `jq`): it is not a path, though an `awk` or `sed` program, and the code an interpreter
//!   is given, are searched for the paths they name (`getline < "/etc/shadow"`, `r FILE`,
//!   `open("/etc/shadow")`);
//! * programs that read whole directories (`grep -r`, `rg`, `tar -c`, `zip -r`, `cp -r`,
//!   `rsync`, `find ROOT ... -exec`): their operands are trees;
//! * wrappers and shells, whose inner commands the walker classifies on their own.

use super::super::walk::Arg;
use super::env::{INTERPRETERS, SHELLS, WRAPPERS};
use crate::secret::{Glob, Scope};

/// One path a command reads, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Read<'a> {
    /// The path word (after quote removal).
    pub text: &'a str,
    /// Whether it holds an expansion.
    pub dynamic: bool,
    /// How much of it is read.
    pub scope: Scope,
    /// `find -name`: the glob names must match.
    pub name: Option<Glob>,
    /// `tar -C DIR`: the directory the path is relative to, as written.
    pub base: Option<&'a str>,
}

impl<'a> Read<'a> {
    fn of(arg: &Arg<'a>, text: &'a str, scope: Scope) -> Read<'a> {
        Read {
            text,
            dynamic: arg.dynamic,
            scope,
            name: None,
            base: None,
        }
    }
}

/// Programs that look at names or metadata only, never at content.
const METADATA_ONLY: &[&str] = &[
    "ls",
    "dir",
    "vdir",
    "ll",
    "stat",
    "du",
    "file",
    "test",
    "[",
    "wc",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "readlink",
    "realpath",
    "basename",
    "dirname",
    "lsattr",
    "chattr",
    "getfacl",
    "setfacl",
    "namei",
    "touch",
    "chmod",
    "chown",
    "chgrp",
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "truncate",
    "mkdir",
    "ln",
    "echo",
    "printf",
    "which",
    "whereis",
    "type",
    "cd",
    "pushd",
    "popd",
    "tree",
    "findmnt",
    "mountpoint",
    "lsof",
    "fuser",
    "ssh",
    "ssh-add",
    "ssh-keygen",
    "ssh-copy-id",
    "ssh-keyscan",
    "true",
    "false",
    ":",
    "export",
    "local",
    "declare",
    "typeset",
    "readonly",
    "unset",
    "read",
];

/// Programs whose first operand is a pattern or a program, not a path.
const PATTERN_FIRST: &[&str] = &[
    "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "sed", "gsed", "jq", "yq", "awk", "gawk",
    "mawk", "nawk",
];

/// Programs that search whole trees by default.
const TREE_SEARCHERS: &[&str] = &["rg", "ag", "ack"];

/// The paths `args` (`args[0]` is the program) reads, as far as the table knows.
pub(crate) fn reads<'a>(args: &[Arg<'a>]) -> Vec<Read<'a>> {
    let Some(program) = args.first() else {
        return Vec::new();
    };
    let name = program.text;
    let rest = &args[1..];
    if name == "find" {
        return find(rest);
    }
    if name == "getent" {
        // `getent shadow` prints the shadow database.
        return rest
            .iter()
            .find(|a| !a.text.starts_with('-'))
            .and_then(|db| match db.text {
                "shadow" => Some("/etc/shadow"),
                "gshadow" => Some("/etc/gshadow"),
                _ => None,
            })
            .map(|path| Read {
                text: path,
                dynamic: false,
                scope: Scope::File,
                name: None,
                base: None,
            })
            .into_iter()
            .collect();
    }
    if name == "source" || name == "." {
        return rest
            .first()
            .map(|arg| Read::of(arg, arg.text, Scope::File))
            .into_iter()
            .collect();
    }
    if METADATA_ONLY.contains(&name) || WRAPPERS.contains(&name) || SHELLS.contains(&name) {
        return Vec::new();
    }
    let scope = if tree_reader(name, rest) {
        Scope::Tree
    } else {
        Scope::File
    };
    let mut out = Vec::new();
    let mut operands = 0usize;
    let mut options_done = false;
    let mut explicit_pattern = false;
    let mut base: Option<&'a str> = None;
    let mut take_base = false;
    for arg in rest {
        let text = arg.text;
        if take_base {
            base = Some(text);
            take_base = false;
            continue;
        }
        if !options_done && text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && text.starts_with('-') && text != "-" {
            if PATTERN_FIRST.contains(&name) && pattern_option(name, text) {
                explicit_pattern = true;
            }
            if name == "tar" && (text == "-C" || text == "--directory") {
                take_base = true;
            } else if let Some(dir) = text.strip_prefix("--directory=") {
                base = Some(dir);
            }
            if let Some((_, value)) = text.split_once('=') {
                push_value(&mut out, arg, value, scope);
            }
            continue;
        }
        operands += 1;
        let is_program = PATTERN_FIRST.contains(&name) && operands == 1 && !explicit_pattern;
        if is_program || INTERPRETERS.contains(&name) {
            code_paths(&mut out, arg, text);
            if is_program {
                continue;
            }
        }
        if name == "tar" && operands == 1 && !text.starts_with('-') && old_style_tar(text) {
            // `tar czf ARCHIVE ...`: the first word is the option cluster.
            continue;
        }
        let mut read = Read::of(arg, text, scope);
        read.base = base;
        out.push(read);
        if let Some((_, value)) = text.split_once('=') {
            push_value(&mut out, arg, value, Scope::File);
        }
        if let Some(value) = text.strip_prefix('@') {
            out.push(Read::of(arg, value, Scope::File));
        }
        if let Some((host, path)) = text.split_once(':')
            && !host.is_empty()
            && !host.contains('/')
            && (path.starts_with('/') || path.starts_with('~'))
        {
            out.push(Read::of(arg, path, scope));
        }
    }
    // `grep -r PATTERN` and `rg PATTERN` with no path search the working directory.
    let paths_given = out.iter().any(|r| r.scope == Scope::Tree);
    if scope == Scope::Tree && !paths_given && PATTERN_FIRST.contains(&name) {
        out.push(Read {
            text: ".",
            dynamic: false,
            scope: Scope::Tree,
            name: None,
            base: None,
        });
    }
    out
}

/// `--opt=VALUE`, `KEY=VALUE`: the value, when it looks like a path (`@` stripped).
fn push_value<'a>(out: &mut Vec<Read<'a>>, arg: &Arg<'a>, value: &'a str, scope: Scope) {
    let value = value.strip_prefix('@').unwrap_or(value);
    if value.is_empty() {
        return;
    }
    out.push(Read::of(arg, value, scope));
}

/// Whether the option names the pattern or program itself (so the first operand is a path).
fn pattern_option(program: &str, option: &str) -> bool {
    match program {
        "sed" | "gsed" => {
            option.starts_with("--expression")
                || option.starts_with("--file")
                || short_cluster_has(option, &['e', 'f'])
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            option == "-f" || option.starts_with("--file") || option == "--source"
        }
        "jq" | "yq" => option == "-f" || option == "--from-file",
        _ => {
            option.starts_with("--regexp")
                || option.starts_with("--file")
                || short_cluster_has(option, &['e', 'f'])
        }
    }
}

/// Whether a short-option cluster (`-rne`) holds one of `letters`.
fn short_cluster_has(option: &str, letters: &[char]) -> bool {
    option
        .strip_prefix('-')
        .filter(|body| !body.starts_with('-'))
        .is_some_and(|body| body.chars().any(|c| letters.contains(&c)))
}

/// Whether `program` with `args` reads its operands as whole directory trees.
fn tree_reader(program: &str, args: &[Arg<'_>]) -> bool {
    let long = |names: &[&str]| args.iter().any(|a| names.contains(&a.text));
    let short = |letters: &[char]| args.iter().any(|a| short_cluster_has(a.text, letters));
    match program {
        "grep" | "egrep" | "fgrep" | "zgrep" => {
            short(&['r', 'R'])
                || long(&[
                    "--recursive",
                    "--dereference-recursive",
                    "--directories=recurse",
                ])
                || args
                    .windows(2)
                    .any(|w| w[0].text == "-d" && w[1].text == "recurse")
        }
        "tar" | "bsdtar" => {
            short(&['c', 'r', 'u'])
                || long(&["--create", "--append", "--update"])
                || args
                    .first()
                    .is_some_and(|a| old_style_tar(a.text) && a.text.contains(['c', 'r', 'u']))
        }
        "zip" => short(&['r']) || long(&["--recurse-paths"]),
        "cp" | "scp" => short(&['r', 'R', 'a']) || long(&["--recursive", "--archive"]),
        "rsync" | "7z" | "7za" | "cpio" | "pax" | "tree" => true,
        _ => TREE_SEARCHERS.contains(&program),
    }
}

/// `tar czf ...`: an old-style option cluster without a dash.
fn old_style_tar(word: &str) -> bool {
    !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphabetic())
        && word.contains(['c', 'x', 't', 'r', 'u'])
        && word.contains('f')
}

/// `find ROOT... EXPR`: with an action that runs a program on what it finds, every root is
/// read (filtered by `-name`/`-iname` when given); without one, only names are printed.
fn find<'a>(args: &[Arg<'a>]) -> Vec<Read<'a>> {
    let acts = args.iter().any(|a| {
        matches!(
            a.text,
            "-exec" | "-execdir" | "-ok" | "-okdir" | "-fprint" | "-fprint0" | "-fprintf"
        )
    });
    if !acts {
        return Vec::new();
    }
    let roots: Vec<&Arg<'a>> = args
        .iter()
        .take_while(|a| !a.text.starts_with('-') && !matches!(a.text, "(" | "!" | ","))
        .collect();
    let mut name = None;
    for pair in args.windows(2) {
        if matches!(pair[0].text, "-name" | "-iname") && !pair[1].dynamic {
            name = Some(Glob::parse(pair[1].text));
        }
    }
    let scope = if name.is_some() {
        Scope::Named
    } else {
        Scope::Tree
    };
    let mut out: Vec<Read<'a>> = roots
        .iter()
        .map(|arg| {
            let mut read = Read::of(arg, arg.text, scope);
            read.name = name.clone();
            read
        })
        .collect();
    if out.is_empty() {
        out.push(Read {
            text: ".",
            dynamic: false,
            scope,
            name,
            base: None,
        });
    }
    out
}

/// The paths named inside program text (`awk`, `sed`, interpreter code): words that start
/// like an absolute or home path.
fn code_paths<'a>(out: &mut Vec<Read<'a>>, arg: &Arg<'a>, code: &'a str) {
    let separators: &[char] = &[
        ' ', '\t', '\n', '"', '\'', '(', ')', ',', ';', '<', '>', '|', '[', ']', '{', '}', '=', '+',
    ];
    for token in code.split(separators) {
        let looks_like_path = token.starts_with('/') && token.len() > 1
            || token.starts_with("~/")
            || token.starts_with("~root/");
        if looks_like_path {
            out.push(Read::of(arg, token, Scope::File));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::walk::Arg;
    use super::reads;
    use crate::secret::Scope;

    fn read_texts(words: &[&str]) -> Vec<(String, Scope)> {
        let args: Vec<Arg<'_>> = words.iter().map(|w| Arg::literal(w)).collect();
        reads(&args)
            .into_iter()
            .map(|r| (r.text.to_owned(), r.scope))
            .collect()
    }

    #[test]
    fn a_pattern_is_not_a_path_but_the_files_after_it_are() {
        assert_eq!(
            read_texts(&["grep", "root", "/etc/shadow"]),
            [("/etc/shadow".to_owned(), Scope::File)]
        );
        assert_eq!(
            read_texts(&["grep", "-e", "root", "/etc/shadow"]),
            [
                ("root".to_owned(), Scope::File),
                ("/etc/shadow".to_owned(), Scope::File)
            ]
        );
    }

    #[test]
    fn recursive_readers_read_trees() {
        assert_eq!(
            read_texts(&["grep", "-rn", "root", "/etc"]),
            [("/etc".to_owned(), Scope::Tree)]
        );
        assert_eq!(
            read_texts(&["tar", "-cf", "-", "/root/.ssh"]),
            [
                ("-".to_owned(), Scope::Tree),
                ("/root/.ssh".to_owned(), Scope::Tree)
            ]
        );
        assert_eq!(read_texts(&["rg", "x"]), [(".".to_owned(), Scope::Tree)]);
    }

    #[test]
    fn metadata_readers_read_no_content() {
        assert!(read_texts(&["ls", "-la", "/etc/shadow"]).is_empty());
        assert!(read_texts(&["stat", "/etc/shadow"]).is_empty());
        assert!(read_texts(&["find", "/", "-name", "shadow"]).is_empty());
    }

    #[test]
    fn code_is_searched_for_the_paths_it_names() {
        assert_eq!(
            read_texts(&["python3", "-c", "print(open('/etc/shadow').read())"]),
            [
                ("/etc/shadow".to_owned(), Scope::File),
                ("print(open('/etc/shadow').read())".to_owned(), Scope::File)
            ]
        );
    }
}
