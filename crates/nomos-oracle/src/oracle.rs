//! Runs the oracle (CLASSIFY-9): every candidate command is classified under each pinned
//! interpreter, and each one classified `read_only` is run in the sandbox, traced and
//! judged; the [`Report`] counts them and lists every refutation.

use std::collections::HashSet;
use std::fmt;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use nomos_classify::{CommandClass, Shell};

use crate::judge::{Finding, judge};
use crate::sandbox::{Job, Sandbox, SandboxError, TraceMode, Traced};

/// Where a candidate command came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// The labelled corpus.
    Corpus,
    /// A preview form's command (GATE-10).
    Preview,
    /// A golden case.
    Golden,
    /// Built from the rules' option tables.
    Table,
    /// Drawn by the seeded generator.
    Generated,
    /// Given by the caller (the oracle's own tests).
    Given,
}

impl Origin {
    /// The stable spelling used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Corpus => "corpus",
            Origin::Preview => "preview",
            Origin::Golden => "golden",
            Origin::Table => "table",
            Origin::Generated => "generated",
            Origin::Given => "given",
        }
    }
}

/// A command to classify and, when it is `read_only`, to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The command.
    pub command: String,
    /// Where it came from.
    pub origin: Origin,
}

/// How the oracle runs.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Sandboxes running at once.
    pub workers: usize,
    /// Commands per sandbox.
    pub batch: usize,
    /// Whether a long run says how far it got.
    pub progress: Progress,
}

/// Whether the oracle reports its progress while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Nothing until the report.
    Quiet,
    /// A line on stderr every hundred batches.
    Stderr,
}

/// A `read_only` verdict the trace refutes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refutation {
    /// The command.
    pub command: String,
    /// The interpreter it ran under.
    pub shell: Shell,
    /// Where it came from.
    pub origin: Origin,
    /// What the trace shows, first finding first.
    pub findings: Vec<Finding>,
}

/// Counts for one interpreter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShellCounts {
    /// Commands classified.
    pub classified: usize,
    /// Of those, classified `read_only`.
    pub read_only: usize,
    /// Of those, run to a trace.
    pub ran: usize,
    /// Of those, stopped at the time limit.
    pub timed_out: usize,
    /// Of those, refuted.
    pub refuted: usize,
}

/// What a run of the oracle found.
#[derive(Clone, Debug)]
pub struct Report {
    /// Wall time of the whole run.
    pub elapsed: Duration,
    /// Distinct commands classified.
    pub commands: usize,
    /// Counts per interpreter, in [`Shell::ALL`] order.
    pub per_shell: Vec<(Shell, ShellCounts)>,
    /// Every refuted verdict.
    pub refutations: Vec<Refutation>,
    /// Commands that left no trace even in a sandbox of their own.
    pub not_run: Vec<Job>,
}

impl Report {
    /// Whether no verdict was refuted and every command ran.
    pub fn holds(&self) -> bool {
        self.refutations.is_empty() && self.not_run.is_empty()
    }

    /// Adds another run's counts and findings to this one (a long run goes in chunks).
    pub fn absorb(&mut self, other: Report) {
        self.elapsed += other.elapsed;
        self.commands += other.commands;
        for (shell, counts) in other.per_shell {
            if let Some((_, mine)) = self.per_shell.iter_mut().find(|(s, _)| *s == shell) {
                mine.classified += counts.classified;
                mine.read_only += counts.read_only;
                mine.ran += counts.ran;
                mine.timed_out += counts.timed_out;
                mine.refuted += counts.refuted;
            }
        }
        self.refutations.extend(other.refutations);
        self.not_run.extend(other.not_run);
    }

    /// An empty report, to absorb chunks into.
    pub fn empty() -> Report {
        Report {
            elapsed: Duration::ZERO,
            commands: 0,
            per_shell: Shell::ALL
                .iter()
                .map(|shell| (*shell, ShellCounts::default()))
                .collect(),
            refutations: Vec::new(),
            not_run: Vec::new(),
        }
    }

    /// Commands classified `read_only`, over every interpreter.
    pub fn read_only(&self) -> usize {
        self.per_shell
            .iter()
            .map(|(_, counts)| counts.read_only)
            .sum()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "oracle: {} commands in {:.1} s",
            self.commands,
            self.elapsed.as_secs_f64()
        )?;
        for (shell, counts) in &self.per_shell {
            writeln!(
                f,
                "  {:<8} classified {:>7}  read_only {:>7}  ran {:>7}  timed out {:>5}  refuted {:>5}",
                shell.as_str(),
                counts.classified,
                counts.read_only,
                counts.ran,
                counts.timed_out,
                counts.refuted
            )?;
        }
        writeln!(f, "refutations: {}", self.refutations.len())?;
        for refutation in &self.refutations {
            writeln!(
                f,
                "REFUTED [{}] ({}) {:?}",
                refutation.shell.as_str(),
                refutation.origin.as_str(),
                refutation.command
            )?;
            for finding in refutation.findings.iter().take(3) {
                writeln!(f, "    {}: {}", finding.breach, finding.syscall)?;
            }
            if refutation.findings.len() > 3 {
                writeln!(f, "    ... {} more", refutation.findings.len() - 3)?;
            }
        }
        for job in &self.not_run {
            writeln!(
                f,
                "NOT RUN [{}] {:?}: no trace, even alone",
                job.shell.as_str(),
                job.command
            )?;
        }
        Ok(())
    }
}

