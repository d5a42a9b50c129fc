//! Tests for the activity log derivation (ACTIVITY-1..4, PLAN-7), with a naive reference
//! model of step states checked against the real derivation on random facts.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use uuid::Uuid;

use super::*;
use crate::id::SessionId;
use crate::record::{ApprovalBinding, ExecOutput, ExecutionKind, KnowledgeLoop};
use crate::status::{CommandClass, SessionStatus};

const SESSION: SessionId = SessionId(Uuid::from_u128(0x5e55));

fn at(secs: i64) -> Timestamp {
    Timestamp::from_millis(1_800_000_000_000 + secs * 1000)
}

fn session(status: SessionStatus, plan_generation: u32) -> SessionRecord {
    SessionRecord {
        id: SESSION,
        status,
        goal: Some("upgrade nginx".into()),
        summary: None,
        board_outcome: None,
        plan_generation,
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
        version: 1,
    }
}

fn event(seq: i64, secs: i64, event: DomainEvent) -> EventRecord {
    EventRecord {
        global_seq: 1000 + seq,
        session_id: SESSION,
        seq,
        at: at(secs),
        event,
    }
}

fn step(
    generation: u32,
    seq: u32,
    status: StepStatus,
    started: Option<i64>,
    updated: i64,
) -> PlanStep {
    PlanStep {
        check: None,
        id: SESSION.step_id(generation, seq),
        session_id: SESSION,
        generation,
        seq,
        title: format!("step {seq} of generation {generation}"),
        detail: None,
        status,
        note: None,
        started_at: started.map(at),
        finished_at: if status.is_closed() {
            Some(at(updated))
        } else {
            None
        },
        updated_at: at(updated),
        commands: Vec::new(),
    }
}

fn execution(n: usize, step_seq: Option<u32>, status: ExecutionStatus, created: i64) -> Execution {
    let started = matches!(
        status,
        ExecutionStatus::Running | ExecutionStatus::Completed | ExecutionStatus::Failed
    );
    let finished = status.is_terminal();
    Execution {
        id: SESSION.execution_id(n),
        session_id: SESSION,
        tool_call_id: Some(format!("call-{n}")),
        kind: ExecutionKind::Command,
        host: "host:a".into(),
        command: format!("systemctl restart app{n}"),
        class: CommandClass::ConfigMutation,
        reason: "systemctl restart".into(),
        generation: 1,
        step_seq,
        status,
        created_at: at(created),
        started_at: if started { Some(at(created + 1)) } else { None },
        finished_at: if finished {
            Some(at(created + 2))
        } else {
            None
        },
        output: if status == ExecutionStatus::Completed {
            Some(ExecOutput {
                exit_code: Some(0),
                duration_ms: 1000,
                ..ExecOutput::default()
            })
        } else {
            None
        },
        error: None,
    }
}

fn approval(execution: &Execution, status: ApprovalStatus, requested: i64) -> Approval {
    Approval {
        id: SESSION.approval_id(execution.id),
        session_id: SESSION,
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
        binding_hash: "00".into(),
        status,
        requested_at: at(requested),
        expires_at: at(requested + 1800),
        decided_at: None,
        decided_by: None,
        approvers_required: 1,
        approved_by: Vec::new(),
    }
}

fn tool(
    call_id: &str,
    name: &str,
    outcome: ToolCallOutcome,
    started: i64,
    result: &str,
) -> ToolCallRecord {
    ToolCallRecord {
        session_id: SESSION,
        call_id: call_id.into(),
        name: name.into(),
        arguments: "{}".into(),
        result: result.into(),
        outcome,
        started_at: at(started),
        duration_ms: 500,
    }
}

/// Owned facts, so tests can build, shuffle and borrow them.
#[derive(Clone, Debug)]
struct Facts {
    session: SessionRecord,
    events: Vec<EventRecord>,
    steps: Vec<PlanStep>,
    executions: Vec<Execution>,
    approvals: Vec<Approval>,
    tool_calls: Vec<ToolCallRecord>,
}

