//! GATE-10 (rev. 3): a preview runs only for a request that is recorded and will be shown
//! to an operator who can decide it, and every preview that runs is an execution of its
//! session recorded before it starts.
//!
//! The shell asks [`Session::handle_preview_starting`] before it runs each preview
//! command; the core records it `running` (kind `preview`) only when the request it
//! belongs to waits for the operator now: a `run` the gate would hold for its own approval,
//! or a declared `config_mutation` of the current plan that has no preview yet and no
//! assent. The shell commits that, then runs the command, and hands its end back with the
//! request (`ToolInput::Run`'s preview, [`Session::handle_declared_previews`]), which ends
//! the execution whatever the gate then decides. Whether any operator can decide at all
//! (an unattended runtime answers nobody) is the shell's configuration: it asks for no
//! preview then.

use crate::classification::Classification;
use crate::event::DomainEvent;
use crate::id::ExecutionId;
use crate::preview::{PreviewPlan, PreviewResult};
use crate::record::{Execution, ExecutionKind};
use crate::status::{CommandClass, ExecutionStatus};
use crate::time::Timestamp;

use super::Session;

/// The request a preview is for (GATE-10).
#[derive(Clone, Copy, Debug)]
pub enum PreviewFor<'a> {
    /// A `run` of the previewed command on the host, classified so.
    Run(&'a Classification),
    /// A declared command of the current plan on the host (a group's first member).
    Declared,
    /// GATE-11: the operator's edit of this pending request, which the judge accepted.
    Edit(crate::id::ApprovalId),
}

impl Session {
    /// GATE-10 (rev. 3): records preview command `idx` of `plan` on `host` as an execution
    /// of kind `preview`, `running`, before the shell runs it, and returns its id; `None`
    /// (nothing recorded, and the shell must not run it) when the command may not run
    /// (not `read_only`) or the request it is for would not be shown to the operator now.
    pub fn handle_preview_starting(
        &mut self,
        now: Timestamp,
        host: &str,
        plan: &PreviewPlan,
        idx: usize,
        request: PreviewFor<'_>,
    ) -> Option<ExecutionId> {
        if !plan.may_run(idx) {
            return None;
        }
        let command = plan.form.commands.get(idx)?.clone();
        let shown = match request {
            PreviewFor::Run(classification) => {
                self.run_would_wait(now, host, classification, &plan.command)
            }
            PreviewFor::Declared => {
                let assented = self
                    .record
                    .assent
                    .is_some_and(|w| w.generation == self.record.plan_generation);
                !assented
                    && self
                        .declared_previews_wanted()
                        .iter()
                        .any(|(_, _, h, c)| h == host && *c == plan.command)
            }
            PreviewFor::Edit(approval_id) => self.approvals().iter().any(|a| {
                a.id == approval_id
                    && a.status == crate::status::ApprovalStatus::Pending
                    && !crate::sweep::approval_expired(a, now)
            }),
        };
        if !shown {
            return None;
        }
        self.touch(now);
        Some(self.new_preview_execution(now, host, &command, now))
    }

    /// A `running` execution of kind `preview` (no approval, not discovery).
    pub(crate) fn new_preview_execution(
        &mut self,
        now: Timestamp,
        host: &str,
        command: &str,
        started_at: Timestamp,
    ) -> ExecutionId {
        let id = self.record.id.execution_id(self.executions.len() + 1);
        self.executions.push(Execution {
            id,
            session_id: self.record.id,
            tool_call_id: None,
            kind: ExecutionKind::Preview,
            host: host.to_owned(),
            command: command.to_owned(),
            class: CommandClass::ReadOnly,
            reason: "preview (GATE-10)".to_owned(),
            generation: self.record.plan_generation,
            step_seq: self.running_step(),
            status: ExecutionStatus::Running,
            created_at: now,
            started_at: Some(started_at),
            finished_at: None,
            output: None,
            error: None,
        });
        self.emit(
            now,
            DomainEvent::ExecutionCreated {
                execution_id: id,
                host: host.to_owned(),
                command: command.to_owned(),
                class: CommandClass::ReadOnly,
                status: ExecutionStatus::Running,
            },
        );
        id
    }

    /// Ends every preview run of `result` recorded before it ran and still `running`, with
    /// how it ended, whatever the request then becomes.
    pub(crate) fn finish_previews(&mut self, now: Timestamp, result: &PreviewResult) {
        for ran in &result.runs {
            if let Some(id) = ran.execution_id {
                // A run already ended (or not a running preview) is refused: nothing to do.
                let _ = self.handle_execution_finished(now, id, ran.result.clone());
            }
        }
    }
}
