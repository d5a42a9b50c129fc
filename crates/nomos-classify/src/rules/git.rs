//! `git`: inspection verbs read; `-c` and `--output` make a reader a mutation; forced
//! pushes, hard resets, `clean -f` and discarded changes are destructive.

use super::super::opts::{Opt, Opts, Spec};
use super::super::walk::{Arg, Cx, Environment, Subject};
use crate::class::CommandClass;

const READERS: &[&str] = &[
    "status",
    "log",
    // FIXME(CLASSIFY-9): a `git diff` against the work tree that finds files whose stat
    // changed but whose content did not writes `.git/index` back (git's
    // `refresh_index_quietly`, which ignores `GIT_OPTIONAL_LOCKS`; seen with git 2.47 after
    // a `touch`). The oracle's scratch repository has no such files, so its runs do not
    // show it; CLASSIFY-3 names `git diff` read-only, so it stays here until SPEC decides.
    "diff",
    "show",
    "blame",
    "annotate",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "cat-file",
    "describe",
    "shortlog",
    "grep",
    "version",
    "help",
    "whatchanged",
    "name-rev",
    "rev-list",
    "count-objects",
    "for-each-ref",
    "show-ref",
    "merge-base",
    "var",
    "check-ignore",
    "check-attr",
    "cherry",
    "range-diff",
    "diff-tree",
    "diff-files",
    "diff-index",
    "verify-commit",
    "verify-tag",
    "show-branch",
    "--version",
    "--help",
    "check-ref-format",
    "get-tar-commit-id",
    "verify-pack",
];

pub(crate) const GLOBAL: Spec = Spec {
    short_values: "Cc",
    long_values: &[
        "git-dir",
        "work-tree",
        "namespace",
        "config-env",
        "super-prefix",
        "list-cmds",
    ],
};