impl Facts {
    fn new(session: SessionRecord) -> Facts {
        Facts {
            session,
            events: Vec::new(),
            steps: Vec::new(),
            executions: Vec::new(),
            approvals: Vec::new(),
            tool_calls: Vec::new(),
        }
    }

    fn derive(&self, now_secs: i64) -> Vec<ActivityEntry> {
        derive_activity(
            &ActivityFacts {
                session: &self.session,
                events: &self.events,
                steps: &self.steps,
                executions: &self.executions,
                approvals: &self.approvals,
                tool_calls: &self.tool_calls,
            },
            at(now_secs),
        )
    }

    fn timestamps(&self) -> BTreeSet<Timestamp> {
        let mut all = BTreeSet::new();
        all.extend(self.events.iter().map(|event| event.at));
        for step in &self.steps {
            all.extend(
                [Some(step.updated_at), step.started_at, step.finished_at]
                    .into_iter()
                    .flatten(),
            );
        }
        all.extend(self.executions.iter().map(|execution| execution.created_at));
        all.extend(self.approvals.iter().map(|approval| approval.requested_at));
        all.extend(self.tool_calls.iter().map(|call| call.started_at));
        all
    }
}

#[track_caller]
fn entry<'a>(log: &'a [ActivityEntry], key: &str) -> &'a ActivityEntry {
    match log.iter().find(|entry| entry.key == key) {
        Some(entry) => entry,
        None => panic!(
            "no entry {key} in {:#?}",
            log.iter().map(|e| &e.key).collect::<Vec<_>>()
        ),
    }
}

#[track_caller]
fn check_state(facts: &Facts, now_secs: i64, key: &str, expected: EntryState) {
    let log = facts.derive(now_secs);
    assert_eq!(entry(&log, key).state, expected, "state of {key}");
}

fn running_step_facts() -> Facts {
    let mut facts = Facts::new(session(SessionStatus::Executing, 1));
    facts.steps.push(step(1, 1, StepStatus::Done, Some(0), 10));
    facts
        .steps
        .push(step(1, 2, StepStatus::Running, Some(100), 100));
    facts.steps.push(step(1, 3, StepStatus::Pending, None, 0));
    facts
}

// rule: ACTIVITY-1
#[test]
fn same_facts_give_the_same_log_whatever_the_row_order() {
    let mut facts = running_step_facts();
    facts.events.push(event(1, 0, DomainEvent::SessionCreated));
    facts.events.push(event(
        2,
        0,
        DomainEvent::GoalSet {
            goal: "upgrade nginx".into(),
        },
    ));
    facts
        .executions
        .push(execution(1, Some(2), ExecutionStatus::Completed, 110));
    facts
        .executions
        .push(execution(2, Some(2), ExecutionStatus::PendingApproval, 120));
    facts
        .approvals
        .push(approval(&facts.executions[1], ApprovalStatus::Pending, 120));
    facts
        .tool_calls
        .push(tool("call-9", "get_entity", ToolCallOutcome::Ok, 105, "{}"));
    let log = facts.derive(130);
    assert_eq!(log, facts.derive(130));

    let mut reversed = facts.clone();
    reversed.events.reverse();
    reversed.steps.reverse();
    reversed.executions.reverse();
    assert_eq!(log, reversed.derive(130));
}

// rule: ACTIVITY-1
#[test]
fn the_wall_clock_does_not_change_a_settled_log() {
    let mut facts = Facts::new(session(SessionStatus::Done, 1));
    facts.steps.push(step(1, 1, StepStatus::Done, Some(0), 10));
    facts
        .executions
        .push(execution(1, Some(1), ExecutionStatus::Completed, 5));
    assert_eq!(facts.derive(20), facts.derive(20_000_000));
}

// rule: ACTIVITY-1
#[test]
fn the_log_is_ordered_by_time_then_key() {
    let mut facts = running_step_facts();
    facts.events.push(event(1, 0, DomainEvent::SessionCreated));
    facts
        .tool_calls
        .push(tool("call-a", "list_hosts", ToolCallOutcome::Ok, 50, "[]"));
    let keys: Vec<String> = facts
        .derive(101)
        .into_iter()
        .map(|entry| entry.key)
        .collect();
    assert_eq!(
        keys,
        [
            "status/1",
            "step/1/1",
            "step/1/3",
            "tool/call-a",
            "step/1/2"
        ]
    );
}

