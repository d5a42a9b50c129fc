//! `nomos-oracle N`: runs N commands (the corpus, the preview forms, the golden cases, the
//! option tables, then generated ones up to N) through the execution oracle (CLASSIFY-9)
//! and prints the time, the counts per shell and every refutation.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use nomos_oracle::generate::{Generator, table_commands};
use nomos_oracle::oracle::{self, Candidate, Config, Origin, Progress};
use nomos_oracle::sandbox::{Limits, Sandbox};
use nomos_oracle::secrets;
use nomos_oracle::sources;

/// Commands per chunk of a long run.
const CHUNK: usize = 5000;

/// Proves the classifier's read-only verdicts by running them, traced, in a sandbox.
#[derive(Parser, Debug)]
#[command(name = "nomos-oracle")]
struct Args {
    /// Commands in all: the fixed sources first, then generated ones.
    #[arg(default_value_t = 100_000)]
    count: usize,
    /// The generator's seed.
    #[arg(long, default_value_t = 9)]
    seed: u64,
    /// Sandboxes at once (one leaves the other core of a two-core machine alone).
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Commands per sandbox.
    #[arg(long, default_value_t = 25)]
    batch: usize,
    /// Each command's time limit, in milliseconds.
    #[arg(long, default_value_t = 1500)]
    timeout_ms: u64,
    /// The labelled corpus.
    #[arg(long, default_value = "fixtures/classify/corpus.tsv")]
    corpus: PathBuf,
    /// The golden manifest.
    #[arg(long, default_value = "evals/golden.yaml")]
    golden: PathBuf,
    /// Generated commands only (no corpus, previews, golden cases or table commands).
    #[arg(long)]
    generated_only: bool,
    /// The secret-read table (SECRET-1), run traced when the file exists.
    #[arg(long, default_value = "fixtures/classify/secret-reads.tsv")]
    secret_reads: PathBuf,
    /// Only the commands of this file, one a line (`#` comments), to reproduce a finding.
    #[arg(long, conflicts_with = "generated_only")]
    commands: Option<PathBuf>,
    /// Also append the run's refutations, one line per class under a dated header, to this
    /// file (see `nomos_oracle::findings`).
    #[arg(long)]
    findings: Option<PathBuf>,
    /// Inside a sandbox: run the batch in this directory (the sandbox starts the binary so).
    #[arg(long, hide = true)]
    drive: Option<PathBuf>,
}

fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    if let Some(dir) = &args.drive {
        nomos_oracle::driver::drive(dir, Path::new(nomos_oracle::sandbox::SCRATCH))
            .with_context(|| format!("driving the batch in {}", dir.display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut candidates = Vec::new();
    if let Some(path) = &args.commands {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        candidates.extend(
            text.lines()
                .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
                .map(|line| Candidate {
                    command: line.to_owned(),
                    origin: Origin::Given,
                }),
        );
    } else if !args.generated_only {
        let corpus = sources::corpus_commands(&args.corpus).context("reading the corpus")?;
        let previews = sources::preview_commands(&corpus);
        let golden = sources::golden_commands(&args.golden).context("reading the golden cases")?;
        let fixed = [
            (corpus, Origin::Corpus),
            (previews, Origin::Preview),
            (golden, Origin::Golden),
            (table_commands(), Origin::Table),
        ];
        for (commands, origin) in fixed {
            candidates.extend(
                commands
                    .into_iter()
                    .map(|command| Candidate { command, origin }),
            );
        }
    }
    // Each command once: the fixed sources first, then generated ones until there are N.
    let mut seen = std::collections::HashSet::new();
    candidates.retain(|candidate| seen.insert(candidate.command.clone()));
    let mut generator = Generator::new(args.seed);
    let mut draws = 0usize;
    while args.commands.is_none() && candidates.len() < args.count && draws < args.count * 20 {
        draws += 1;
        let command = generator.next_command();
        if seen.insert(command.clone()) {
            candidates.push(Candidate {
                command,
                origin: Origin::Generated,
            });
        }
    }
    candidates.truncate(args.count);
    let limits = Limits {
        timeout: Duration::from_millis(args.timeout_ms),
        output_cap: 64 * 1024,
    };
    let driver = std::env::current_exe().context("finding the oracle's own binary")?;
    let sandbox = Sandbox::new(limits, driver).context("setting up the sandbox")?;
    let config = Config {
        workers: args.workers,
        batch: args.batch,
        progress: Progress::Stderr,
    };
    // A long run goes in chunks and says after each how far it got;
    // with `--findings FILE`, `FILE.partial` holds the findings so far.
    let mut report = oracle::Report::empty();
    for chunk in candidates.chunks(CHUNK) {
        let part = oracle::run(&sandbox, chunk, &oracle::built_in, config)
            .context("running the oracle")?;
        report.absorb(part);
        eprintln!(
            "oracle: {} of {} commands, {} read_only runs, {} refuted, {:.0} s",
            report.commands,
            candidates.len(),
            report.read_only(),
            report.refutations.len(),
            report.elapsed.as_secs_f64()
        );
        if let Some(path) = &args.findings {
            let partial = path.with_extension("partial");
            let what = format!(
                "partial: {} of {} commands",
                report.commands,
                candidates.len()
            );
            let _ = std::fs::write(
                &partial,
                nomos_oracle::findings::render(&report, &utc_now(), &what),
            );
        }
    }
    print!("{report}");
    let mut secret_mismatches = 0;
    let mut secret_log = String::new();
    if args.commands.is_none() && !args.generated_only && args.secret_reads.is_file() {
        let text = std::fs::read_to_string(&args.secret_reads)
            .with_context(|| format!("reading {}", args.secret_reads.display()))?;
        let rows = secrets::parse_secret_reads(&text)
            .with_context(|| format!("reading {}", args.secret_reads.display()))?;
        let results = secrets::run(&sandbox, &rows, config).context("running the secret reads")?;
        let summary = secrets::summarize(&args.secret_reads, &rows, &results);
        print!("{}", summary.text);
        let header = summary.text.lines().next().unwrap_or_default();
        secret_log = format!("# {header}\n{}", summary.log);
        secret_mismatches = summary.disagreeing;
    }
    if let Some(path) = &args.findings {
        let what = format!("{} commands asked, seed {}", args.count, args.seed);
        let entry = nomos_oracle::findings::render(&report, &utc_now(), &what);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.write_all(format!("{entry}{secret_log}").as_bytes())
            .with_context(|| format!("appending to {}", path.display()))?;
    }
    Ok(if report.holds() && secret_mismatches == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The time now, as `date -u` spells it for the log's header.
fn utc_now() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%MZ"])
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_default()
}
