//! SAFE-2: the files a command writes that the classifier can name, so the core can have
//! them copied before the change runs.
//!
//! The command is read with the same parser the classifier uses, and every simple command
//! is visited (inside lists, pipelines, compound commands and `$(...)`); `sudo` in front is
//! looked through. A file is named when its word is literal text:
//! * a redirection that writes (`>`, `>>`, `<>`, `&>`, `&>>`), except the `/dev/` nodes;
//! * the files `sed -i` edits (the same reading of sed's options as its preview);
//! * the files `tee` writes;
//! * the destination of `cp`, `mv` and `install` (the last operand, or `-t DIR`'s
//!   directory, which the host resolves per copied file);
//! * the files `truncate` resizes.
//!
//! A write the reader cannot name (a target known only at run time) is counted in
//! [`WriteTargets::unnamed`], so the caller can say the backup is partial.

use serde::{Deserialize, Serialize};

use crate::ast::{
    Command, Compound, Expansion, List, Pipeline, RedirectOp, RedirectTarget, Script,
    SimpleCommand, Word,
};
use crate::preview::sed_in_place_files;

/// How a named file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteKind {
    /// A redirection (`>`, `>>`, `&>`, `<>`).
    Redirection,
    /// `sed -i`.
    SedInPlace,
    /// `tee`.
    Tee,
    /// The destination of `cp`, `mv` or `install`; a directory receives the sources' names.
    CopyDestination,
    /// `truncate`.
    Truncate,
}

/// One file a command writes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WriteTarget {
    /// The path as written in the command.
    pub path: String,
    /// How it is written.
    pub kind: WriteKind,
    /// For a copy destination: the sources, whose names a directory destination receives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

/// The files a command writes, in reading order, without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteTargets {
    /// The files named.
    pub named: Vec<WriteTarget>,
    /// Writes whose target is known only at run time.
    pub unnamed: usize,
}

impl WriteTargets {
    /// Whether the command names no file and has no unnamed write.
    pub fn is_empty(&self) -> bool {
        self.named.is_empty() && self.unnamed == 0
    }

    fn push(&mut self, path: &str, kind: WriteKind, sources: Vec<String>) {
        if path.starts_with("/dev/") || path == "-" {
            return;
        }
        if self.named.iter().any(|t| t.path == path && t.kind == kind) {
            return;
        }
        self.named.push(WriteTarget {
            path: path.to_owned(),
            kind,
            sources,
        });
    }
}

/// The files `command` writes that can be named (SAFE-2). A command that does not parse
/// names nothing (the gate already treats it as destructive).
pub fn write_targets(command: &str) -> WriteTargets {
    let mut targets = WriteTargets::default();
    if let Ok(script) = Script::parse(command) {
        list(&script.body, &mut targets);
    }
    targets
}

fn list(list_: &List, out: &mut WriteTargets) {
    for item in &list_.items {
        pipeline(&item.and_or.first, out);
        for (_, next) in &item.and_or.rest {
            pipeline(next, out);
        }
    }
}

fn pipeline(pipeline: &Pipeline, out: &mut WriteTargets) {
    for command in &pipeline.commands {
        match command {
            Command::Simple(simple) => simple_command(simple, out),
            Command::Compound(compound_, redirects) => {
                compound(compound_, out);
                for redirect in redirects {
                    redirection(redirect.op, &redirect.target, out);
                }
            }
            // A definition runs nothing until it is called.
            Command::FunctionDef(_) => {}
        }
    }
}

fn compound(compound_: &Compound, out: &mut WriteTargets) {
    for body in compound_.lists() {
        list(body, out);
    }
}

fn redirection(op: RedirectOp, target: &RedirectTarget, out: &mut WriteTargets) {
    let writes = matches!(
        op,
        RedirectOp::Write
            | RedirectOp::Append
            | RedirectOp::ReadWrite
            | RedirectOp::WriteAll
            | RedirectOp::AppendAll
    );
    let RedirectTarget::Word(word) = target else {
        return;
    };
    if !writes {
        return;
    }
    match word.literal() {
        Some(path) => out.push(path, WriteKind::Redirection, Vec::new()),
        None => out.unnamed += 1,
    }
}

fn simple_command(simple: &SimpleCommand, out: &mut WriteTargets) {
    for word in simple.words.iter().chain(&simple.assignments) {
        expansions(&word.expansions, out);
    }
    for redirect in &simple.redirects {
        redirection(redirect.op, &redirect.target, out);
    }
    let mut words: &[Word] = &simple.words;
    // `sudo [-flags] cmd`: the command sudo runs writes the files.
    if words.first().and_then(Word::literal) == Some("sudo") {
        let skip = words[1..]
            .iter()
            .take_while(|w| w.text.starts_with('-'))
            .count();
        words = &words[1 + skip..];
    }
    let Some(program) = words.first().and_then(Word::literal) else {
        return;
    };
    let program = program.rsplit('/').next().unwrap_or(program);
    let literal: Option<Vec<String>> = words
        .iter()
        .map(|w| w.literal().map(str::to_owned))
        .collect();
    let Some(literal) = literal else {
        if matches!(
            program,
            "sed" | "tee" | "cp" | "mv" | "install" | "truncate"
        ) {
            out.unnamed += 1;
        }
        return;
    };
    match program {
        "sed" => {
            for file in sed_in_place_files(&literal).unwrap_or_default() {
                out.push(&file, WriteKind::SedInPlace, Vec::new());
            }
        }
        "tee" => {
            for file in operands(&literal[1..], &[]) {
                out.push(&file, WriteKind::Tee, Vec::new());
            }
        }
        "cp" | "mv" | "install" => copy(program, &literal[1..], out),
        "truncate" => {
            for file in operands(&literal[1..], &["-s", "-r", "--size", "--reference"]) {
                out.push(&file, WriteKind::Truncate, Vec::new());
            }
        }
        _ => {}
    }
}