// rule: ACTIVITY-1
#[test]
fn rows_of_other_sessions_are_ignored() {
    let mut facts = running_step_facts();
    let mut foreign = step(1, 9, StepStatus::Running, Some(0), 0);
    foreign.session_id = SessionId(Uuid::from_u128(99));
    facts.steps.push(foreign);
    assert!(
        facts
            .derive(101)
            .iter()
            .all(|entry| entry.key != "step/1/9")
    );
}

// rule: ACTIVITY-2
#[test]
fn every_entry_carries_its_persisted_time() {
    let mut facts = running_step_facts();
    facts.events.push(event(4, 7, DomainEvent::Nudged));
    facts
        .executions
        .push(execution(1, Some(2), ExecutionStatus::Running, 110));
    facts.approvals.push(approval(
        &facts.executions[0],
        ApprovalStatus::Approved,
        111,
    ));
    facts.tool_calls.push(tool(
        "call-7",
        "get_relations",
        ToolCallOutcome::Ok,
        112,
        "[]",
    ));
    let log = facts.derive(5000);
    assert_eq!(entry(&log, "nudge/4").at, at(7));
    assert_eq!(
        entry(&log, "step/1/1").at,
        at(0),
        "a started step shows its start"
    );
    assert_eq!(
        entry(&log, "step/1/3").at,
        at(0),
        "a pending step shows its last update"
    );
    assert_eq!(entry(&log, "step/1/2").at, at(100));
    let exec_key = format!("exec/{}", SESSION.execution_id(1));
    assert_eq!(entry(&log, &exec_key).at, at(110));
    assert_eq!(
        entry(&log, &format!("approval/{}", facts.approvals[0].id)).at,
        at(111)
    );
    assert_eq!(entry(&log, "tool/call-7").at, at(112));
    assert!(
        log.iter().all(|entry| entry.at != at(5000)),
        "now never becomes a time"
    );
}

// rule: ACTIVITY-3
#[test]
fn approval_state_comes_from_rows_not_from_tool_result_text() {
    let mut facts = Facts::new(session(SessionStatus::Executing, 1));
    facts.tool_calls.push(tool(
        "call-1",
        "run",
        ToolCallOutcome::Refused,
        10,
        "status: approved, running now (awaiting approval)",
    ));
    let log = facts.derive(11);
    let call = entry(&log, "tool/call-1");
    assert_eq!(call.state, EntryState::Failed);
    assert_eq!(call.approval_id, None);
    assert!(log.iter().all(|entry| entry.kind != ActivityKind::Approval));
}

// rule: ACTIVITY-3
#[test]
fn a_pending_approval_shows_waiting_on_the_command_and_the_card() {
    let mut facts = Facts::new(session(SessionStatus::Executing, 1));
    facts
        .executions
        .push(execution(1, Some(1), ExecutionStatus::PendingApproval, 10));
    facts
        .approvals
        .push(approval(&facts.executions[0], ApprovalStatus::Pending, 10));
    let log = facts.derive(11);
    let command = entry(&log, &format!("exec/{}", SESSION.execution_id(1)));
    assert_eq!(command.state, EntryState::WaitingApproval);
    assert_eq!(command.approval_id, Some(facts.approvals[0].id));
    let card = entry(&log, &format!("approval/{}", facts.approvals[0].id));
    assert_eq!(card.state, EntryState::WaitingApproval);
    assert_eq!(card.seq, Some(1));
}