/// Handles `git`; `false` for other programs.
pub(crate) fn run(cx: &mut Cx<'_, '_, '_, '_>, args: &[Arg<'_>]) -> bool {
    if args[0].text != "git" {
        return false;
    }
    let (global, at) = Opts::leading(&args[1..], &GLOBAL);
    if global.short('c') || global.long("config-env") {
        cx.mutation(
            "git -c",
            "overrides configuration for this run, which can run programs",
        );
    }
    if global.long_value("exec-path").is_some() {
        cx.mutation(
            "git --exec-path",
            "runs git programs from another directory",
        );
    }
    // CLASSIFY-6: only these global options are known to leave git a reader.
    if let Some(option) = global.items.iter().find_map(|item| match item {
        Opt::Short('C' | 'c' | 'p' | 'P' | 'h' | 'v', _) => None,
        Opt::Short(c, _) => Some(format!("-{c}")),
        Opt::Long(name, _) if SAFE_GLOBAL.contains(name) => None,
        Opt::Long(name, _) => Some(format!("--{name}")),
        Opt::Positional(_) => None,
    }) && !global.short('c')
        && !global.long("config-env")
    {
        let predicate = format!("has option `{option}`, which is not known to be read-only");
        cx.mutation("git", &predicate);
    }
    let Some(verb) = args.get(at + 1).map(|arg| arg.text) else {
        cx.read_only("git", "prints its usage");
        return true;
    };
    // `git --help VERB` and `git help VERB` open the manual with `man`.
    if global.long("help") || (verb == "help" && args.len() > at + 2) {
        cx.mutation("git", "runs `man` to show a manual page");
        return true;
    }
    let rest = &args[at + 2..];
    let opts = Opts::parse(
        rest,
        &Spec {
            short_values: "moSe",
            long_values: &[
                "message",
                "format",
                "sort",
                "contains",
                "merged",
                "no-merged",
                "points-at",
                "output",
                "set-upstream-to",
            ],
        },
    );
    let positional = opts.first_positional();
    let takes_urls = matches!(
        verb,
        "clone" | "fetch" | "pull" | "push" | "ls-remote" | "archive" | "remote" | "submodule"
    );
    if let Some(url) = rest
        .iter()
        .filter(|_| takes_urls)
        .find_map(|arg| helper_url(arg.text))
    {
        let predicate = if url.starts_with("ext::") {
            format!("names `{url}`, a URL of the `ext::` transport, which runs a command")
        } else {
            format!("names `{url}`, whose transport runs a remote helper program")
        };
        cx.report(
            CommandClass::ConfigMutation,
            Subject::Command("git", verb),
            &predicate,
        );
        return true;
    }
    if (READERS.contains(&verb) || verb == "ls-remote")
        && let Some(option) = runs_a_program(verb, rest)
    {
        let predicate = format!("has option `{option}`, which writes a file or runs a program");
        cx.report(
            CommandClass::ConfigMutation,
            Subject::Command("git", verb),
            &predicate,
        );
        return true;
    }
    // CLASSIFY-9: `git status` refreshes the index and writes it back under
    // `.git/index.lock` unless optional locks are off: every command starts with
    // `GIT_OPTIONAL_LOCKS=0` (`Shell::ENVIRONMENT`), but not where that is dropped.
    if verb == "status"
        && cx.environment() == Environment::Dropped
        && !global.long("no-optional-locks")
    {
        cx.report(
            CommandClass::ConfigMutation,
            Subject::Command("git", verb),
            "writes `.git/index` under `.git/index.lock`, since it runs without \
             `GIT_OPTIONAL_LOCKS=0`",
        );
        return true;
    }
    let (class, predicate) = classify_verb(verb, &opts, positional, rest);
    cx.report(class, Subject::Command("git", verb), predicate);
    true
}

/// `git describe --dirty` and `--broken` refresh the index and write it back under
/// `.git/index.lock` whatever `GIT_OPTIONAL_LOCKS` says (git 2.47, traced by the execution
/// oracle, CLASSIFY-9); git takes any unambiguous prefix of a long option.
fn refreshes_the_index(rest: &[Arg<'_>]) -> bool {
    rest.iter()
        .map(|arg| arg.text)
        .take_while(|text| *text != "--")
        .filter_map(|text| text.strip_prefix("--"))
        .map(|long| long.split_once('=').map_or(long, |(name, _)| name))
        .any(|name| !name.is_empty() && ("dirty".starts_with(name) || "broken".starts_with(name)))
}

/// A URL of the form `TRANSPORT::ADDRESS` in an argument (`ext::sh -c ...`, `--remote=x::y`):
/// git runs the remote helper `git-remote-TRANSPORT`, and `ext::` runs the command it names.
fn helper_url(text: &str) -> Option<&str> {
    let url = match text.split_once('=') {
        Some((name, value)) if name.starts_with("--") => value,
        _ => text,
    };
    let (transport, _) = url.split_once("::")?;
    let mut chars = transport.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(url)
}

/// Global options that neither run a program nor change configuration.
const SAFE_GLOBAL: &[&str] = &[
    "git-dir",
    "work-tree",
    "namespace",
    "no-pager",
    "paginate",
    "bare",
    "no-replace-objects",
    "literal-pathspecs",
    "glob-pathspecs",
    "noglob-pathspecs",
    "icase-pathspecs",
    "no-optional-locks",
    "no-advice",
    "version",
    "help",
    "html-path",
    "man-path",
    "info-path",
    "list-cmds",
];

/// Options of git's reading verbs that write a file or run another program: an output file,
/// an external diff or text conversion, a pager for matches, a remote upload program.
fn runs_a_program<'a>(verb: &str, rest: &[Arg<'a>]) -> Option<&'a str> {
    const LONG: &[&str] = &[
        "output",
        "ext-diff",
        "textconv",
        "filters",
        "open-files-in-pager",
        "upload-pack",
        "exec",
        "receive-pack",
        "output-directory",
    ];
    rest.iter()
        .map(|arg| arg.text)
        .take_while(|text| *text != "--")
        .find(|text| {
            let long = text
                .strip_prefix("--")
                .map(|long| long.split_once('=').map_or(long, |(name, _)| name));
            long.is_some_and(|name| {
                LONG.iter()
                    .any(|bad| bad.starts_with(name) && name.len() >= 3)
            }) || (verb == "grep" && text.starts_with("-O"))
                || (verb == "ls-remote" && *text == "-u")
        })
}

