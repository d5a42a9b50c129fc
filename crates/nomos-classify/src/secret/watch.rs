//! SECRET-1 during a walk: follows `cd`, checks every path a part reads against the secret
//! paths in force, and keeps the first secret read for the classification.

use super::{Cwd, Scope, SecretPaths, normalise};
use crate::classification::Sensitivity;
use crate::rules::reads::{Read, reads};
use crate::walk::Arg;

/// The first secret a command reads.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Found {
    program: String,
    written: String,
    normalised: String,
    pattern: String,
    scope: Scope,
}

/// What one classification has seen of the paths its parts read.
#[derive(Debug)]
pub(crate) struct SecretWatch<'p> {
    paths: &'p SecretPaths,
    cwd: Cwd,
    found: Option<Found>,
    /// Shell variables set to values the classifier can read, with those values.
    vars: Vec<(String, Vec<(String, bool)>)>,
}

/// How many values a word with known variables expands to before the rest are dropped.
const MAX_EXPANSIONS: usize = 16;

impl<'p> SecretWatch<'p> {
    pub(crate) fn new(paths: &'p SecretPaths) -> SecretWatch<'p> {
        SecretWatch {
            paths,
            cwd: Cwd::login(),
            found: None,
            vars: Vec::new(),
        }
    }

    /// `NAME=VALUE` (a bare assignment, or an argument of `export`, `local`, ...).
    pub(crate) fn assign_word(&mut self, word: Arg<'_>) {
        let Some((name, value)) = word.text.split_once('=') else {
            return;
        };
        let name = name.strip_suffix('+').unwrap_or(name);
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return;
        }
        // `NAME=(a b c)`: an array, each element one value `${NAME[@]}` may stand for.
        if let Some(inner) = value.strip_prefix('(').and_then(|v| v.strip_suffix(')')) {
            let values: Vec<Arg<'_>> = inner
                .split_whitespace()
                .map(|text| Arg {
                    text: text.trim_matches(['"', '\'']),
                    dynamic: word.dynamic,
                })
                .collect();
            self.assign(name, &values);
            return;
        }
        // `P=$(realpath ../etc/shadow)`: the path itself, as far as secrets go.
        if let Some(path) = echoed_path(value) {
            let value = Arg {
                text: path,
                dynamic: path.contains('$'),
            };
            self.assign(name, &[value]);
            return;
        }
        let value = Arg {
            text: value,
            dynamic: word.dynamic,
        };
        self.assign(name, &[value]);
    }

    /// Whether a secret read was already found.
    pub(crate) fn found(&self) -> bool {
        self.found.is_some()
    }

