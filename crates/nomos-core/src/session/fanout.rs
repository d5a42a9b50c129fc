//! `run` on a group (FLEET-1, FLEET-2): one classification, at most one approval bound to
//! the command and the exact host set, one execution per host, started in a rolling
//! window that stops after `max_failures` failed hosts; with a canary (FLEET-5), its hosts
//! first and alone, then the rest on an approval of their own.

use crate::classification::Classification;
use crate::declared::RequestOrigin;
use crate::fanout::{
    CanaryVerdict, Fanout, FanoutHost, FanoutId, FanoutLimits, HostState, SKIPPED_PREFIX,
    canary_verdict, host_state,
};
use crate::id::ExecutionId;
use crate::preview::{Preview, PreviewResult, group_previews};
use crate::record::KnowledgeLoop;
use crate::status::{ApprovalStatus, ExecutionStatus};
use crate::sweep::QUEUED_AT_RESTART_REASON;
use crate::time::Timestamp;

use super::bound::Bound;
use super::tool::{Action, ToolReply};
use super::{Session, text};

/// A `run` on a group, as the shell resolved it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRun {
    /// How the group was named (`tag:NAME`, or `hosts` for a list).
    pub group: String,
    /// The resolved hosts, in start order.
    pub hosts: Vec<String>,
    /// The exact command every host runs.
    pub command: String,
    /// Its class, decided once for all hosts.
    pub classification: Classification,
    /// The rolling window's limits.
    pub limits: FanoutLimits,
    /// FLEET-5: how many of the first hosts run alone before the rest wait (0: none), as
    /// [`crate::fanout::canary_size`] decided it.
    pub canary: u32,
    /// FLEET-6, GATE-10: each host's preview, run because the group would wait for the
    /// operator (the canary's hosts only, when there is a canary); empty for none.
    pub previews: Vec<(String, PreviewResult)>,
}

impl Session {
    /// Every fan-out of the session, in creation order.
    pub fn fanouts(&self) -> &[Fanout] {
        &self.fanouts
    }

    /// The fan-out an execution belongs to, if any.
    pub fn fanout_of(&self, execution_id: ExecutionId) -> Option<&Fanout> {
        self.fanouts.iter().find(|f| f.contains(execution_id))
    }

    /// FLEET-1: the gate for a group, decided once for the command.
    pub(crate) fn run_group(&mut self, now: Timestamp, call_id: &str, run: GroupRun) -> ToolReply {
        let class = run.classification.class;
        // GATE-10 (rev. 3): previews recorded before they ran end here, whatever the gate
        // decides below.
        for (_, result) in &run.previews {
            self.finish_previews(now, result);
        }
        if let Some(refused) = self.gate_refusal(now, &run.classification) {
            return refused;
        }
        let members: Vec<&str> = run.hosts.iter().map(String::as_str).collect();
        if let Some(held) = self.held_for_canary(&members, &run.command) {
            return held;
        }
        if self.record.knowledge == KnowledgeLoop::Untouched {
            self.record.knowledge = KnowledgeLoop::Discovered;
        }
        // GATE-5, GATE-9: the group waits for the operator when any of its hosts would
        // wait on its own (a destructive or unknown command, or a change the approved plan
        // did not declare for that host); then one request covers the whole set.
        let alone = super::bound::asks_alone(&run.classification);
        let origin =
            run.hosts
                .iter()
                .find_map(|host| match self.bound(host, &run.command, class, alone) {
                    Bound::Asks(origin) => Some(origin),
                    Bound::Runs => None,
                });
        let needs_approval = origin.is_some();
        let status = if needs_approval {
            ExecutionStatus::PendingApproval
        } else {
            ExecutionStatus::Approved
        };
        let id = FanoutId(
            self.record
                .id
                .derive(&format!("fanout/{}", self.fanouts.len() + 1)),
        );
        // FLEET-5: the hosts after the canary wait for an approval of their own.
        let canary = (run.canary as usize).min(run.hosts.len().saturating_sub(1));
        let mut hosts = Vec::with_capacity(run.hosts.len());
        for (at, host) in run.hosts.iter().enumerate() {
            let status = if canary > 0 && at >= canary {
                ExecutionStatus::PendingApproval
            } else {
                status
            };
            let execution_id = self.new_execution(
                now,
                call_id,
                host.clone(),
                run.command.clone(),
                run.classification.clone(),
                status,
            );
            hosts.push(FanoutHost {
                host: host.clone(),
                execution_id,
            });
        }
        let first = hosts[0].execution_id;
        self.fanouts.push(Fanout {
            id,
            session_id: self.record.id,
            tool_call_id: Some(call_id.to_owned()),
            group: run.group.clone(),
            command: run.command.clone(),
            class,
            hosts,
            limits: run.limits,
            created_at: now,
            canary: canary as u32,
        });
        if needs_approval {
            // GATE-7: one request; its binding names the exact host set (FLEET-5: the
            // canary's, when there is one).
            // FLEET-6: one preview for the request, its hosts grouped by what they say.
            let per_host: Vec<(String, Preview)> = run
                .previews
                .iter()
                .map(|(host, result)| (host.clone(), self.record_preview(now, host, result)))
                .collect();
            let preview = group_previews(per_host);
            let approval = self.request_approval(
                now,
                first,
                origin.unwrap_or(RequestOrigin::OwnClass),
                preview,
            );
            let expires_at = approval.expires_at.to_rfc3339();
            let reply = if canary > 0 {
                text::canary_approval_requested(
                    &approval.id.to_string(),
                    canary,
                    run.hosts.len() - canary,
                    &expires_at,
                )
            } else {
                text::fanout_approval_requested(
                    &approval.id.to_string(),
                    run.hosts.len(),
                    &expires_at,
                )
            };
            let action = Action::AwaitApproval {
                approval_id: approval.id,
                execution_id: first,
            };
            self.queue(action);
            return ToolReply::ok(reply).with_action(action);
        }
        let action = Action::StartFanout { fanout_id: id };
        self.queue(action);
        ToolReply::ok("fan-out started").with_action(action)
    }

