//! Grouping the rows of a set-based read (several sessions at once) into snapshots.

use std::collections::HashMap;

use nomos_core::SessionId;
use nomos_core::fanout::Fanout;
use nomos_core::ports::store::SessionSnapshot;
use nomos_core::record::{Approval, Execution, PlanStep, SessionRecord};

/// One snapshot per session record, in the records' order, each holding the steps,
/// executions, approvals and fan-outs of its session in the order given. Child rows of a
/// session not among the records are dropped.
pub fn assemble(
    records: Vec<SessionRecord>,
    steps: Vec<PlanStep>,
    executions: Vec<Execution>,
    approvals: Vec<Approval>,
    fanouts: Vec<Fanout>,
) -> Vec<SessionSnapshot> {
    let mut snapshots: Vec<SessionSnapshot> = records
        .into_iter()
        .map(|record| SessionSnapshot {
            record,
            steps: Vec::new(),
            executions: Vec::new(),
            approvals: Vec::new(),
            fanouts: Vec::new(),
        })
        .collect();
    let index: HashMap<SessionId, usize> = snapshots
        .iter()
        .enumerate()
        .map(|(idx, s)| (s.record.id, idx))
        .collect();
    for step in steps {
        if let Some(&idx) = index.get(&step.session_id) {
            snapshots[idx].steps.push(step);
        }
    }
    for execution in executions {
        if let Some(&idx) = index.get(&execution.session_id) {
            snapshots[idx].executions.push(execution);
        }
    }
    for approval in approvals {
        if let Some(&idx) = index.get(&approval.session_id) {
            snapshots[idx].approvals.push(approval);
        }
    }
    for fanout in fanouts {
        if let Some(&idx) = index.get(&fanout.session_id) {
            snapshots[idx].fanouts.push(fanout);
        }
    }
    snapshots
}
