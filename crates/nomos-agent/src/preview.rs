//! GATE-10 in the runtime: before a request is shown, and for each declared
//! `config_mutation` of a proposed plan, the command's preview runs on the same host with
//! its own timeout and output cap. The core decides which previews may run (only
//! read-only ones) and records each run as an execution of kind `preview`.

use nomos_core::SessionId;
use nomos_core::fanout::FanoutLimits;
use nomos_core::preview::{PreviewPlan, PreviewRan, PreviewResult};
use nomos_core::session::{PreviewFor, Session};

use crate::agent::Agent;
use crate::config::ApprovalPolicy;
use crate::error::AgentError;

/// A declared command's preview, keyed as [`Session::handle_declared_previews`] takes it.
pub(crate) type DeclaredPreview = (u32, usize, String, PreviewResult);

impl Agent {
    /// GATE-10: runs each preview command of `command` that may run, in order, on `host`,
    /// for `request` of session `id`. Each is recorded (committed `running`) before it
    /// runs, and runs only when the core recorded it
    /// ([`Session::handle_preview_starting`]); `None` when `command` has no preview form.
    pub(crate) async fn run_preview(
        &self,
        id: SessionId,
        host: &str,
        command: &str,
        request: Request<'_>,
    ) -> Result<Option<PreviewResult>, AgentError> {
        let config = &self.inner.config;
        let Some(plan) = PreviewPlan::of(
            command,
            |c| (config.previewer)(c),
            |c| {
                crate::shells::classify_for(
                    &config.classifier,
                    self.inner.executor.as_ref(),
                    &[host],
                    c,
                )
            },
        ) else {
            return Ok(None);
        };
        let mut runs = Vec::new();
        for (idx, preview) in plan.form.commands.iter().enumerate() {
            if !plan.may_run(idx) {
                continue;
            }
            let for_request = match request {
                Request::Run(classification) => PreviewFor::Run(classification),
                Request::Declared => PreviewFor::Declared,
            };
            let recorded = self
                .mutate(id, |session, now| {
                    session.handle_preview_starting(now, host, &plan, idx, for_request)
                })
                .await?;
            let Some(execution_id) = recorded else {
                // Nobody will be shown this request now: its previews do not run.
                return Ok(None);
            };
            let started_at = self.now();
            let result = self
                .inner
                .executor
                .run(host, preview, config.preview_limits)
                .await
                .map_err(|e| e.to_string());
            tracing::info!(
                target: "nomos::audit",
                host,
                command = preview.as_str(),
                execution = %execution_id,
                ok = result.is_ok(),
                "preview ran"
            );
            runs.push(PreviewRan {
                command: preview.clone(),
                started_at,
                result,
                execution_id: Some(execution_id),
            });
        }
        Ok(Some(PreviewResult { plan, runs }))
    }

    /// The preview of a `run` the core says would wait for its own approval; `None` when
    /// it would not wait, nobody will see it, or it has no preview form.
    pub(crate) async fn preview_for_run(
        &self,
        id: SessionId,
        host: &str,
        command: &str,
        classification: &nomos_core::Classification,
    ) -> Result<Option<PreviewResult>, AgentError> {
        if self.inner.config.approvals == ApprovalPolicy::RefuseWithoutOperator
            || (self.inner.config.previewer)(command).is_none()
        {
            return Ok(None);
        }
        let snapshot = self.session(id).await?;
        let session = Session::from_snapshot(snapshot, self.inner.config.session);
        if !session.run_would_wait(self.now(), host, classification, command) {
            return Ok(None);
        }
        self.run_preview(id, host, command, Request::Run(classification))
            .await
    }

    /// FLEET-6: the preview of a group's `run` on each of `hosts`, when the core says the
    /// group would wait for the operator (any host would), at most `max_parallel` at once;
    /// empty when it would not wait, nobody will see it, or it has no preview form.
    pub(crate) async fn previews_for_group(
        &self,
        id: SessionId,
        hosts: &[String],
        command: &str,
        classification: &nomos_core::Classification,
        limits: FanoutLimits,
    ) -> Result<Vec<(String, PreviewResult)>, AgentError> {
        if self.inner.config.approvals == ApprovalPolicy::RefuseWithoutOperator
            || (self.inner.config.previewer)(command).is_none()
        {
            return Ok(Vec::new());
        }
        let snapshot = self.session(id).await?;
        let session = Session::from_snapshot(snapshot, self.inner.config.session);
        let now = self.now();
        if !hosts
            .iter()
            .any(|host| session.run_would_wait(now, host, classification, command))
        {
            return Ok(Vec::new());
        }
        let mut previews = Vec::with_capacity(hosts.len());
        for batch in hosts.chunks(limits.max_parallel.max(1) as usize) {
            let runs = futures::future::join_all(
                batch
                    .iter()
                    .map(|host| self.run_preview(id, host, command, Request::Run(classification))),
            )
            .await;
            for (host, result) in batch.iter().zip(runs) {
                if let Some(result) = result? {
                    previews.push((host.clone(), result));
                }
            }
        }
        Ok(previews)
    }

    /// GATE-10 (rev. 3): the previews of the declared `config_mutation` commands of the
    /// plan session `id` just recorded (a group's on its first member), run after the
    /// proposal was accepted and committed, never for a refused one, and not at all when
    /// no operator can decide; then attached to the plan in one commit.
    pub(crate) async fn preview_declared(&self, id: SessionId) -> Result<(), AgentError> {
        if self.inner.config.approvals == ApprovalPolicy::RefuseWithoutOperator {
            return Ok(());
        }
        let snapshot = self.session(id).await?;
        let session = Session::from_snapshot(snapshot, self.inner.config.session);
        let mut previews = Vec::new();
        for (seq, idx, host, command) in session.declared_previews_wanted() {
            if (self.inner.config.previewer)(&command).is_none() {
                continue;
            }
            if let Some(result) = self
                .run_preview(id, &host, &command, Request::Declared)
                .await?
            {
                previews.push((seq, idx, host, result));
            }
        }
        if !previews.is_empty() {
            self.mutate(id, |session, now| {
                attach_declared(session, now, previews.clone());
            })
            .await?;
        }
        Ok(())
    }
}

/// The request a preview is run for.
#[derive(Clone, Copy)]
pub(crate) enum Request<'a> {
    /// A `run`, classified so.
    Run(&'a nomos_core::Classification),
    /// A declared command of the current plan.
    Declared,
}

/// Keeps the previews the core still wants for the current generation (after the proposal
/// was decided) and hands them to it.
pub(crate) fn attach_declared(
    session: &mut Session,
    now: nomos_core::Timestamp,
    previews: Vec<DeclaredPreview>,
) {
    let wanted = session.declared_previews_wanted();
    let keep: Vec<DeclaredPreview> = previews
        .into_iter()
        .filter(|(seq, idx, host, result)| {
            wanted
                .iter()
                .any(|(s, i, h, c)| s == seq && i == idx && h == host && c == result.plan_command())
        })
        .collect();
    if !keep.is_empty() {
        session.handle_declared_previews(now, keep);
    }
}
