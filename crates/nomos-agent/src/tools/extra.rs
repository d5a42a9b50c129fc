//! Tools an embedder registers without forking: read-only ones run at once, gated ones
//! only inside the operator's assent window (GATE-3), as the core's
//! `Session::handle_extra_tool` decides; the runtime asks it before every call.

use std::sync::Arc;

use async_trait::async_trait;
use nomos_core::ports::chat::ToolSpec;

/// How an extra tool is gated; the core decides what each kind may do (GATE-3).
pub use nomos_core::session::ExtraToolKind;

/// A tool an embedder adds to the agent ([`AgentBuilder::extra_tool`](crate::AgentBuilder::extra_tool)).
///
/// The model sees its [`ToolSpec`] beside the built-in tools. The runtime calls it only
/// when its [`ExtraToolKind`] allows: a [`ExtraToolKind::Gated`] tool is refused, without
/// being called, until the operator assented to a plan (GATE-3). Every call is recorded
/// with its arguments and result like any tool call (TURN-4).
#[async_trait]
pub trait ExtraTool: Send + Sync {
    /// Name, description and argument schema.
    fn spec(&self) -> ToolSpec;
    /// Whether it is gated.
    fn kind(&self) -> ExtraToolKind;
    /// Runs it with the model's arguments (the JSON value it sent; `{}` when it sent none).
    /// `Ok` is the result the model reads; `Err` is an error result text, which ends
    /// nothing but this call.
    async fn call(&self, arguments: serde_json::Value) -> Result<String, String>;
}

/// The extra tools of one agent.
#[derive(Clone, Default)]
pub struct ExtraTools {
    tools: Vec<Arc<dyn ExtraTool>>,
}

impl ExtraTools {
    /// Adds a tool; a later tool with the same name as an earlier one replaces it.
    pub fn register(&mut self, tool: Arc<dyn ExtraTool>) {
        let name = tool.spec().name;
        self.tools.retain(|t| t.spec().name != name);
        self.tools.push(tool);
    }

    /// The tool with this name.
    pub fn find(&self, name: &str) -> Option<Arc<dyn ExtraTool>> {
        self.tools.iter().find(|t| t.spec().name == name).cloned()
    }

    /// Their specs.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec()).collect()
    }
}

impl std::fmt::Debug for ExtraTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.spec().name))
            .finish()
    }
}