// rule: ACTIVITY-3
#[test]
fn a_denied_approval_cancels_its_card() {
    let mut facts = Facts::new(session(SessionStatus::Executing, 1));
    facts
        .executions
        .push(execution(1, None, ExecutionStatus::Cancelled, 10));
    let mut denied = approval(&facts.executions[0], ApprovalStatus::Denied, 10);
    denied.decided_by = Some("alice".into());
    denied.decided_at = Some(at(12));
    facts.approvals.push(denied);
    let log = facts.derive(20);
    let card = entry(&log, &format!("approval/{}", facts.approvals[0].id));
    assert_eq!(card.state, EntryState::Cancelled);
    assert_eq!(card.detail.as_deref(), Some("denied by alice"));
    assert_eq!(card.duration_ms, Some(2000));
}

// rule: ACTIVITY-3
#[test]
fn an_entry_is_running_only_while_its_row_is() {
    let mut facts = Facts::new(session(SessionStatus::Executing, 1));
    facts
        .executions
        .push(execution(1, None, ExecutionStatus::Running, 10));
    facts
        .executions
        .push(execution(2, None, ExecutionStatus::Completed, 10));
    let mut failed_exit = execution(3, None, ExecutionStatus::Completed, 10);
    failed_exit.output = Some(ExecOutput {
        exit_code: Some(2),
        ..ExecOutput::default()
    });
    facts.executions.push(failed_exit);
    let log = facts.derive(11);
    assert_eq!(
        entry(&log, &format!("exec/{}", SESSION.execution_id(1))).state,
        EntryState::Running
    );
    assert_eq!(
        entry(&log, &format!("exec/{}", SESSION.execution_id(2))).state,
        EntryState::Done
    );
    let third = entry(&log, &format!("exec/{}", SESSION.execution_id(3)));
    assert_eq!(third.state, EntryState::Failed);
    assert!(
        third
            .detail
            .as_deref()
            .is_some_and(|detail| detail.contains("exit 2"))
    );
}

// rule: ACTIVITY-3
#[test]
fn nothing_is_open_in_a_terminal_session() {
    let mut facts = running_step_facts();
    facts.session.status = SessionStatus::Partial;
    facts
        .executions
        .push(execution(1, Some(2), ExecutionStatus::Running, 110));
    facts
        .executions
        .push(execution(2, Some(2), ExecutionStatus::PendingApproval, 111));
    facts
        .approvals
        .push(approval(&facts.executions[1], ApprovalStatus::Pending, 111));
    let log = facts.derive(100_000);
    assert!(log.iter().all(|entry| !entry.state.is_open()), "{log:#?}");
    assert_eq!(entry(&log, "step/1/2").state, EntryState::Cancelled);
    assert_eq!(entry(&log, "step/1/1").state, EntryState::Done);
}

// rule: ACTIVITY-3
#[test]
fn a_run_call_that_became_an_execution_is_shown_once() {
    let mut facts = Facts::new(session(SessionStatus::Executing, 1));
    facts
        .executions
        .push(execution(1, None, ExecutionStatus::Completed, 10));
    facts
        .tool_calls
        .push(tool("call-1", "run", ToolCallOutcome::Ok, 10, "exit 0"));
    facts.tool_calls.push(tool(
        "call-2",
        "run",
        ToolCallOutcome::Refused,
        12,
        "propose a plan first",
    ));
    let log = facts.derive(20);
    assert!(log.iter().all(|entry| entry.key != "tool/call-1"));
    let refused = entry(&log, "tool/call-2");
    assert_eq!(
        refused.detail.as_deref(),
        Some("refused: propose a plan first")
    );
}

// rule: ACTIVITY-4
#[test]
fn a_running_step_quiet_for_over_a_minute_is_stalled() {
    let facts = running_step_facts();
    check_state(&facts, 160, "step/1/2", EntryState::Running);
    check_state(&facts, 161, "step/1/2", EntryState::Stalled);
    check_state(&facts, 161, "step/1/3", EntryState::Pending);
}

// rule: ACTIVITY-4
#[test]
fn a_recent_execution_of_the_step_keeps_it_running() {
    let mut facts = running_step_facts();
    facts
        .executions
        .push(execution(1, Some(2), ExecutionStatus::Completed, 150));
    check_state(&facts, 200, "step/1/2", EntryState::Running);
    check_state(&facts, 213, "step/1/2", EntryState::Stalled);
}

