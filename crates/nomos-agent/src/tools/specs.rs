//! The built-in tools as the model sees them: names, contracts and argument schemas.

use nomos_core::ports::chat::ToolSpec;
use serde_json::json;

fn spec(name: &str, description: &str, parameters: serde_json::Value) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    }
}

fn object(properties: serde_json::Value, required: &[&str]) -> serde_json::Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// Every built-in tool, in the order the model is shown them.
pub fn builtin_specs() -> Vec<ToolSpec> {
    vec![
        spec(
            "set_goal",
            "Set the goal of this task. Call once, when the operator asks for work that may change something. Not for plain questions. NEXT: gather facts read-only, then propose_plan.",
            object(
                json!({ "goal": { "type": "string", "description": "One sentence: what done looks like." } }),
                &["goal"],
            ),
        ),
        spec(
            "propose_plan",
            "Propose the full ordered plan for this task. Call ONCE per task, before any execution. After this call: STOP and wait for operator approval. Once a step has started, this tool REFUSES further calls: use update_plan_step + run to advance. Only when the operator explicitly asks to revise the plan, call it with revise=true and a reason. The LAST step MUST be \"Write back: update_entity_attributes + create_relationship + upsert_knowledge\" (one is appended if missing). A step may declare a read-only `check`: when you mark the step done, the check runs and the step is done only if it passes (a failing check fails the step).",
            object(
                json!({
                    "steps": {
                        "type": "array",
                        "minItems": 1,
                        "items": object(json!({
                            "title": { "type": "string" },
                            "detail": { "type": "string" },
                            "commands": {
                                "type": "array",
                                "description": "Every command this step will run that changes state, exactly as you will pass it to run. The operator's approval covers exactly these; any other change will need its own approval.",
                                "items": object(json!({
                                    "host": { "type": "string", "description": "Host slug, or a group as tag:NAME." },
                                    "command": { "type": "string" }
                                }), &["host", "command"])
                            },
                            "check": object(json!({
                                "host": { "type": "string", "description": "Host slug." },
                                "command": { "type": "string", "description": "A read-only command that proves the step worked, e.g. `systemctl is-active nginx`." },
                                "expect_exit": { "type": "integer", "description": "The exit status it must give (0 by default)." },
                                "expect_output": { "type": "string", "description": "Text its output must contain." }
                            }), &["host", "command"])
                        }), &["title"])
                    },
                    "revise": { "type": "boolean", "description": "Only to revise a plan already in flight, when the operator asked." },
                    "reason": { "type": "string", "description": "Why the plan must change (required with revise=true)." }
                }),
                &["steps"],
            ),
        ),
        spec(
            "update_plan_step",
            "Set the status of step `seq` of the CURRENT plan: running before you work on it, then done, failed or skipped. Steps advance in order; skip a step explicitly to move past it.",
            object(
                json!({
                    "seq": { "type": "integer", "minimum": 1 },
                    "status": { "type": "string", "enum": ["running", "done", "failed", "skipped"] },
                    "note": { "type": "string" }
                }),
                &["seq", "status"],
            ),
        ),
        spec(
            "complete_task",
            "Finish the task with its outcome and a short summary. Call ONCE. If you discovered facts (run, get_entity, ...), write them back first with update_entity_attributes or create_relationship, or this call is refused.",
            object(
                json!({
                    "outcome": { "type": "string", "enum": ["success", "failure", "partial"] },
                    "summary": { "type": "string" }
                }),
                &["outcome", "summary"],
            ),
        ),
        spec(
            "ask_operator",
            "Ask the operator a question you cannot answer yourself. Then STOP and wait for the answer.",
            object(json!({ "question": { "type": "string" } }), &["question"]),
        ),
        spec(
            "run",
            "Run one shell command on one host, or on a group of hosts at once: `host: \"tag:NAME\"` (every host with that tag) or `hosts: [...]`. Read-only commands run at once. Commands that change state run only after the operator approved the plan; destructive commands also need their own approval (one request covers every host of a group): when this tool says approval was requested, STOP and wait. The exact command string you give is what runs. A group runs in batches of max_parallel and stops starting hosts after max_failures failed; with canary it runs on the first hosts only and the rest wait for the operator; its result is one row per host.",
            object(
                json!({
                    "host": { "type": "string", "description": "Host slug from list_hosts, e.g. lxc:nextcloud or local; or tag:NAME for every host with that tag." },
                    "hosts": { "type": "array", "items": { "type": "string" }, "description": "Several host slugs; instead of host." },
                    "command": { "type": "string" },
                    "max_parallel": { "type": "integer", "minimum": 1, "description": "Group only: hosts at once (default 10)." },
                    "max_failures": { "type": "integer", "minimum": 1, "description": "Group only: failed hosts after which no new host starts (default 1)." },
                    "canary": { "type": "integer", "minimum": 0, "description": "Group only: run on this many hosts first and stop; the rest run after the operator saw them pass and approved (default 0, or 1 where the operator's policy requires a canary)." }
                }),
                &["command"],
            ),
        ),
        spec(
            "discover_guests",
            "Find the containers and VMs of a Proxmox node (a host marked proxmox in the inventory) with read-only pct/qm commands, each recorded as an execution. Each guest becomes an entity (kind lxc or vm, vmid, status, IPs) that runs_on the node, and a host for run: a container without an address of its own runs commands through the node (give run the plain command; the transport is added for you). Call it before working on guests of a node.",
            object(
                json!({ "host": { "type": "string", "description": "The Proxmox node's slug, e.g. host:pve." } }),
                &["host"],
            ),
        ),
        spec(
            "get_execution_output",
            "Read an execution's full recorded output (exit status, stdout, stderr), a slice at a time. Long results are cut for you to a head and a tail; the note where they were cut names the execution and the offset and limit to read what is missing. Read-only.",
            object(
                json!({
                    "execution_id": { "type": "string", "description": "The execution named in a cut note." },
                    "offset": { "type": "integer", "minimum": 0, "description": "First byte to read (default 0)." },
                    "limit": { "type": "integer", "minimum": 1, "description": "Bytes to read (default and most: the share of one tool result)." }
                }),
                &["execution_id"],
            ),
        ),
        spec(
            "list_hosts",
            "List the hosts you can run commands on, with when each was last audited. Check this before re-running audits.",
            object(json!({}), &[]),
        ),
        spec(
            "get_entity",
            "Read one entity of the knowledge graph (host, container, service) with its attributes.",
            object(json!({ "slug": { "type": "string" } }), &["slug"]),
        ),
        spec(
            "list_entities",
            "List entities of the knowledge graph, optionally of one kind (host, lxc, vm, service...).",
            object(json!({ "kind": { "type": "string" } }), &[]),
        ),
        spec(
            "get_relations",
            "List the relationships of one entity, in both directions.",
            object(json!({ "slug": { "type": "string" } }), &["slug"]),
        ),
        spec(
            "search_knowledge",
            "Full-text search of the knowledge base. Prefer this over re-running commands.",
            object(
                json!({ "query": { "type": "string" }, "limit": { "type": "integer", "minimum": 1, "maximum": 50 } }),
                &["query"],
            ),
        ),
        spec(
            "get_knowledge_content",
            "Read one knowledge entry in full, by its key.",
            object(json!({ "key": { "type": "string" } }), &["key"]),
        ),
        spec(
            "upsert_knowledge",
            "Write or update a knowledge entry. Tag audits with `audit` and changes with `update`, and name the entities it is about.",
            object(
                json!({
                    "key": { "type": "string", "description": "Stable key; the same key updates the entry." },
                    "title": { "type": "string" },
                    "content": { "type": "string" },
                    "tags": { "type": "array", "items": { "type": "string" } },
                    "about": { "type": "array", "items": { "type": "string" }, "description": "Entity slugs." }
                }),
                &["title", "content"],
            ),
        ),
        spec(
            "update_entity_attributes",
            "Write back attributes you discovered for an entity (versions, states, addresses). Keys set to null are removed. Creates the entity if it does not exist.",
            object(
                json!({
                    "slug": { "type": "string" },
                    "attributes": { "type": "object" },
                    "kind": { "type": "string", "description": "Kind, when the entity is new." }
                }),
                &["slug", "attributes"],
            ),
        ),
        spec(
            "create_relationship",
            "Write back a relationship you discovered between two entities, e.g. service runs_on lxc.",
            object(
                json!({ "from": { "type": "string" }, "kind": { "type": "string" }, "to": { "type": "string" } }),
                &["from", "kind", "to"],
            ),
        ),
    ]
}