    /// FLEET-2: the next step of a fan-out. When `max_failures` hosts have failed, every
    /// host still queued is cancelled as skipped and nothing starts; otherwise queued
    /// hosts start, in order, until `max_parallel` run at once. Returns the executions
    /// it marked `running` (EXEC-6: each is dispatched once, after this commit).
    pub fn advance_fanout(&mut self, now: Timestamp, fanout_id: FanoutId) -> Vec<ExecutionId> {
        let Some(fanout) = self.fanouts.iter().find(|f| f.id == fanout_id) else {
            return Vec::new();
        };
        let limits = fanout.limits;
        let members: Vec<ExecutionId> = fanout.hosts.iter().map(|h| h.execution_id).collect();
        let slugs = fanout.host_slugs();
        let split = fanout.canary_hosts().len();
        let states: Vec<HostState> = members
            .iter()
            .map(|id| self.execution(*id).map_or(HostState::Cancelled, host_state))
            .collect();
        if split > 0 {
            let rest: Vec<ExecutionId> = members[split..].to_vec();
            match canary_verdict(&states[..split]) {
                CanaryVerdict::Running => {}
                CanaryVerdict::Passed => {
                    self.request_rest_after_canary(now, split, &rest, &states[split..]);
                }
                CanaryVerdict::Failed(which) => {
                    let hosts: Vec<&str> = which.iter().map(|&i| slugs[i].as_str()).collect();
                    let reason = format!(
                        "{SKIPPED_PREFIX}the canary did not pass on {}",
                        hosts.join(", ")
                    );
                    for (id, state) in rest.iter().zip(&states[split..]) {
                        if *state == HostState::PendingApproval {
                            self.move_execution(
                                now,
                                *id,
                                ExecutionStatus::Cancelled,
                                Some(reason.clone()),
                            );
                        }
                    }
                    return Vec::new();
                }
            }
        }
        let failed = states.iter().filter(|s| s.is_failure()).count() as u32;
        let queued: Vec<ExecutionId> = members
            .iter()
            .zip(&states)
            .filter(|(_, s)| **s == HostState::Queued)
            .map(|(id, _)| *id)
            .collect();
        if failed >= limits.max_failures {
            let reason = format!(
                "{SKIPPED_PREFIX}{failed} host(s) failed, max_failures = {}",
                limits.max_failures
            );
            for id in queued {
                self.move_execution(now, id, ExecutionStatus::Cancelled, Some(reason.clone()));
            }
            return Vec::new();
        }
        let running = states.iter().filter(|s| **s == HostState::Running).count() as u32;
        let free = limits.max_parallel.saturating_sub(running) as usize;
        let mut started = Vec::with_capacity(free.min(queued.len()));
        for id in queued.into_iter().take(free) {
            if self.start_execution(now, id).is_ok() {
                started.push(id);
            }
        }
        started
    }

