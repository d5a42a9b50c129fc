//! Builders for the rows the contract checks commit: deterministic ids and times
//! with millisecond precision, so every round trip can be compared exactly.

use nomos_core::event::{DomainEvent, PendingEvent};
use nomos_core::ports::store::{Commit, Store};
use nomos_core::record::{
    Approval, ApprovalBinding, ExecOutput, Execution, ExecutionKind, KnowledgeLoop, Message,
    PlanStep, SessionRecord, ToolCallOutcome, ToolCallRecord, ToolCallRequest,
};
use nomos_core::{
    ApprovalStatus, CommandClass, ExecutionStatus, Role, SessionId, SessionStatus, StepStatus,
    Timestamp,
};
use uuid::Uuid;

/// A base instant with non-zero milliseconds (2026-05-28T20:26:40.123Z).
pub const BASE_MILLIS: i64 = 1_780_000_000_123;

/// The base instant plus `offset_ms`.
pub fn at(offset_ms: i64) -> Timestamp {
    Timestamp::from_millis(BASE_MILLIS + offset_ms)
}

/// A deterministic session id.
pub fn session_id(n: u128) -> SessionId {
    SessionId(Uuid::from_u128(
        0x5e55_0000_0000_0000_0000_0000_0000_0000 + n,
    ))
}

/// A session row with every optional field set, created at the base time.
pub fn session(id: SessionId, status: SessionStatus) -> SessionRecord {
    SessionRecord {
        id,
        status,
        goal: Some(format!("goal of {id}")),
        summary: None,
        board_outcome: None,
        plan_generation: 0,
        assent: None,
        knowledge: KnowledgeLoop::Untouched,
        nudged_at: None,
        client: None,
        owner: None,
        archived_at: None,
        plan_approvals: None,
        n_messages: 0,
        created_at: at(0),
        last_activity_at: at(0),
        version: 0,
    }
}

/// A plan step of `generation`, `seq`, with its derived id.
pub fn step(session: SessionId, generation: u32, seq: u32, status: StepStatus) -> PlanStep {
    PlanStep {
        check: None,
        id: session.step_id(generation, seq),
        session_id: session,
        generation,
        seq,
        title: format!("step {generation}.{seq}"),
        detail: Some(format!("detail of step {generation}.{seq}")),
        status,
        note: None,
        started_at: None,
        finished_at: None,
        updated_at: at(i64::from(generation) * 1000 + i64::from(seq)),
        commands: Vec::new(),
    }
}

/// The `n`th execution of a session, created at `created_at`.
pub fn execution(
    session: SessionId,
    n: usize,
    status: ExecutionStatus,
    created_at: Timestamp,
) -> Execution {
    Execution {
        id: session.execution_id(n),
        session_id: session,
        tool_call_id: Some(format!("call-{n}")),
        kind: ExecutionKind::Command,
        host: "host:hubris".into(),
        command: format!("systemctl restart app{n}"),
        class: CommandClass::ConfigMutation,
        reason: "systemctl restart changes state".into(),
        generation: 1,
        step_seq: Some(1),
        status,
        created_at,
        started_at: None,
        finished_at: None,
        output: None,
        error: None,
    }
}

/// A finished execution with captured output.
pub fn completed_output() -> ExecOutput {
    ExecOutput {
        exit_code: Some(0),
        signal: None,
        stdout: "active (running)\nünïcode ✓\n".into(),
        stderr: String::new(),
        stdout_cut: 12,
        stderr_cut: 0,
        duration_ms: 42,
    }
}

/// The pending approval guarding `execution`.
pub fn approval(execution: &Execution, requested_at: Timestamp) -> Approval {
    Approval {
        id: execution.session_id.approval_id(execution.id),
        session_id: execution.session_id,
        execution_id: execution.id,
        binding: ApprovalBinding {
            command: execution.command.clone(),
            host: execution.host.clone(),
            class: execution.class,
            generation: execution.generation,
            origin: Default::default(),
            preview: None,
            edited_from: None,
        },
        binding_hash: "ab".repeat(32),
        status: ApprovalStatus::Pending,
        requested_at,
        expires_at: requested_at + nomos_core::Span::from_mins(30),
        decided_at: None,
        decided_by: None,
        approvers_required: 1,
        approved_by: Vec::new(),
    }
}

/// The `n`th message of a session.
pub fn message(session: SessionId, n: u64, role: Role, content: &str) -> Message {
    Message {
        id: session.message_id(n),
        session_id: session,
        role,
        content: content.into(),
        tool_calls: if role == Role::Assistant {
            vec![ToolCallRequest {
                call_id: format!("call-{n}"),
                name: "run".into(),
                arguments: r#"{"host":"host:hubris","command":"uptime"}"#.into(),
            }]
        } else {
            Vec::new()
        },
        created_at: at(n as i64 * 10),
    }
}

