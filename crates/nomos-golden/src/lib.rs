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
//! * [`run_manifest`] runs every case, in parallel, each under its time limit, `repeat`
//!   times keeping the worst.

pub mod check;
pub mod manifest;
pub mod report;
pub mod run;
pub mod world;

use std::time::Instant;

use futures::StreamExt;

use crate::manifest::{Case, Manifest};
use crate::report::{CaseResult, Report, Verdict};
use crate::run::ModelChoice;

/// How to run a manifest.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The model.
    pub model: ModelChoice,
    /// Runs of each case; the worst one counts.
    pub repeat: u32,
    /// Cases running at once.
    pub parallel: usize,
    /// Only cases carrying one of these tags (empty: all).
    pub tags: Vec<String>,
}

/// Runs the cases of a manifest and reports on each; `on_done` is called as each case
/// finishes (for a progress bar).
pub async fn run_manifest(
    manifest: &Manifest,
    options: &RunOptions,
    on_done: impl Fn(&CaseResult),
) -> Report {
    let started = Instant::now();
    let cases: Vec<Case> = manifest
        .cases
        .iter()
        .filter(|c| options.tags.is_empty() || c.tags.iter().any(|t| options.tags.contains(t)))
        .cloned()
        .collect();
    // Cases run concurrently on this task; each has its own store, clock and agent.
    let results: Vec<CaseResult> = futures::stream::iter(cases.iter())
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

async fn run_repeated(case: &Case, options: &RunOptions) -> CaseResult {
    let mut worst: Option<CaseResult> = None;
    for _ in 0..options.repeat.max(1) {
        let (res, elapsed) = run::run_case_timed(case, &options.model).await;
        let result = match res {
            Ok(observed) => {
                let failures = check::check(&case.expect, &observed);
                CaseResult::new(
                    &case.name,
                    failures,
                    observed.calls.len(),
                    elapsed,
                    observed.usage,
                )
            }
            Err(error) => CaseResult::new(
                &case.name,
                vec![format!("could not run: {error}")],
                0,
                elapsed,
                Default::default(),
            ),
        };
        let replace = match &worst {
            None => true,
            Some(w) => w.result == Verdict::Pass && result.result == Verdict::Fail,
        };
        if replace {
            worst = Some(result);
        }
    }
    worst.unwrap_or_else(|| {
        CaseResult::new(
            &case.name,
            vec!["the case never ran".into()],
            0,
            Default::default(),
            Default::default(),
        )
    })
}
