//! GATE-5 (rev. 2) with CLASSIFY-7: inside an assent window, a command whose program the
//! classifier does not know waits for its own approval, like a destructive one, unless a
//! policy rule with examples classifies it. The commands go through the real classifier.

use nomos_core::classify::{Policy, classify};
use nomos_core::declared::AssentScope;
use nomos_core::session::{Action, Revision, Session, SessionConfig, StepDraft, ToolInput};
use nomos_core::{Classification, ExecutionStatus, SessionId, Span, StepStatus, Timestamp};

struct Window {
    session: Session,
    now: Timestamp,
    calls: u32,
}

impl Window {
    /// A session with a goal, a plan, the operator's assent and step 1 running, under
    /// `assent_scope = "window"` so that what decides is the program, not the declared set
    /// (GATE-9 has its own tests in `plan_bound.rs`).
    fn open() -> Window {
        let now = Timestamp::from_millis(1_800_000_000_000);
        let id = SessionId::from(uuid::Uuid::from_u128(7));
        let config = SessionConfig {
            assent_scope: AssentScope::Window,
            ..SessionConfig::spec_defaults()
        };
        let mut window = Window {
            session: Session::create(id, now, config),
            now,
            calls: 0,
        };
        window.tool(ToolInput::SetGoal {
            goal: "tidy the host".to_owned(),
        });
        let steps = ["run the tools", "write back"]
            .iter()
            .map(|title| StepDraft {
                check: None,
                title: (*title).to_owned(),
                detail: None,
                commands: Vec::new(),
            })
            .collect();
        window.tool(ToolInput::ProposePlan {
            steps,
            revision: Revision::No,
        });
        window.now = window.now + Span::from_millis(10);
        window
            .session
            .handle_operator_message(window.now, "yes, go ahead");
        window.tool(ToolInput::UpdatePlanStep {
            seq: 1,
            status: StepStatus::Running,
            note: None,
        });
        window
    }

    fn tool(&mut self, input: ToolInput) -> nomos_core::session::ToolReply {
        self.calls += 1;
        self.now = self.now + Span::from_millis(10);
        let call_id = format!("call_{}", self.calls);
        self.session.handle_tool(self.now, &call_id, input)
    }

    fn run(&mut self, command: &str, classification: Classification) -> Option<Action> {
        self.tool(ToolInput::Run {
            host: "local".to_owned(),
            command: command.to_owned(),
            classification,
            preview: None,
        })
        .action
    }

    fn status_of_last(&self) -> ExecutionStatus {
        self.session
            .executions()
            .last()
            .map(|execution| execution.status)
            .unwrap_or(ExecutionStatus::Cancelled)
    }
}

// rule: GATE-5
// rule: CLASSIFY-7
#[test]
fn an_unknown_program_waits_for_its_own_approval_inside_the_assent_window() {
    for command in [
        "frobnicate --all",
        "./deploy.sh",
        "/tmp/x/cat /etc/hosts",
        "~/bin/ls",
        "$TOOL --run",
        "ls && ./cleanup",
    ] {
        let mut window = Window::open();
        let classification = classify(command);
        assert!(
            classification.program_unknown(),
            "`{command}`: {classification:?}"
        );
        let action = window.run(command, classification);
        assert!(
            matches!(action, Some(Action::AwaitApproval { .. })),
            "`{command}`: {action:?}"
        );
        assert_eq!(window.status_of_last(), ExecutionStatus::PendingApproval);
        assert_eq!(window.session.approvals().len(), 1, "`{command}`");
    }
}

// rule: GATE-5
// rule: CLASSIFY-7
#[test]
fn a_known_config_mutation_and_a_system_directory_program_run_inside_the_window() {
    for command in ["systemctl restart nginx", "/usr/bin/touch /tmp/marker"] {
        let mut window = Window::open();
        let classification = classify(command);
        assert!(!classification.program_unknown(), "`{command}`");
        let action = window.run(command, classification);
        assert!(
            matches!(action, Some(Action::Dispatch { .. })),
            "`{command}`: {action:?}"
        );
        assert!(window.session.approvals().is_empty(), "`{command}`");
    }
}

// rule: GATE-5
// rule: GATE-8
#[test]
fn a_policy_rule_with_examples_makes_an_unknown_program_known() {
    let policy = Policy::parse(
        "[[rule]]\nprefix = [\"frobnicate\"]\nclass = \"config_mutation\"\n\
         reason = \"our own tool\"\nmatch = [\"frobnicate --all\"]\n",
        "policy.toml",
    )
    .unwrap();
    let classification = policy.classify("frobnicate --all");
    assert!(!classification.program_unknown(), "{classification:?}");
    let mut window = Window::open();
    let action = window.run("frobnicate --all", classification);
    assert!(
        matches!(action, Some(Action::Dispatch { .. })),
        "{action:?}"
    );
}