    /// A function call's arguments become `$1`, `$2`, ... and `$@`; returns what those
    /// held before, for [`SecretWatch::restore_positional`].
    pub(crate) fn bind_positional(
        &mut self,
        args: &[Arg<'_>],
    ) -> Vec<(String, Vec<(String, bool)>)> {
        let saved: Vec<(String, Vec<(String, bool)>)> = self
            .vars
            .iter()
            .filter(|(name, _)| is_positional(name))
            .cloned()
            .collect();
        self.vars.retain(|(name, _)| !is_positional(name));
        for (at, arg) in args.iter().take(9).enumerate() {
            self.assign(&(at + 1).to_string(), std::slice::from_ref(arg));
        }
        self.assign("@", args);
        self.vars.retain(|(name, _)| name != "*");
        let all = self
            .vars
            .iter()
            .find(|(name, _)| name == "@")
            .map(|(_, values)| values.clone())
            .unwrap_or_default();
        self.vars.push(("*".to_owned(), all));
        saved
    }

    /// Puts back the positional parameters [`SecretWatch::bind_positional`] replaced.
    pub(crate) fn restore_positional(&mut self, saved: Vec<(String, Vec<(String, bool)>)>) {
        self.vars.retain(|(name, _)| !is_positional(name));
        self.vars.extend(saved);
    }

    /// A variable takes one of `values` (a `for` loop's words, or one assignment).
    pub(crate) fn assign(&mut self, name: &str, values: &[Arg<'_>]) {
        let mut known = Vec::new();
        for value in values {
            for (text, dynamic) in self.expand(value.text, value.dynamic) {
                known.push((text, dynamic));
            }
        }
        known.truncate(MAX_EXPANSIONS);
        self.vars.retain(|(var, _)| var != name);
        self.vars.push((name.to_owned(), known));
    }

    /// The texts a word may stand for once known variables are put in (`$F`, `${F}`); a
    /// word still holding an unknown expansion stays dynamic.
    fn expand(&self, text: &str, dynamic: bool) -> Vec<(String, bool)> {
        if !dynamic {
            return vec![(text.to_owned(), false)];
        }
        let mut out = vec![(String::new(), false)];
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            let (before, after) = rest.split_at(at);
            for (done, _) in &mut out {
                done.push_str(before);
            }
            // `$(echo /etc/shadow)`, `$(realpath ../etc/shadow)`: the path itself.
            if after.starts_with("$(")
                && let Some(close) = after.find(')')
                && let Some(path) = echoed_path(&after[..=close])
                && !path.contains('$')
            {
                for (done, _) in &mut out {
                    done.push_str(path);
                }
                rest = &after[close + 1..];
                continue;
            }
            let (name, len) = variable_at(after);
            let values = self
                .vars
                .iter()
                .find(|(var, _)| !name.is_empty() && var == name)
                .map(|(_, values)| values.as_slice());
            match values {
                Some(values) if !values.is_empty() => {
                    let mut next = Vec::new();
                    for (done, done_dynamic) in &out {
                        for (value, value_dynamic) in values {
                            if next.len() < MAX_EXPANSIONS {
                                next.push((
                                    format!("{done}{value}"),
                                    *done_dynamic || *value_dynamic,
                                ));
                            }
                        }
                    }
                    out = next;
                }
                _ => {
                    for (done, done_dynamic) in &mut out {
                        done.push_str(&after[..len]);
                        *done_dynamic = true;
                    }
                }
            }
            rest = &after[len..];
        }
        for (done, _) in &mut out {
            done.push_str(rest);
        }
        if text.contains('`') {
            for (_, done_dynamic) in &mut out {
                *done_dynamic = true;
            }
        }
        out
    }

    /// A simple command, wrappers already unwrapped (`args[0]` is the program).
    pub(crate) fn command(&mut self, args: &[Arg<'_>]) {
        let Some(program) = args.first() else { return };
        if matches!(
            program.text,
            "export" | "local" | "declare" | "typeset" | "readonly"
        ) {
            for arg in &args[1..] {
                self.assign_word(*arg);
            }
            return;
        }
        if matches!(program.text, "cd" | "pushd") {
            let target = args[1..]
                .iter()
                .find(|a| !a.text.starts_with('-') || a.text == "-");
            self.cwd.change(target.map(|a| (a.text, a.dynamic)));
            return;
        }
        if self.found.is_some() {
            return;
        }
        for read in reads(args) {
            if self.check(program.text, &read) {
                return;
            }
        }
    }

    /// A redirection that reads a file (`< FILE`, `<> FILE`).
    pub(crate) fn redirect(&mut self, target: Arg<'_>) {
        if self.found.is_some() {
            return;
        }
        let read = Read {
            text: target.text,
            dynamic: target.dynamic,
            scope: Scope::File,
            name: None,
            base: None,
        };
        self.check("<", &read);
    }

    fn check(&mut self, program: &str, read: &Read<'_>) -> bool {
        let cwd = match read.base {
            Some(base) => {
                let mut cwd = self.cwd.clone();
                cwd.change(Some((base, read.dynamic)));
                cwd
            }
            None => self.cwd.clone(),
        };
        for (text, dynamic) in self.expand(read.text, read.dynamic) {
            for path in normalise(&text, dynamic, &cwd) {
                if let Some(pattern) = self.paths.find(&path, read.scope, read.name.as_ref()) {
                    self.found = Some(Found {
                        program: program.to_owned(),
                        written: read.text.to_owned(),
                        normalised: path.display(),
                        pattern: pattern.as_str().to_owned(),
                        scope: read.scope,
                    });
                    return true;
                }
            }
        }
        false
    }

    /// The sensitivity of the whole command, and the sentence its reason gains.
    pub(crate) fn finish(&mut self) -> (Sensitivity, Option<String>) {
        let Some(found) = self.found.take() else {
            return (Sensitivity::Ordinary, None);
        };
        let shown = if found.written == found.normalised {
            format!("`{}`", found.written)
        } else {
            format!("`{}` (`{}`)", found.written, found.normalised)
        };
        let by = if found.program == "<" {
            "a redirection".to_owned()
        } else {
            format!("`{}`", found.program)
        };
        let what = match found.scope {
            Scope::File => "a secret path",
            Scope::Tree | Scope::Named => "and what is under it, where secret paths are",
        };
        let sentence = format!(
            "; {by} reads {shown}, {what} (pattern `{}`), so it needs the operator's own approval (SECRET-1)",
            found.pattern
        );
        (
            Sensitivity::Secret {
                path: found.normalised,
                pattern: found.pattern,
            },
            Some(sentence),
        )
    }
}

/// The path of `$(realpath PATH)`, `$(readlink -f PATH)` or `$(echo PATH)`: a command
/// substitution whose output is its one argument's path.
fn echoed_path(value: &str) -> Option<&str> {
    let inner = value.strip_prefix("$(")?.strip_suffix(')')?;
    let mut words = inner.split_whitespace();
    let program = words.next()?;
    let rest: Vec<&str> = words.collect();
    let path = match (program, rest.as_slice()) {
        ("realpath" | "echo", [path]) => *path,
        ("realpath" | "readlink", [flag, path]) if matches!(*flag, "-f" | "-e" | "-m") => *path,
        _ => return None,
    };
    let path = path.trim_matches(['"', '\'']);
    (!path.is_empty() && !path.contains(['`', '(', ')'])).then_some(path)
}

/// Whether `name` is a positional parameter (`1`..`9`, `@`, `*`).
fn is_positional(name: &str) -> bool {
    matches!(name, "@" | "*") || (name.len() == 1 && name.as_bytes()[0].is_ascii_digit())
}

/// The variable name at the start of `text` (which starts with `$`) and the length of the
/// whole reference (`$F`, `${F}`, `${F[@]}`, `${F[0]}`, `$1`, `$@`); an empty name for any
/// other expansion. An array element stands for any of the array's values.
fn variable_at(text: &str) -> (&str, usize) {
    let body = &text[1..];
    if body.starts_with(['@', '*']) || body.starts_with(|c: char| c.is_ascii_digit()) {
        return (&body[..1], 2);
    }
    if let Some(inner) = body.strip_prefix('{') {
        if inner.starts_with(['@', '*']) && inner[1..].starts_with('}') {
            return (&inner[..1], 4);
        }
        let end = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len());
        if inner[end..].starts_with('}') {
            return (&inner[..end], end + 3);
        }
        if let Some(index) = inner[end..].strip_prefix('[')
            && let Some(close) = index.find(']')
            && index[close + 1..].starts_with('}')
        {
            return (&inner[..end], end + close + 5);
        }
        return ("", 1);
    }
    let end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    (&body[..end], end + 1)
}
