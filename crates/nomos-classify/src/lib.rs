//! The command classifier (CLASSIFY-1..7): reads a command as a shell would and says whether
//! it only reads, changes configuration or state, or destroys something, and why.
//!
//! This crate owns [`CommandClass`] and [`Classification`]; `nomos-core` re-exports it as
//! `nomos_core::classify` (and `nomos_core::classification`), so the gate and every caller
//! ask one owner. It is pure: no I/O, no clock, no randomness.
//!
//! # How it works
//!
//! [`Script::parse`] reads the command string into a syntax tree ([`ast`]): words after
//! quote removal, pipelines, `;` `&&` `||` `&` lists, subshells, brace groups, `if`, `for`,
//! `while`, `until`, `case`, `[[ ]]`, `(( ))`, function definitions, `$(...)`, backticks,
//! process substitutions, redirections and here-documents. Input it cannot read (an
//! unterminated quote, a dangling `|`, a missing `fi`) is `destructive` with a reason that
//! starts "could not parse" (CLASSIFY-5).
//!
//! The walker then visits every simple command, numbering them as *parts* in reading order
//! (commands inside substitutions and re-read strings get their own numbers). Wrappers are
//! unwrapped and the command they run is classified too: `sudo` (with its flags), `env`,
//! `timeout`, `nice`, `ionice`, `nohup`, `xargs`, `exec`, `command`, `time`, `stdbuf`,
//! `chroot`, `nsenter`, `flock`, `watch`, `systemd-run`, `su -c`, `bash|sh|zsh -c '...'`,
//! `ssh HOST CMD`, `eval`, `trap`, `find -exec`, `docker exec|run`, `kubectl exec`,
//! `pct exec`. Text a shell reads on its input (`echo '...' | sh`, `bash <<EOF`) is read as
//! a script as well; a shell fed by a pipe from another program runs a script nobody can
//! read, which is destructive. Each program is classified by its rule in `rules/` with
//! per-subcommand and per-flag knowledge. The strictest finding wins (the first on a tie)
//! and the reason names its word and part: "`rm` in part 2 (`rm -rf /tmp/x`) deletes files".
//! The classification only ever walks the tree; it never matches the raw string.
//!
//! Read-only is decided option by option (CLASSIFY-6): when a program's rule finds a command
//! read-only, every option it is given must be on that program's allow-list in
//! `rules/options.rs` (a reader without a list accepts none); any other option makes it
//! `config_mutation` with a reason naming the option. Variables that change what runs
//! (`PS4`, `PATH`, `LD_PRELOAD`, `GIT_*`, `PAGER`, ...) are `config_mutation` however they
//! are set, and builtins that change the shell (`set -x`, `shopt -s`, `trap`, `alias`,
//! `enable`, `eval`, `exec`, `builtin`) are never read-only (`rules/builtins.rs`).
//!
//! Deliberate choices:
//! * A program that is not in the vocabulary is `config_mutation` with the reason
//!   "unknown command `x`" (CLASSIFY-1), and its [`Classification::knowledge`] is
//!   [`Knowledge::Unknown`], so the gate asks for its own approval (GATE-5, CLASSIFY-7)
//!   unless a policy rule with examples classifies it ([`Knowledge::Policy`]).
//! * A program named by its path in `/bin`, `/sbin`, `/usr/bin`, `/usr/sbin`,
//!   `/usr/local/bin` or `/usr/local/sbin` is classified as its basename and the reason
//!   says so (CLASSIFY-7); any other path-qualified program (`./cat`, `/tmp/x/cat`,
//!   `~/bin/ls`) is unknown: the classifier cannot know what such a path points at.
//! * A redirection to a file is at least `config_mutation`; to a block device it is
//!   `destructive`; `/dev/null`, the standard streams and fd duplication are harmless.
//! * A reader whose flags matter (`find`, `sed`, `git`, ...) with an argument known only at
//!   run time (`$X`, `$(...)`) is `config_mutation`, since the value could be a flag.
//! * Removing packages, `journalctl --vacuum-*`, `git reset --hard` and SQL `DELETE` destroy
//!   data and are `destructive`, alongside the CLASSIFY-4 list.
//!
//! # Why a hand-written reader
//!
//! We read the shell with a hand-written recursive-descent parser of the subset operators
//! type rather than a parser crate. tree-sitter-bash needs a C build step and gives a
//! concrete syntax tree that still needs its own quote removal and error mapping;
//! brush-parser and yash-syntax are complete shells' front ends with far more grammar (and
//! dependencies) than classification needs, and their error recovery is not tuned for
//! "refuse anything doubtful". The hand-written reader (`parser.rs`, `word.rs`, `ast.rs`) is about 1,500 lines, has no
//! dependencies, compiles in seconds on two cores, never panics (it is fuzzed), bounds its
//! nesting, and yields exactly the tree the classifier walks.

#![deny(missing_docs)]

mod arith;
pub mod ast;
pub mod class;
pub mod classification;
pub mod corpus;
pub mod cutoff;
pub mod grammar;
mod opts;
pub mod parser;
mod policy;
pub mod preview;
mod rules;
pub mod same;
mod secret;
pub mod secret_table;
pub mod shell;
mod walk;
mod word;
pub mod writes;

pub use ast::Script;
pub use class::{CommandClass, UnknownVariant};
pub use classification::{Classification, Knowledge, Sensitivity};
pub use cutoff::{CutOff, cuts_off};
pub use grammar::Grammar;
pub use parser::{ParseError, ParseErrorKind};
pub use policy::{Policy, PolicyError, PolicyErrorKind, PolicyRule, PreviewRow};
pub use preview::{PackageAction, PackageChange, PreviewForm, PreviewParser, preview_form};
pub use rules::options::tables as option_tables;
pub use secret::{DEFAULT_SECRET_PATHS, SecretPaths, SecretPattern};
pub use shell::{Shell, UnknownShell};
pub use writes::{WriteKind, WriteTarget, WriteTargets, write_targets};

/// Classifies a command with the built-in rules only, read as POSIX sh (the default pinned
/// shell, CLASSIFY-8). Pure, total and deterministic.
pub fn classify(command: &str) -> Classification {
    classify_in(command, Shell::Sh)
}

/// Classifies a command with the built-in rules only, read in the grammar of `shell`, the
/// interpreter that will run it (CLASSIFY-8).
pub fn classify_in(command: &str, shell: Shell) -> Classification {
    walk::Walker::new(None, shell).classify(command)
}

#[cfg(test)]
mod tests;