fn classify_verb(
    verb: &str,
    opts: &Opts<'_>,
    positional: Option<&str>,
    rest: &[Arg<'_>],
) -> (CommandClass, &'static str) {
    use CommandClass::{ConfigMutation as Change, Destructive as Destroy, ReadOnly as Read};
    let read = (Read, "only reads");
    let change = (Change, "changes the repository");
    match verb {
        "log" | "diff" | "show" | "whatchanged" | "range-diff" if opts.long("output") => {
            (Change, "writes its output to a file (--output)")
        }
        "describe" if refreshes_the_index(rest) => (
            Change,
            "refreshes the index and writes `.git/index` (--dirty, --broken)",
        ),
        _ if READERS.contains(&verb) => read,
        // A local or ssh remote is reached by running its `git-upload-pack`.
        "ls-remote" => (
            Change,
            "runs the remote's upload-pack, through a shell or ssh",
        ),
        "branch" => {
            if opts.short('D') || (opts.either('d', "delete") && opts.either('f', "force")) {
                return (Destroy, "force-deletes a branch");
            }
            let changes = ['d', 'm', 'M', 'c', 'C', 'u', 'f']
                .iter()
                .any(|c| opts.short(*c))
                || [
                    "delete",
                    "move",
                    "copy",
                    "set-upstream-to",
                    "unset-upstream",
                    "edit-description",
                    "force",
                ]
                .iter()
                .any(|l| opts.long(l));
            let lists = positional.is_none() || opts.either('l', "list");
            if lists && !changes { read } else { change }
        }
        "tag" => {
            let changes = ['d', 'a', 's', 'f', 'm', 'u']
                .iter()
                .any(|c| opts.short(*c))
                || ["delete", "annotate", "sign", "force", "message"]
                    .iter()
                    .any(|l| opts.long(l));
            let lists = positional.is_none()
                || opts.either('l', "list")
                || opts.short('v')
                || opts.long("verify");
            if lists && !changes { read } else { change }
        }
        "remote" => match positional {
            None | Some("show" | "get-url") => read,
            Some(_) => change,
        },
        "config" => {
            let reads = [
                "get",
                "get-all",
                "get-regexp",
                "list",
                "get-urlmatch",
                "get-color",
                "get-colorbool",
            ]
            .iter()
            .any(|l| opts.long(l))
                || opts.short('l')
                || matches!(positional, Some("get" | "list"));
            let one_key = opts.positionals().count() == 1
                && !matches!(
                    positional,
                    Some("set" | "unset" | "edit" | "rename-section" | "remove-section")
                );
            let edits = opts.either('e', "edit")
                || [
                    "unset",
                    "unset-all",
                    "add",
                    "replace-all",
                    "rename-section",
                    "remove-section",
                ]
                .iter()
                .any(|l| opts.long(l));
            if (reads || one_key) && !edits {
                read
            } else {
                (Change, "changes configuration")
            }
        }
        "stash" => match positional {
            Some("list" | "show") => read,
            Some("drop" | "clear") => (Destroy, "deletes stashed changes"),
            _ => change,
        },
        "worktree" => match positional {
            Some("list") => read,
            _ => change,
        },
        "submodule" => match positional {
            Some("status" | "summary") => read,
            _ => change,
        },
        "reflog" => match positional {
            None | Some("show") => read,
            Some("expire" | "delete") => (Destroy, "deletes reflog entries"),
            Some(_) => read,
        },
        "notes" => match positional {
            None | Some("list" | "show") => read,
            Some(_) => change,
        },
        "bisect" => match positional {
            Some("log" | "visualize" | "view") => read,
            _ => change,
        },
        "archive" => {
            if opts.either('o', "output") {
                (Change, "writes an archive file")
            } else if opts.long_prefixed("exec").is_some() {
                (Change, "runs the program it is given (--exec)")
            } else {
                read
            }
        }
        "format-patch" => {
            if opts.long("stdout") {
                read
            } else {
                (Change, "writes patch files")
            }
        }
        "fsck" => {
            if opts.long("lost-found") {
                change
            } else {
                read
            }
        }
        "clean" => {
            if opts.either('n', "dry-run") {
                read
            } else {
                (Destroy, "deletes untracked files")
            }
        }
        "reset" => {
            if opts.long("hard") {
                (Destroy, "discards local changes (--hard)")
            } else {
                change
            }
        }
        "checkout" => {
            let discards = opts.either('f', "force")
                || rest.iter().any(|arg| arg.text == "--" || arg.text == ".");
            if discards {
                (Destroy, "discards local changes")
            } else {
                change
            }
        }
        "restore" => {
            if opts.either('S', "staged") && !opts.either('W', "worktree") {
                change
            } else {
                (Destroy, "discards local changes")
            }
        }
        "push" => {
            let forced = opts.either('f', "force")
                || opts.long("force-with-lease")
                || opts.long("force-if-includes")
                || opts.either('d', "delete")
                || opts.long("mirror")
                || opts.long("prune")
                || opts
                    .positionals()
                    .any(|arg| arg.text.starts_with('+') || arg.text.starts_with(':'));
            if forced {
                (Destroy, "rewrites or deletes remote history")
            } else {
                change
            }
        }
        "filter-branch" | "filter-repo" => (Destroy, "rewrites history"),
        "update-ref" if opts.short('d') => (Destroy, "deletes a ref"),
        _ => change,
    }
}
