//! GATE-10 in the runtime: before a request is shown, and for each declared
//! `config_mutation` of a proposed plan, the command's preview runs on the same host with
//! its own timeout and output cap. The core decides which previews may run (only
//! read-only ones) and records each run as an execution of kind `preview`.

use nomos_core::SessionId;
use nomos_core::preview::{PreviewPlan, PreviewRan, PreviewResult};
use nomos_core::session::{Session, StepDraft};
use nomos_core::status::CommandClass;

use crate::agent::Agent;
use crate::config::ApprovalPolicy;
use crate::error::AgentError;

/// A declared command's preview, keyed as [`Session::handle_declared_previews`] takes it.
pub(crate) type DeclaredPreview = (u32, usize, String, PreviewResult);

impl Agent {
    /// Runs each preview command of `command` that may run, in order, on `host`.
    pub(crate) async fn run_preview(&self, host: &str, command: &str) -> Option<PreviewResult> {
        let config = &self.inner.config;
        let plan = PreviewPlan::of(
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
        )?;
        let mut runs = Vec::new();
        for preview in plan.runnable() {
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
                command = preview,
                ok = result.is_ok(),
                "preview ran"
            );
            runs.push(PreviewRan {
                command: preview.to_owned(),
                started_at,
                result,
            });
        }
        Some(PreviewResult { plan, runs })
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
        Ok(self.run_preview(host, command).await)
    }

    /// The previews of a proposed plan's declared `config_mutation` commands (a group's on
    /// its first member), run before the proposal is committed so the plan is shown with
    /// them.
    pub(crate) async fn previews_for_plan(&self, steps: &[StepDraft]) -> Vec<DeclaredPreview> {
        let mut previews = Vec::new();
        for (step_idx, step) in steps.iter().enumerate() {
            for (idx, declared) in step.commands.iter().enumerate() {
                if declared.class() != CommandClass::ConfigMutation {
                    continue;
                }
                let host = declared.members.first().unwrap_or(&declared.host).clone();
                if let Some(result) = self.run_preview(&host, &declared.command).await {
                    previews.push((step_idx as u32 + 1, idx, host, result));
                }
            }
        }
        previews
    }
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