fn expansions(expansions_: &[Expansion], out: &mut WriteTargets) {
    for expansion in expansions_ {
        match expansion {
            Expansion::Command(body) | Expansion::Process(body) => list(body, out),
            Expansion::Backtick(script) => list(&script.body, out),
            Expansion::Parameter | Expansion::Arithmetic => {}
        }
    }
}

/// The operands of a command whose options in `valued` take the next word as their value.
fn operands(args: &[String], valued: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut idx = 0;
    while idx < args.len() {
        let arg = &args[idx];
        idx += 1;
        if arg == "--" {
            out.extend(args[idx..].iter().cloned());
            break;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            if valued.contains(&arg.as_str()) {
                idx += 1;
            }
            continue;
        }
        out.push(arg.clone());
    }
    out
}

/// `cp`/`mv`/`install`: the destination (last operand or `-t DIR`), with the sources.
fn copy(program: &str, args: &[String], out: &mut WriteTargets) {
    // `install -d` makes directories, which overwrites no file.
    if program == "install" && args.iter().any(|a| a == "-d" || a == "--directory") {
        return;
    }
    let valued: &[&str] = match program {
        "install" => &["-m", "-o", "-g", "-S", "-t", "--mode", "--owner", "--group"],
        _ => &["-t", "-S", "--suffix", "--target-directory"],
    };
    let mut target_dir = None;
    for (idx, arg) in args.iter().enumerate() {
        if arg == "-t" || arg == "--target-directory" {
            target_dir = args.get(idx + 1).cloned();
        } else if let Some(dir) = arg.strip_prefix("--target-directory=") {
            target_dir = Some(dir.to_owned());
        }
    }
    let mut files = operands(args, valued);
    let destination = match target_dir {
        Some(dir) => dir,
        None => {
            if files.len() < 2 {
                return;
            }
            files.pop().unwrap_or_default()
        }
    };
    out.push(&destination, WriteKind::CopyDestination, files);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(command: &str) -> Vec<(String, WriteKind)> {
        write_targets(command)
            .named
            .into_iter()
            .map(|t| (t.path, t.kind))
            .collect()
    }

    fn paths(command: &str) -> Vec<String> {
        named(command).into_iter().map(|(p, _)| p).collect()
    }

    // rule: SAFE-2
    #[test]
    fn sed_in_place_names_its_files_and_plain_sed_none() {
        assert_eq!(
            named("sudo sed -i 's/a/b/' /etc/app.conf"),
            vec![("/etc/app.conf".to_owned(), WriteKind::SedInPlace)]
        );
        assert_eq!(
            paths("sed -i.bak -e s/a/b/ /etc/a /etc/b"),
            ["/etc/a", "/etc/b"]
        );
        assert!(paths("sed 's/a/b/' /etc/app.conf").is_empty());
    }

    // rule: SAFE-2
    #[test]
    fn redirections_tee_copies_and_truncate_name_their_targets() {
        assert_eq!(paths("echo x > /etc/motd 2>/dev/null"), ["/etc/motd"]);
        assert_eq!(paths("echo x >> /etc/hosts"), ["/etc/hosts"]);
        assert_eq!(
            paths("echo x | sudo tee -a /etc/a /etc/b"),
            ["/etc/a", "/etc/b"]
        );
        assert_eq!(
            paths("cp -p /tmp/new.conf /etc/app.conf"),
            ["/etc/app.conf"]
        );
        assert_eq!(paths("mv -t /etc/app /tmp/a /tmp/b"), ["/etc/app"]);
        assert_eq!(paths("install -m 0644 -o root /tmp/x /etc/x"), ["/etc/x"]);
        assert!(paths("install -d /etc/newdir").is_empty());
        assert_eq!(
            paths("truncate -s 0 /var/log/app.log"),
            ["/var/log/app.log"]
        );
        assert_eq!(
            paths("if true; then echo a > /etc/a; fi; (echo b >/etc/b)"),
            ["/etc/a", "/etc/b"]
        );
    }

    // rule: SAFE-2
    #[test]
    fn a_target_known_only_at_run_time_is_counted_not_named() {
        let targets = write_targets("echo x > \"$FILE\"; sed -i s/a/b/ $F");
        assert!(targets.named.is_empty(), "{targets:?}");
        assert_eq!(targets.unnamed, 2);
        assert!(write_targets("cat /etc/hosts").is_empty());
    }
}
