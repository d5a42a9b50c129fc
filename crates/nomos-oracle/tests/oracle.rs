//! The execution oracle (CLASSIFY-9) against the real classifier, and the oracle's own
//! proofs that it can fail: a writer called `read_only` is caught, a reader is not.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use nomos_classify::{CommandClass, Shell};
use nomos_oracle::findings;
use nomos_oracle::generate::{Generator, table_commands};
use nomos_oracle::judge::Breach;
use nomos_oracle::oracle::{self, Candidate, Config, Origin, Progress, Report};
use nomos_oracle::sandbox::{Limits, Sandbox};
use nomos_oracle::secrets::{self, RowOutcome};
use nomos_oracle::sources;

/// The bounded sample every test run takes (a few thousand runs, well under three minutes
/// on a busy two-core machine); `scripts/oracle.sh N` takes everything.
/// Every `CORPUS_STRIDE`th corpus command.
const CORPUS_STRIDE: usize = 12;
/// Every `TABLE_STRIDE`th command built from the option tables.
const TABLE_STRIDE: usize = 16;
/// Generated commands.
const GENERATED: usize = 400;

/// The sandbox, or `None` (with a message saying so) when `bwrap` or `strace` is not
/// installed: `scripts/test.sh` installs both, so CI always runs the oracle. Anything else
/// that keeps the sandbox from starting fails the test.
fn sandbox() -> Option<Sandbox> {
    for (tool, package) in [("bwrap", "bubblewrap"), ("strace", "strace")] {
        let found = std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()));
        if !found {
            eprintln!(
                "SKIPPED: the execution oracle needs `{tool}` (Debian package `{package}`); \
                 `scripts/test.sh` installs it"
            );
            return None;
        }
    }
    let limits = Limits {
        // Short: the sample's endless commands (`tail -f`, `watch`) cost their limit each,
        // and a command cut early only shows less, never a change it did not make.
        timeout: Duration::from_millis(600),
        output_cap: 64 * 1024,
    };
    let driver = PathBuf::from(env!("CARGO_BIN_EXE_nomos-oracle"));
    match Sandbox::new(limits, driver) {
        Ok(sandbox) => Some(sandbox),
        Err(error) => panic!("the execution oracle cannot start its sandbox: {error}"),
    }
}

fn workspace(path: &str) -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../..")
    .join(path)
}

fn config() -> Config {
    Config {
        workers: 2,
        batch: 25,
        progress: Progress::Quiet,
    }
}

fn given(commands: &[&str]) -> Vec<Candidate> {
    commands
        .iter()
        .map(|command| Candidate {
            command: (*command).to_owned(),
            origin: Origin::Given,
        })
        .collect()
}

fn refuted(report: &Report) -> Vec<(String, Shell, Breach)> {
    let mut found: Vec<(String, Shell, Breach)> = report
        .refutations
        .iter()
        .map(|refutation| {
            (
                refutation.command.clone(),
                refutation.shell,
                refutation.findings[0].breach,
            )
        })
        .collect();
    found.sort_by(|a, b| (a.0.as_str(), a.1.as_str()).cmp(&(b.0.as_str(), b.1.as_str())));
    found
}

#[test]
fn a_writer_called_read_only_is_refuted_under_every_shell() {
    let Some(sandbox) = sandbox() else { return };
    let everything_reads = |_: &str, _: Shell| CommandClass::ReadOnly;
    let candidates = given(&[
        "touch x",
        "echo hi > f",
        "sed -n 'p;w out' notes.txt",
        "kill -TERM 1",
    ]);
    let report = oracle::run(&sandbox, &candidates, &everything_reads, config()).unwrap();
    let found = refuted(&report);
    let expected: Vec<(String, Shell, Breach)> = [
        ("echo hi > f", Breach::WritesFile),
        ("kill -TERM 1", Breach::SignalsOutside),
        ("sed -n 'p;w out' notes.txt", Breach::WritesFile),
        ("touch x", Breach::WritesFile),
    ]
    .iter()
    .flat_map(|(command, breach)| {
        let mut shells = Shell::ALL.to_vec();
        shells.sort_by_key(|shell| shell.as_str());
        shells
            .into_iter()
            .map(move |shell| ((*command).to_owned(), shell, *breach))
    })
    .collect();
    assert_eq!(found, expected, "{report}");
    assert!(
        report
            .refutations
            .iter()
            .all(|refutation| refutation.findings[0].syscall.contains('('))
    );
}

