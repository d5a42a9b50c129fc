//! The outputs of a run (EVAL-3): a table for people, JSON and JUnit XML for machines.

use std::fmt::Write as _;
use std::time::Duration;

use nomos_core::ports::chat::Usage;
use serde::Serialize;

/// Pass or fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every assertion held.
    Pass,
    /// At least one failed, or the case could not run.
    Fail,
}

/// One case's result.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// Pass or fail.
    pub result: Verdict,
    /// What failed.
    pub failures: Vec<String>,
    /// Tool calls made.
    pub tool_calls: usize,
    /// Wall time in milliseconds.
    pub millis: u64,
    /// Prompt and completion tokens.
    pub tokens: u64,
    /// Cost in US dollars, when the provider reported it.
    pub cost_usd: Option<f64>,
    /// How many times the case ran (EVAL-4).
    pub runs: u32,
    /// How many of those runs passed.
    pub passes: u32,
    /// `passes / runs`.
    pub pass_rate: f64,
}

impl CaseResult {
    /// Builds a result from failures and measurements.
    pub fn new(
        name: &str,
        failures: Vec<String>,
        tool_calls: usize,
        elapsed: Duration,
        usage: Usage,
    ) -> CaseResult {
        let failures_empty = failures.is_empty();
        CaseResult {
            name: name.to_owned(),
            result: if failures_empty {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
            failures,
            tool_calls,
            millis: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            tokens: usage.prompt_tokens + usage.completion_tokens,
            cost_usd: usage.cost_usd,
            runs: 1,
            passes: u32::from(failures_empty),
            pass_rate: if failures_empty { 1.0 } else { 0.0 },
        }
    }

    /// One result for several runs of a case: it passes when its pass rate reaches
    /// `min_pass_rate`; it shows the failures of its first failed run, and sums the
    /// measurements.
    pub fn from_runs(runs: Vec<CaseResult>, min_pass_rate: f64) -> CaseResult {
        let n_runs = u32::try_from(runs.len()).unwrap_or(u32::MAX).max(1);
        let passes = runs.iter().filter(|r| r.result == Verdict::Pass).count() as u32;
        let pass_rate = f64::from(passes) / f64::from(n_runs);
        let name = runs.first().map(|r| r.name.clone()).unwrap_or_default();
        let failures = runs
            .iter()
            .find(|r| r.result == Verdict::Fail)
            .map(|r| r.failures.clone())
            .unwrap_or_default();
        let failures = if failures.is_empty() && passes < n_runs {
            vec!["a run failed".to_owned()]
        } else {
            failures
        };
        let cost_usd = runs.iter().filter_map(|r| r.cost_usd).reduce(|a, b| a + b);
        CaseResult {
            result: if pass_rate >= min_pass_rate && !runs.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
            failures: if passes == n_runs {
                Vec::new()
            } else {
                failures
            },
            tool_calls: runs.iter().map(|r| r.tool_calls).max().unwrap_or(0),
            millis: runs.iter().map(|r| r.millis).sum(),
            tokens: runs.iter().map(|r| r.tokens).sum(),
            cost_usd,
            runs: n_runs,
            passes,
            pass_rate,
            name,
        }
    }
}

/// A whole run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Every case, in manifest order.
    pub cases: Vec<CaseResult>,
    /// Wall time of the whole run, in milliseconds.
    pub millis: u64,
}

