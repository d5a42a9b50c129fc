//! The preview table (GATE-10): for a command that waits for the operator, the read-only
//! command(s) that show what it would do, and how their output is read.
//!
//! The table is data in one place and knows nothing of any host:
//!
//! | command                                                   | preview                                   | read as            |
//! |-----------------------------------------------------------|-------------------------------------------|--------------------|
//! | `apt-get`/`apt` `install`, `upgrade`, `dist-upgrade`, `full-upgrade`, `remove`, `purge`, `autoremove`, `reinstall` | `apt-get -s -o Dir::Log::Planner=` with the same words | [`PreviewParser::AptSimulation`] |
//! | `docker compose` (`-f F`, `-p P` kept) `up`, `pull`, `down`, `restart` | `docker compose ... config`, `docker compose ... ps` | [`PreviewParser::Raw`] |
//! | `systemctl` `restart`, `stop` or `disable` with units | `systemctl status U...`                   | [`PreviewParser::UnitStatus`] |
//! | `sed -i` (with or without a suffix) on a file | the same without `-i`, and `cat FILE`      | [`PreviewParser::SedDiff`] |
//!
//! A leading plain `sudo` is kept on the preview. Only one simple command is previewed (no
//! lists, pipes, redirections, assignments or expansions): anything else has no preview.
//! The operator's policy file adds rows (`[[preview]]`, see [`crate::Policy`]). Whether a
//! preview may run is not decided here: the caller classifies each preview command and runs
//! it only when it is `read_only`.

use serde::{Deserialize, Serialize};

use crate::ast::{Command, Script};

/// How a preview's output is read for the card.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreviewParser {
    /// `apt-get -s` output: the `Inst`/`Remv`/`Purg` lines are the packages that would change.
    AptSimulation,
    /// `systemctl status`: exit 3 (the unit is not active) is an answer, not a failure.
    UnitStatus,
    /// `sed` without `-i`, then `cat FILE`: a unified diff of the file against the output.
    SedDiff,
    /// Shown as it is.
    Raw,
}

impl PreviewParser {
    /// The stable spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            PreviewParser::AptSimulation => "apt_simulation",
            PreviewParser::UnitStatus => "unit_status",
            PreviewParser::SedDiff => "sed_diff",
            PreviewParser::Raw => "raw",
        }
    }

    /// Whether a preview command's exit code is an answer rather than a failure.
    pub fn exit_ok(&self, code: i32) -> bool {
        code == 0 || (*self == PreviewParser::UnitStatus && code == 3)
    }
}

/// A command's preview form: what to run, in order, and how to read it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PreviewForm {
    /// The preview commands, each run on the same host as the command.
    pub commands: Vec<String>,
    /// How their output is read.
    pub parser: PreviewParser,
    /// For [`PreviewParser::SedDiff`]: the file the diff is labelled with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// The built-in preview form of `command`, if the table has one.
pub fn preview_form(command: &str) -> Option<PreviewForm> {
    let words = simple_words(command)?;
    let (sudo, words) = match words.first().map(String::as_str) {
        Some("sudo") => (true, &words[1..]),
        _ => (false, &words[..]),
    };
    let program = words.first()?.as_str();
    let mut form = match program {
        "apt-get" | "apt" => apt(words)?,
        "docker" if words.get(1).map(String::as_str) == Some("compose") => {
            compose(&words[..2], &words[2..])?
        }
        "docker-compose" => compose(&words[..1], &words[1..])?,
        "systemctl" => systemctl(words)?,
        "sed" => sed(words)?,
        _ => return None,
    };
    if sudo {
        for preview in &mut form.commands {
            // `cat` of a file only root may read needs root as well.
            preview.insert_str(0, "sudo ");
        }
    }
    Some(form)
}

