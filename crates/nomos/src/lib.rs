//! Nomos in one crate: the core, the runtime, the stores, the executors, the models and the
//! HTTP API, for programs that embed an operations agent a person supervises.
//!
//! After the crate README (its example runs as a test) comes the guide: what the parts are,
//! the order to build them in, and the rules an embedder can rely on whatever model, tools
//! or executor they plug in.
//!
#![doc = include_str!("../README.md")]
//!
//! # The parts
//!
//! | part | where | feature |
//! |---|---|---|
//! | The pure core: the [`Session`](session::Session) aggregate, the gate, approvals, executions, the [`classify`](mod@classify) shell-command classifier, the activity log, sweep decisions | the root: [`session`], [`classify`](mod@classify), [`activity`], [`sweep`], [`event`], [`record`], [`status`], [`time`], ... | always |
//! | The ports an embedder can implement: [`Store`](ports::store::Store), [`Executor`](ports::exec::Executor), [`ChatModel`](ports::chat::ChatModel) | [`ports`] | always |
//! | The runtime that drives the core over the ports: [`Agent`], [`AgentBuilder`], [`AgentConfig`], the event bus, extra tools | the root: [`Agent`], [`bus`], [`clock`], [`config`], [`tools`] | always |
//! | The scripted stub model (tests, demos, headless runs without an endpoint) | [`llm`] | always |
//! | OpenAI-compatible models over HTTP, record and replay | [`llm`] | `openai` |
//! | The embedded store on SQLite | [`sqlite`] | `sqlite` (default) |
//! | The deployment store on PostgreSQL | `nomos::postgres` | `postgres` |
//! | The local and SSH executors, the host inventory | `nomos::ssh` | `ssh` |
//! | The HTTP API as an axum router (REST, SSE, static and stored tokens, metrics, the web UI) | `nomos::http` | `http` |
//! | The MCP server at `/mcp` of that router (MCP-1) | `nomos::http::mcp` | `mcp` |
//! | OIDC bearer tokens for that router (`nomos::http::Oidc`) | `nomos::http::oidc` | `oidc` |
//!
//! The MCP server goes through the same [`Agent`], so it adds no second gate.
//!
//! # The order to build them in
//!
//! 1. A **store**: [`sqlite::SqliteStore::open_in_data_dir`] (or `in_memory` for tests),
//!    or `nomos::postgres::PgStore::connect`. Opening runs the migrations.
//! 2. An **executor**: `nomos::ssh::LocalExecutor` for this machine,
//!    `nomos::ssh::FleetExecutor` for an inventory of SSH hosts, or your own
//!    [`Executor`](ports::exec::Executor).
//! 3. A **model**: `nomos::llm::OpenAiModel` (feature `openai`), [`llm::ScriptedModel`], or
//!    your own [`ChatModel`](ports::chat::ChatModel), for instance a wrapper that logs or
//!    limits cost.
//! 4. A **configuration**: [`AgentConfig::spec_defaults`], then change what you need
//!    (assent window and approval TTL in [`AgentConfig::session`], [`AgentConfig::approvals`]
//!    when nobody answers approval requests, a policy classifier in
//!    [`AgentConfig::classifier`]). Configuration types have no `Default` on purpose.
//! 5. The **agent**: [`Agent::builder`] with the three ports, then
//!    [`AgentBuilder::config`], [`AgentBuilder::extra_tool`] for your own tools, and
//!    [`AgentBuilder::build`].
//! 6. **Before serving**: [`Agent::reconcile_startup`] once (executions a previous run left
//!    `running` are failed as interrupted, never re-run), then [`Agent::start_workers`] for
//!    the periodic sweeps (stale executions, expired approvals, idle sessions); keep the
//!    [`Workers`] and call [`Workers::shutdown`] on the way out.
//! 7. **Use it**: [`Agent::create_session`], [`Agent::send_message`] (one turn, to its end),
//!    [`Agent::decide`] (an approval, by its id), [`Agent::resume`]; follow what happens on
//!    [`Agent::bus`] (live) or in the store's event log (durable, numbered per session). With
//!    the `http` feature, `nomos::http::app` serves all of it over HTTP.
//!
//! # What an embedder can rely on
//!
//! These hold whatever model, extra tools or executor you plug in, because they are decided
//! in the core and the runtime, not in the prompt:
//!
//! * A read-only command runs at once; any other command is refused before a plan is
//!   proposed (GATE-2) and until the operator assented to it (GATE-3). A destructive
//!   command, or one whose program the classifier does not know, always waits for its own
//!   approval (GATE-5). A gated [`ExtraTool`](tools::ExtraTool) runs only inside the
//!   operator's assent window.
//! * An approval binds to the exact command, host, class and plan generation it shows; it
//!   is decided once, by its id; a second, late or mismatched decision is refused; it
//!   expires, and expiry means deny (GATE-7). No answer is never an approval.
//! * The string that runs is the string that was classified and shown (EXEC-7). An
//!   execution is dispatched at most once; after a crash it is failed as interrupted, never
//!   re-run (EXEC-6).
//! * Every change to a session is committed with its events in one transaction, numbered
//!   per session without gaps; subscribers hear of it only after the commit.
//! * Every turn ends with exactly one `turn.done`; model and executor failures end the turn
//!   with their real cause instead of failing the call (TURN-1, TURN-2).
//! * An embedding without an operator never waits forever: with
//!   [`ApprovalPolicy::RefuseWithoutOperator`] a request is denied in the commit that makes
//!   it and the model is told; with [`ApprovalPolicy::AwaitOperator`] a request nobody
//!   answers expires after the approval TTL when the sweeps run.
//!
//! # Examples
//!
//! `crates/nomos/examples/` holds programs to copy, each run by the test command:
//! `smallest` (the README's embedding, printing the events), `extra_tools` (a read-only
//! and a gated [`ExtraTool`](tools::ExtraTool)), `custom_ports` (an in-memory fleet as the
//! [`Executor`](ports::exec::Executor) and a cost-limiting
//! [`ChatModel`](ports::chat::ChatModel) wrapper), `headless_operator` (approvals decided by
//! code, and the refusals the gate makes), `unattended` (no operator: refuse or expire),
//! `http_mount` (the HTTP API inside an existing axum application).

#![deny(missing_docs)]

pub use nomos_agent::*;
pub use nomos_core::*;

#[cfg(feature = "http")]
pub use nomos_http as http;
#[cfg(feature = "postgres")]
pub use nomos_postgres as postgres;
#[cfg(feature = "sqlite")]
pub use nomos_sqlite as sqlite;
#[cfg(feature = "ssh")]
pub use nomos_ssh as ssh;

/// Chat models: the scripted stub always; OpenAI-compatible HTTP models and record/replay
/// with the `openai` feature. Every type here implements
/// [`ChatModel`](crate::ports::chat::ChatModel).
pub mod llm {
    pub use nomos_llm::{
        Expectation, ScriptError, ScriptedAnswer, ScriptedFault, ScriptedModel, ScriptedReply,
        ScriptedToolCall, TurnUsage,
    };

    #[cfg(feature = "openai")]
    pub use nomos_llm::{
        ApiKey, CiEnvironment, ConfigError, OpenAiConfig, OpenAiConfigBuilder, OpenAiModel,
        RecordError, RecordingModel, ReplayModel, RequestKey, RetryPolicy, Transport,
    };
}