#[test]
fn readers_are_not_refuted_and_the_oracle_asks_only_about_read_only_verdicts() {
    let Some(sandbox) = sandbox() else { return };
    let candidates = given(&[
        "cat notes.txt | grep alpha > /dev/null",
        "ls -la dir; echo $(wc -l < lines.txt)",
        "tar -tf archive.tar",
        "git -C repo log --oneline",
        "touch never-run",
    ]);
    let classify = |command: &str, _: Shell| {
        if command.starts_with("touch") {
            CommandClass::ConfigMutation
        } else {
            CommandClass::ReadOnly
        }
    };
    let report = oracle::run(&sandbox, &candidates, &classify, config()).unwrap();
    assert!(report.holds(), "{report}");
    for (_, counts) in &report.per_shell {
        assert_eq!(counts.classified, 5);
        assert_eq!(counts.read_only, 4);
        assert_eq!(counts.ran, 4);
    }
}

/// CLASSIFY-9 counts only sockets that reach a network: the kernel's netlink (`ss`, `ip
/// addr`), an IP socket only asked about interfaces (`ifconfig`, `ip -6 addr`) and a Unix
/// socket stay on the host, while a DNS lookup is refuted by its `connect`.
// rule: CLASSIFY-9
#[test]
fn only_a_socket_that_reaches_a_network_refutes() {
    let Some(sandbox) = sandbox() else { return };
    let local = [
        "ss -tln",
        "ss -x",
        "ip addr",
        "ip -6 addr",
        "ifconfig -a",
        "python3 -c 'import socket; socket.socket(socket.AF_UNIX).close()'",
    ];
    let everything_reads = |_: &str, _: Shell| CommandClass::ReadOnly;
    let under_sh = |command: &str, shell: Shell| {
        if shell == Shell::Sh {
            everything_reads(command, shell)
        } else {
            CommandClass::ConfigMutation
        }
    };
    let mut commands = local.to_vec();
    commands.push("getent ahosts example.invalid");
    let report = oracle::run(&sandbox, &given(&commands), &under_sh, config()).unwrap();
    let refuted: Vec<&str> = report
        .refutations
        .iter()
        .map(|refutation| refutation.command.as_str())
        .collect();
    assert_eq!(refuted, vec!["getent ahosts example.invalid"], "{report}");
    assert!(
        report.refutations[0]
            .findings
            .iter()
            .all(|finding| finding.breach == Breach::OpensSocket),
        "{report}"
    );
}

#[test]
fn a_command_that_runs_a_hidden_program_is_refuted() {
    let Some(sandbox) = sandbox() else { return };
    let everything_reads = |_: &str, _: Shell| CommandClass::ReadOnly;
    let candidates = given(&[
        "awk 'BEGIN { system(\"date\") }'",
        "find . -maxdepth 0 -exec date ;",
    ]);
    let report = oracle::run(&sandbox, &candidates, &everything_reads, config()).unwrap();
    let awk: Vec<_> = report
        .refutations
        .iter()
        .filter(|refutation| refutation.command.starts_with("awk"))
        .collect();
    assert_eq!(awk.len(), 3, "{report}");
    assert!(
        awk.iter()
            .all(|refutation| refutation.findings[0].breach == Breach::ExecutesUnseen)
    );
    // `find -exec date` names `date`: what it runs is seen, and `date` changes nothing.
    assert!(
        report
            .refutations
            .iter()
            .all(|refutation| !refutation.command.starts_with("find")),
        "{report}"
    );
}

