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
        CaseResult {
            name: name.to_owned(),
            result: if failures.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
            failures,
            tool_calls,
            millis: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            tokens: usage.prompt_tokens + usage.completion_tokens,
            cost_usd: usage.cost_usd,
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
            "{:<width$}  result  calls   time ms  tokens  cost",
            "case"
        );
        for case in &self.cases {
            let result = match case.result {
                Verdict::Pass => "pass",
                Verdict::Fail => "FAIL",
            };
            let cost = case.cost_usd.map_or("-".to_owned(), |c| format!("${c:.4}"));
            let _ = writeln!(
                out,
                "{:<width$}  {result:<6}  {:>5}  {:>8}  {:>6}  {cost}",
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
            if case.failures.is_empty() {
                out.push_str("/>\n");
            } else {
                out.push_str(">\n");
                let message = xml_escape(&case.failures.join("\n"));
                let _ = writeln!(
                    out,
                    "    <failure message=\"{} assertion(s) failed\">{message}</failure>",
                    case.failures.len()
                );
                out.push_str("  </testcase>\n");
            }
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
}
