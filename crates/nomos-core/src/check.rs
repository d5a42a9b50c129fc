//! SAFE-4: a plan step's check, the read-only command that proves the step worked, and
//! the verdict on its run.
//!
//! A step may declare `check: {host, command, expect_exit?, expect_output?}`. The check is
//! classified when the plan is proposed and a plan whose check is not `read_only` is
//! refused. When the step is marked done, the core dispatches the check (an execution of
//! kind `check`) instead of closing the step; the check's end decides whether the step is
//! `done` or `failed` ([`StepCheck::judge`]). Without `expect_exit` a check must exit 0;
//! with `expect_output` its standard output must contain that text.

use serde::{Deserialize, Serialize};

use crate::classification::Classification;
use crate::id::ExecutionId;
use crate::record::ExecOutput;
use crate::status::CommandClass;

/// How much of a failing check's output a verdict quotes (head of stdout, then stderr).
pub const CHECK_OUTPUT_QUOTE_CHARS: usize = 600;

/// One step's check, as declared and classified at proposal, with its last verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepCheck {
    /// The host slug it runs on.
    pub host: String,
    /// The exact command.
    pub command: String,
    /// Its class and reason, decided at proposal (a check must be `read_only`).
    pub classification: Classification,
    /// The exit status it must give (0 when neither this nor `expect_output` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_exit: Option<i32>,
    /// Text its standard output must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_output: Option<String>,
    /// The verdict of its last run, once it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<CheckResult>,
}

/// The verdict of one run of a check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The execution (kind `check`) that ran it.
    pub execution_id: ExecutionId,
    /// Whether it passed, and why not.
    pub verdict: CheckVerdict,
}

/// Whether a check passed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum CheckVerdict {
    /// The check gave what the step expects.
    Passed,
    /// It did not: what it gave, against what was expected, with the head of its output.
    Failed {
        /// Why, for the step's note, the plan panel and the model.
        reason: String,
    },
}

impl CheckVerdict {
    /// Whether the verdict is [`CheckVerdict::Passed`].
    pub fn passed(&self) -> bool {
        matches!(self, CheckVerdict::Passed)
    }
}

impl StepCheck {
    /// A check on `host`, classified by the shell with the classifier the gate trusts.
    pub fn new(
        host: impl Into<String>,
        command: impl Into<String>,
        classification: Classification,
        expect_exit: Option<i32>,
        expect_output: Option<String>,
    ) -> StepCheck {
        StepCheck {
            host: host.into(),
            command: command.into(),
            classification,
            expect_exit,
            expect_output: expect_output.filter(|text| !text.is_empty()),
            result: None,
        }
    }

    /// The exit status the check must give: the declared one, or 0 unless only an output
    /// was asked for.
    pub fn expected_exit(&self) -> Option<i32> {
        match (self.expect_exit, &self.expect_output) {
            (Some(code), _) => Some(code),
            (None, None) => Some(0),
            (None, Some(_)) => None,
        }
    }

    /// Whether the check has passed its last run.
    pub fn passed(&self) -> bool {
        self.result.as_ref().is_some_and(|r| r.verdict.passed())
    }

    /// The verdict on one run: its output, or the error that stopped it.
    pub fn judge(&self, result: &Result<ExecOutput, String>) -> CheckVerdict {
        let output = match result {
            Ok(output) => output,
            Err(error) => {
                return CheckVerdict::Failed {
                    reason: format!("the check did not run to its end: {error}"),
                };
            }
        };
        let mut failures = Vec::new();
        if let Some(expected) = self.expected_exit()
            && output.exit_code != Some(expected)
        {
            let gave = match (&output.exit_code, &output.signal) {
                (Some(code), _) => format!("exited {code}"),
                (None, Some(signal)) => format!("was killed by signal {signal}"),
                (None, None) => "gave no exit status".to_owned(),
            };
            failures.push(format!("it {gave}, expected exit {expected}"));
        }
        if let Some(text) = &self.expect_output
            && !output.stdout.contains(text.as_str())
        {
            failures.push(format!("its output does not contain {text:?}"));
        }
        if failures.is_empty() {
            return CheckVerdict::Passed;
        }
        CheckVerdict::Failed {
            reason: format!(
                "check `{}` on {} failed: {}{}",
                self.command,
                self.host,
                failures.join("; "),
                quoted_output(output)
            ),
        }
    }
}