#[test]
fn each_kind_of_change_is_refuted_naming_its_system_call() {
    let Some(sandbox) = sandbox() else { return };
    let under_sh = |_: &str, shell: Shell| {
        if shell == Shell::Sh {
            CommandClass::ReadOnly
        } else {
            CommandClass::ConfigMutation
        }
    };
    let cases = [
        ("mkdir newdir", Breach::ChangesPath, "mkdir"),
        ("mv notes.txt moved.txt", Breach::ChangesPath, "rename"),
        ("chmod 600 /tmp", Breach::ChangesAttribute, "chmod"),
        ("hostname oracle-test", Breach::ChangesKernel, "sethostname"),
        ("mount -t tmpfs none /mnt", Breach::ChangesMount, "mount"),
        (
            "getent hosts example.invalid",
            Breach::OpensSocket,
            "connect(",
        ),
        ("kill -TERM 1", Breach::SignalsOutside, "kill"),
        (
            "sed -n '1e date' notes.txt",
            Breach::ExecutesUnseen,
            "execve",
        ),
    ];
    let commands: Vec<&str> = cases.iter().map(|(command, _, _)| *command).collect();
    let report = oracle::run(&sandbox, &given(&commands), &under_sh, config()).unwrap();
    for (command, breach, syscall) in cases {
        let refutation = report
            .refutations
            .iter()
            .find(|refutation| refutation.command == command)
            .unwrap_or_else(|| panic!("{command} is not refuted:\n{report}"));
        assert_eq!(refutation.shell, Shell::Sh);
        let finding = refutation
            .findings
            .iter()
            .find(|finding| finding.breach == breach)
            .unwrap_or_else(|| panic!("{command}: no {breach}:\n{report}"));
        assert!(finding.syscall.contains(syscall), "{command}: {finding:?}");
    }
    assert_eq!(report.refutations.len(), cases.len(), "{report}");
}

#[test]
fn secret_rows_must_reach_their_path_and_ordinary_rows_no_default_secret() {
    let Some(sandbox) = sandbox() else { return };
    let text = std::fs::read_to_string(
        std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
        )
        .join("tests/fixtures/secret-reads.tsv"),
    )
    .unwrap();
    let rows = secrets::parse_secret_reads(&text).unwrap();
    assert_eq!(rows.len(), 9);
    let results = secrets::run(&sandbox, &rows, config()).unwrap();
    assert_eq!(results.len(), rows.len() * Shell::ALL.len());
    for result in &results {
        let wrong_on_purpose = [9, 12].contains(&result.row.line);
        let reads_elsewhere = result.row.command.starts_with("ssh ");
        match &result.outcome {
            RowOutcome::Holds => assert!(!wrong_on_purpose && !reads_elsewhere, "{result:?}"),
            RowOutcome::Mismatch(why) => {
                assert!(wrong_on_purpose, "{result:?}");
                assert!(why.contains("/etc/shadow"), "{result:?}");
            }
            RowOutcome::Unverifiable(why) => {
                assert!(reads_elsewhere && why.contains("ssh"), "{result:?}");
            }
        }
    }
}

