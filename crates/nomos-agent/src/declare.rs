//! GATE-9 in the runtime: a `propose_plan` step's declared commands are classified with
//! the classifier the gate trusts and their hosts resolved against the inventory (a group
//! `tag:NAME` becomes its member hosts), before the core records the plan.

use nomos_core::declared::DeclaredCommand;
use nomos_core::ports::exec::{Executor, HostInfo};
use nomos_core::session::StepDraft;

use crate::config::Classifier;
use crate::tools::args::PlanStepCall;

/// The steps with their declared commands classified, or a tool-result error naming the
/// step and the host that the inventory does not know.
pub(crate) fn declare_steps(
    steps: Vec<PlanStepCall>,
    classifier: &Classifier,
    executor: &dyn Executor,
    hosts: &[HostInfo],
) -> Result<Vec<StepDraft>, String> {
    let mut drafts = Vec::with_capacity(steps.len());
    for (idx, step) in steps.into_iter().enumerate() {
        let mut draft = step.draft;
        for declared in step.commands {
            let members = members_of(&declared.host, hosts).ok_or_else(|| {
                let known: Vec<&str> = hosts.iter().map(|h| h.slug.as_str()).collect();
                format!(
                    "invalid arguments for propose_plan: step {} declares a command on `{}`, which names no known host or group; known hosts: {}",
                    idx + 1,
                    declared.host,
                    known.join(", ")
                )
            })?;
            // CLASSIFY-8: in the grammar of each shell that will run it.
            let on: Vec<&str> = if members.is_empty() {
                vec![declared.host.as_str()]
            } else {
                members.iter().map(String::as_str).collect()
            };
            let classification =
                crate::shells::classify_for(classifier, executor, &on, &declared.command);
            draft.commands.push(DeclaredCommand::new(
                declared.host,
                members,
                declared.command,
                classification,
            ));
        }
        if let Some(check) = step.check {
            draft.check = Some(crate::check::declare_check(
                idx, check, classifier, executor, hosts,
            )?);
        }
        drafts.push(draft);
    }
    Ok(drafts)
}

/// A host's members: none for a host slug, the tagged hosts for `tag:NAME`; `None` when it
/// names nothing in the inventory.
fn members_of(host: &str, hosts: &[HostInfo]) -> Option<Vec<String>> {
    if hosts.iter().any(|h| h.slug == host) {
        return Some(Vec::new());
    }
    let tag = host.strip_prefix("tag:")?;
    let members: Vec<String> = hosts
        .iter()
        .filter(|h| h.tags.iter().any(|t| t == tag))
        .map(|h| h.slug.clone())
        .collect();
    if members.is_empty() {
        None
    } else {
        Some(members)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use nomos_core::CommandClass;
    use nomos_core::classify::Shell;

    use super::*;
    use crate::tools::args::DeclaredArgs;

    fn hosts() -> Vec<HostInfo> {
        ["web-1", "web-2", "db"]
            .iter()
            .map(|slug| HostInfo {
                slug: (*slug).to_owned(),
                address: "127.0.0.1".to_owned(),
                tags: if slug.starts_with("web") {
                    vec!["web".to_owned()]
                } else {
                    Vec::new()
                },
                host_keys: Vec::new(),
            })
            .collect()
    }

    fn step(host: &str, command: &str) -> PlanStepCall {
        PlanStepCall {
            draft: StepDraft {
                title: "restart".to_owned(),
                detail: None,
                commands: Vec::new(),
                check: None,
            },
            commands: vec![DeclaredArgs {
                host: host.to_owned(),
                command: command.to_owned(),
            }],
            check: None,
        }
    }

    fn classifier() -> Classifier {
        Arc::new(nomos_core::classify::classify_in)
    }

    /// The hosts of [`hosts`], `web-2` pinned to bash; it runs nothing.
    struct Pinned;

    #[async_trait::async_trait]
    impl Executor for Pinned {
        async fn run(
            &self,
            host: &str,
            _command: &str,
            _limits: nomos_core::ports::exec::ExecLimits,
        ) -> Result<nomos_core::record::ExecOutput, nomos_core::ports::exec::ExecError> {
            Err(nomos_core::ports::exec::ExecError::Other(format!(
                "{host}: runs nothing"
            )))
        }

        fn hosts(&self) -> Vec<HostInfo> {
            hosts()
        }

        fn shell(&self, host: &str) -> Shell {
            if host == "web-2" {
                Shell::Bash
            } else {
                Shell::Sh
            }
        }
    }

    // rule: GATE-9
    #[test]
    fn declared_commands_are_classified_and_a_group_resolves_to_its_members() {
        let drafts = declare_steps(
            vec![step("tag:web", "systemctl restart nginx")],
            &classifier(),
            &Pinned,
            &hosts(),
        )
        .unwrap();
        let declared = &drafts[0].commands[0];
        assert_eq!(declared.class(), CommandClass::ConfigMutation);
        assert_eq!(declared.members, vec!["web-1", "web-2"]);
        assert!(declared.covers(
            "web-2",
            "systemctl restart nginx",
            CommandClass::ConfigMutation
        ));
        assert!(!declared.covers(
            "db",
            "systemctl restart nginx",
            CommandClass::ConfigMutation
        ));
    }

    // rule: GATE-9
    #[test]
    fn a_declared_host_the_inventory_does_not_know_is_named_in_the_error() {
        let err = declare_steps(
            vec![step("mail", "uptime")],
            &classifier(),
            &Pinned,
            &hosts(),
        )
        .unwrap_err();
        assert!(err.contains("step 1 declares a command on `mail`"), "{err}");
        assert!(err.contains("web-1, web-2, db"), "{err}");
    }

    // rule: CLASSIFY-8
    #[test]
    fn a_declared_command_is_read_in_the_shell_of_each_host_it_runs_on_and_the_strictest_wins() {
        // A classifier that reads `echo {a,b}` as a change only in bash's grammar.
        let by_shell: Classifier = Arc::new(|command: &str, shell: Shell| {
            let mut classification = nomos_core::classify::classify_in(command, shell);
            if shell == Shell::Bash {
                classification.class = CommandClass::Destructive;
            }
            classification
        });
        let on = |host: &str| {
            let drafts =
                declare_steps(vec![step(host, "echo {a,b}")], &by_shell, &Pinned, &hosts())
                    .unwrap();
            drafts[0].commands[0].class()
        };
        assert_eq!(on("web-1"), CommandClass::ReadOnly);
        assert_eq!(on("web-2"), CommandClass::Destructive);
        // A group with one bash member is read as bash reads it.
        assert_eq!(on("tag:web"), CommandClass::Destructive);
    }
}
