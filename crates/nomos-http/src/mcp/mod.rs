//! `/mcp`: the MCP server of `nomos-mcp` (MCP-1) when the `mcp` feature is built in
//! (`served.rs`), else a route that answers 404 naming the feature to enable (`absent.rs`).

#[cfg(not(feature = "mcp"))]
mod absent;
#[cfg(feature = "mcp")]
mod served;

#[cfg(not(feature = "mcp"))]
pub use absent::router;
#[cfg(feature = "mcp")]
pub use served::router;

/// The route of the MCP transport.
pub const MCP_PATH: &str = "/mcp";