/// The secret-read table of the classifier (SECRET-1), when it is there, run traced: its
/// disagreements with the trace are known ones (each a FIXME for the table's owner).
#[test]
fn the_classifiers_secret_read_table_agrees_with_the_trace() {
    let path = workspace("fixtures/classify/secret-reads.tsv");
    if !path.is_file() {
        eprintln!("SKIPPED: {} does not exist", path.display());
        return;
    }
    let Some(sandbox) = sandbox() else { return };
    let rows = secrets::parse_secret_reads(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let results = secrets::run(&sandbox, &rows, config()).unwrap();
    let disagree: BTreeSet<(String, String)> = results
        .iter()
        .filter(|result| matches!(result.outcome, RowOutcome::Mismatch(_)))
        .map(|result| (result.shell.as_str().to_owned(), result.row.command.clone()))
        .collect();
    let context = format!("{results:#?}");
    check_known(
        KNOWN_SECRET_DISAGREEMENTS,
        "rows of fixtures/classify/secret-reads.tsv the trace disagrees with today",
        &disagree,
        &context,
    );
}

/// The secret-read table's rows the trace disagrees with today (`shell<TAB>command`).
const KNOWN_SECRET_DISAGREEMENTS: &str = "tests/fixtures/known-secret-disagreements.tsv";

// rule: CLASSIFY-9
#[test]
fn every_read_only_verdict_of_a_sample_of_the_corpus_previews_golden_cases_and_generated_commands_holds_when_run()
 {
    let Some(sandbox) = sandbox() else { return };
    let corpus = sources::corpus_commands(&workspace("fixtures/classify/corpus.tsv")).unwrap();
    let previews = sources::preview_commands(&corpus);
    let golden = sources::golden_commands(&workspace("evals/golden.yaml")).unwrap();
    assert!(corpus.len() > 1000 && !previews.is_empty() && !golden.is_empty());
    let corpus: Vec<String> = corpus.into_iter().step_by(CORPUS_STRIDE).collect();
    let table: Vec<String> = table_commands().into_iter().step_by(TABLE_STRIDE).collect();
    let mut generator = Generator::new(2026);
    let generated: Vec<String> = (0..GENERATED).map(|_| generator.next_command()).collect();
    let mut candidates = Vec::new();
    for (commands, origin) in [
        (corpus, Origin::Corpus),
        (previews, Origin::Preview),
        (golden, Origin::Golden),
        (table, Origin::Table),
        (generated, Origin::Generated),
    ] {
        candidates.extend(
            commands
                .into_iter()
                .map(|command| Candidate { command, origin }),
        );
    }
    let report = oracle::run(&sandbox, &candidates, &oracle::built_in, config()).unwrap();
    eprintln!("{report}");
    assert!(report.read_only() > 1000, "{report}");
    assert!(report.not_run.is_empty(), "{report}");
    // Keyed by class, not by command: which commands of a class reach their call before
    // the time limit can vary on a loaded machine, the class does not.
    let refuted: BTreeSet<(String, String)> = report
        .refutations
        .iter()
        .filter_map(findings::class_key)
        .map(|(breach, program, construct)| (format!("{breach}\t{program}"), construct))
        .collect();
    check_known(
        KNOWN_REFUTATIONS,
        "read_only verdicts the trace refutes today; fix the class in nomos-classify",
        &refuted,
        &report.to_string(),
    );
}

/// The classes of the sample's refutations the classifier has today, each a FIXME for the
/// classifier's owner (the findings log has an example of each):
/// `breach<TAB>program<TAB>construct`, the construct being the command's first word.
/// `UPDATE_KNOWN=1` rewrites the file from a run.
const KNOWN_REFUTATIONS: &str = "tests/fixtures/known-refutations.tsv";

/// Asserts that every pair found (written `A<TAB>B`, tabs and newlines inside `B` as `\t`
/// and `\n`) is in the known list at `path` (a new one fails the test), says which known
/// ones no longer occur, and with `UPDATE_KNOWN=1` rewrites the list instead.
fn check_known(path: &str, what: &str, found: &BTreeSet<(String, String)>, context: &str) {
    let path = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join(path);
    let escape = |text: &str| {
        text.replace('\\', "\\\\")
            .replace('\t', "\\t")
            .replace('\n', "\\n")
    };
    if std::env::var_os("UPDATE_KNOWN").is_some() {
        let mut text = format!(
            "# FIXME(CLASSIFY-9): {what}.\n\
             # Fix each, then drop its lines (UPDATE_KNOWN=1 rewrites this file).\n"
        );
        for (shell, command) in found {
            text.push_str(&format!("{shell}\t{}\n", escape(command)));
        }
        if let Err(error) = std::fs::write(&path, text) {
            panic!("cannot write {}: {error}", path.display());
        }
        return;
    }
    let known_text = std::fs::read_to_string(&path).unwrap_or_default();
    let known: BTreeSet<String> = known_text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let new: Vec<String> = found
        .iter()
        .map(|(shell, command)| format!("{shell}\t{}", escape(command)))
        .filter(|line| !known.contains(line))
        .collect();
    let found_lines: BTreeSet<String> = found
        .iter()
        .map(|(shell, command)| format!("{shell}\t{}", escape(command)))
        .collect();
    let fixed: Vec<&String> = known
        .iter()
        .filter(|line| !found_lines.contains(*line))
        .collect();
    if !fixed.is_empty() {
        eprintln!(
            "{} known refutations no longer occur (drop them from {}):\n{}",
            fixed.len(),
            path.display(),
            fixed
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    assert!(
        new.is_empty(),
        "the trace refutes verdicts not known before:\n{}\n\n{context}",
        new.join("\n")
    );
}
