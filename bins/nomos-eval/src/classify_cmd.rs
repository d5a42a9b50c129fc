//! `nomos-eval classify`: scores the classifier against a labelled corpus, or classifies
//! commands read from stdin, one per line.
//!
//! * `--corpus FILE` reads `expected<TAB>command` lines, prints accuracy, a confusion
//!   matrix and every miss with its line number (`--json` for machines), and exits 1 on
//!   any miss. It also counts, apart, the commands labelled as writing, executing or
//!   changing state (`config_mutation`, `destructive`) that came out `read_only`: the one
//!   miss that lets a command run with no plan (GATE-1); it must be 0.
//! * `-` reads commands from stdin and prints `class<TAB>reason<TAB>command` per line.
//! * `--policy FILE` applies an operator policy on top of the built-in rules.
//! * `--shell sh|bash|busybox` reads stdin's commands for that pinned interpreter
//!   (CLASSIFY-8; default `sh`); corpus rows name their own (`read_only@bash`).

use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use nomos_classify::CommandClass;
use nomos_classify::Policy;
use nomos_classify::Shell;
use nomos_classify::corpus::{CorpusEntry, parse_corpus};
use serde_json::json;

/// Arguments of `nomos-eval classify`.
#[derive(Debug, clap::Args)]
pub struct ClassifyArgs {
    /// A labelled corpus: lines `expected<TAB>command`, `#` comments.
    #[arg(long, value_name = "FILE")]
    corpus: Option<PathBuf>,
    /// An operator policy file (TOML) applied on top of the built-in rules.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// The pinned interpreter stdin's commands are read for: sh, bash or busybox.
    #[arg(long, value_name = "SHELL", default_value = "sh")]
    shell: Shell,
    /// `-` to classify commands read from stdin, one per line.
    #[arg(value_name = "-", conflicts_with = "corpus")]
    stdin: Option<String>,
}

/// How a run ended, mapped to the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything classified as expected.
    Clean,
    /// At least one corpus command got another class.
    Misses,
}

impl Outcome {
    /// The process exit code: 0 clean, 1 on misses.
    pub fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Clean => ExitCode::SUCCESS,
            Outcome::Misses => ExitCode::from(1),
        }
    }
}

/// Runs the subcommand.
pub fn run(args: &ClassifyArgs) -> anyhow::Result<Outcome> {
    let policy = match &args.policy {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading policy {}", path.display()))?;
            Policy::parse(&text, &path.display().to_string())?
        }
        None => Policy::empty(),
    };
    match (&args.corpus, args.stdin.as_deref()) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading corpus {}", path.display()))?;
            let entries =
                parse_corpus(&text).with_context(|| format!("in corpus {}", path.display()))?;
            let report = score(&policy, &entries);
            let mut out = std::io::stdout().lock();
            if args.json {
                writeln!(out, "{}", report.to_json())?;
            } else {
                write!(out, "{}", report.to_text())?;
            }
            Ok(if report.misses.is_empty() {
                Outcome::Clean
            } else {
                Outcome::Misses
            })
        }
        (None, Some("-")) => {
            classify_stdin(&policy, args.shell, args.json)?;
            Ok(Outcome::Clean)
        }
        (None, Some(other)) => {
            bail!("unexpected argument `{other}` (use `-` to read commands from stdin)")
        }
        (None, None) => bail!("give --corpus FILE or `-` to read commands from stdin"),
    }
}

fn classify_stdin(policy: &Policy, shell: Shell, json: bool) -> anyhow::Result<()> {
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    for line in stdin.lines() {
        let command = line.context("reading stdin")?;
        if command.trim().is_empty() {
            continue;
        }
        let verdict = policy.classify_in(&command, shell);
        if json {
            let row = json!({ "class": verdict.class.as_str(), "reason": verdict.reason, "command": command });
            writeln!(out, "{row}")?;
        } else {
            let reason = verdict.reason.replace(['\t', '\n'], " ");
            writeln!(out, "{}\t{reason}\t{command}", verdict.class.as_str())?;
        }
    }
    Ok(())
}

/// One corpus command that got another class than its label.
#[derive(Debug)]
struct Miss<'a> {
    entry: &'a CorpusEntry,
    got: CommandClass,
    reason: String,
}

/// The result of scoring a corpus.
#[derive(Debug)]
struct Report<'a> {
    total: usize,
    /// `confusion[expected][got]`, indexed by `CommandClass::ALL` order.
    confusion: [[usize; 3]; 3],
    misses: Vec<Miss<'a>>,
}

