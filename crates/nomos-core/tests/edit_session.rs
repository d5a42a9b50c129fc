//! GATE-11 in the session: a broadening edit is refused and the request stays pending; a
//! narrowing edit closes it and files a new request with its own binding; the model's
//! re-run of the original command gets a card of its own.

use nomos_core::classify::classify;
use nomos_core::session::{
    Action, ApprovalEdit, EditError, Revision, Session, SessionConfig, StepDraft, ToolInput,
    ToolReply,
};
use nomos_core::{ApprovalId, ApprovalStatus, Decision, SessionId, Span, StepStatus, Timestamp};

struct Chat {
    session: Session,
    now: Timestamp,
    calls: u32,
}

impl Chat {
    fn with_window() -> Chat {
        let now = Timestamp::from_millis(1_800_000_000_000);
        let id = SessionId::from(uuid::Uuid::from_u128(41));
        let mut chat = Chat {
            session: Session::create(id, now, SessionConfig::spec_defaults()),
            now,
            calls: 0,
        };
        chat.tool(ToolInput::SetGoal {
            goal: "clean the cache".to_owned(),
        });
        let steps = vec![StepDraft {
            title: "clean".to_owned(),
            detail: None,
            commands: Vec::new(),
            check: None,
        }];
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

    fn tool(&mut self, input: ToolInput) -> ToolReply {
        self.calls += 1;
        self.now = self.now + Span::from_millis(10);
        let call_id = format!("call_{}", self.calls);
        self.session.handle_tool(self.now, &call_id, input)
    }

    fn run(&mut self, command: &str) -> Option<ApprovalId> {
        let reply = self.tool(ToolInput::Run {
            host: "local".to_owned(),
            command: command.to_owned(),
            classification: classify(command),
            preview: None,
        });
        match reply.action {
            Some(Action::AwaitApproval { approval_id, .. }) => Some(approval_id),
            _ => None,
        }
    }

    fn edit(
        &mut self,
        id: ApprovalId,
        original: &str,
        command: &str,
    ) -> Result<ApprovalId, EditError> {
        self.now = self.now + Span::from_millis(10);
        let edit = ApprovalEdit {
            command: command.to_owned(),
            hosts: vec!["local".to_owned()],
            classification: classify(command),
            original: classify(original),
        };
        self.session
            .handle_edit(self.now, id, edit, Vec::new(), None)
            .map(|filed| filed.approval_id)
    }

    fn status(&self, id: ApprovalId) -> ApprovalStatus {
        self.session
            .approvals()
            .iter()
            .find(|a| a.id == id)
            .map_or(ApprovalStatus::Cancelled, |a| a.status)
    }
}

// rule: GATE-11
#[test]
fn gate_11_a_broadening_edit_is_refused_and_the_request_stays_pending() {
    let mut chat = Chat::with_window();
    let asked = chat.run("rm -rf /var/cache/app/tmp").expect("a card");
    let refused = chat
        .edit(asked, "rm -rf /var/cache/app/tmp", "./wipe.sh /var/cache")
        .unwrap_err();
    assert!(matches!(refused, EditError::Broadening(_)), "{refused:?}");
    assert!(refused.to_string().contains("does not know"), "{refused}");
    assert_eq!(chat.status(asked), ApprovalStatus::Pending);
    assert_eq!(chat.session.approvals().len(), 1);
}

// rule: GATE-11
#[test]
fn gate_11_a_narrowing_edit_files_a_new_request_and_the_original_rerun_gets_a_card() {
    let mut chat = Chat::with_window();
    let original = "rm -rf /var/cache/app";
    let asked = chat.run(original).expect("a card");
    let edited = chat
        .edit(asked, original, "rm -rf /var/cache/app/tmp")
        .unwrap();
    assert_ne!(edited, asked);
    assert_eq!(chat.status(asked), ApprovalStatus::Cancelled);
    assert_eq!(chat.status(edited), ApprovalStatus::Pending);
    let (old, new) = {
        let a = chat.session.approvals();
        (a[0].clone(), a[1].clone())
    };
    assert_ne!(old.binding_hash, new.binding_hash);
    assert_eq!(new.binding.command, "rm -rf /var/cache/app/tmp");
    let from = new.binding.edited_from.as_ref().expect("what it replaced");
    assert_eq!((from.approval_id, from.command.as_str()), (asked, original));
    // The new request waits for its own approval, then runs the edited form.
    chat.now = chat.now + Span::from_millis(10);
    let action = chat
        .session
        .handle_decision(chat.now, edited, Decision::Approve, Some("ops"))
        .unwrap();
    let Some(Action::Dispatch { execution_id }) = action else {
        panic!("{action:?}");
    };
    let ran = chat
        .session
        .execution(execution_id)
        .map(|e| e.command.clone());
    assert_eq!(ran.as_deref(), Some("rm -rf /var/cache/app/tmp"));
    // The model asks for the original again: a card of its own, not the edit's run.
    let again = chat.run(original).expect("a card again");
    assert_ne!(again, edited);
    assert_eq!(chat.status(again), ApprovalStatus::Pending);
}
