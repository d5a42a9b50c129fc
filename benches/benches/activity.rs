//! Criterion bench: deriving a session's activity log (ACTIVITY-1) at 100, 1k and 10k events.
//!
//! The facts mimic a long session: for every 17 events there is one plan step, four
//! executions (one with an approval), five tool calls and the status, step, execution and
//! tool events they produced, spread over five plan generations. Throughput is per event.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use nomos_core::activity::{ActivityFacts, derive_activity};
use nomos_core::event::{DomainEvent, EventRecord};
use nomos_core::record::{
    Approval, ApprovalBinding, ExecOutput, Execution, ExecutionKind, KnowledgeLoop, PlanStep,
    SessionRecord, ToolCallOutcome, ToolCallRecord,
};
use nomos_core::{
    ApprovalStatus, CommandClass, ExecutionStatus, SessionId, SessionStatus, Span, StepStatus,
    Timestamp,
};
use uuid::Uuid;

/// Owned facts of one synthetic session.
struct Facts {
    session: SessionRecord,
    events: Vec<EventRecord>,
    steps: Vec<PlanStep>,
    executions: Vec<Execution>,
    approvals: Vec<Approval>,
    tool_calls: Vec<ToolCallRecord>,
}

const GENERATIONS: u32 = 5;

fn facts(n_events: usize) -> Facts {
    let id = SessionId(Uuid::from_u128(42));
    let base = Timestamp::from_millis(1_800_000_000_000);
    let at = |n: usize| base + Span::from_millis(n as i64 * 250);
    // Each unit makes 17 events; a few spare ones are cut at the end.
    let n_units = n_events.div_ceil(16);
    let steps_per_generation = n_units.div_ceil(GENERATIONS as usize).max(1);
    let mut facts = Facts {
        session: SessionRecord {
            id,
            status: SessionStatus::Executing,
            goal: Some("audit every host".to_owned()),
            summary: None,
            board_outcome: None,
            plan_generation: GENERATIONS,
            assent: None,
            knowledge: KnowledgeLoop::Discovered,
            nudged_at: None,
            client: None,
            owner: None,
            archived_at: None,
            plan_approvals: None,
            n_messages: 0,
            created_at: base,
            last_activity_at: at(n_events),
            version: 1,
        },
        events: Vec::with_capacity(n_events),
        steps: Vec::new(),
        executions: Vec::new(),
        approvals: Vec::new(),
        tool_calls: Vec::new(),
    };
    let mut clock = 0usize;
    let push_event = |facts: &mut Facts, clock: usize, event: DomainEvent| {
        let seq = facts.events.len() as i64 + 1;
        facts.events.push(EventRecord {
            global_seq: seq,
            session_id: id,
            seq,
            at: at(clock),
            event,
        });
    };
    for unit in 0..n_units {
        let generation = (unit / steps_per_generation) as u32 + 1;
        let seq = (unit % steps_per_generation) as u32 + 1;
        let last = unit + 1 == n_units;
        let status = if last {
            StepStatus::Running
        } else {
            StepStatus::Done
        };
        clock += 1;
        push_event(
            &mut facts,
            clock,
            DomainEvent::StepStarted { generation, seq },
        );
        push_event(
            &mut facts,
            clock,
            DomainEvent::TaskStatus {
                from: SessionStatus::Planning,
                to: SessionStatus::Executing,
                reason: None,
            },
        );
        let started = clock;
        for call in 0..5 {
            clock += 1;
            let call_id = format!("call-{unit}-{call}");
            if call < 4 {
                let n = facts.executions.len() + 1;
                let execution_id = id.execution_id(n);
                let needs_approval = call == 3;
                let class = if needs_approval {
                    CommandClass::Destructive
                } else {
                    CommandClass::ReadOnly
                };
                facts.executions.push(Execution {
                    id: execution_id,
                    session_id: id,
                    tool_call_id: Some(call_id.clone()),
                    kind: ExecutionKind::Command,
                    host: format!("host:h{}", unit % 7),
                    command: format!("systemctl status app{call}"),
                    class,
                    reason: "bench".to_owned(),
                    generation,
                    step_seq: Some(seq),
                    status: ExecutionStatus::Completed,
                    created_at: at(clock),
                    started_at: Some(at(clock)),
                    finished_at: Some(at(clock + 1)),
                    output: Some(ExecOutput {
                        exit_code: Some(0),
                        stdout: "active (running)".to_owned(),
                        duration_ms: 120,
                        ..ExecOutput::default()
                    }),
                    error: None,
                });
                push_event(
                    &mut facts,
                    clock,
                    DomainEvent::ExecutionCreated {
                        execution_id,
                        host: "host:h".to_owned(),
                        command: "systemctl status app".to_owned(),
                        class,
                        status: ExecutionStatus::Approved,
                    },
                );
                push_event(
                    &mut facts,
                    clock + 1,
                    DomainEvent::ExecutionStatusChanged {
                        execution_id,
                        status: ExecutionStatus::Completed,
                        exit_code: Some(0),
                        error: None,
                    },
                );
                if needs_approval {
                    let approval_id = id.approval_id(execution_id);
                    facts.approvals.push(Approval {
                        id: approval_id,
                        session_id: id,
                        execution_id,
                        binding: ApprovalBinding {
                            command: "systemctl status app3".to_owned(),
                            host: "host:h".to_owned(),
                            class,
                            generation,
                            origin: Default::default(),
                            preview: None,
                            edited_from: None,
                        },
                        binding_hash: "00".to_owned(),
                        status: ApprovalStatus::Approved,
                        requested_at: at(clock),
                        expires_at: at(clock + 7200),
                        decided_at: Some(at(clock + 1)),
                        decided_by: Some("operator".to_owned()),
                        approvers_required: 1,
                        approved_by: Vec::new(),
                    });
                    push_event(
                        &mut facts,
                        clock,
                        DomainEvent::ApprovalResolved {
                            approval_id,
                            status: ApprovalStatus::Approved,
                            reason: None,
                            decided_by: None,
                            username: None,
                            request_id: None,
                        },
                    );
                }
            }
            facts.tool_calls.push(ToolCallRecord {
                session_id: id,
                call_id: call_id.clone(),
                name: if call < 4 {
                    "run".to_owned()
                } else {
                    "get_entity".to_owned()
                },
                arguments: "{}".to_owned(),
                result: "ok".to_owned(),
                outcome: ToolCallOutcome::Ok,
                started_at: at(clock),
                duration_ms: 150,
            });
            push_event(
                &mut facts,
                clock,
                DomainEvent::ToolCalled {
                    call_id,
                    name: "run".to_owned(),
                    outcome: ToolCallOutcome::Ok,
                },
            );
        }
        clock += 1;
        facts.steps.push(PlanStep {
            id: id.step_id(generation, seq),
            session_id: id,
            generation,
            seq,
            title: format!("audit host {seq}"),
            detail: None,
            status,
            note: None,
            started_at: Some(at(started)),
            finished_at: if last { None } else { Some(at(clock)) },
            updated_at: at(clock),
            commands: Vec::new(),
            check: None,
        });
        if !last {
            push_event(
                &mut facts,
                clock,
                DomainEvent::StepFinished {
                    generation,
                    seq,
                    status,
                },
            );
        }
    }
    facts.events.truncate(n_events);
    facts
}

fn bench_activity(c: &mut Criterion) {
    let mut group = c.benchmark_group("activity/derive");
    for n_events in [100usize, 1_000, 10_000] {
        let facts = facts(n_events);
        let activity = ActivityFacts {
            session: &facts.session,
            events: &facts.events,
            steps: &facts.steps,
            executions: &facts.executions,
            approvals: &facts.approvals,
            tool_calls: &facts.tool_calls,
        };
        let now = facts.session.last_activity_at + Span::from_secs(30);
        let log = derive_activity(&activity, now);
        assert_eq!(
            facts.events.len(),
            n_events,
            "the generator must produce {n_events} events"
        );
        assert!(
            log.len() > n_events / 4,
            "the log must have entries ({} for {n_events})",
            log.len()
        );
        group.throughput(Throughput::Elements(n_events as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(n_events),
            &activity,
            |b, activity| {
                b.iter(|| derive_activity(black_box(activity), now));
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench_activity);
criterion_main!(benches);