/// SAFE-4: the refusal of a plan whose check is not read-only, naming the step, or `None`.
pub(crate) fn check_refusal<'a>(
    checks: impl Iterator<Item = (usize, Option<&'a StepCheck>)>,
) -> Option<String> {
    for (idx, check) in checks {
        let Some(check) = check else { continue };
        let class = check.classification.class;
        if class != CommandClass::ReadOnly {
            return Some(format!(
                "Refused: step {}'s check `{}` is {} ({}), and a check may only read. Declare the change as the step's command and give the step a read-only check (for example `systemctl is-active nginx` or `curl -fsS http://localhost/health`), then call propose_plan again.",
                idx + 1,
                check.command,
                class.as_str(),
                check.classification.reason,
            ));
        }
    }
    None
}

/// The head of a failing check's output, for its verdict.
fn quoted_output(output: &ExecOutput) -> String {
    let mut text = String::new();
    for (name, body) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        let body = body.trim_end();
        if body.is_empty() {
            continue;
        }
        let head: String = body.chars().take(CHECK_OUTPUT_QUOTE_CHARS).collect();
        let cut = if head.len() < body.len() {
            " [...]"
        } else {
            ""
        };
        text.push_str(&format!("\n{name}: {head}{cut}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::classify;

    fn check(expect_exit: Option<i32>, expect_output: Option<&str>) -> StepCheck {
        let command = "systemctl is-active nginx";
        StepCheck::new(
            "web",
            command,
            classify(command),
            expect_exit,
            expect_output.map(str::to_owned),
        )
    }

    fn ran(exit: i32, stdout: &str) -> Result<ExecOutput, String> {
        Ok(ExecOutput {
            exit_code: Some(exit),
            stdout: stdout.to_owned(),
            ..ExecOutput::default()
        })
    }

    // rule: SAFE-4
    #[test]
    fn a_check_without_expectations_must_exit_zero() {
        assert_eq!(check(None, None).judge(&ran(0, "")), CheckVerdict::Passed);
        let CheckVerdict::Failed { reason } = check(None, None).judge(&ran(3, "inactive\n")) else {
            panic!("exit 3 passed");
        };
        assert!(reason.contains("exited 3, expected exit 0"), "{reason}");
        assert!(reason.contains("stdout: inactive"), "{reason}");
    }

    // rule: SAFE-4
    #[test]
    fn an_expected_output_alone_accepts_any_exit_and_needs_the_text() {
        let only_text = check(None, Some("active"));
        assert_eq!(only_text.judge(&ran(1, "active\n")), CheckVerdict::Passed);
        assert!(!only_text.judge(&ran(0, "failed\n")).passed());
        let both = check(Some(0), Some("active"));
        assert!(!both.judge(&ran(1, "active\n")).passed());
    }

    // rule: SAFE-4
    #[test]
    fn a_check_that_could_not_run_fails() {
        let verdict = check(None, None).judge(&Err("connection refused".to_owned()));
        assert!(!verdict.passed(), "{verdict:?}");
    }

    // rule: SAFE-4
    #[test]
    fn a_check_that_changes_state_is_refused_naming_its_step() {
        let command = "systemctl restart nginx";
        let writes = StepCheck::new("web", command, classify(command), None, None);
        let reads = check(None, None);
        let refusal =
            check_refusal([(0, Some(&reads)), (1, None), (2, Some(&writes))].into_iter()).unwrap();
        assert!(refusal.contains("step 3's check"), "{refusal}");
        assert!(refusal.contains("config_mutation"), "{refusal}");
        assert_eq!(check_refusal([(0, Some(&reads))].into_iter()), None);
    }
}