/// A classifier as the oracle asks it: the class of a command read by a shell.
pub type Classifier<'a> = &'a (dyn Fn(&str, Shell) -> CommandClass + Sync);

/// The real classifier, read in each pinned shell's grammar (as the executor runs it).
pub fn built_in(command: &str, shell: Shell) -> CommandClass {
    nomos_classify::classify_in(command, shell).class
}

/// Classifies every candidate under every shell and runs, traces and judges each `read_only`
/// one. Duplicate commands are classified once.
pub fn run(
    sandbox: &Sandbox,
    candidates: &[Candidate],
    classify: Classifier<'_>,
    config: Config,
) -> Result<Report, SandboxError> {
    let started = Instant::now();
    let mut seen = HashSet::new();
    let mut per_shell: Vec<(Shell, ShellCounts)> = Shell::ALL
        .iter()
        .map(|shell| (*shell, ShellCounts::default()))
        .collect();
    let mut work: Vec<(Job, Origin)> = Vec::new();
    for candidate in candidates {
        if !seen.insert(candidate.command.as_str()) {
            continue;
        }
        for (shell, counts) in &mut per_shell {
            counts.classified += 1;
            if classify(&candidate.command, *shell) == CommandClass::ReadOnly {
                counts.read_only += 1;
                work.push((
                    Job {
                        command: candidate.command.clone(),
                        shell: *shell,
                    },
                    candidate.origin,
                ));
            }
        }
    }
    let batches: Vec<&[(Job, Origin)]> = work.chunks(config.batch.max(1)).collect();
    let results = run_batches(sandbox, &batches, config)?;
    let mut refutations = Vec::new();
    let mut not_run = Vec::new();
    let mut retry = Vec::new();
    for ((job, origin), traced) in work.iter().zip(results) {
        match traced {
            Some(traced) => record(&mut per_shell, &mut refutations, job, *origin, &traced),
            None => retry.push((job.clone(), *origin)),
        }
    }
    let singles: Vec<&[(Job, Origin)]> = retry.chunks(1).collect();
    let again = run_batches(sandbox, &singles, config)?;
    for ((job, origin), traced) in retry.iter().zip(again) {
        match traced {
            Some(traced) => record(&mut per_shell, &mut refutations, job, *origin, &traced),
            None => not_run.push(job.clone()),
        }
    }
    Ok(Report {
        elapsed: started.elapsed(),
        commands: seen.len(),
        per_shell,
        refutations,
        not_run,
    })
}

fn record(
    per_shell: &mut [(Shell, ShellCounts)],
    refutations: &mut Vec<Refutation>,
    job: &Job,
    origin: Origin,
    traced: &Traced,
) {
    let findings = judge(&job.command, &traced.calls, traced.ending);
    if let Some((_, counts)) = per_shell.iter_mut().find(|(shell, _)| *shell == job.shell) {
        counts.ran += 1;
        if traced.ending == crate::judge::Ending::TimedOut {
            counts.timed_out += 1;
        }
        if !findings.is_empty() {
            counts.refuted += 1;
        }
    }
    if !findings.is_empty() {
        refutations.push(Refutation {
            command: job.command.clone(),
            shell: job.shell,
            origin,
            findings,
        });
    }
}

/// What one batch gave: a trace per job, or why the batch could not run.
type BatchResult = Result<Vec<Option<Traced>>, SandboxError>;

/// Runs the batches on `workers` threads; the outcomes come back in the jobs' order.
fn run_batches(
    sandbox: &Sandbox,
    batches: &[&[(Job, Origin)]],
    config: Config,
) -> Result<Vec<Option<Traced>>, SandboxError> {
    let started = Instant::now();
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<BatchResult>>> =
        Mutex::new((0..batches.len()).map(|_| None).collect());
    thread::scope(|scope| {
        for _ in 0..config.workers.max(1) {
            scope.spawn(|| {
                loop {
                    let idx = {
                        let Ok(mut next) = next.lock() else { return };
                        let idx = *next;
                        *next += 1;
                        idx
                    };
                    let Some(batch) = batches.get(idx) else {
                        return;
                    };
                    if config.progress == Progress::Stderr && idx % 100 == 0 {
                        eprintln!(
                            "oracle: batch {idx} of {} after {:.0} s",
                            batches.len(),
                            started.elapsed().as_secs_f64()
                        );
                    }
                    let jobs: Vec<Job> = batch.iter().map(|(job, _)| job.clone()).collect();
                    let outcome = sandbox.run_batch(&jobs, TraceMode::Changes);
                    if let Ok(mut results) = results.lock() {
                        results[idx] = Some(outcome);
                    }
                }
            });
        }
    });
    let mut outcomes = Vec::new();
    let results = results.into_inner().unwrap_or_default();
    for (batch, result) in batches.iter().zip(results) {
        match result {
            Some(Ok(traced)) => outcomes.extend(traced),
            Some(Err(error)) => return Err(error),
            None => outcomes.extend(batch.iter().map(|_| None)),
        }
    }
    Ok(outcomes)
}
