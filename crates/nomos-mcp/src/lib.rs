//! Nomos over the Model Context Protocol (MCP-1, MCP-2): another agent (Claude Code, codex,
//! goose...) uses Nomos's hosts, knowledge and `run`, under Nomos's gates.
//!
//! # Brief overview
//!
//! * [`NomosMcp`] is the MCP server of one MCP session: on `initialize` it creates a Nomos
//!   session named after the client's `clientInfo` ([`nomos_agent::Agent::create_client_session`]),
//!   and every `tools/call` goes through [`nomos_agent::Agent::call_tool`], the path of
//!   the model's own calls, so the same core gates decide.
//! * [`tools`] lists the tools (the built-in contracts and their schemas, and
//!   `wait_for_approval`); [`approval`] renders an approval request and waits for the
//!   operator's decision; [`resources`] serves the host inventory and a session's plan.
//! * [`http_service`] is the streamable HTTP transport as a tower service (mounted at
//!   `/mcp` by `nomos-http`, behind its bearer auth: the caller's role arrives as a
//!   [`Caller`] in the request extensions); [`serve_stdio`] is the stdio transport.
//!
//! No tool decides an approval: the operator decides in Nomos (MCP-2).

#![deny(missing_docs)]

pub mod approval;
mod progress;
pub mod resources;
mod server;
pub mod tools;
mod transport;

pub use server::{Caller, NomosMcp, SUPPORTED_VERSIONS};
pub use transport::{HostCheck, HttpOptions, StdioError, http_service, serve_stdio};