impl Report {
    /// How many cases failed.
    pub fn n_failed(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| c.result == Verdict::Fail)
            .count()
    }

    /// The table.
    pub fn table(&self) -> String {
        let width = self
            .cases
            .iter()
            .map(|c| c.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<width$}  result  passed  calls   time ms  tokens  cost",
            "case"
        );
        for case in &self.cases {
            let result = match case.result {
                Verdict::Pass => "pass",
                Verdict::Fail => "FAIL",
            };
            let cost = case.cost_usd.map_or("-".to_owned(), |c| format!("${c:.4}"));
            let passed = format!("{}/{}", case.passes, case.runs);
            let _ = writeln!(
                out,
                "{:<width$}  {result:<6}  {passed:>6}  {:>5}  {:>8}  {:>6}  {cost}",
                case.name, case.tool_calls, case.millis, case.tokens
            );
            for failure in &case.failures {
                let _ = writeln!(out, "{:<width$}    - {failure}", "");
            }
        }
        let n = self.cases.len();
        let _ = writeln!(
            out,
            "\n{} passed, {} failed ({} ms)",
            n - self.n_failed(),
            self.n_failed(),
            self.millis
        );
        out
    }

    /// JSON: an object with a `cases` array.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// JUnit XML.
    pub fn junit(&self) -> String {
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuite name=\"nomos-golden\" tests=\"{}\" failures=\"{}\" time=\"{:.3}\">",
            self.cases.len(),
            self.n_failed(),
            self.millis as f64 / 1000.0
        );
        for case in &self.cases {
            let _ = write!(
                out,
                "  <testcase classname=\"golden\" name=\"{}\" time=\"{:.3}\"",
                xml_escape(&case.name),
                case.millis as f64 / 1000.0
            );
            out.push_str(">\n");
            let _ = writeln!(
                out,
                "    <properties><property name=\"runs\" value=\"{}\"/><property name=\"passes\" value=\"{}\"/><property name=\"pass_rate\" value=\"{:.3}\"/></properties>",
                case.runs, case.passes, case.pass_rate
            );
            if case.result == Verdict::Fail {
                let message = xml_escape(&case.failures.join("\n"));
                let _ = writeln!(
                    out,
                    "    <failure message=\"{} assertion(s) failed\">{message}</failure>",
                    case.failures.len()
                );
            }
            out.push_str("  </testcase>\n");
        }
        out.push_str("</testsuite>\n");
        out
    }
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: EVAL-3
    #[test]
    fn outputs_name_each_failure() {
        let report = Report {
            cases: vec![
                CaseResult::new("a", vec![], 2, Duration::from_millis(3), Usage::default()),
                CaseResult::new(
                    "b<1>",
                    vec!["status: expected done, got planning".into()],
                    0,
                    Duration::ZERO,
                    Usage::default(),
                ),
            ],
            millis: 5,
        };
        assert_eq!(report.n_failed(), 1);
        assert!(report.table().contains("1 passed, 1 failed"));
        let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(json["cases"][1]["result"], "fail");
        assert_eq!(
            json["cases"][1]["failures"][0],
            "status: expected done, got planning"
        );
        let junit = report.junit();
        assert!(junit.contains("name=\"b&lt;1&gt;\""), "{junit}");
        assert!(junit.contains("<failure message=\"1 assertion(s) failed\">status: expected done, got planning</failure>"));
    }

    // rule: EVAL-4
    #[test]
    fn repeated_runs_give_a_pass_rate_that_the_minimum_judges() {
        let run = |ok: bool| {
            let failures = if ok {
                vec![]
            } else {
                vec!["status: expected done".into()]
            };
            CaseResult::new("c", failures, 1, Duration::from_millis(2), Usage::default())
        };
        let runs = || vec![run(true), run(false), run(true), run(true), run(true)];
        let strict = CaseResult::from_runs(runs(), 1.0);
        assert_eq!((strict.runs, strict.passes), (5, 4));
        assert!((strict.pass_rate - 0.8).abs() < 1e-9);
        assert_eq!(strict.result, Verdict::Fail);
        assert_eq!(strict.failures, ["status: expected done"]);
        let lenient = CaseResult::from_runs(runs(), 0.8);
        assert_eq!(lenient.result, Verdict::Pass);
        let report = Report {
            cases: vec![lenient],
            millis: 1,
        };
        let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(json["cases"][0]["pass_rate"], 0.8);
        assert_eq!(json["cases"][0]["runs"], 5);
        assert!(
            report
                .junit()
                .contains("<property name=\"pass_rate\" value=\"0.800\"/>")
        );
        assert!(report.table().contains("4/5"), "{}", report.table());
    }
}