/// A tool call record with a result.
pub fn tool_call(session: SessionId, call_id: &str) -> ToolCallRecord {
    ToolCallRecord {
        session_id: session,
        call_id: call_id.into(),
        name: "run".into(),
        arguments: r#"{"command":"uptime"}"#.into(),
        result: " 10:00:00 up 3 days".into(),
        outcome: ToolCallOutcome::Ok,
        started_at: at(77),
        duration_ms: 1234,
    }
}

/// An event at a time.
pub fn event(offset_ms: i64, event: DomainEvent) -> PendingEvent {
    PendingEvent {
        at: at(offset_ms),
        event,
    }
}

/// The commit that creates a session row, with a `session.created` event.
pub fn create_commit(record: SessionRecord) -> Commit {
    Commit {
        expected_version: None,
        session: Some(record),
        events: vec![event(0, DomainEvent::SessionCreated)],
        ..Commit::default()
    }
}

/// Creates a session (version 1) and returns its row as stored.
pub async fn create(store: &dyn Store, id: SessionId, status: SessionStatus) -> SessionRecord {
    let mut record = session(id, status);
    let receipt = store.commit(create_commit(record.clone())).await.unwrap();
    assert_eq!(receipt.version, 1);
    record.version = 1;
    record
}

/// A commit on an existing session at `version` carrying only events.
pub fn events_commit(record: &SessionRecord, version: i64, events: Vec<PendingEvent>) -> Commit {
    Commit {
        expected_version: Some(version),
        session: Some(record.clone()),
        events,
        ..Commit::default()
    }
}

/// Two sessions for the AUDIT-2 tamper tests: session 1 with two status events whose
/// reasons are `first` and `second`, and session 2 with only its creation. Returns
/// session 1's id.
pub async fn two_chains(store: &dyn Store, first: &str) -> SessionId {
    let record = create(store, session_id(1), SessionStatus::Planning).await;
    let reason = |text: &str| DomainEvent::TaskStatus {
        from: SessionStatus::Planning,
        to: SessionStatus::Executing,
        reason: Some(text.to_owned()),
    };
    store
        .commit(events_commit(
            &record,
            1,
            vec![event(1, reason(first)), event(2, reason("second"))],
        ))
        .await
        .unwrap();
    create(store, session_id(2), SessionStatus::Planning).await;
    record.id
}

