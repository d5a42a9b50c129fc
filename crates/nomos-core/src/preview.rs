//! Previews (GATE-10): what a command that waits for the operator would do, shown with its
//! request and covered by its binding.
//!
//! The preview *forms* are one table in the classifier ([`crate::classify::preview`],
//! extensible by the policy file); this module owns the rules around them:
//!
//! * a preview command runs only when it classifies `read_only` ([`PreviewPlan::may_run`]);
//!   the shell asks before it runs one, and the core records only those;
//! * each run is recorded as an execution of kind [`ExecutionKind::Preview`], which needs no
//!   approval and is not discovery (WRITEBACK-1 counts the model's tools, not these);
//! * the runs are read into one [`Preview`] (packages from an apt simulation, a unified diff
//!   for `sed -i`), stored on the approval's binding (or on the declared command) and part
//!   of its hash, so an approved command is the one whose preview the operator saw;
//! * a preview that failed, was cut or could not run is shown as failed, and the request
//!   stays decidable.
//!
//! [`ExecutionKind::Preview`]: crate::record::ExecutionKind::Preview

use serde::{Deserialize, Serialize};

use crate::classification::Classification;
use crate::classify::preview::{
    PackageAction, PackageChange, PreviewForm, PreviewParser, parse_apt_simulation, unified_diff,
};

mod fleet;

use crate::id::ExecutionId;
use crate::ports::exec::ExecLimits;
use crate::record::ExecOutput;
use crate::status::CommandClass;
use crate::time::{Span, Timestamp};
pub use fleet::{PreviewGroup, group_previews};

/// GATE-10: a preview's own bounds: 15 seconds and 16 KiB of each stream by default.
pub fn default_preview_limits() -> ExecLimits {
    ExecLimits {
        timeout: Span::from_secs(15),
        output_cap: 16 * 1024,
    }
}

/// A command's preview form with each preview command's classification, as the shell's
/// classifier (with the operator's policy) gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewPlan {
    /// The command previewed.
    pub command: String,
    /// The form from the preview table.
    pub form: PreviewForm,
    /// One classification per preview command, in order.
    pub classifications: Vec<Classification>,
}

impl PreviewPlan {
    /// The preview plan of `command`, its form from `table` (the built-in table, or the
    /// policy's), each preview command classified by `classify`.
    pub fn of(
        command: &str,
        table: impl Fn(&str) -> Option<PreviewForm>,
        classify: impl Fn(&str) -> Classification,
    ) -> Option<PreviewPlan> {
        table(command).map(|form| PreviewPlan::new(command, form, classify))
    }

    /// Classifies each preview command of `form`.
    pub fn new(
        command: &str,
        form: PreviewForm,
        classify: impl Fn(&str) -> Classification,
    ) -> PreviewPlan {
        let classifications = form.commands.iter().map(|c| classify(c)).collect();
        PreviewPlan {
            command: command.to_owned(),
            form,
            classifications,
        }
    }

    /// GATE-10: whether preview command `idx` may run: only a `read_only` one does.
    pub fn may_run(&self, idx: usize) -> bool {
        self.classifications
            .get(idx)
            .is_some_and(|c| c.class == CommandClass::ReadOnly)
    }

    /// The preview commands that may run, in order.
    pub fn runnable(&self) -> Vec<&str> {
        (0..self.form.commands.len())
            .filter(|&idx| self.may_run(idx))
            .map(|idx| self.form.commands[idx].as_str())
            .collect()
    }
}

/// One preview command as the shell ran it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewRan {
    /// The preview command.
    pub command: String,
    /// When it started.
    pub started_at: Timestamp,
    /// How it ended: its output, or why it produced none.
    pub result: Result<ExecOutput, String>,
    /// The execution recorded for it before it ran (rev. 3,
    /// [`crate::session::Session::handle_preview_starting`]); `None` for a run handed in
    /// without one, which the core records when it reads the preview.
    pub execution_id: Option<ExecutionId>,
}

/// What the shell hands the core: the plan and the runs of its runnable commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewResult {
    /// The plan.
    pub plan: PreviewPlan,
    /// The runs, in the plan's order (only commands [`PreviewPlan::may_run`] allows).
    pub runs: Vec<PreviewRan>,
}

impl PreviewResult {
    /// The command previewed.
    pub fn plan_command(&self) -> &str {
        &self.plan.command
    }
}

/// Whether a preview could be shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreviewOutcome {
    /// Every preview command ran and answered.
    Shown,
    /// Something failed, was cut or could not run; the card says so.
    Failed,
}

