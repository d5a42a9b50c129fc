//! EVAL-7 offline: the `model: any` cases as a real small model played them (Gemma 3 270M on
//! llama.cpp's server, recorded with `scripts/real-model.sh --record`), replayed from the
//! committed recordings (replies that failed, such as one cut at the token limit, are not
//! recorded, so the replay fails those calls instead). No change runs without the operator's
//! approval and every turn ends, as in the live run.

// Helpers outside #[test] functions panic on setup failures, like the tests do.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use nomos_golden::manifest::Manifest;
use nomos_golden::run::ModelChoice;
use nomos_golden::{CaseSelection, RunOptions, run_manifest};

fn root() -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../..")
}

/// The cases the live run recorded (a directory of exact bytes each, under `wire/`).
fn recorded_cases(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join(nomos_golden::run::WIRE_DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// rule: EVAL-7
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recorded_real_model_runs_replay_with_every_change_approved_and_every_turn_ended() {
    let dir = root().join("evals/recordings/gemma-3-270m");
    let recorded = recorded_cases(&dir);
    let mut manifest = Manifest::load(&root().join("evals/golden.yaml")).unwrap();
    manifest
        .cases
        .retain(|c| recorded.contains(&nomos_golden::run::path_safe(&c.name)));
    assert_eq!(manifest.cases.len(), recorded.len(), "{recorded:?}");
    let model = ModelChoice::Replay(dir);
    let options = RunOptions {
        cases: CaseSelection::for_model(&model),
        model,
        repeat: 1,
        min_pass_rate: 0.0,
        parallel: 2,
        tags: Vec::new(),
        case_timeout: None,
    };
    let report = run_manifest(&manifest, &options, |_| {}).await;
    assert_eq!(report.cases.len(), recorded.len(), "{}", report.table());
    let total = report.tally();
    assert_eq!(total.unapproved_changes, Vec::<String>::new());
    assert_eq!(total.open_turns, 0, "{}", report.table());
    assert!(!report.breaks_oversight());
    // Every case's turns ran to their end and were timed.
    assert!(
        total.turn_times.len() >= report.cases.len(),
        "{}",
        report.table()
    );
}
