//! GATE-10: a command that waits for the operator carries its read-only preview, recorded
//! as executions of kind `preview`, shown with the request and covered by its binding.
//! The commands go through the real classifier and preview table.

use nomos_core::classify::{PackageAction, classify, preview_form};
use nomos_core::declared::{AssentScope, DeclaredCommand};
use nomos_core::preview::{PreviewOutcome, PreviewPlan, PreviewRan, PreviewResult};
use nomos_core::record::{ExecOutput, ExecutionKind, KnowledgeLoop};
use nomos_core::session::{
    Action, DecisionError, PreviewFor, Revision, Session, SessionConfig, StepDraft, ToolInput,
    ToolReply, binding_hash,
};
use nomos_core::{
    ApprovalStatus, CommandClass, Decision, ExecutionStatus, SessionId, Span, StepStatus, Timestamp,
};

const APT_S: &str = "\
NOTE: This is only a simulation!
Reading package lists...
Remv nano [7.2-1]
Purg vim-tiny [2:9.0.1378-2]
";

struct H {
    session: Session,
    now: Timestamp,
    calls: u32,
}

impl H {
    fn new() -> H {
        let now = Timestamp::from_millis(1_800_000_000_000);
        let config = SessionConfig {
            assent_scope: AssentScope::Declared,
            ..SessionConfig::spec_defaults()
        };
        let mut h = H {
            session: Session::create(SessionId::from(uuid::Uuid::from_u128(10)), now, config),
            now,
            calls: 0,
        };
        h.tool(ToolInput::SetGoal {
            goal: "tidy web".into(),
        });
        h
    }

    fn tool(&mut self, input: ToolInput) -> ToolReply {
        self.calls += 1;
        self.now = self.now + Span::from_millis(10);
        let id = format!("call_{}", self.calls);
        self.session.handle_tool(self.now, &id, input)
    }

    fn propose(&mut self, commands: &[&str]) {
        let commands = commands
            .iter()
            .map(|c| DeclaredCommand::new("web", Vec::new(), *c, classify(c)))
            .collect();
        let reply = self.tool(ToolInput::ProposePlan {
            steps: vec![StepDraft {
                check: None,
                title: "change web".into(),
                detail: None,
                commands,
            }],
            revision: Revision::No,
        });
        assert!(reply.text.contains("Declared"), "{}", reply.text);
    }

    fn assent(&mut self) {
        self.now = self.now + Span::from_millis(10);
        self.session
            .handle_operator_message(self.now, "yes, go ahead");
        self.tool(ToolInput::UpdatePlanStep {
            seq: 1,
            status: StepStatus::Running,
            note: None,
        });
    }

    /// What the shell does: the preview plan, and a run of each command it may run.
    fn previewed(&self, command: &str, outputs: &[(&str, i32)]) -> PreviewResult {
        let Some(plan) = PreviewPlan::of(command, preview_form, classify) else {
            panic!("{command} has no preview form");
        };
        let runs = plan
            .runnable()
            .into_iter()
            .zip(outputs)
            .map(|(c, (stdout, exit))| PreviewRan {
                command: c.to_owned(),
                started_at: self.now,
                result: Ok(ExecOutput {
                    exit_code: Some(*exit),
                    stdout: (*stdout).to_owned(),
                    ..ExecOutput::default()
                }),
                execution_id: None,
            })
            .collect();
        PreviewResult { plan, runs }
    }

    fn run(&mut self, command: &str, preview: Option<PreviewResult>) -> ToolReply {
        assert_eq!(
            self.session
                .run_would_wait(self.now, "web", &classify(command), command),
            preview.is_some(),
            "{command}"
        );
        self.tool(ToolInput::Run {
            host: "web".into(),
            command: command.into(),
            classification: classify(command),
            preview,
        })
    }
}

