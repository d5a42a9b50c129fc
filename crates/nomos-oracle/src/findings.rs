//! The findings log of a run: every refutation, deduplicated by class, one line each
//! (`shells<TAB>command<TAB>syscall<TAB>why`) under a header that dates the run, for the
//! classifier's owner to fix class by class.
//!
//! A class is what the refutation shows, not the exact command: the breach, the program that
//! made the call (or was executed), and the command's first word, which names the construct
//! that hid it (`let`, `printf`, `curl`, ...). Each line shows the class's shortest command
//! and the shells it was refuted under. Tabs and newlines inside a command are written `\t`
//! and `\n`, so a line stays a line.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::judge::Breach;
use crate::oracle::{Refutation, Report};

/// One class of refutation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    /// The interpreters it was refuted under, in [`nomos_classify::Shell::ALL`] order.
    pub shells: Vec<&'static str>,
    /// The shortest command of the class.
    pub command: String,
    /// The system call that refutes it.
    pub syscall: String,
    /// What the call changed, and which program made it.
    pub why: String,
    /// How many refuted runs fell in the class.
    pub runs: usize,
}

/// The class of a refutation: its first finding's breach and program, and the command's
/// first word (the construct).
pub fn class_key(refutation: &Refutation) -> Option<(Breach, String, String)> {
    let first = refutation.findings.first()?;
    let construct = refutation
        .command
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c| c == '\'' || c == '"')
        .to_owned();
    Some((first.breach, first.program.clone(), construct))
}

/// The report's refutations, one [`Class`] per breach, program and construct.
pub fn classes(report: &Report) -> Vec<Class> {
    let mut by_key: BTreeMap<(Breach, String, String), Class> = BTreeMap::new();
    for refutation in &report.refutations {
        let (Some(key), Some(first)) = (class_key(refutation), refutation.findings.first()) else {
            continue;
        };
        let class = by_key.entry(key).or_insert_with(|| Class {
            shells: Vec::new(),
            command: refutation.command.clone(),
            syscall: first.syscall.clone(),
            why: why(first.breach, &first.program),
            runs: 0,
        });
        class.runs += 1;
        let shell = refutation.shell.as_str();
        if !class.shells.contains(&shell) {
            class.shells.push(shell);
        }
        if refutation.command.len() < class.command.len() {
            class.command.clone_from(&refutation.command);
            class.syscall.clone_from(&first.syscall);
        }
    }
    let mut classes: Vec<Class> = by_key.into_values().collect();
    for class in &mut classes {
        class.shells.sort_by_key(|shell| {
            nomos_classify::Shell::ALL
                .iter()
                .position(|known| known.as_str() == *shell)
        });
    }
    classes
}

/// The log entry of one run: a dated header, then one line per class.
pub fn render(report: &Report, when: &str, what: &str) -> String {
    let classes = classes(report);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {when} oracle run ({what}): {} commands, {} read_only verdicts run, {} refuted in {} classes, {:.0} s",
        report.commands,
        report.read_only(),
        report.refutations.len(),
        classes.len(),
        report.elapsed.as_secs_f64()
    );
    for class in classes {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{} ({} runs)",
            class.shells.join(","),
            one_line(&class.command),
            one_line(&class.syscall),
            class.why,
            class.runs
        );
    }
    out
}

fn why(breach: Breach, program: &str) -> String {
    let program = if program.is_empty() { "?" } else { program };
    match breach {
        Breach::ExecutesUnseen => format!("{breach}: {program}"),
        _ => format!("{program} {breach}"),
    }
}

fn one_line(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use nomos_classify::Shell;

    use super::*;
    use crate::judge::Finding;
    use crate::oracle::{Origin, ShellCounts};

    fn refutation(command: &str, shell: Shell, program: &str) -> Refutation {
        Refutation {
            command: command.to_owned(),
            shell,
            origin: Origin::Given,
            findings: vec![Finding {
                breach: Breach::WritesFile,
                syscall: format!("5 openat(AT_FDCWD, \"x\", O_WRONLY|O_CREAT) by {command}"),
                program: program.to_owned(),
            }],
        }
    }

    #[test]
    fn refutations_of_one_class_make_one_line_with_the_shortest_command_and_every_shell() {
        let report = Report {
            elapsed: Duration::from_secs(3),
            commands: 3,
            per_shell: vec![(Shell::Sh, ShellCounts::default())],
            refutations: vec![
                refutation("let 'a[$(touch long-name)]=1'", Shell::Bash, "touch"),
                refutation("let 'a[$(touch x)]=1'", Shell::Busybox, "touch"),
                refutation("let 'a[$(touch x)]=1'", Shell::Sh, "touch"),
                refutation("sqlite3 a.db\t'.tables'\n", Shell::Sh, "sqlite3"),
            ],
            not_run: Vec::new(),
        };
        let text = render(&report, "2026-12-03T12:00Z", "test");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("# 2026-12-03T12:00Z oracle run (test): 3 commands"));
        assert!(lines[0].contains("4 refuted in 2 classes"), "{}", lines[0]);
        // Classes come in the order of breach, program and construct.
        assert_eq!(
            lines[1].split('\t').nth(1),
            Some("sqlite3 a.db\\t'.tables'\\n")
        );
        let fields: Vec<&str> = lines[2].split('\t').collect();
        assert_eq!(fields[0], "sh,bash,busybox");
        assert_eq!(fields[1], "let 'a[$(touch x)]=1'");
        assert_eq!(fields[3], "touch writes a file (3 runs)");
    }
}
