//! The grammars of the real interpreters a pinned [`Shell`] may be (CLASSIFY-8): which
//! constructs each one reads, found by running `dash`, `bash` and `busybox sh`.
//!
//! `/bin/sh` is dash on Debian and Ubuntu, bash on Fedora, RHEL and Arch, and BusyBox ash on
//! Alpine, so [`Shell::Sh`] is read in all three grammars and the strictest reading wins:
//! where two readings differ and either can change state, the command is not `read_only`.
//! [`Shell::Bash`] is read as bash only, [`Shell::Busybox`] as ash only.
//!
//! What each shell did with `SHELL -c '...'` (dash 0.5.12, bash 5.2, BusyBox 1.35 ash):
//!
//! | construct | dash | bash | busybox ash |
//! |---|---|---|---|
//! | `[[ -n a ]]` | runs a program `[[` (not found); `[[ a < b ]]` opens `b` | test | the `test` builtin, read as a simple command: `[[ a > b ]]` writes `b` |
//! | `((echo hi))` | two subshells: runs `echo hi` | arithmetic (error) | two subshells |
//! | `(( 1 + 1 ))` | runs a program `1` | arithmetic | runs a program `1` |
//! | `for ((i=0;i<2;i++))` | syntax error | arithmetic loop | syntax error |
//! | `function f { ...; }` | syntax error (`}` unexpected) | function | function |
//! | `a[1]=x`, `${a[1]}` | runs a program `a[1]=x`; bad substitution | array | runs `a[1]=x`; bad substitution |
//! | `a=(x y)` | syntax error | array | syntax error |
//! | `$'a\x41b'` | `$` then a single-quoted `a\x41b` | `aAb` | `aAb` (no `\u`, `\c`, `\e`) |
//! | `$"text"` | `$` then a double-quoted `text` | `text` (locale) | `$` then `text` |
//! | `cat <<< x` | syntax error | here-string | syntax error |
//! | `echo hi &> out` | `echo hi &` then `> out` (creates `out` empty) | both streams to `out` | both streams to `out` |
//! | `echo hi &>> out` | `echo hi &` then `>> out` | appends both | syntax error |
//! | `echo hi >&out` | syntax error (bad fd number) | both streams to `out` | both streams to `out` |
//! | `a \|& b` | syntax error | pipes stderr too | syntax error |
//! | `echo {a,b}`, `{a..c}` | literal word | brace expansion | literal word |
//! | `cat <(echo hi)` | syntax error | process substitution | process substitution |
//! | `select x in a; do ...` | syntax error | select loop | syntax error |
//! | `$(( '$(touch x)' ))` | runs `touch x` | runs `touch x` | runs `touch x` |
//!
//! Contexts that evaluate text as code, in bash only (ash and dash have no arrays, and their
//! `let`, `[[`, `test` and `read` reject a subscript): a subscript `a[$(cmd)]` reaching the
//! arithmetic evaluator runs `cmd` from `let`, `declare -i`, `declare`/`local`/`typeset`
//! names and values, `printf -v`, `read`, `[[ X -eq Y ]]`, `[[ -v X ]]`, `test -v X`,
//! `(( ))` (where single quotes do not quote), `for (( ))`, `${a['...']}` and `${x:'...'}`,
//! `unset`, `${!x}`, `${s:offset:length}`, `$[ ]`, and through a variable whose value holds
//! such a subscript (`x='a[$(cmd)]'; echo $((x))`, or data: `read x < f; echo $((x))`).
//! A value exported to a program (`x=V prog`, `env x=V prog`, `export`) reaches any bash that
//! program starts. `${x@P}` runs the command substitutions in `x`'s value, and `coproc CMD`
//! runs `CMD` (in dash both are a bad substitution and a program name).
//! In every shell, single quotes inside `$(( ))` do not quote: the substitution runs.
//! Not code in any of the three: `[ X -eq Y ]`, `test X -eq Y`, `shift`, `return`, `exit`,
//! `kill`, `wait`, `ulimit`, `cd`. `read`, `mapfile`, `getopts`, `printf -v` and `for` fill
//! variables with data, which counts once arithmetic names them.

use serde::{Deserialize, Serialize};

use crate::shell::Shell;

/// The grammar of one real interpreter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Grammar {
    /// dash, the Debian `/bin/sh`: POSIX sh and little more.
    Dash,
    /// GNU bash.
    Bash,
    /// BusyBox ash: POSIX sh with some bash extensions.
    Ash,
}