// rule: GATE-10
#[test]
fn a_destructive_command_waits_with_its_preview_recorded_as_preview_executions() {
    let mut h = H::new();
    h.propose(&["systemctl restart nginx"]);
    h.assent();
    let preview = h.previewed("apt-get purge -y nano vim-tiny", &[(APT_S, 0)]);
    let reply = h.run("apt-get purge -y nano vim-tiny", Some(preview));
    assert!(matches!(reply.action, Some(Action::AwaitApproval { .. })));

    let approval = h.session.approvals().last().unwrap().clone();
    let shown = approval
        .binding
        .preview
        .clone()
        .expect("the request carries its preview");
    assert_eq!(shown.outcome, PreviewOutcome::Shown);
    assert_eq!(
        shown.runs[0].command,
        "apt-get -s -o Dir::Log::Planner= purge nano vim-tiny"
    );
    let names: Vec<_> = shown
        .packages
        .iter()
        .map(|p| (p.action, p.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            (PackageAction::Remove, "nano"),
            (PackageAction::Purge, "vim-tiny")
        ]
    );
    // The preview is an execution of its own: read-only, finished, tied to no tool call.
    let preview_exec = h
        .session
        .execution(shown.runs[0].execution_id.unwrap())
        .unwrap();
    assert_eq!(preview_exec.kind, ExecutionKind::Preview);
    assert_eq!(preview_exec.class, CommandClass::ReadOnly);
    assert_eq!(preview_exec.status, ExecutionStatus::Completed);
    assert_eq!(preview_exec.tool_call_id, None);
    assert_eq!(preview_exec.host, "web");
    // The guarded command is the one that waits.
    let guarded = h.session.execution(approval.execution_id).unwrap();
    assert_eq!(guarded.kind, ExecutionKind::Command);
    assert_eq!(guarded.status, ExecutionStatus::PendingApproval);
}

// rule: GATE-10
#[test]
fn the_preview_is_part_of_the_binding_hash_and_a_changed_preview_voids_the_request() {
    let mut h = H::new();
    h.propose(&["systemctl restart nginx"]);
    h.assent();
    let preview = h.previewed("apt-get purge nano", &[(APT_S, 0)]);
    h.run("apt-get purge nano", Some(preview));
    let approval = h.session.approvals().last().unwrap().clone();
    assert_eq!(binding_hash(&approval.binding), approval.binding_hash);
    let mut without = approval.binding.clone();
    without.preview = None;
    assert_ne!(binding_hash(&without), approval.binding_hash);

    // A store row whose preview was changed after the request no longer matches its hash:
    // the decision is refused and the command never runs.
    let mut snapshot = h.session.snapshot();
    let row = snapshot.approvals.last_mut().unwrap();
    row.binding.preview.as_mut().unwrap().runs[0].stdout = "Remv nothing\n".into();
    let mut reloaded = Session::from_snapshot(snapshot, SessionConfig::spec_defaults());
    let decided = reloaded.handle_decision(h.now, approval.id, Decision::Approve, Some("op"));
    assert_eq!(decided, Err(DecisionError::Stale(approval.id)));
    assert_eq!(
        reloaded.execution(approval.execution_id).unwrap().status,
        ExecutionStatus::Cancelled
    );
}

// rule: GATE-10
#[test]
fn a_failed_preview_shows_as_failed_and_the_request_stays_decidable() {
    let mut h = H::new();
    h.propose(&["systemctl restart nginx"]);
    h.assent();
    let preview = h.previewed(
        "systemctl stop php-fpm",
        &[("Unit php-fpm.service could not be found.", 4)],
    );
    h.run("systemctl stop php-fpm", Some(preview));
    let approval = h.session.approvals().last().unwrap().clone();
    let shown = approval.binding.preview.clone().unwrap();
    assert_eq!(shown.outcome, PreviewOutcome::Failed);
    assert_eq!(shown.runs[0].error.as_deref(), Some("exit 4"));
    let action = h
        .session
        .handle_decision(h.now, approval.id, Decision::Approve, Some("op"))
        .unwrap();
    assert!(
        matches!(action, Some(Action::Dispatch { execution_id }) if execution_id == approval.execution_id)
    );
}