fn index(class: CommandClass) -> usize {
    CommandClass::ALL
        .iter()
        .position(|c| *c == class)
        .unwrap_or(0)
}

fn score<'a>(policy: &Policy, entries: &'a [CorpusEntry]) -> Report<'a> {
    let mut report = Report {
        total: entries.len(),
        confusion: [[0; 3]; 3],
        misses: Vec::new(),
    };
    for entry in entries {
        let verdict = policy.classify_in(&entry.command, entry.shell);
        report.confusion[index(entry.expected)][index(verdict.class)] += 1;
        if verdict.class != entry.expected {
            report.misses.push(Miss {
                entry,
                got: verdict.class,
                reason: verdict.reason,
            });
        }
    }
    report
}

impl Report<'_> {
    fn correct(&self) -> usize {
        self.total - self.misses.len()
    }

    /// Commands labelled as changing state that the classifier called read-only.
    fn state_changing_read_only(&self) -> usize {
        let read_only = index(CommandClass::ReadOnly);
        CommandClass::ALL
            .iter()
            .filter(|class| **class != CommandClass::ReadOnly)
            .map(|class| self.confusion[index(*class)][read_only])
            .sum()
    }

    fn accuracy(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            self.correct() as f64 / self.total as f64
        }
    }

    fn to_text(&self) -> String {
        let mut text = String::new();
        for miss in &self.misses {
            let _ = writeln!(
                text,
                "miss: line {}: expected {}, got {}: `{}` ({})",
                miss.entry.line, miss.entry.expected, miss.got, miss.entry.command, miss.reason
            );
        }
        let _ = writeln!(
            text,
            "accuracy: {:.2}% ({} of {} commands, {} missed)",
            self.accuracy() * 100.0,
            self.correct(),
            self.total,
            self.misses.len()
        );
        let _ = writeln!(
            text,
            "state-changing commands classified read_only: {} (must be 0)",
            self.state_changing_read_only()
        );
        let _ = writeln!(
            text,
            "\n{:<18}{:>12}{:>18}{:>14}",
            "expected \\ got", "read_only", "config_mutation", "destructive"
        );
        for (row, expected) in CommandClass::ALL.iter().enumerate() {
            let counts = self.confusion[row];
            let _ = writeln!(
                text,
                "{:<18}{:>12}{:>18}{:>14}",
                expected.as_str(),
                counts[0],
                counts[1],
                counts[2]
            );
        }
        text
    }

    fn to_json(&self) -> serde_json::Value {
        let mut confusion = serde_json::Map::new();
        for (row, expected) in CommandClass::ALL.iter().enumerate() {
            let mut cells = serde_json::Map::new();
            for (col, got) in CommandClass::ALL.iter().enumerate() {
                cells.insert(got.as_str().to_owned(), json!(self.confusion[row][col]));
            }
            confusion.insert(
                expected.as_str().to_owned(),
                serde_json::Value::Object(cells),
            );
        }
        let misses: Vec<_> = self
            .misses
            .iter()
            .map(|miss| {
                json!({
                    "line": miss.entry.line,
                    "expected": miss.entry.expected.as_str(),
                    "got": miss.got.as_str(),
                    "command": miss.entry.command,
                    "reason": miss.reason,
                })
            })
            .collect();
        json!({
            "total": self.total,
            "correct": self.correct(),
            "accuracy": self.accuracy(),
            "confusion": confusion,
            "state_changing_read_only": self.state_changing_read_only(),
            "misses": misses,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: CLASSIFY-6
    #[test]
    fn a_state_changing_command_classified_read_only_is_counted_apart() {
        let entries =
            parse_corpus("config_mutation\tls\ndestructive\tcat x\nread_only\trm x\n").unwrap();
        let report = score(&Policy::empty(), &entries);
        assert_eq!(report.state_changing_read_only(), 2);
        assert!(
            report
                .to_text()
                .contains("state-changing commands classified read_only: 2"),
            "{}",
            report.to_text()
        );
        assert_eq!(report.to_json()["state_changing_read_only"], 2);
    }

    #[test]
    fn a_miss_is_counted_in_the_confusion_matrix() {
        let entries = parse_corpus("read_only\trm x\nread_only\tls\n").unwrap();
        let report = score(&Policy::empty(), &entries);
        assert_eq!(report.misses.len(), 1);
        assert_eq!(report.misses[0].entry.line, 1);
        assert_eq!(report.confusion[0][2], 1);
        assert_eq!(report.confusion[0][0], 1);
        assert!(
            report
                .to_text()
                .contains("miss: line 1: expected read_only, got destructive")
        );
        assert_eq!(report.to_json()["correct"], 1);
    }
}