/// How one preview command went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreviewRunStatus {
    /// It ran and its exit code is an answer.
    Ran,
    /// It ran and failed, or could not be run on the host.
    Failed,
    /// It was not run: it is not read-only, or the shell did not run it.
    NotRun,
}

/// One preview command's run, as shown with the request.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PreviewRun {
    /// The preview command.
    pub command: String,
    /// How it went.
    pub status: PreviewRunStatus,
    /// The execution of kind `preview` that recorded it, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_id: Option<ExecutionId>,
    /// Its exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Its standard output, capped.
    #[serde(default)]
    pub stdout: String,
    /// Its standard error, capped.
    #[serde(default)]
    pub stderr: String,
    /// How many bytes the cap cut from both streams.
    #[serde(default)]
    pub cut: u64,
    /// Why it failed or did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// GATE-10: the preview shown with a request.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Preview {
    /// How the output was read.
    pub parser: PreviewParser,
    /// Whether it could be shown.
    pub outcome: PreviewOutcome,
    /// Each preview command's run, in order.
    pub runs: Vec<PreviewRun>,
    /// The packages an apt simulation says would change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<PackageChange>,
    /// For `sed -i`: the unified diff of the file against what sed would write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// For `sed -i`: the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// FLEET-6: for a fan-out, the hosts grouped by what their previews say, the smallest
    /// group first; the fields above are the first group's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<PreviewGroup>,
}