impl Shell {
    /// The grammars a command run by this shell may be read in; a command is classified in
    /// each and the strictest reading wins (CLASSIFY-8).
    pub fn grammars(self) -> &'static [Grammar] {
        match self {
            Shell::Sh => &[Grammar::Dash, Grammar::Bash, Grammar::Ash],
            Shell::Bash => &[Grammar::Bash],
            Shell::Busybox => &[Grammar::Ash],
        }
    }

    /// The grammars of a shell named as a program inside a command (`bash -c '...'`,
    /// `busybox sh`), or `None` when the program is not a shell the classifier reads.
    /// Shells whose grammar is not modelled (`zsh`, `ksh`, ...) are read in all three.
    pub fn grammars_of_program(program: &str) -> &'static [Grammar] {
        match program {
            "bash" => Shell::Bash.grammars(),
            "dash" => &[Grammar::Dash],
            "ash" | "busybox" => Shell::Busybox.grammars(),
            _ => Shell::Sh.grammars(),
        }
    }
}

impl Grammar {
    /// The shell this grammar belongs to, for reasons: `dash`, `bash`, `busybox ash`.
    pub fn shell_name(self) -> &'static str {
        match self {
            Grammar::Dash => "dash",
            Grammar::Bash => "bash",
            Grammar::Ash => "busybox ash",
        }
    }

    /// `[[ ... ]]` is a test command (otherwise `[[` is a command word and `<`, `>` inside
    /// it are redirections, as BusyBox ash reads it too: the execution oracle saw
    /// `[[ a > b ]]` write `b` there).
    pub fn reads_double_brackets(self) -> bool {
        matches!(self, Grammar::Bash)
    }

    /// `(( ... ))` and `for (( ... ))` are arithmetic (otherwise two subshells).
    pub fn reads_arith_command(self) -> bool {
        self == Grammar::Bash
    }

    /// `function NAME BODY` defines a function (otherwise `function` is a program name).
    pub fn reads_function_keyword(self) -> bool {
        matches!(self, Grammar::Bash | Grammar::Ash)
    }

    /// Arrays: `a=(x y)` and `a[i]=x` are assignments, subscripts are evaluated.
    pub fn reads_arrays(self) -> bool {
        self == Grammar::Bash
    }

    /// `$'...'` is a string with backslash escapes (otherwise `$` then a quoted string).
    pub fn reads_ansi_c_quotes(self) -> bool {
        matches!(self, Grammar::Bash | Grammar::Ash)
    }

    /// `$"..."` is a translated string (otherwise `$` then a quoted string).
    pub fn reads_locale_quotes(self) -> bool {
        self == Grammar::Bash
    }

    /// `<<<` is a here-string (otherwise a syntax error).
    pub fn reads_here_strings(self) -> bool {
        self == Grammar::Bash
    }

    /// `&>` sends both streams to a file (otherwise `&` ends the command and `>` starts
    /// another).
    pub fn reads_and_redirect(self) -> bool {
        matches!(self, Grammar::Bash | Grammar::Ash)
    }

    /// `&>>` appends both streams to a file.
    pub fn reads_and_append(self) -> bool {
        self == Grammar::Bash
    }

    /// `>&file` sends both streams to a file (otherwise a syntax error).
    pub fn reads_dup_to_file(self) -> bool {
        matches!(self, Grammar::Bash | Grammar::Ash)
    }

    /// `|&` pipes both streams.
    pub fn reads_pipe_both(self) -> bool {
        self == Grammar::Bash
    }

    /// `{a,b}` and `{1..3}` expand to several words.
    pub fn reads_brace_expansion(self) -> bool {
        self == Grammar::Bash
    }

    /// `<(...)` and `>(...)` are process substitutions.
    pub fn reads_process_substitution(self) -> bool {
        matches!(self, Grammar::Bash | Grammar::Ash)
    }

    /// `select NAME in ...; do ...; done` is a loop.
    pub fn reads_select(self) -> bool {
        self == Grammar::Bash
    }

    /// `;&` and `;;&` end a `case` arm.
    pub fn reads_case_fallthrough(self) -> bool {
        self == Grammar::Bash
    }

    /// `$(( ... ))` whose text holds a `case` command (in a `$(...)`, a backtick or a
    /// `${...}` substitution) is not arithmetic but `$( ( ... ) )`, a command substitution
    /// of a subshell whose words run as a command: bash 5.2 runs `1` for
    /// `$(( 1 + $(case x in x) echo 2;; esac) ))` (found by the execution oracle,
    /// CLASSIFY-9); dash and BusyBox ash compute it.
    pub fn reads_case_in_arithmetic_as_a_subshell(self) -> bool {
        self == Grammar::Bash
    }

    /// Whether bash's arithmetic evaluator runs the code in subscripts (`a[$(cmd)]`) of the
    /// text it evaluates.
    pub fn evaluates_subscripts(self) -> bool {
        self == Grammar::Bash
    }
}