// rule: GATE-10
#[test]
fn a_denied_preview_bearing_request_never_runs() {
    let mut h = H::new();
    h.propose(&["systemctl restart nginx"]);
    h.assent();
    let preview = h.previewed(
        "sed -i 's/80/8080/' /etc/app.conf",
        &[("port 8080\n", 0), ("port 80\n", 0)],
    );
    h.run("sed -i 's/80/8080/' /etc/app.conf", Some(preview));
    let approval = h.session.approvals().last().unwrap().clone();
    let shown = approval.binding.preview.clone().unwrap();
    assert!(
        shown
            .diff
            .as_deref()
            .unwrap()
            .contains("-port 80\n+port 8080\n")
    );
    let action = h
        .session
        .handle_decision(h.now, approval.id, Decision::Deny, Some("op"))
        .unwrap();
    assert_eq!(action, None);
    assert_eq!(
        h.session.approvals().last().unwrap().status,
        ApprovalStatus::Denied
    );
    assert_eq!(
        h.session.execution(approval.execution_id).unwrap().status,
        ExecutionStatus::Cancelled
    );
    assert!(std::iter::from_fn(|| h.session.poll_action()).all(
        |a| !matches!(a, Action::Dispatch { execution_id } if execution_id == approval.execution_id)
    ));
}

// rule: GATE-10
#[test]
fn a_declared_change_carries_its_preview_in_the_plan_and_in_what_assent_binds() {
    let mut h = H::new();
    h.propose(&["systemctl restart nginx", "rm -rf /var/cache/old"]);
    // Only the declared config_mutation is previewed at proposal; the destructive one is
    // previewed when it asks on its own.
    let wanted = h.session.declared_previews_wanted();
    assert_eq!(
        wanted,
        vec![(1, 0, "web".to_owned(), "systemctl restart nginx".to_owned())]
    );
    let result = h.previewed("systemctl restart nginx", &[("active (running)", 0)]);
    h.session
        .handle_declared_previews(h.now, vec![(1, 0, "web".into(), result)]);
    let declared = &h.session.current_steps().next().unwrap().commands[0];
    let preview = declared
        .preview
        .clone()
        .expect("the plan shows the preview");
    assert_eq!(preview.runs[0].command, "systemctl status nginx");
    // A preview is not discovery: the knowledge loop is still untouched.
    assert_eq!(h.session.record().knowledge, KnowledgeLoop::Untouched);
    let previews = h
        .session
        .executions()
        .iter()
        .filter(|e| e.kind == ExecutionKind::Preview)
        .count();
    assert_eq!(previews, 1);

    h.assent();
    // After assent a late preview changes nothing the operator approved.
    let late = h.previewed("systemctl restart nginx", &[("other", 0)]);
    h.session
        .handle_declared_previews(h.now, vec![(1, 0, "web".into(), late)]);
    assert_eq!(
        h.session.current_steps().next().unwrap().commands[0].preview,
        Some(preview)
    );
    // The declared change runs at once, with no card.
    let reply = h.run("systemctl restart nginx", None);
    assert!(
        matches!(reply.action, Some(Action::Dispatch { .. })),
        "{}",
        reply.text
    );
    assert!(h.session.approvals().is_empty());
}

