//! SAFE-4 in the runtime: a `propose_plan` step's check is classified with the classifier
//! the gate trusts and its host checked against the inventory, before the core records the
//! plan; the core decides the rest (a check that is not read-only is refused, and marking
//! the step done dispatches the check, which `Agent::dispatch` runs like any execution).

use nomos_core::check::StepCheck;
use nomos_core::ports::exec::{Executor, HostInfo};

use crate::config::Classifier;
use crate::tools::args::CheckArgs;

/// The check of step `idx` (0-based), classified, or a tool-result error naming the step
/// and the host the inventory does not know.
pub(crate) fn declare_check(
    idx: usize,
    check: CheckArgs,
    classifier: &Classifier,
    executor: &dyn Executor,
    hosts: &[HostInfo],
) -> Result<StepCheck, String> {
    if !hosts.iter().any(|h| h.slug == check.host) {
        let known: Vec<&str> = hosts.iter().map(|h| h.slug.as_str()).collect();
        return Err(format!(
            "invalid arguments for propose_plan: step {}'s check runs on `{}`, which names no known host (a check runs on one host, not a group); known hosts: {}",
            idx + 1,
            check.host,
            known.join(", ")
        ));
    }
    // EXEC-7: the string classified is the string that runs. CLASSIFY-8: in the grammar
    // of the shell that runs it on that host.
    let classification =
        crate::shells::classify_for(classifier, executor, &[check.host.as_str()], &check.command);
    Ok(StepCheck::new(
        check.host,
        check.command,
        classification,
        check.expect_exit,
        check.expect_output,
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use nomos_core::CommandClass;
    use nomos_core::ports::exec::{ExecError, ExecLimits};
    use nomos_core::record::ExecOutput;

    use super::*;

    /// The one host `web`; it runs nothing.
    struct Web;

    #[async_trait::async_trait]
    impl Executor for Web {
        async fn run(
            &self,
            host: &str,
            _command: &str,
            _limits: ExecLimits,
        ) -> Result<ExecOutput, ExecError> {
            Err(ExecError::Other(format!("{host}: runs nothing")))
        }

        fn hosts(&self) -> Vec<HostInfo> {
            vec![HostInfo {
                slug: "web".to_owned(),
                address: "127.0.0.1".to_owned(),
                tags: vec!["front".to_owned()],
                host_keys: Vec::new(),
            }]
        }
    }

    fn args(host: &str, command: &str) -> CheckArgs {
        CheckArgs {
            host: host.to_owned(),
            command: command.to_owned(),
            expect_exit: None,
            expect_output: Some("active".to_owned()),
        }
    }

    fn declare(idx: usize, host: &str, command: &str) -> Result<StepCheck, String> {
        let classifier: Classifier = Arc::new(nomos_core::classify::classify_in);
        declare_check(idx, args(host, command), &classifier, &Web, &Web.hosts())
    }

    // rule: SAFE-4
    #[test]
    fn a_check_is_classified_at_proposal() {
        let check = declare(0, "web", "systemctl is-active nginx").unwrap();
        assert_eq!(check.classification.class, CommandClass::ReadOnly);
        assert_eq!(check.expect_output.as_deref(), Some("active"));
        let writes = declare(0, "web", "systemctl restart nginx").unwrap();
        assert_eq!(writes.classification.class, CommandClass::ConfigMutation);
    }

    // rule: SAFE-4
    #[test]
    fn a_check_on_a_group_or_an_unknown_host_is_named_in_the_error() {
        let err = declare(1, "tag:front", "uptime").unwrap_err();
        assert!(err.contains("step 2's check runs on `tag:front`"), "{err}");
        assert!(err.contains("known hosts: web"), "{err}");
    }
}
