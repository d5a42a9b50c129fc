//! The execution oracle (CLASSIFY-9) against the real classifier, and the oracle's own
//! proofs that it can fail: a writer called `read_only` is caught, a reader is not.

use std::path::PathBuf;
use std::time::Duration;

use nomos_classify::{CommandClass, Shell};
use nomos_oracle::generate::{Generator, table_commands};
use nomos_oracle::judge::Breach;
use nomos_oracle::oracle::{self, Candidate, Config, Origin, Progress, Report};
use nomos_oracle::sandbox::{Limits, Sandbox};
use nomos_oracle::sources;

/// Generated commands in the bounded sample every test run draws.
const GENERATED: usize = 1500;
/// Table commands in the sample (every `TABLE_STRIDE`th of them, a different offset each
/// seed would give; the 100,000-command run takes them all).
const TABLE_STRIDE: usize = 4;

fn sandbox() -> Sandbox {
    let limits = Limits {
        timeout: Duration::from_secs(2),
        output_cap: 64 * 1024,
    };
    Sandbox::new(limits, PathBuf::from(env!("CARGO_BIN_EXE_nomos-oracle"))).unwrap_or_else(|error| {
        panic!("the execution oracle needs its sandbox (CI installs bubblewrap, strace, busybox): {error}")
    })
}

fn workspace(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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
    let sandbox = sandbox();
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
    let sandbox = sandbox();
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

#[test]
fn a_command_that_runs_a_hidden_program_is_refuted() {
    let sandbox = sandbox();
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

// rule: CLASSIFY-9
#[test]
fn every_read_only_verdict_of_the_corpus_previews_golden_cases_and_a_generated_sample_holds_when_run()
 {
    let sandbox = sandbox();
    let corpus = sources::corpus_commands(&workspace("fixtures/classify/corpus.tsv")).unwrap();
    let previews = sources::preview_commands(&corpus);
    let golden = sources::golden_commands(&workspace("evals/golden.yaml")).unwrap();
    assert!(corpus.len() > 1000 && !previews.is_empty() && !golden.is_empty());
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
    assert!(
        report.holds(),
        "the trace refutes read_only verdicts:\n{report}"
    );
}