// rule: GATE-10
#[test]
fn a_command_that_runs_at_once_or_is_refused_is_not_previewed() {
    let mut h = H::new();
    // No plan yet: refused, nothing to preview.
    assert!(!h.session.run_would_wait(
        h.now,
        "web",
        &classify("systemctl restart nginx"),
        "systemctl restart nginx"
    ));
    h.propose(&["systemctl restart nginx"]);
    // Plan proposed, no assent: refused.
    assert!(!h.session.run_would_wait(
        h.now,
        "web",
        &classify("apt-get purge nano"),
        "apt-get purge nano"
    ));
    h.assent();
    // Read-only and declared commands run at once.
    assert!(!h.session.run_would_wait(
        h.now,
        "web",
        &classify("systemctl status nginx"),
        "systemctl status nginx"
    ));
    assert!(!h.session.run_would_wait(
        h.now,
        "web",
        &classify("systemctl restart nginx"),
        "systemctl restart nginx"
    ));
    // An undeclared change waits.
    assert!(h.session.run_would_wait(
        h.now,
        "web",
        &classify("systemctl restart php-fpm"),
        "systemctl restart php-fpm"
    ));
}

impl H {
    /// What the shell does since rev. 3: asks the core to record each preview command
    /// before it runs it, runs only those it recorded, and hands the runs back with ids.
    fn previewed_recorded(
        &mut self,
        command: &str,
        request: PreviewFor<'_>,
        outputs: &[(&str, i32)],
    ) -> Option<PreviewResult> {
        let plan = PreviewPlan::of(command, preview_form, classify)?;
        let mut runs = Vec::new();
        for (idx, preview) in plan.form.commands.iter().enumerate() {
            if !plan.may_run(idx) {
                continue;
            }
            self.now = self.now + Span::from_millis(10);
            let id = self
                .session
                .handle_preview_starting(self.now, "web", &plan, idx, request)?;
            // Recorded before it runs: `running`, of kind preview.
            let recorded = self.session.execution(id).map(|e| (e.status, e.kind));
            assert_eq!(
                recorded,
                Some((ExecutionStatus::Running, ExecutionKind::Preview))
            );
            let (stdout, exit) = outputs[runs.len()];
            runs.push(PreviewRan {
                command: preview.clone(),
                started_at: self.now,
                result: Ok(ExecOutput {
                    exit_code: Some(exit),
                    stdout: stdout.to_owned(),
                    ..ExecOutput::default()
                }),
                execution_id: Some(id),
            });
        }
        Some(PreviewResult { plan, runs })
    }

    fn previews(&self) -> Vec<nomos_core::record::Execution> {
        self.session
            .executions()
            .iter()
            .filter(|e| e.kind == ExecutionKind::Preview)
            .cloned()
            .collect()
    }
}

// rule: GATE-10
#[test]
fn each_preview_is_recorded_before_it_runs_and_ends_with_the_request() {
    let mut h = H::new();
    h.propose(&["systemctl restart nginx"]);
    h.assent();
    let command = "apt-get purge -y nano vim-tiny";
    let classification = classify(command);
    let preview = h
        .previewed_recorded(command, PreviewFor::Run(&classification), &[(APT_S, 0)])
        .expect("an undeclared destructive command waits: its preview runs");
    assert_eq!(h.previews().len(), 1);
    let reply = h.run(command, Some(preview));
    assert!(matches!(reply.action, Some(Action::AwaitApproval { .. })));
    // The one recorded execution, ended with its output: not a second record.
    let previews = h.previews();
    assert_eq!(previews.len(), 1, "{previews:?}");
    assert_eq!(previews[0].status, ExecutionStatus::Completed);
    let shown = h
        .session
        .approvals()
        .last()
        .unwrap()
        .binding
        .preview
        .clone();
    assert_eq!(
        shown.unwrap().runs[0].execution_id,
        Some(previews[0].id),
        "the card shows the recorded run"
    );
}