    /// FLEET-5: once the canary passed, the rest wait for one approval bound to the same
    /// command and the remaining host set, asked once (a decided or pending request for
    /// them is never asked again).
    fn request_rest_after_canary(
        &mut self,
        now: Timestamp,
        canary: usize,
        rest: &[ExecutionId],
        states: &[HostState],
    ) {
        let Some(&first) = rest.first() else {
            return;
        };
        let waiting = states.iter().all(|s| *s == HostState::PendingApproval);
        let asked = self.approvals.iter().any(|a| a.execution_id == first);
        if !waiting || asked {
            return;
        }
        let origin = RequestOrigin::AfterCanary {
            hosts: canary as u32,
        };
        let approval = self.request_approval(now, first, origin, None);
        self.queue(Action::AwaitApproval {
            approval_id: approval.id,
            execution_id: first,
        });
    }

    /// FLEET-5: the refusal of `command` on any of `hosts` while they wait for the
    /// operator's approval of the rest of a fan-out after its canary: the model that was
    /// told to wait may not run them one by one or in another group.
    pub(crate) fn held_for_canary(&self, hosts: &[&str], command: &str) -> Option<ToolReply> {
        self.approvals.iter().find_map(|approval| {
            let waiting = approval.status == ApprovalStatus::Pending
                && matches!(approval.binding.origin, RequestOrigin::AfterCanary { .. })
                && approval.binding.command == command;
            if !waiting {
                return None;
            }
            let fanout = self.fanout_of(approval.execution_id)?;
            let host = fanout
                .phase_of(approval.execution_id)
                .iter()
                .find(|h| hosts.contains(&h.host.as_str()))?;
            Some(ToolReply::refused(text::held_for_canary(
                &approval.id.to_string(),
                &host.host,
            )))
        })
    }

    /// Whether a fan-out has hosts that may still run (queued or running).
    pub fn fanout_open(&self, fanout_id: FanoutId) -> bool {
        self.fanouts
            .iter()
            .find(|f| f.id == fanout_id)
            .is_some_and(|f| {
                f.hosts.iter().any(|h| {
                    self.execution(h.execution_id).is_some_and(|e| {
                        matches!(
                            e.status,
                            ExecutionStatus::Approved | ExecutionStatus::Running
                        )
                    })
                })
            })
    }

    /// FLEET-2, EXEC-3: the note the model reads once the start-up reconcile (or the close
    /// of a lapsed instance) has settled the last open host of a fan-out whose driver
    /// stopped: which hosts never started, and that they need a new approval. `None` while
    /// a host of it is still open, or when no host of it was cancelled that way.
    pub fn interrupted_fanout_note(&self, execution_id: ExecutionId) -> Option<String> {
        let fanout = self.fanout_of(execution_id)?;
        if self.fanout_open(fanout.id) {
            return None;
        }
        let never: Vec<&str> = fanout
            .hosts
            .iter()
            .filter(|h| {
                self.execution(h.execution_id)
                    .and_then(|e| e.error.as_deref())
                    == Some(QUEUED_AT_RESTART_REASON)
            })
            .map(|h| h.host.as_str())
            .collect();
        if never.is_empty() {
            return None;
        }
        Some(format!(
            "The fan-out of `{}` on {} was interrupted when Nomos stopped: {} of its {} hosts never started and did not run ({}); they are cancelled. Check what the other hosts did read-only before trying again; the hosts not started need a new approval to run.",
            fanout.command,
            fanout.group,
            never.len(),
            fanout.hosts.len(),
            never.join(", ")
        ))
    }

    /// The executions an approval of `execution_id` moves: the execution alone, or for a
    /// fan-out the hosts of its phase when approved (FLEET-5: the canary, or the rest)
    /// and every host still waiting when not (a denied canary denies the rest with it).
    pub(crate) fn covered_by_approval(
        &self,
        execution_id: ExecutionId,
        approved: bool,
    ) -> Vec<ExecutionId> {
        match self.fanout_of(execution_id) {
            Some(fanout) if approved => fanout
                .phase_of(execution_id)
                .iter()
                .map(|h| h.execution_id)
                .collect(),
            Some(fanout) => fanout
                .hosts
                .iter()
                .map(|h| h.execution_id)
                .filter(|id| {
                    self.execution(*id)
                        .is_some_and(|e| e.status == ExecutionStatus::PendingApproval)
                })
                .collect(),
            None => vec![execution_id],
        }
    }
}
