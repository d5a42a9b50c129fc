//! The shipped golden manifest passes with the stub model, and a case whose assertions
//! do not hold fails with a message naming what was seen (EVAL-1..3).

use nomos_golden::manifest::Manifest;
use nomos_golden::report::Verdict;
use nomos_golden::run::ModelChoice;
use nomos_golden::{CaseSelection, RunOptions, run_manifest};

fn options() -> RunOptions {
    RunOptions {
        model: ModelChoice::Stub,
        repeat: 1,
        min_pass_rate: 1.0,
        parallel: 4,
        tags: Vec::new(),
        cases: CaseSelection::All,
        case_timeout: None,
    }
}

// rule: EVAL-1, EVAL-2
#[tokio::test]
async fn shipped_golden_manifest_passes_with_the_stub_model() {
    let path = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../../evals/golden.yaml");
    let manifest = Manifest::load(&path).unwrap();
    assert!(manifest.cases.len() >= 15, "at least 15 golden cases");
    let report = run_manifest(&manifest, &options(), |_| {}).await;
    assert_eq!(report.n_failed(), 0, "\n{}", report.table());
}

// rule: EVAL-3
#[tokio::test]
async fn failing_assertions_fail_the_case_with_what_was_seen() {
    let manifest = Manifest::parse(
        r#"
cases:
  - name: wrong-expectations
    steps:
      - say: "hi"
        model:
          - text: "hello"
          - text: "never played"
    expect:
      status: planning
      tool_calls: {run: {at_least: 1}}
      reply_contains: ["goodbye"]
"#,
        "inline",
    )
    .unwrap();
    let report = run_manifest(&manifest, &options(), |_| {}).await;
    let case = &report.cases[0];
    assert_eq!(case.result, Verdict::Fail);
    let failures = case.failures.join("\n");
    assert!(
        failures.contains("status: expected planning, got done"),
        "{failures}"
    );
    assert!(
        failures.contains("tool_calls.run: expected at least 1, got 0"),
        "{failures}"
    );
    assert!(
        failures.contains("reply_contains: \"goodbye\""),
        "{failures}"
    );
    assert!(failures.contains("1 unplayed replies"), "{failures}");
}

// rule: EVAL-3
#[tokio::test]
async fn a_stub_that_drifts_from_its_script_fails_the_case() {
    let manifest = Manifest::parse(
        r#"
cases:
  - name: drift
    steps:
      - say: "hi"
        model:
          - text: "hello"
            expect: {last_user_contains: "something else"}
"#,
        "inline",
    )
    .unwrap();
    let report = run_manifest(&manifest, &options(), |_| {}).await;
    let failures = report.cases[0].failures.join("\n");
    assert!(failures.contains("drifted from its script"), "{failures}");
}

// rule: EVAL-4
#[test]
fn a_real_model_is_given_only_the_any_cases() {
    let manifest = Manifest::parse(
        "cases:\n  - name: scripted\n    steps: [{say: hi}]\n  - name: outcome\n    model: any\n    steps: [{say: hi}]\n",
        "m",
    )
    .unwrap();
    let names = |cases: CaseSelection| {
        let options = RunOptions { cases, ..options() };
        options
            .select(&manifest)
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(CaseSelection::All), ["scripted", "outcome"]);
    assert_eq!(names(CaseSelection::AnyModel), ["outcome"]);
    assert_eq!(
        CaseSelection::for_model(&ModelChoice::Replay("r".into())),
        CaseSelection::AnyModel
    );
}