// rule: GATE-10
#[test]
fn no_preview_runs_for_a_request_nobody_will_be_shown() {
    let mut h = H::new();
    let command = "apt-get purge -y nano";
    let classification = classify(command);
    // Before any plan the run is refused: its preview is not recorded, so it never runs.
    assert_eq!(
        h.previewed_recorded(command, PreviewFor::Run(&classification), &[(APT_S, 0)]),
        None
    );
    // Nor a declared command of no plan, nor one the operator already assented to.
    let restart = "systemctl restart nginx";
    assert_eq!(
        h.previewed_recorded(restart, PreviewFor::Declared, &[("", 0)]),
        None
    );
    h.propose(&[restart]);
    // Proposed and not assented: the run is refused (GATE-3), the declared one waits.
    assert_eq!(
        h.previewed_recorded(command, PreviewFor::Run(&classification), &[(APT_S, 0)]),
        None
    );
    assert!(
        h.previewed_recorded(restart, PreviewFor::Declared, &[("active", 0)])
            .is_some()
    );
    h.assent();
    assert_eq!(
        h.previewed_recorded(restart, PreviewFor::Declared, &[("active", 0)]),
        None
    );
    assert_eq!(h.previews().len(), 1, "only the one shown ran");
}

// rule: GATE-10
#[test]
fn a_recorded_preview_whose_request_is_refused_after_all_is_still_ended() {
    let mut h = H::new();
    h.propose(&["systemctl restart nginx"]);
    h.assent();
    let command = "apt-get purge -y nano";
    let classification = classify(command);
    let preview = h
        .previewed_recorded(command, PreviewFor::Run(&classification), &[(APT_S, 0)])
        .unwrap();
    // The operator revokes the window before the request is committed: the run is
    // refused (GATE-3), and its preview's record still ends.
    h.now = h.now + Span::from_millis(10);
    h.session.handle_revoke_assent(h.now, None).unwrap();
    h.tool(ToolInput::Run {
        host: "web".into(),
        command: command.into(),
        classification,
        preview: Some(preview),
    });
    let previews = h.previews();
    assert_eq!(previews.len(), 1);
    assert_eq!(
        previews[0].status,
        ExecutionStatus::Completed,
        "never left running"
    );
}

fn any_command() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let word = prop_oneof![
        Just("-i"),
        Just("-n"),
        Just("-e"),
        Just("'s/a/b/w /tmp/o'"),
        Just("'s/a/b/'"),
        Just("/etc/x"),
        Just("install"),
        Just("purge"),
        Just("nginx"),
        Just("-y"),
        Just("--no-install-recommends"),
        Just("restart"),
        Just("stop"),
        Just("up"),
        Just("-f"),
    ];
    let program = prop_oneof![
        Just("sed"),
        Just("apt-get"),
        Just("apt"),
        Just("systemctl"),
        Just("docker compose")
    ];
    (program, proptest::collection::vec(word, 0..6))
        .prop_map(|(p, words)| format!("{p} {}", words.join(" ")))
}

proptest::proptest! {
    // rule: GATE-10
    #[test]
    fn whatever_the_shell_hands_in_only_read_only_previews_are_recorded(command in any_command()) {
        let mut h = H::new();
        h.propose(&["systemctl restart nginx"]);
        h.assent();
        if let Some(plan) = PreviewPlan::of(&command, preview_form, classify) {
            // A shell that ran every preview command, allowed or not.
            let runs = plan
                .form
                .commands
                .iter()
                .map(|c| PreviewRan {
                    command: c.clone(),
                    started_at: h.now,
                    result: Ok(ExecOutput::default()),
                    execution_id: None,
                })
                .collect();
            h.tool(ToolInput::Run {
                host: "web".into(),
                command: command.clone(),
                classification: classify(&command),
                preview: Some(PreviewResult { plan, runs }),
            });
            for e in h.session.executions().iter().filter(|e| e.kind == ExecutionKind::Preview) {
                // The oracle is the classifier's verdict on the recorded string itself.
                proptest::prop_assert_eq!(classify(&e.command).class, CommandClass::ReadOnly, "{}", e.command);
                proptest::prop_assert_eq!(e.status, ExecutionStatus::Completed);
            }
        }
    }
}
