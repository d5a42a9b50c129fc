//! Criterion bench: one full propose -> assent -> run -> complete cycle through the core.

use criterion::{Criterion, criterion_group, criterion_main};
use nomos_core::Classification;
use nomos_core::record::ExecOutput;
use nomos_core::session::{
    Action, KnowledgeUse, Revision, Session, SessionConfig, StepDraft, ToolInput,
};
use nomos_core::{CommandClass, Outcome, SessionId, Span, StepStatus, Timestamp};
use uuid::Uuid;

/// Drives one session through a whole task and returns how many events it produced.
fn full_cycle(n: u128) -> usize {
    let mut now = Timestamp::from_millis(1_800_000_000_000);
    let mut tick = || {
        now = now + Span::from_millis(5);
        now
    };
    let mut session = Session::create(
        SessionId(Uuid::from_u128(n)),
        tick(),
        SessionConfig::spec_defaults(),
    );
    let mut n_events = 0;
    let steps = [
        "inspect the compose project",
        "restart the bridge",
        "verify",
        "write back",
    ]
    .map(|t| StepDraft {
        title: t.to_owned(),
        detail: None,
        commands: Vec::new(),
        check: None,
    })
    .to_vec();
    session.handle_operator_message(tick(), "the whatsapp bridge is down, fix it");
    session.handle_tool(
        tick(),
        "c1",
        ToolInput::SetGoal {
            goal: "fix the bridge".to_owned(),
        },
    );
    session.handle_tool(
        tick(),
        "c2",
        ToolInput::ProposePlan {
            steps,
            revision: Revision::No,
        },
    );
    n_events += session.take_commit().events.len();
    session.handle_operator_message(tick(), "proceed");
    let commands = [
        ("docker compose logs --tail 100", CommandClass::ReadOnly),
        (
            "docker compose restart bridge",
            CommandClass::ConfigMutation,
        ),
        ("docker compose ps", CommandClass::ReadOnly),
    ];
    for (seq, (command, class)) in (1u32..).zip(commands) {
        session.handle_tool(
            tick(),
            "s",
            ToolInput::UpdatePlanStep {
                seq,
                status: StepStatus::Running,
                note: None,
            },
        );
        let reply = session.handle_tool(
            tick(),
            "r",
            ToolInput::Run {
                host: "lxc:bridge".to_owned(),
                command: command.to_owned(),
                classification: Classification::new(class, "bench"),
                preview: None,
            },
        );
        if let Some(Action::Dispatch { execution_id }) = reply.action {
            let output = ExecOutput {
                exit_code: Some(0),
                stdout: "ok".to_owned(),
                ..ExecOutput::default()
            };
            let _ = session.handle_execution_finished(tick(), execution_id, Ok(output));
        }
        session.handle_tool(
            tick(),
            "d",
            ToolInput::UpdatePlanStep {
                seq,
                status: StepStatus::Done,
                note: None,
            },
        );
        n_events += session.take_commit().events.len();
    }
    session.handle_knowledge_use(tick(), KnowledgeUse::WriteBack);
    session.handle_tool(
        tick(),
        "c",
        ToolInput::CompleteTask {
            outcome: Outcome::Success,
            summary: "fixed".to_owned(),
        },
    );
    n_events + session.take_commit().events.len()
}

fn bench_cycle(c: &mut Criterion) {
    assert!(full_cycle(1) > 20, "the cycle must produce its events");
    c.bench_function("session/propose_assent_run_complete", |b| {
        let mut n = 0;
        b.iter(|| {
            n += 1;
            full_cycle(n)
        })
    });
}

criterion_group!(benches, bench_cycle);
criterion_main!(benches);