// rule: ACTIVITY-4
#[test]
fn a_long_running_command_or_pending_approval_is_not_a_stall() {
    let mut facts = running_step_facts();
    facts
        .executions
        .push(execution(1, Some(2), ExecutionStatus::Running, 100));
    check_state(&facts, 10_000, "step/1/2", EntryState::Running);
    facts.executions[0].status = ExecutionStatus::PendingApproval;
    check_state(&facts, 10_000, "step/1/2", EntryState::Running);
}

// rule: ACTIVITY-4
#[test]
fn a_tool_call_after_the_step_started_counts_as_its_activity() {
    let mut facts = running_step_facts();
    facts
        .tool_calls
        .push(tool("call-1", "get_entity", ToolCallOutcome::Ok, 140, "{}"));
    check_state(&facts, 190, "step/1/2", EntryState::Running);
    let mut early = running_step_facts();
    early
        .tool_calls
        .push(tool("call-1", "get_entity", ToolCallOutcome::Ok, 90, "{}"));
    check_state(&early, 190, "step/1/2", EntryState::Stalled);
}

// rule: PLAN-7
#[test]
fn steps_of_older_generations_are_replaced() {
    let mut facts = Facts::new(session(SessionStatus::Executing, 2));
    facts.steps.push(step(1, 1, StepStatus::Done, Some(0), 5));
    facts.steps.push(step(1, 2, StepStatus::Replaced, None, 20));
    facts.steps.push(step(2, 1, StepStatus::Pending, None, 20));
    let log = facts.derive(30);
    let old = entry(&log, "step/1/1");
    assert_eq!(old.state, EntryState::Replaced);
    assert_eq!(
        old.detail.as_deref(),
        Some("was done when the plan was revised")
    );
    assert_eq!(entry(&log, "step/1/2").state, EntryState::Replaced);
    assert_eq!(entry(&log, "step/2/1").state, EntryState::Pending);
}

// rule: SESSION-6
#[test]
fn status_goal_plan_and_assent_events_become_entries() {
    let mut facts = Facts::new(session(SessionStatus::Executing, 1));
    facts.events = vec![
        event(1, 0, DomainEvent::SessionCreated),
        event(
            2,
            1,
            DomainEvent::GoalSet {
                goal: "upgrade nginx".into(),
            },
        ),
        event(
            3,
            1,
            DomainEvent::TaskStatus {
                from: SessionStatus::Active,
                to: SessionStatus::Planning,
                reason: None,
            },
        ),
        event(
            4,
            2,
            DomainEvent::PlanProposed {
                generation: 1,
                steps: vec!["check".into(), "upgrade".into()],
                revision_reason: None,
            },
        ),
        event(
            5,
            3,
            DomainEvent::AssentOpened {
                generation: 1,
                expires_at: at(1803),
                granted_by: None,
                username: None,
                request_id: None,
            },
        ),
        event(
            6,
            3,
            DomainEvent::StepStarted {
                generation: 1,
                seq: 1,
            },
        ),
    ];
    let log = facts.derive(4);
    let titles: Vec<(&str, &str)> = log
        .iter()
        .map(|entry| (entry.key.as_str(), entry.title.as_str()))
        .collect();
    assert_eq!(
        titles,
        [
            ("status/1", "Session started"),
            ("goal/2", "Goal set"),
            ("status/3", "Status: active → planning"),
            ("plan/4", "Plan proposed: 2 steps (generation 1)"),
            ("assent/5", "Operator approved plan generation 1"),
        ]
    );
    assert_eq!(
        entry(&log, "plan/4").detail.as_deref(),
        Some("1=check; 2=upgrade")
    );
}

