//! Contract check of GATE-10: a request's preview, the preview executions and a declared
//! command's preview are stored and read back exactly, so the binding hash still matches.

use nomos_core::classify::{classify, preview_form};
use nomos_core::declared::DeclaredCommand;
use nomos_core::ports::store::Store;
use nomos_core::preview::{PreviewPlan, PreviewRan, PreviewResult};
use nomos_core::record::{ExecOutput, ExecutionKind};
use nomos_core::session::{Revision, Session, SessionConfig, StepDraft, ToolInput, binding_hash};
use nomos_core::{Span, StepStatus};

use super::fixtures::{at, session_id};

fn ran(command: &str, outputs: &[&str]) -> Option<PreviewResult> {
    let plan = PreviewPlan::of(command, preview_form, classify)?;
    let runs = plan
        .runnable()
        .into_iter()
        .zip(outputs)
        .map(|(c, out)| PreviewRan {
            command: c.to_owned(),
            started_at: at(20),
            result: Ok(ExecOutput {
                exit_code: Some(0),
                stdout: (*out).to_owned(),
                ..ExecOutput::default()
            }),
            execution_id: None,
        })
        .collect();
    Some(PreviewResult { plan, runs })
}

/// GATE-10: previews round-trip: the approval's binding (packages, runs, diff), the
/// executions of kind `preview`, and the preview on a declared command.
// rule: GATE-10
pub async fn previews_round_trip_with_their_request(store: &dyn Store) {
    let mut now = at(0);
    let mut session = Session::create(session_id(77), now, SessionConfig::spec_defaults());
    let mut tool = |session: &mut Session, n: u32, input: ToolInput| {
        now = now + Span::from_millis(10);
        session.handle_tool(now, &format!("call_{n}"), input)
    };
    tool(&mut session, 1, ToolInput::SetGoal { goal: "g".into() });
    let declared = "systemctl restart nginx";
    tool(
        &mut session,
        2,
        ToolInput::ProposePlan {
            steps: vec![StepDraft {
                check: None,
                title: "restart".into(),
                detail: None,
                commands: vec![DeclaredCommand::new(
                    "local",
                    Vec::new(),
                    declared,
                    classify(declared),
                )],
            }],
            revision: Revision::No,
        },
    );
    let status = ran(declared, &["active (running)"]).unwrap();
    session.handle_declared_previews(at(30), vec![(1, 0, "local".into(), status)]);
    session.handle_operator_message(at(40), "yes");
    tool(
        &mut session,
        3,
        ToolInput::UpdatePlanStep {
            seq: 1,
            status: StepStatus::Running,
            note: None,
        },
    );
    let sed = "sed -i 's/80/8080/' /etc/app.conf";
    tool(
        &mut session,
        4,
        ToolInput::Run {
            host: "local".into(),
            command: sed.into(),
            classification: classify(sed),
            preview: ran(sed, &["port 8080\n", "port 80\n"]),
        },
    );
    let expected = session.snapshot();
    store.commit(session.take_commit()).await.unwrap();
    let loaded = store.load_session(session_id(77)).await.unwrap().unwrap();

    assert_eq!(loaded.steps, expected.steps);
    assert!(loaded.steps[0].commands[0].preview.is_some());
    // The store orders executions by (created_at, id); the preview runs share a time.
    let by_id = |mut list: Vec<nomos_core::record::Execution>| {
        list.sort_by_key(|e| e.id);
        list
    };
    assert_eq!(by_id(loaded.executions.clone()), by_id(expected.executions));
    let previews = loaded
        .executions
        .iter()
        .filter(|e| e.kind == ExecutionKind::Preview)
        .count();
    assert_eq!(previews, 3, "{:?}", loaded.executions);
    assert_eq!(loaded.approvals, expected.approvals);
    let approval = &loaded.approvals[0];
    let preview = approval.binding.preview.as_ref().unwrap();
    assert!(preview.diff.as_deref().unwrap().contains("+port 8080"));
    assert_eq!(binding_hash(&approval.binding), approval.binding_hash);
}
