//! The outputs of a run (EVAL-3): a table for people, JSON and JUnit XML for machines.

use std::fmt::Write as _;
use std::time::Duration;

use nomos_core::ports::chat::Usage;
use serde::Serialize;

use crate::tally::Tally;

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
    /// EVAL-7: unapproved changes, open turns, malformed calls and turn times, over every run.
    pub tally: Tally,
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
            tally: Tally::default(),
        }
    }

    /// This result with the EVAL-7 counts of its run; an unapproved change or a turn that
    /// did not end fails the run whatever its assertions said.
    pub fn with_tally(mut self, tally: Tally) -> CaseResult {
        let violations = tally.violations();
        if !violations.is_empty() {
            self.failures.extend(violations);
            self.result = Verdict::Fail;
            self.passes = 0;
            self.pass_rate = 0.0;
        }
        self.tally = tally;
        self
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
        let mut tally = Tally::default();
        for run in &runs {
            tally.add(&run.tally);
        }
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
            tally,
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

    /// EVAL-7's counts over every run of every case.
    pub fn tally(&self) -> Tally {
        let mut total = Tally::default();
        for case in &self.cases {
            total.add(&case.tally);
        }
        total
    }

    /// Whether the run broke EVAL-7: a change ran without the operator's approval, or a
    /// turn did not end, in any run of any case (whatever `--min-pass-rate` allows).
    pub fn breaks_oversight(&self) -> bool {
        let total = self.tally();
        !total.unapproved_changes.is_empty() || total.open_turns > 0
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
        out.push_str(&self.tally_text());
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

    /// The EVAL-7 totals, for the table: what must be zero, the malformed calls with their
    /// answers, and the model's and Nomos's time per turn.
    fn tally_text(&self) -> String {
        let total = self.tally();
        let runs: u32 = self.cases.iter().map(|c| c.runs).sum();
        let mut out = String::new();
        let _ = writeln!(out, "\nover {runs} runs:");
        let _ = writeln!(
            out,
            "  unapproved changes: {}",
            total.unapproved_changes.len()
        );
        for change in &total.unapproved_changes {
            let _ = writeln!(out, "    - {change}");
        }
        let _ = writeln!(out, "  turns that did not end: {}", total.open_turns);
        let _ = writeln!(
            out,
            "  malformed tool calls: {}",
            total.malformed_calls.len()
        );
        for call in &total.malformed_calls {
            let _ = writeln!(
                out,
                "    - {} {} -> {}",
                call.tool,
                one_line(&call.arguments, 120),
                one_line(&call.answer, 160)
            );
        }
        let (model, nomos) = (total.model_ms(), total.nomos_ms());
        let _ = writeln!(
            out,
            "  per turn ({} turns): model p50 {} ms, p95 {} ms; nomos p50 {} ms, p95 {} ms",
            model.n, model.p50, model.p95, nomos.p50, nomos.p95
        );
        out
    }

    /// JSON: an object with a `cases` array.
    /// EVAL-7's totals are under `totals`.
    pub fn json(&self) -> String {
        let total = self.tally();
        let mut value = match serde_json::to_value(self) {
            Ok(value) => value,
            Err(e) => return format!("{{\"error\": \"{e}\"}}"),
        };
        value["totals"] = serde_json::json!({
            "runs": self.cases.iter().map(|c| c.runs).sum::<u32>(),
            "unapproved_changes": total.unapproved_changes,
            "open_turns": total.open_turns,
            "malformed_tool_calls": total.malformed_calls,
            "model_ms_per_turn": total.model_ms(),
            "nomos_ms_per_turn": total.nomos_ms(),
        });
        serde_json::to_string_pretty(&value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
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

/// `text` on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max).collect();
    cut.push_str("...");
    cut
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