/// The naive reference for step states: scan every row for every step.
fn reference_step_states(facts: &Facts, now: Timestamp) -> BTreeMap<String, EntryState> {
    let current = facts
        .steps
        .iter()
        .map(|step| step.generation)
        .chain([facts.session.plan_generation])
        .max()
        .unwrap_or(0);
    let terminal = facts.session.status.is_terminal();
    let mut states = BTreeMap::new();
    for step in &facts.steps {
        let state = if step.generation < current {
            EntryState::Replaced
        } else {
            match step.status {
                StepStatus::Pending => EntryState::Pending,
                StepStatus::Running => {
                    let mut newest = step.updated_at;
                    if let Some(started_at) = step.started_at {
                        newest = newest.max(started_at);
                    }
                    let mut live = false;
                    for execution in &facts.executions {
                        if execution.generation != step.generation
                            || execution.step_seq != Some(step.seq)
                        {
                            continue;
                        }
                        live |= matches!(
                            execution.status,
                            ExecutionStatus::Running | ExecutionStatus::PendingApproval
                        );
                        for time in [
                            Some(execution.created_at),
                            execution.started_at,
                            execution.finished_at,
                        ]
                        .into_iter()
                        .flatten()
                        {
                            newest = newest.max(time);
                        }
                    }
                    for call in &facts.tool_calls {
                        let end = call.started_at + Span::from_millis(call.duration_ms as i64);
                        if step.started_at.is_some_and(|started_at| end >= started_at) {
                            newest = newest.max(end);
                        }
                    }
                    if !live && now.as_millis() - newest.as_millis() > 60_000 {
                        EntryState::Stalled
                    } else {
                        EntryState::Running
                    }
                }
                StepStatus::Done => EntryState::Done,
                StepStatus::Failed => EntryState::Failed,
                StepStatus::Skipped => EntryState::Skipped,
                StepStatus::Replaced => EntryState::Replaced,
            }
        };
        let state = match state {
            EntryState::Pending | EntryState::Running | EntryState::Stalled if terminal => {
                EntryState::Cancelled
            }
            state => state,
        };
        states.insert(format!("step/{}/{}", step.generation, step.seq), state);
    }
    states
}

fn any_step_status() -> impl Strategy<Value = StepStatus> {
    prop::sample::select(StepStatus::ALL.to_vec())
}

fn any_execution_status() -> impl Strategy<Value = ExecutionStatus> {
    prop::sample::select(ExecutionStatus::ALL.to_vec())
}

fn any_approval_status() -> impl Strategy<Value = ApprovalStatus> {
    prop::sample::select(ApprovalStatus::ALL.to_vec())
}

fn any_outcome() -> impl Strategy<Value = ToolCallOutcome> {
    prop_oneof![
        Just(ToolCallOutcome::Ok),
        Just(ToolCallOutcome::Refused),
        Just(ToolCallOutcome::Error),
        Just(ToolCallOutcome::Interrupted),
    ]
}

fn any_event() -> impl Strategy<Value = DomainEvent> {
    prop_oneof![
        Just(DomainEvent::SessionCreated),
        Just(DomainEvent::Nudged),
        Just(DomainEvent::StepStarted {
            generation: 1,
            seq: 1
        }),
        (1u32..4).prop_map(|generation| DomainEvent::AssentClosed {
            generation,
            reason: crate::event::AssentCloseReason::Expired
        }),
        "[a-z ]{0,30}".prop_map(|goal| DomainEvent::GoalSet { goal }),
        (1u32..4, prop::collection::vec("[a-z]{1,8}", 1..4)).prop_map(|(generation, steps)| {
            DomainEvent::PlanProposed {
                generation,
                steps,
                revision_reason: None,
            }
        }),
        (
            prop::sample::select(SessionStatus::ALL.to_vec()),
            prop::sample::select(SessionStatus::ALL.to_vec())
        )
            .prop_map(|(from, to)| DomainEvent::TaskStatus {
                from,
                to,
                reason: None
            }),
    ]
}