/// One event of every kind [`DomainEvent::KINDS`] lists, with every optional field set,
/// in `KINDS` order (a test of this crate checks that none is missing).
pub fn every_event() -> Vec<DomainEvent> {
    use nomos_core::event::{AssentCloseReason, TurnCause};
    use nomos_core::{ApprovalId, ExecutionId, MessageId, Outcome};
    let execution_id = ExecutionId(Uuid::from_u128(0xe));
    let approval_id = ApprovalId(Uuid::from_u128(0xa));
    let who = || Some("alice".to_owned());
    let username = || Some("alice@example.org".to_owned());
    let request = |n: u32| Some(format!("req-{n}"));
    vec![
        DomainEvent::SessionCreated,
        DomainEvent::TaskStatus {
            from: SessionStatus::Planning,
            to: SessionStatus::Executing,
            reason: Some("assented".to_owned()),
        },
        DomainEvent::GoalSet {
            goal: "Free disk space on web1".to_owned(),
        },
        DomainEvent::BoardOutcome {
            outcome: Outcome::Partial,
        },
        DomainEvent::PlanProposed {
            generation: 2,
            steps: vec!["Check disk".to_owned(), "Clean logs".to_owned()],
            revision_reason: Some("the logs are elsewhere".to_owned()),
        },
        DomainEvent::StepStarted {
            generation: 2,
            seq: 1,
        },
        DomainEvent::StepFinished {
            generation: 2,
            seq: 1,
            status: StepStatus::Done,
        },
        DomainEvent::StepChecked {
            generation: 2,
            seq: 1,
            execution_id,
            verdict: nomos_core::check::CheckVerdict::Failed {
                reason: "check `systemctl is-active nginx` on web1 failed: it exited 3".to_owned(),
            },
        },
        DomainEvent::SafetyNet {
            execution_id,
            safety_execution_id: ExecutionId(Uuid::from_u128(0xf)),
            action: nomos_core::event::SafetyAction::BackedUp {
                file: nomos_core::safety::BackedUpFile {
                    path: "/etc/app.conf".to_owned(),
                    copy: "/var/lib/nomos/backup/e/1".to_owned(),
                    uid: 0,
                    gid: 0,
                    mode: "644".to_owned(),
                    size: 12,
                    sha256: "ab".repeat(32),
                },
            },
        },
        DomainEvent::AssentOpened {
            generation: 2,
            expires_at: at(1_800_000),
            granted_by: who(),
            username: username(),
            request_id: request(1),
        },
        DomainEvent::AssentClosed {
            generation: 2,
            reason: AssentCloseReason::PlanFinished,
        },
        DomainEvent::ExecutionCreated {
            execution_id,
            host: "web1".to_owned(),
            command: "df -h".to_owned(),
            class: CommandClass::ReadOnly,
            status: ExecutionStatus::Running,
        },
        DomainEvent::ExecutionStatusChanged {
            execution_id,
            status: ExecutionStatus::Failed,
            exit_code: Some(1),
            error: Some("exit status 1".to_owned()),
        },
        DomainEvent::ApprovalRequested {
            approval_id,
            execution_id,
            expires_at: at(3_600_000),
        },
        DomainEvent::ApprovalResolved {
            approval_id,
            status: ApprovalStatus::Approved,
            reason: Some("approved by the operator".to_owned()),
            decided_by: who(),
            username: username(),
            request_id: request(2),
        },
        DomainEvent::MessageAppended {
            message_id: MessageId(Uuid::from_u128(0xb)),
            role: Role::Assistant,
        },
        DomainEvent::ToolCalled {
            call_id: "call-1".to_owned(),
            name: "run".to_owned(),
            outcome: ToolCallOutcome::Refused,
        },
        DomainEvent::Nudged,
        DomainEvent::TurnStarted {
            cause: TurnCause::Continuation,
        },
        DomainEvent::TurnDone {
            error: Some("the model endpoint timed out".to_owned()),
            n_tool_calls: 3,
        },
        DomainEvent::TurnStopped {
            stopped_by: who(),
            username: username(),
            request_id: request(3),
        },
        DomainEvent::AssentRevoked {
            generation: 2,
            revoked_by: who(),
            username: username(),
            request_id: request(4),
        },
        DomainEvent::PlanRejected {
            generation: 3,
            rejected_by: who(),
            username: username(),
            request_id: request(5),
            reason: Some("not during office hours".to_owned()),
        },
        DomainEvent::TaskClosed {
            outcome: Outcome::Failure,
            note: Some("the host is gone".to_owned()),
            closed_by: who(),
            username: username(),
            request_id: request(6),
        },
        DomainEvent::SessionArchived {
            archived: true,
            by: who(),
        },
        DomainEvent::OutputRedacted {
            call_id: "call-2".to_owned(),
            tool: "run".to_owned(),
            kinds: vec![nomos_core::event::RedactedKind {
                kind: "private key".to_owned(),
                count: 1,
            }],
        },
        DomainEvent::ApprovalProgress {
            approval_id,
            approved_by: "alice".to_owned(),
            username: Some("alice".to_owned()),
            request_id: Some("req-7".to_owned()),
            approvals: 1,
            required: 2,
        },
        DomainEvent::DecisionRefused {
            decision: nomos_core::authz::DecisionKind::Approval,
            principal: who(),
            request_id: Some("req-8".to_owned()),
            approval_id: Some(approval_id),
            reason: "alice already approved it".to_owned(),
        },
        DomainEvent::PlanProgress {
            generation: 2,
            approved_by: "alice".to_owned(),
            username: Some("alice".to_owned()),
            request_id: Some("req-9".to_owned()),
            approvals: 1,
            required: 2,
        },
    ]
}

/// Creates session 60 and commits [`every_event`] after its creation; returns its id and
/// its log as stored (`session.created` first).
pub async fn committed_every_event(
    store: &dyn Store,
) -> (SessionId, Vec<nomos_core::event::EventRecord>) {
    let record = create(store, session_id(60), SessionStatus::Executing).await;
    let events = every_event()
        .into_iter()
        .enumerate()
        .map(|(n, e)| event(n as i64 + 1, e))
        .collect();
    store
        .commit(events_commit(&record, 1, events))
        .await
        .unwrap();
    let log = store.events_after(Some(record.id), 0, 100).await.unwrap();
    (record.id, log)
}

#[cfg(test)]
mod tests {
    use nomos_core::event::DomainEvent;

    #[test]
    fn every_event_has_one_event_of_each_kind_in_kinds_order() {
        let kinds: Vec<&str> = super::every_event().iter().map(DomainEvent::kind).collect();
        assert_eq!(kinds, DomainEvent::KINDS);
    }
}
