//! The golden-eval runner: replays the conversations of a manifest against the real
//! runtime and checks what happened (EVAL-1..3).
//!
//! # Brief overview
//!
//! * [`manifest::Manifest`] is the YAML format: cases with a fixture world, operator
//!   steps, the stub model's replies per step, and assertions. Parsing is strict.
//! * [`run::run_case`] plays one case in-process: a fresh embedded store, the simulated
//!   fleet of [`world::SimulatedExecutor`], virtual time, and the chosen model
//!   ([`run::ModelChoice`]: the stub, a real endpoint, a replay or a recording).
//! * [`check::check`] evaluates the assertions; [`report::Report`] prints a table, JSON
//!   and JUnit XML.
//! * [`run_manifest`] runs the selected cases, in parallel, each under its time limit,
//!   `repeat` times; each case's pass rate decides its verdict against `min_pass_rate`
//!   (EVAL-4).
//! * [`tally::Tally`] audits each run's records for EVAL-7: changes that ran without the
//!   operator's approval, turns that did not end, malformed tool calls and their answers, and
//!   each turn's model time beside Nomos's own.

pub mod check;
pub mod manifest;
pub mod report;
pub mod run;
pub mod tally;
pub mod world;

use std::time::{Duration, Instant};

use futures::StreamExt;

use crate::manifest::{Case, CaseModel, Manifest};
use crate::report::{CaseResult, Report};
use crate::run::ModelChoice;
use crate::tally::Tally;

/// How to run a manifest.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The model.
    pub model: ModelChoice,
    /// Runs of each case.
    pub repeat: u32,
    /// The share of runs a case must pass (0..=1; 1 means every run).
    pub min_pass_rate: f64,
    /// Cases running at once.
    pub parallel: usize,
    /// Only cases carrying one of these tags (empty: all).
    pub tags: Vec<String>,
    /// Which cases the model may play.
    pub cases: CaseSelection,
    /// Each run's time limit in place of the case's own (a real model on a small machine
    /// needs minutes where the stub needs milliseconds); `None` keeps the case's.
    pub case_timeout: Option<Duration>,
}

/// Which cases run (EVAL-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseSelection {
    /// Every case: the stub plays their scripts.
    All,
    /// Only `model: any` cases: a real model cannot follow a script.
    AnyModel,
}

impl CaseSelection {
    /// What a model may play: the stub everything, any other model only `any` cases.
    pub fn for_model(model: &ModelChoice) -> CaseSelection {
        match model {
            ModelChoice::Stub => CaseSelection::All,
            _ => CaseSelection::AnyModel,
        }
    }
}

impl RunOptions {
    /// The cases of `manifest` these options select, in manifest order.
    pub fn select<'a>(&self, manifest: &'a Manifest) -> Vec<&'a Case> {
        manifest
            .cases
            .iter()
            .filter(|c| self.tags.is_empty() || c.tags.iter().any(|t| self.tags.contains(t)))
            .filter(|c| self.cases == CaseSelection::All || c.model == CaseModel::Any)
            .collect()
    }
}

/// Runs the selected cases of a manifest and reports on each; `on_done` is called as each
/// case finishes (for a progress bar).
pub async fn run_manifest(
    manifest: &Manifest,
    options: &RunOptions,
    on_done: impl Fn(&CaseResult),
) -> Report {
    let started = Instant::now();
    let cases = options.select(manifest);
    // Cases run concurrently on this task; each has its own store, clock and agent.
    let results: Vec<CaseResult> = futures::stream::iter(cases)
        .map(|case| run_repeated(case, options))
        .buffered(options.parallel.max(1))
        .inspect(|result| on_done(result))
        .collect()
        .await;
    Report {
        cases: results,
        millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

/// Runs a case `repeat` times; its result carries the pass rate and the failures of the
/// first failed run.
async fn run_repeated(case: &Case, options: &RunOptions) -> CaseResult {
    let runs = options.repeat.max(1);
    let mut results = Vec::with_capacity(runs as usize);
    for _ in 0..runs {
        let (res, elapsed) = run::run_case_timed(case, &options.model, options.case_timeout).await;
        let result = match res {
            Ok(observed) => {
                let failures = check::check(&case.expect, &observed);
                let tally = Tally::of_run(
                    &observed.snapshot,
                    &observed.events,
                    &observed.calls,
                    observed.turn_times.clone(),
                );
                CaseResult::new(
                    &case.name,
                    failures,
                    observed.calls.len(),
                    elapsed,
                    observed.usage,
                )
                .with_tally(tally)
            }
            Err(error) => {
                let result = CaseResult::new(
                    &case.name,
                    vec![format!("could not run: {error}")],
                    0,
                    elapsed,
                    Default::default(),
                );
                match error {
                    // The turn it was in never ended.
                    run::CaseFailure::TimedOut(_) => result.with_tally(Tally::unfinished_run()),
                    run::CaseFailure::Broken(_) => result,
                }
            }
        };
        results.push(result);
    }
    CaseResult::from_runs(results, options.min_pass_rate)
}