impl Preview {
    /// The stable text a binding hash covers: every field, as JSON in declaration order.
    pub fn binding_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads the runs of `result` into a preview; `ids` are the executions that recorded
    /// the runs (in order). Pure.
    pub fn read(result: &PreviewResult, ids: &[ExecutionId]) -> Preview {
        let plan = &result.plan;
        let parser = plan.form.parser;
        let mut ran = result.runs.iter().zip(ids);
        let mut runs = Vec::with_capacity(plan.form.commands.len());
        for (idx, command) in plan.form.commands.iter().enumerate() {
            let mut run = PreviewRun {
                command: command.clone(),
                status: PreviewRunStatus::NotRun,
                execution_id: None,
                exit_code: None,
                stdout: String::new(),
                stderr: String::new(),
                cut: 0,
                error: None,
            };
            if !plan.may_run(idx) {
                let why = &plan.classifications[idx];
                run.error = Some(format!(
                    "not run: a preview must be read_only, this is {} ({})",
                    why.class, why.reason
                ));
                runs.push(run);
                continue;
            }
            let Some((done, id)) = ran.next().filter(|(done, _)| done.command == *command) else {
                run.error = Some("not run".to_owned());
                runs.push(run);
                continue;
            };
            run.execution_id = Some(*id);
            match &done.result {
                Err(error) => {
                    run.status = PreviewRunStatus::Failed;
                    run.error = Some(error.clone());
                }
                Ok(output) => {
                    run.exit_code = output.exit_code;
                    run.stdout = output.stdout.clone();
                    run.stderr = output.stderr.clone();
                    run.cut = output.stdout_cut + output.stderr_cut;
                    run.status = match output.exit_code {
                        Some(code) if parser.exit_ok(code) => PreviewRunStatus::Ran,
                        Some(code) => {
                            run.error = Some(format!("exit {code}"));
                            PreviewRunStatus::Failed
                        }
                        None => {
                            run.error = Some(match &output.signal {
                                Some(signal) => format!("killed by signal {signal}"),
                                None => "no exit status".to_owned(),
                            });
                            PreviewRunStatus::Failed
                        }
                    };
                }
            }
            runs.push(run);
        }
        let all_ran = runs.iter().all(|r| r.status == PreviewRunStatus::Ran);
        let mut outcome = if all_ran {
            PreviewOutcome::Shown
        } else {
            PreviewOutcome::Failed
        };
        let mut packages = Vec::new();
        let mut diff = None;
        match parser {
            PreviewParser::AptSimulation if all_ran => {
                packages = parse_apt_simulation(&runs[0].stdout);
            }
            PreviewParser::SedDiff if all_ran && runs.len() == 2 => {
                if runs.iter().any(|r| r.cut > 0) {
                    // A diff of cut output would show changes that are not there.
                    outcome = PreviewOutcome::Failed;
                    runs[0].error = Some("output was cut by the preview cap; no diff".to_owned());
                } else {
                    let file = plan.form.file.as_deref().unwrap_or("file");
                    diff = Some(unified_diff(&runs[1].stdout, &runs[0].stdout, file));
                }
            }
            _ => {}
        }
        Preview {
            parser,
            outcome,
            runs,
            packages,
            diff,
            file: plan.form.file.clone(),
            groups: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{classify, preview_form};

    fn ok(stdout: &str, exit: i32) -> Result<ExecOutput, String> {
        Ok(ExecOutput {
            exit_code: Some(exit),
            stdout: stdout.to_owned(),
            ..ExecOutput::default()
        })
    }

    fn ran(plan: &PreviewPlan, results: Vec<Result<ExecOutput, String>>) -> PreviewResult {
        let runs = plan
            .runnable()
            .into_iter()
            .zip(results)
            .map(|(command, result)| PreviewRan {
                command: command.to_owned(),
                started_at: Timestamp::from_millis(0),
                result,
                execution_id: None,
            })
            .collect();
        PreviewResult {
            plan: plan.clone(),
            runs,
        }
    }

    fn ids(n: usize) -> Vec<ExecutionId> {
        let session = crate::id::SessionId(uuid::Uuid::nil());
        (1..=n).map(|i| session.execution_id(i)).collect()
    }

    // rule: GATE-10
    #[test]
    fn an_apt_preview_lists_the_packages_that_would_change() {
        let plan = PreviewPlan::of("apt-get install -y curl", preview_form, classify).unwrap();
        let text = "Inst curl (7.88.1-10+deb12u5 Debian:12.5/stable [amd64])\n\
                    Conf curl (7.88.1-10+deb12u5 Debian:12.5/stable [amd64])\n";
        let preview = Preview::read(&ran(&plan, vec![ok(text, 0)]), &ids(1));
        assert_eq!(preview.outcome, PreviewOutcome::Shown);
        assert_eq!(preview.packages.len(), 1);
        assert_eq!(preview.packages[0].name, "curl");
        assert_eq!(preview.runs[0].stdout, text);
    }

    // rule: GATE-10
    #[test]
    fn a_sed_preview_is_a_diff_of_the_file_against_the_output() {
        let plan =
            PreviewPlan::of("sed -i 's/80/8080/' /etc/app.conf", preview_form, classify).unwrap();
        let preview = Preview::read(
            &ran(&plan, vec![ok("port 8080\n", 0), ok("port 80\n", 0)]),
            &ids(2),
        );
        assert_eq!(
            preview.diff.as_deref(),
            Some("--- a/etc/app.conf\n+++ b/etc/app.conf\n@@ -1 +1 @@\n-port 80\n+port 8080\n")
        );
    }

    // rule: GATE-10
    #[test]
    fn a_failed_or_forbidden_preview_shows_as_failed() {
        let plan = PreviewPlan::of("systemctl restart nginx", preview_form, classify).unwrap();
        // Inactive is an answer; a missing unit is a failure.
        let inactive = Preview::read(&ran(&plan, vec![ok("inactive", 3)]), &ids(1));
        assert_eq!(inactive.outcome, PreviewOutcome::Shown);
        let failed = Preview::read(&ran(&plan, vec![ok("", 4)]), &ids(1));
        assert_eq!(failed.outcome, PreviewOutcome::Failed);
        assert_eq!(failed.runs[0].error.as_deref(), Some("exit 4"));
        let unreachable = Preview::read(&ran(&plan, vec![Err("lost".into())]), &ids(1));
        assert_eq!(unreachable.runs[0].status, PreviewRunStatus::Failed);

        let writes =
            PreviewPlan::of("sed -i 's/a/b/w /tmp/o' /etc/x", preview_form, classify).unwrap();
        assert_eq!(writes.runnable(), vec!["cat /etc/x"]);
        let preview = Preview::read(&ran(&writes, vec![ok("a\n", 0)]), &ids(1));
        assert_eq!(preview.outcome, PreviewOutcome::Failed);
        assert_eq!(preview.runs[0].status, PreviewRunStatus::NotRun);
        assert!(
            preview.runs[0]
                .error
                .as_deref()
                .unwrap()
                .contains("read_only")
        );
        assert_eq!(preview.diff, None);
    }

    // rule: GATE-10
    #[test]
    fn cut_output_gives_no_diff() {
        let plan = PreviewPlan::of("sed -i 's/a/b/' /etc/x", preview_form, classify).unwrap();
        let mut cut = ok("b\n", 0).unwrap();
        cut.stdout_cut = 10;
        let preview = Preview::read(&ran(&plan, vec![Ok(cut), ok("a\n", 0)]), &ids(2));
        assert_eq!(preview.outcome, PreviewOutcome::Failed);
        assert_eq!(preview.diff, None);
    }
}
