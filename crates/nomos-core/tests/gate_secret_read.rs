//! SECRET-1 at the gate: a command that reads a secret path waits for the operator's own
//! approval, plan or no plan, window or no window, while its class stays what it does; the
//! commands go through the real classifier.

use nomos_core::classify::classify;
use nomos_core::session::{
    Action, Revision, Session, SessionConfig, StepDraft, ToolInput, ToolReply,
};
use nomos_core::{CommandClass, Decision, ExecutionStatus, SessionId, Span, StepStatus, Timestamp};

struct Chat {
    session: Session,
    now: Timestamp,
    calls: u32,
}

impl Chat {
    fn new() -> Chat {
        let now = Timestamp::from_millis(1_800_000_000_000);
        let id = SessionId::from(uuid::Uuid::from_u128(11));
        Chat {
            session: Session::create(id, now, SessionConfig::spec_defaults()),
            now,
            calls: 0,
        }
    }

    fn tool(&mut self, input: ToolInput) -> ToolReply {
        self.calls += 1;
        self.now = self.now + Span::from_millis(10);
        let call_id = format!("call_{}", self.calls);
        self.session.handle_tool(self.now, &call_id, input)
    }

    fn run(&mut self, command: &str) -> ToolReply {
        self.tool(ToolInput::Run {
            host: "local".to_owned(),
            command: command.to_owned(),
            classification: classify(command),
            preview: None,
        })
    }

    /// A goal, a plan, the operator's assent and step 1 running.
    fn with_window() -> Chat {
        let mut chat = Chat::new();
        chat.tool(ToolInput::SetGoal {
            goal: "audit the host".to_owned(),
        });
        let steps = ["look around", "write back"]
            .iter()
            .map(|title| StepDraft {
                title: (*title).to_owned(),
                detail: None,
                commands: Vec::new(),
                check: None,
            })
            .collect();
        chat.tool(ToolInput::ProposePlan {
            steps,
            revision: Revision::No,
        });
        chat.now = chat.now + Span::from_millis(10);
        chat.session
            .handle_operator_message(chat.now, "yes, go ahead");
        chat.tool(ToolInput::UpdatePlanStep {
            seq: 1,
            status: StepStatus::Running,
            note: None,
        });
        chat
    }
}

// rule: SECRET-1
#[test]
fn a_read_only_looking_read_of_a_secret_path_becomes_a_pending_approval_naming_the_path() {
    for (command, path) in [
        ("cat /etc/shadow", "/etc/shadow"),
        ("grep -r root /etc", "/etc"),
        ("cat /tmp/../etc/shadow", "/etc/shadow"),
        ("cat ~root/.ssh/id_rsa", "/root/.ssh/id_rsa"),
    ] {
        let mut chat = Chat::new();
        assert_eq!(
            classify(command).class,
            CommandClass::ReadOnly,
            "`{command}`"
        );
        let reply = chat.run(command);
        assert!(
            matches!(reply.action, Some(Action::AwaitApproval { .. })),
            "`{command}`: {reply:?}"
        );
        assert!(
            reply
                .text
                .contains(&format!("reads `{path}`, a secret path")),
            "`{command}`: {}",
            reply.text
        );
        let execution = chat.session.executions().last().unwrap();
        assert_eq!(execution.status, ExecutionStatus::PendingApproval);
        assert_eq!(execution.class, CommandClass::ReadOnly);
        assert!(execution.reason.contains(path), "{}", execution.reason);
        assert_eq!(chat.session.approvals().len(), 1);
    }
}

// rule: SECRET-1
// rule: GATE-1
#[test]
fn reading_an_ordinary_path_runs_at_once() {
    for command in ["cat /etc/passwd", "ls -la ~/.ssh", "wc -l /etc/shadow"] {
        let mut chat = Chat::new();
        let reply = chat.run(command);
        assert!(
            matches!(reply.action, Some(Action::Dispatch { .. })),
            "`{command}`: {reply:?}"
        );
        assert!(chat.session.approvals().is_empty());
    }
}

// rule: SECRET-1
#[test]
fn an_open_assent_window_does_not_cover_a_secret_read_and_an_approval_runs_it() {
    let mut chat = Chat::with_window();
    let reply = chat.run("cat ~/.ssh/id_rsa");
    let Some(Action::AwaitApproval { approval_id, .. }) = reply.action else {
        panic!("{reply:?}");
    };
    let reply = chat.run("cp /etc/shadow /tmp/shadow.bak");
    assert!(
        matches!(reply.action, Some(Action::AwaitApproval { .. })),
        "{reply:?}"
    );
    chat.now = chat.now + Span::from_millis(10);
    let action = chat
        .session
        .handle_decision(chat.now, approval_id, Decision::Approve, Some("ops"))
        .unwrap();
    assert!(
        matches!(action, Some(Action::Dispatch { .. })),
        "{action:?}"
    );
}

// rule: SECRET-1
// rule: GATE-2
#[test]
fn a_secret_read_that_also_changes_state_is_still_refused_before_a_plan() {
    let mut chat = Chat::new();
    let reply = chat.run("cp /etc/shadow /tmp/x");
    assert!(reply.action.is_none(), "{reply:?}");
    assert!(chat.session.approvals().is_empty());
    assert!(reply.text.to_lowercase().contains("plan"), "{}", reply.text);
}