/// The words of a command that is one simple command of literal words, or `None`.
pub(crate) fn simple_words(command: &str) -> Option<Vec<String>> {
    let script = Script::parse(command).ok()?;
    let [item] = script.body.items.as_slice() else {
        return None;
    };
    if item.mode != crate::ast::RunMode::Foreground || !item.and_or.rest.is_empty() {
        return None;
    }
    let [Command::Simple(simple)] = item.and_or.first.commands.as_slice() else {
        return None;
    };
    if item.and_or.first.negation != crate::ast::Negation::Plain
        || !simple.assignments.is_empty()
        || !simple.redirects.is_empty()
        || simple.words.is_empty()
    {
        return None;
    }
    simple
        .words
        .iter()
        .map(|word| word.literal().map(str::to_owned))
        .collect()
}

/// A word as the shell reads it back: bare when safe, single-quoted otherwise.
pub fn quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
    if safe {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A word single-quoted whatever it holds, as `pct exec` and SSH exec requests carry a script.
pub fn quote_always(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Words joined into a command string.
pub fn join(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

const APT_VERBS: &[&str] = &[
    "install",
    "upgrade",
    "dist-upgrade",
    "full-upgrade",
    "remove",
    "purge",
    "autoremove",
    "reinstall",
];

fn apt(words: &[String]) -> Option<PreviewForm> {
    let verb = words[1..].iter().find(|w| !w.starts_with('-'))?;
    if !APT_VERBS.contains(&verb.as_str()) {
        return None;
    }
    // `apt` and `apt-get` take the same verbs; `apt-get -s` is the documented simulation,
    // and with the planner log off it writes nothing.
    let mut preview = vec![
        "apt-get".to_owned(),
        "-s".to_owned(),
        "-o".to_owned(),
        crate::rules::packages::PLANNER_LOG_OFF.to_owned(),
    ];
    // A simulation never asks, so the answers to its questions are left out.
    preview.extend(
        words[1..]
            .iter()
            .filter(|w| !matches!(w.as_str(), "-y" | "--yes" | "--assume-yes" | "-s"))
            .cloned(),
    );
    Some(PreviewForm {
        commands: vec![join(&preview)],
        parser: PreviewParser::AptSimulation,
        file: None,
    })
}

/// Compose's options before the subcommand that take a value.
const COMPOSE_VALUED: &[&str] = &[
    "-f",
    "--file",
    "-p",
    "--project-name",
    "--project-directory",
    "--env-file",
    "--profile",
];

fn compose(program: &[String], rest: &[String]) -> Option<PreviewForm> {
    let mut global = Vec::new();
    let mut idx = 0;
    while idx < rest.len() && rest[idx].starts_with('-') {
        let word = &rest[idx];
        global.push(word.clone());
        if COMPOSE_VALUED.contains(&word.as_str()) {
            global.push(rest.get(idx + 1)?.clone());
            idx += 2;
        } else if COMPOSE_VALUED
            .iter()
            .any(|v| v.starts_with("--") && word.starts_with(&format!("{v}=")))
        {
            idx += 1;
        } else {
            // An option whose meaning the table does not know: no preview.
            return None;
        }
    }
    let verb = rest.get(idx)?;
    if !matches!(verb.as_str(), "up" | "pull" | "down" | "restart") {
        return None;
    }
    let with = |sub: &str| {
        let mut words = program.to_vec();
        words.extend(global.iter().cloned());
        words.push(sub.to_owned());
        join(&words)
    };
    Some(PreviewForm {
        commands: vec![with("config"), with("ps")],
        parser: PreviewParser::Raw,
        file: None,
    })
}

fn systemctl(words: &[String]) -> Option<PreviewForm> {
    let verb_at = words[1..].iter().position(|w| !w.starts_with('-'))? + 1;
    if !matches!(words[verb_at].as_str(), "restart" | "stop" | "disable") {
        return None;
    }
    let units: Vec<String> = words[verb_at + 1..]
        .iter()
        .filter(|w| !w.starts_with('-'))
        .cloned()
        .collect();
    if units.is_empty() {
        return None;
    }
    let mut preview = vec!["systemctl".to_owned(), "status".to_owned()];
    preview.extend(units);
    Some(PreviewForm {
        commands: vec![join(&preview)],
        parser: PreviewParser::UnitStatus,
        file: None,
    })
}

fn sed(words: &[String]) -> Option<PreviewForm> {
    let reading = read_sed(words)?;
    if !reading.in_place {
        return None;
    }
    let [file] = reading.files.as_slice() else {
        return None;
    };
    let shown = if file.starts_with('-') {
        format!("./{file}")
    } else {
        file.clone()
    };
    Some(PreviewForm {
        commands: vec![join(&reading.kept), join(&["cat".to_owned(), shown])],
        parser: PreviewParser::SedDiff,
        file: Some(file.clone()),
    })
}

/// SAFE-2: the files `sed -i` edits (`words` start with `sed`), or `None` when the command
/// does not edit in place or cannot be read.
pub(crate) fn sed_in_place_files(words: &[String]) -> Option<Vec<String>> {
    let reading = read_sed(words)?;
    reading.in_place.then_some(reading.files)
}

/// A `sed` command line read as GNU sed reads its options.
struct SedReading {
    /// The words without `-i`/`--in-place`.
    kept: Vec<String>,
    /// Whether it edits in place.
    in_place: bool,
    /// The input files.
    files: Vec<String>,
}

fn read_sed(words: &[String]) -> Option<SedReading> {
    let mut kept = vec![words.first()?.clone()];
    let mut in_place = false;
    let mut script_given = false;
    let mut operands = Vec::new();
    let mut idx = 1;
    while idx < words.len() {
        let word = &words[idx];
        idx += 1;
        if word == "--" {
            operands.extend(words[idx..].iter().cloned());
            kept.extend(words[idx - 1..].iter().cloned());
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            match name {
                "in-place" => in_place = true,
                "expression" | "file" => {
                    script_given = true;
                    kept.push(word.clone());
                    if !long.contains('=') {
                        kept.push(words.get(idx)?.clone());
                        idx += 1;
                    }
                }
                "line-length" if !long.contains('=') => return None,
                _ => kept.push(word.clone()),
            }
            continue;
        }
        let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) else {
            operands.push(word.clone());
            kept.push(word.clone());
            continue;
        };
        // GNU sed reads a cluster left to right: `-i` takes the rest as its suffix, and
        // `-e`, `-f`, `-l` take the rest (or the next word) as their value.
        let mut flags = String::new();
        for (at, c) in cluster.char_indices() {
            match c {
                'i' => {
                    in_place = true;
                    break;
                }
                'e' | 'f' | 'l' => {
                    script_given |= c != 'l';
                    flags.push_str(&cluster[at..]);
                    if at + c.len_utf8() == cluster.len() {
                        kept.push(format!("-{flags}"));
                        kept.push(words.get(idx)?.clone());
                        idx += 1;
                        flags.clear();
                    }
                    break;
                }
                _ => flags.push(c),
            }
        }
        if !flags.is_empty() {
            kept.push(format!("-{flags}"));
        }
    }
    let files = if script_given {
        operands
    } else {
        operands.get(1..)?.to_vec()
    };
    Some(SedReading {
        kept,
        in_place,
        files,
    })
}

/// What a package simulation says would happen to one package.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PackageAction {
    /// Newly installed.
    Install,
    /// Installed in another version.
    Upgrade,
    /// Removed, its configuration kept.
    Remove,
    /// Removed with its configuration.
    Purge,
}

/// One package a simulation would change.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PackageChange {
    /// What would happen to it.
    pub action: PackageAction,
    /// The package name (with `:arch` when apt printed one).
    pub name: String,
    /// The installed version, when apt named it (`[1.0-1]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The version it would get (`(1.1-1 Debian:12/stable [amd64])`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// The packages an `apt-get -s` run would change, from its `Inst`, `Remv` and `Purg` lines
/// (`Inst name [old] (new repo [arch])`, `Remv name [old]`); `Conf` lines repeat an `Inst`.
pub fn parse_apt_simulation(text: &str) -> Vec<PackageChange> {
    let mut changes = Vec::new();
    for line in text.lines() {
        let (kind, rest) = match line.split_once(' ') {
            Some((kind @ ("Inst" | "Remv" | "Purg"), rest)) => (kind, rest.trim()),
            _ => continue,
        };
        let (name, mut rest) = match rest.split_once(' ') {
            Some((name, rest)) => (name, rest.trim()),
            None => (rest, ""),
        };
        if name.is_empty() {
            continue;
        }
        let mut from = None;
        if let Some((version, after)) = rest.strip_prefix('[').and_then(|i| i.split_once(']')) {
            from = Some(version.to_owned());
            rest = after.trim();
        }
        let to = rest
            .strip_prefix('(')
            .and_then(|inner| inner.split_whitespace().next())
            .map(|v| v.trim_end_matches(')').to_owned());
        let action = match kind {
            "Inst" if from.is_some() => PackageAction::Upgrade,
            "Inst" => PackageAction::Install,
            "Remv" => PackageAction::Remove,
            _ => PackageAction::Purge,
        };
        changes.push(PackageChange {
            action,
            name: name.to_owned(),
            from,
            to,
        });
    }
    changes
}

/// Lines of context around each change in [`unified_diff`].
const CONTEXT: usize = 3;
/// Beyond this many line pairs the diff replaces the whole file instead of aligning it.
const MAX_CELLS: usize = 4_000_000;

/// A unified diff (`diff -u` form) from `old` to `new`, labelled `a/FILE` and `b/FILE`;
/// empty when they are the same.
pub fn unified_diff(old: &str, new: &str, file: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = align(&a, &b);
    if ops.iter().all(|op| matches!(op, Op::Same(..))) {
        // Only a trailing newline differs: line by line, nothing changes.
        return String::new();
    }
    // `a/` and `b/` prefix the path as `diff -u` labels do in git; an absolute path keeps
    // one slash.
    let file = file.trim_start_matches('/');
    let mut out = format!("--- a/{file}\n+++ b/{file}\n");
    // Group the edit script into hunks with CONTEXT lines around each change.
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Same(..)))
        .map(|(i, _)| i)
        .collect();
    let mut idx = 0;
    while idx < changed.len() {
        let start = changed[idx].saturating_sub(CONTEXT);
        let mut end = changed[idx];
        while idx + 1 < changed.len() && changed[idx + 1] <= end + 2 * CONTEXT + 1 {
            idx += 1;
            end = changed[idx];
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        idx += 1;
        let (mut a_start, mut b_start) = (None, None);
        let (mut a_len, mut b_len) = (0, 0);
        let mut body = String::new();
        for op in &ops[start..end] {
            match *op {
                Op::Same(i, j) => {
                    a_start.get_or_insert(i);
                    b_start.get_or_insert(j);
                    a_len += 1;
                    b_len += 1;
                    body.push_str(&format!(" {}\n", a[i]));
                }
                Op::Del(i, j) => {
                    a_start.get_or_insert(i);
                    b_start.get_or_insert(j);
                    a_len += 1;
                    body.push_str(&format!("-{}\n", a[i]));
                }
                Op::Add(i, j) => {
                    a_start.get_or_insert(i);
                    b_start.get_or_insert(j);
                    b_len += 1;
                    body.push_str(&format!("+{}\n", b[j]));
                }
            }
        }
        let range = |start: Option<usize>, len: usize| {
            let first = start.unwrap_or(0) + usize::from(len > 0);
            if len == 1 {
                format!("{first}")
            } else {
                format!("{first},{len}")
            }
        };
        out.push_str(&format!(
            "@@ -{} +{} @@\n{body}",
            range(a_start, a_len),
            range(b_start, b_len)
        ));
    }
    out
}

/// One step of an edit script; the indexes are the positions in the old and new lines
/// where it happens.
#[derive(Clone, Copy, Debug)]
enum Op {
    Same(usize, usize),
    Del(usize, usize),
    Add(usize, usize),
}

/// A shortest edit script from `a` to `b` by longest common subsequence.
fn align(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > MAX_CELLS {
        let mut ops: Vec<Op> = (0..n).map(|i| Op::Del(i, 0)).collect();
        ops.extend((0..m).map(|j| Op::Add(n, j)));
        return ops;
    }
    // lcs[i][j]: the common subsequence length of a[i..] and b[j..].
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            ops.push(Op::Del(i, j));
            i += 1;
        } else {
            ops.push(Op::Add(i, j));
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests;