prop_compose! {
    fn any_facts()(
        status in prop::sample::select(SessionStatus::ALL.to_vec()),
        plan_generation in 0u32..4,
        events in prop::collection::vec((0i64..600, any_event()), 0..8),
        steps in prop::collection::vec(
            (any_step_status(), prop::option::of(0i64..600), 0i64..600),
            0..12,
        ),
        executions in prop::collection::vec(
            (1u32..4, prop::option::of(1u32..5), any_execution_status(), 0i64..600),
            0..10,
        ),
        approval_statuses in prop::collection::vec(prop::option::of(any_approval_status()), 10),
        tool_calls in prop::collection::vec((0usize..14, any_outcome(), 0i64..600), 0..10),
    ) -> Facts {
        let mut facts = Facts::new(session(status, plan_generation));
        facts.events = events
            .into_iter()
            .enumerate()
            .map(|(idx, (secs, kind))| event(idx as i64 + 1, secs, kind))
            .collect();
        // (generation, seq) is unique: the index picks it.
        facts.steps = steps
            .into_iter()
            .enumerate()
            .map(|(idx, (status, started, updated))| {
                step(idx as u32 / 4 + 1, idx as u32 % 4 + 1, status, started, updated)
            })
            .collect();
        // Most executions belong to the newest generation, where steps can be running.
        let newest = facts.steps.iter().map(|step| step.generation).max().unwrap_or(1);
        for (idx, (generation, step_seq, status, created)) in executions.into_iter().enumerate() {
            let mut row = execution(idx + 1, step_seq, status, created);
            row.generation = if generation == 1 { generation } else { newest };
            if let Some(Some(approval_status)) = approval_statuses.get(idx) {
                facts.approvals.push(approval(&row, *approval_status, created));
            }
            facts.executions.push(row);
        }
        // Call ids overlap with the executions' on purpose.
        facts.tool_calls = tool_calls
            .into_iter()
            .map(|(n, outcome, secs)| tool(&format!("call-{n}"), "run", outcome, secs, "approved"))
            .collect();
        facts.tool_calls.sort_by(|a, b| a.call_id.cmp(&b.call_id));
        facts.tool_calls.dedup_by(|a, b| a.call_id == b.call_id);
        facts
    }
}

/// A deterministic shuffle driven by `seed`, standing in for the store's unspecified order.
fn shuffle<T>(rows: &mut [T], seed: u64) {
    let mut state = seed | 1;
    for idx in (1..rows.len()).rev() {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let other = (state >> 33) as usize % (idx + 1);
        rows.swap(idx, other);
    }
}

proptest! {
    // rule: ACTIVITY-1
    #[test]
    fn the_log_does_not_depend_on_row_order(facts in any_facts(), seed in any::<u64>(), now in 0i64..800) {
        let log = facts.derive(now);
        prop_assert_eq!(&log, &facts.derive(now));
        let mut shuffled = facts.clone();
        shuffle(&mut shuffled.events, seed);
        shuffle(&mut shuffled.steps, seed.rotate_left(8));
        shuffle(&mut shuffled.executions, seed.rotate_left(16));
        shuffle(&mut shuffled.approvals, seed.rotate_left(24));
        shuffle(&mut shuffled.tool_calls, seed.rotate_left(32));
        prop_assert_eq!(&log, &shuffled.derive(now));
    }

    // rule: ACTIVITY-1
    #[test]
    fn the_log_is_sorted_with_unique_keys(facts in any_facts(), now in 0i64..800) {
        let log = facts.derive(now);
        for pair in log.windows(2) {
            prop_assert!((pair[0].at, &pair[0].key) <= (pair[1].at, &pair[1].key));
        }
        let keys: BTreeSet<&str> = log.iter().map(|entry| entry.key.as_str()).collect();
        prop_assert_eq!(keys.len(), log.len());
    }

    // rule: ACTIVITY-2
    #[test]
    fn every_time_in_the_log_is_a_persisted_time(facts in any_facts(), now in 0i64..5000) {
        let times = facts.timestamps();
        for entry in facts.derive(now) {
            prop_assert!(times.contains(&entry.at), "{} at {} is not an input time", entry.key, entry.at);
        }
    }

    // rule: ACTIVITY-3
    #[test]
    fn a_terminal_session_shows_nothing_open(facts in any_facts(), now in 0i64..5000) {
        let mut facts = facts;
        if !facts.session.status.is_terminal() {
            facts.session.status = SessionStatus::Done;
        }
        for entry in facts.derive(now) {
            prop_assert!(!entry.state.is_open(), "{} is {:?}", entry.key, entry.state);
        }
    }

    // rule: ACTIVITY-4
    #[test]
    fn step_states_match_the_naive_reference(facts in any_facts(), now in 0i64..800) {
        let expected = reference_step_states(&facts, at(now));
        let actual: BTreeMap<String, EntryState> = facts
            .derive(now)
            .into_iter()
            .filter(|entry| entry.kind == ActivityKind::Step)
            .map(|entry| (entry.key, entry.state))
            .collect();
        prop_assert_eq!(actual, expected);
    }
}

