//! The gate for `run` (GATE-1..6): what a command may do, decided from its class, the
//! plan and the operator's assent.

use crate::classification::Classification;
use crate::event::DomainEvent;
use crate::record::{Execution, KnowledgeLoop};
use crate::status::{CommandClass, ExecutionStatus};
use crate::time::Timestamp;

use super::bound::Bound;
use super::tool::{Action, ToolReply};
use super::{Session, text};

impl Session {
    pub(crate) fn run(
        &mut self,
        now: Timestamp,
        call_id: &str,
        host: String,
        command: String,
        classification: Classification,
    ) -> ToolReply {
        let class = classification.class;
        if let Some(refused) = self.gate_refusal(now, class) {
            return refused;
        }
        // WRITEBACK-1: `run` is a discovery tool.
        if self.record.knowledge == KnowledgeLoop::Untouched {
            self.record.knowledge = KnowledgeLoop::Discovered;
        }
        let program_unknown = classification.program_unknown();
        if let Bound::Asks(origin) = self.bound(&host, &command, class, program_unknown) {
            // GATE-5: a destructive command, and one whose program nobody knows
            // (CLASSIFY-7), always waits for its own approval; GATE-9: so does a change
            // the approved plan did not declare. An identical request already waiting is
            // not asked twice.
            if let Some(existing) = self.pending_approval_for(&host, &command, class) {
                return ToolReply::ok(text::approval_already_pending(&existing.to_string()));
            }
            let execution_id = self.new_execution(
                now,
                call_id,
                host,
                command,
                classification,
                ExecutionStatus::PendingApproval,
            );
            let approval = self.request_approval(now, execution_id, origin);
            let reply = text::approval_requested_for(
                &approval.id.to_string(),
                &approval.expires_at.to_rfc3339(),
                class,
                origin,
            );
            let action = Action::AwaitApproval {
                approval_id: approval.id,
                execution_id,
            };
            self.queue(action);
            return ToolReply::ok(reply).with_action(action);
        }
        // GATE-1 (read-only) and GATE-5 (config mutation inside the assent window). The
        // execution starts here, with its dispatch (EXEC-6).
        let execution_id = self.new_execution(
            now,
            call_id,
            host,
            command,
            classification,
            ExecutionStatus::Approved,
        );
        match self.start_execution(now, execution_id) {
            Ok(action) => ToolReply::ok("dispatched").with_action(action),
            // Unreachable: the execution was created `approved` just above.
            Err(refused) => ToolReply::error(refused.to_string()),
        }
    }

    /// GATE-2, GATE-3: the refusal of a command of `class` now, or `None` when the gate
    /// lets it through to GATE-1/GATE-5.
    pub(crate) fn gate_refusal(
        &mut self,
        now: Timestamp,
        class: CommandClass,
    ) -> Option<ToolReply> {
        // GATE-4: a window whose time ran out closes here, recorded, before it is asked.
        self.expire_assent(now);
        if class != CommandClass::ReadOnly {
            // GATE-2: nothing that changes state before a plan exists.
            if self.record.plan_generation == 0 {
                return Some(ToolReply::refused(text::PROPOSE_PLAN_FIRST));
            }
            // GATE-3: nothing that changes state before the operator assented. GATE-9: a
            // window whose declared commands changed since assent is void.
            self.void_window_if_declared_changed(now);
            if !self.assent_open(now) {
                return Some(ToolReply::refused(text::wait_for_assent(class)));
            }
        }
        None
    }

    pub(crate) fn new_execution(
        &mut self,
        now: Timestamp,
        call_id: &str,
        host: String,
        command: String,
        classification: Classification,
        status: ExecutionStatus,
    ) -> crate::id::ExecutionId {
        let id = self.record.id.execution_id(self.executions.len() + 1);
        let step_seq = self.running_step();
        let execution = Execution {
            id,
            session_id: self.record.id,
            tool_call_id: Some(call_id.to_owned()),
            host: host.clone(),
            command: command.clone(),
            class: classification.class,
            reason: classification.reason,
            generation: self.record.plan_generation,
            step_seq,
            status,
            created_at: now,
            started_at: None,
            finished_at: None,
            output: None,
            error: None,
        };
        self.executions.push(execution);
        self.emit(
            now,
            DomainEvent::ExecutionCreated {
                execution_id: id,
                host,
                command,
                class: classification.class,
                status,
            },
        );
        id
    }
}
