//! The tools an MCP client sees: the built-in tool contracts of the agent with their JSON
//! schemas (the same text the model reads), and `wait_for_approval`.
//!
//! `ask_operator` is left out: an outside client asks its own user; Nomos's operator
//! answers in Nomos, where no model of Nomos's would read the answer.

use std::borrow::Cow;
use std::sync::Arc;

use nomos_agent::tools::builtin_specs;
use nomos_core::ports::chat::ToolSpec;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::json;

/// The name of the tool that waits for the operator's decision on an approval.
pub const WAIT_FOR_APPROVAL: &str = "wait_for_approval";

/// The longest `wait_for_approval` blocks, in seconds (10 minutes).
pub const MAX_WAIT_SECS: u64 = 600;

/// How long `wait_for_approval` blocks when the client does not say, in seconds.
pub const DEFAULT_WAIT_SECS: u64 = 60;

/// Built-in tools an outside client does not get.
const NOT_SERVED: &[&str] = &["ask_operator"];

/// Tools that only read Nomos's records (a hint for clients; the agent enforces access).
const READS: &[&str] = &[
    "list_hosts",
    "get_entity",
    "list_entities",
    "get_relations",
    "search_knowledge",
    "get_knowledge_content",
    WAIT_FOR_APPROVAL,
];

/// Every tool served, in the order the model is shown them, then `wait_for_approval`.
pub fn served_tools() -> Vec<Tool> {
    let mut tools: Vec<Tool> = builtin_specs()
        .into_iter()
        .filter(|spec| !NOT_SERVED.contains(&spec.name.as_str()))
        .map(|spec| tool(&spec))
        .collect();
    tools.push(tool(&wait_for_approval_spec()));
    tools
}

/// Whether `name` is a built-in tool this server serves through the agent.
pub fn is_builtin_served(name: &str) -> bool {
    !NOT_SERVED.contains(&name) && builtin_specs().iter().any(|spec| spec.name == name)
}

fn wait_for_approval_spec() -> ToolSpec {
    ToolSpec {
        name: WAIT_FOR_APPROVAL.to_owned(),
        description: format!(
            "Wait for the operator's decision on an approval that `run` requested, up to timeout_secs (default {DEFAULT_WAIT_SECS}, at most {MAX_WAIT_SECS}). Returns the decision and, when approved, the command's result. Only the operator decides, in Nomos; no tool can."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "approval_id": { "type": "string", "description": "The approval id `run` returned." },
                "timeout_secs": { "type": "integer", "minimum": 1, "maximum": MAX_WAIT_SECS }
            },
            "required": ["approval_id"]
        }),
    }
}

fn tool(spec: &ToolSpec) -> Tool {
    let schema: JsonObject = match &spec.parameters {
        serde_json::Value::Object(map) => map.clone(),
        _ => JsonObject::new(),
    };
    let reads = READS.contains(&spec.name.as_str());
    Tool::new(
        Cow::Owned(spec.name.clone()),
        Cow::Owned(spec.description.clone()),
        Arc::new(schema),
    )
    .with_annotations(ToolAnnotations::new().read_only(reads))
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: MCP-1
    #[test]
    fn served_tools_carry_the_builtin_schemas_without_ask_operator() {
        let tools = served_tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert!(!names.contains(&"ask_operator"), "{names:?}");
        assert_eq!(names.last(), Some(&WAIT_FOR_APPROVAL));
        for spec in builtin_specs() {
            if spec.name == "ask_operator" {
                continue;
            }
            let served = tools.iter().find(|t| t.name == spec.name.as_str()).unwrap();
            assert_eq!(
                serde_json::Value::Object((*served.input_schema).clone()),
                spec.parameters,
                "{}",
                spec.name
            );
        }
    }
}