// rule: TURN-2
#[test]
fn a_failed_turn_shows_its_real_cause_and_a_good_turn_shows_nothing() {
    let mut facts = Facts::new(session(SessionStatus::Executing, 1));
    facts.events = vec![
        event(
            1,
            1,
            DomainEvent::TurnDone {
                error: None,
                n_tool_calls: 3,
            },
        ),
        event(
            2,
            5,
            DomainEvent::TurnDone {
                error: Some("model returned HTTP 503".into()),
                n_tool_calls: 0,
            },
        ),
    ];
    let log = facts.derive(6);
    assert_eq!(log.len(), 1, "{log:#?}");
    assert_eq!(log[0].key, "turn/2");
    assert_eq!(log[0].state, EntryState::Failed);
    assert_eq!(log[0].detail.as_deref(), Some("model returned HTTP 503"));
}

// rule: AUDIT-1
#[test]
fn an_approved_card_names_who_decided_and_the_request_from_its_event() {
    let mut facts = Facts::new(session(SessionStatus::Executing, 1));
    facts
        .executions
        .push(execution(1, None, ExecutionStatus::Completed, 10));
    let mut approved = approval(&facts.executions[0], ApprovalStatus::Approved, 10);
    approved.decided_by = Some("alice".into());
    approved.decided_at = Some(at(12));
    let approval_id = approved.id;
    facts.approvals.push(approved);
    facts.events.push(event(
        1,
        12,
        DomainEvent::ApprovalResolved {
            approval_id,
            status: ApprovalStatus::Approved,
            reason: None,
            decided_by: Some("alice".into()),
            username: None,
            request_id: Some("req-7".into()),
        },
    ));
    let log = facts.derive(20);
    let card = entry(&log, &format!("approval/{approval_id}"));
    assert_eq!(
        card.detail.as_deref(),
        Some("approved by alice (request req-7)")
    );
}

// rule: AUDIT-1
#[test]
fn an_oidc_decider_is_named_by_username_alongside_the_subject() {
    let mut facts = Facts::new(session(SessionStatus::Executing, 1));
    facts
        .executions
        .push(execution(1, None, ExecutionStatus::Completed, 10));
    let mut approved = approval(&facts.executions[0], ApprovalStatus::Approved, 10);
    approved.decided_by = Some("248289761001".into());
    approved.decided_at = Some(at(12));
    let approval_id = approved.id;
    facts.approvals.push(approved);
    facts.events.push(event(
        1,
        12,
        DomainEvent::ApprovalResolved {
            approval_id,
            status: ApprovalStatus::Approved,
            reason: None,
            decided_by: Some("248289761001".into()),
            username: Some("alice".into()),
            request_id: None,
        },
    ));
    facts.events.push(event(
        2,
        13,
        DomainEvent::TurnStopped {
            stopped_by: Some("248289761001".into()),
            username: Some("alice".into()),
            request_id: Some("req-9".into()),
        },
    ));
    let log = facts.derive(20);
    let card = entry(&log, &format!("approval/{approval_id}"));
    assert_eq!(
        card.detail.as_deref(),
        Some("approved by alice (sub 248289761001)")
    );
    let stop = entry(&log, "stop/2");
    assert_eq!(
        stop.detail.as_deref(),
        Some("by alice (sub 248289761001) (request req-9)")
    );
}
