//! The gate for `run` (GATE-1..6): what a command may do, decided from its class, the
//! plan and the operator's assent.

use crate::classification::Classification;
use crate::event::DomainEvent;
use crate::preview::{Preview, PreviewResult};
use crate::record::{Execution, ExecutionKind, KnowledgeLoop};
use crate::status::{CommandClass, ExecutionStatus};
use crate::time::Timestamp;

use super::bound::{Bound, asks_alone};
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
        preview: Option<PreviewResult>,
    ) -> ToolReply {
        let class = classification.class;
        // GATE-10 (rev. 3): previews recorded before they ran end here, whatever the gate
        // decides below.
        if let Some(result) = &preview {
            self.finish_previews(now, result);
        }
        if let Some(refused) = self.gate_refusal(now, &classification) {
            return refused;
        }
        if let Some(held) = self.held_for_canary(&[host.as_str()], &command) {
            return held;
        }
        // WRITEBACK-1: `run` is a discovery tool.
        if self.record.knowledge == KnowledgeLoop::Untouched {
            self.record.knowledge = KnowledgeLoop::Discovered;
        }
        let alone = asks_alone(&classification);
        if let Bound::Asks(origin) = self.bound(&host, &command, class, alone) {
            // GATE-5: a destructive command, and one whose program nobody knows
            // (CLASSIFY-7), always waits for its own approval; SECRET-1: so does a read of
            // a secret path, plan or no plan; GATE-9: so does a change the approved plan
            // did not declare. An identical request already waiting is not asked twice.
            if let Some(existing) = self.pending_approval_for(&host, &command, class) {
                return ToolReply::ok(text::approval_already_pending(&existing.to_string()));
            }
            // GATE-10: the preview ran before the request is shown; it is recorded first.
            let preview = preview.map(|result| self.record_preview(now, &host, &result));
            let secret = classification.secret_read().map(str::to_owned);
            let execution_id = self.new_execution(
                now,
                call_id,
                host,
                command,
                classification,
                ExecutionStatus::PendingApproval,
            );
            let approval = self.request_approval(now, execution_id, origin, preview);
            let reply = match secret {
                Some(path) => text::secret_read_requested(
                    &approval.id.to_string(),
                    &approval.expires_at.to_rfc3339(),
                    &path,
                ),
                None => text::approval_requested_for(
                    &approval.id.to_string(),
                    &approval.expires_at.to_rfc3339(),
                    class,
                    origin,
                ),
            };
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

    /// GATE-10: whether `command` on `host` would wait for its own approval if the model
    /// ran it now, so the shell runs its preview first. Decides nothing.
    pub fn run_would_wait(
        &self,
        now: Timestamp,
        host: &str,
        classification: &Classification,
        command: &str,
    ) -> bool {
        let class = classification.class;
        if class == CommandClass::ReadOnly || self.record.plan_generation == 0 {
            return false;
        }
        let window_stands = self.assent_open(now)
            && self.record.assent.is_some_and(|w| {
                w.generation != self.record.plan_generation
                    || w.declared == Some(self.declared_digest())
                    || (w.declared.is_none() && self.declared_commands().next().is_none())
            });
        window_stands
            && matches!(
                self.bound(host, command, class, asks_alone(classification)),
                Bound::Asks(_)
            )
            && self.pending_approval_for(host, command, class).is_none()
    }

    /// GATE-10: records each preview run of `result` as an execution of kind `preview` on
    /// `host` (never one the plan's gate or the knowledge loop counts) and reads them into
    /// the preview a request shows. A run of a command that may not run is not recorded.
    pub(crate) fn record_preview(
        &mut self,
        now: Timestamp,
        host: &str,
        result: &PreviewResult,
    ) -> Preview {
        let mut ids = Vec::with_capacity(result.runs.len());
        for ran in &result.runs {
            let idx = result
                .plan
                .form
                .commands
                .iter()
                .position(|c| *c == ran.command);
            if !idx.is_some_and(|idx| result.plan.may_run(idx)) {
                continue;
            }
            let id = match ran.execution_id {
                // Recorded before it ran (rev. 3); ended by `finish_previews` or here.
                Some(id) => id,
                None => self.new_preview_execution(now, host, &ran.command, ran.started_at),
            };
            // Refused only for a run that already ended: nothing to do then.
            let _ = self.handle_execution_finished(now, id, ran.result.clone());
            ids.push(id);
        }
        let runs: Vec<_> = result
            .runs
            .iter()
            .filter(|ran| {
                let idx = result
                    .plan
                    .form
                    .commands
                    .iter()
                    .position(|c| *c == ran.command);
                idx.is_some_and(|idx| result.plan.may_run(idx))
            })
            .cloned()
            .collect();
        Preview::read(
            &PreviewResult {
                plan: result.plan.clone(),
                runs,
            },
            &ids,
        )
    }

    /// GATE-10: the declared `config_mutation` commands of the current generation that
    /// have a preview to run, as `(step seq, index in the step, host to run it on)`: a
    /// group's preview runs on its first member. Decides nothing.
    pub fn declared_previews_wanted(&self) -> Vec<(u32, usize, String, String)> {
        self.current_steps()
            .flat_map(|s| {
                s.commands
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| {
                        c.class() == CommandClass::ConfigMutation && c.preview.is_none()
                    })
                    .map(move |(idx, c)| {
                        let host = c.members.first().unwrap_or(&c.host).clone();
                        (s.seq, idx, host, c.command.clone())
                    })
            })
            .collect()
    }

    /// GATE-10: records the previews of declared commands the shell ran once the proposal
    /// was committed (each recorded before it ran, rev. 3) and attaches each to its
    /// declared command; if assent came first, the window keeps what the operator saw. A preview for a step
    /// or command that is not the current generation's is ignored.
    pub fn handle_declared_previews(
        &mut self,
        now: Timestamp,
        previews: Vec<(u32, usize, String, PreviewResult)>,
    ) {
        // GATE-10 (rev. 3): previews recorded before they ran end here, used or not.
        for (_, _, _, result) in &previews {
            self.finish_previews(now, result);
        }
        if self
            .record
            .assent
            .is_some_and(|w| w.generation == self.record.plan_generation)
        {
            // Assent came first: the window binds to what the operator saw.
            return;
        }
        let generation = self.record.plan_generation;
        for (seq, idx, host, result) in previews {
            let matches = self.steps.iter().any(|s| {
                s.generation == generation
                    && s.seq == seq
                    && s.commands
                        .get(idx)
                        .is_some_and(|c| c.preview.is_none() && c.command == result.plan_command())
            });
            if !matches {
                continue;
            }
            let preview = self.record_preview(now, &host, &result);
            if let Some(step) = self
                .steps
                .edit()
                .iter_mut()
                .find(|s| s.generation == generation && s.seq == seq)
            {
                // The step's `updated_at` stays its proposal's stamp (GATE-4's digest).
                step.commands[idx].preview = Some(preview);
            }
        }
    }

    /// GATE-2, GATE-3: the refusal of a command of `class` now, or `None` when the gate
    /// lets it through to GATE-1/GATE-5.
    pub(crate) fn gate_refusal(
        &mut self,
        now: Timestamp,
        classification: &Classification,
    ) -> Option<ToolReply> {
        let class = classification.class;
        let reason = classification.reason.as_str();
        // GATE-4: a window whose time ran out closes here, recorded, before it is asked.
        self.expire_assent(now);
        if class != CommandClass::ReadOnly {
            // GATE-2: nothing that changes state before a plan exists.
            if self.record.plan_generation == 0 {
                return Some(ToolReply::refused(text::propose_plan_first(class, reason)));
            }
            // GATE-3: nothing that changes state before the operator assented. GATE-9: a
            // window whose declared commands changed since assent is void.
            self.void_window_if_declared_changed(now);
            if !self.assent_open(now) {
                return Some(ToolReply::refused(text::wait_for_assent(class, reason)));
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
            kind: ExecutionKind::Command,
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
