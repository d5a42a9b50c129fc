//! Reading the model's tool-call arguments into typed calls (TURN-5: a malformed call
//! gets an error result that names the problem; it never crashes the turn).

use nomos_core::session::{Revision, StepDraft, ToolInput};
use nomos_core::{Outcome, StepStatus};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A tool call with its arguments parsed.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// A lifecycle tool the core decides alone (`set_goal`, `propose_plan`,
    /// `update_plan_step`, `complete_task`, `ask_operator`), already in the core's form.
    /// Never [`ToolInput::Run`]: a `run` is classified first, and arrives as [`Call::Run`].
    Core(ToolInput),
    /// `propose_plan`: steps with the commands they declare (GATE-9), classified and
    /// resolved by the runtime before the core decides.
    ProposePlan {
        /// Steps, each with the commands it declares, not yet classified.
        steps: Vec<PlanStepCall>,
        /// Revision intent.
        revision: Revision,
    },
    /// `run`.
    Run {
        /// Host slug.
        host: String,
        /// Exact command.
        command: String,
    },
    /// `run` on a group (FLEET-1): `host: "tag:NAME"` or `hosts: [...]`.
    RunGroup {
        /// The group.
        target: GroupTarget,
        /// Exact command.
        command: String,
        /// FLEET-2: per-call override of the window size.
        max_parallel: Option<u32>,
        /// FLEET-2: per-call override of the failures that stop the fan-out.
        max_failures: Option<u32>,
        /// FLEET-5: how many hosts run first, alone, before the rest wait.
        canary: Option<u32>,
    },
    /// `discover_guests` (FLEET-3): a Proxmox node's containers and VMs.
    DiscoverGuests {
        /// The node's slug.
        host: String,
    },
    /// A knowledge-graph tool, run by the shell against the store.
    Knowledge(KnowledgeCall),
    /// `get_execution_output`: a slice of an execution's recorded output (read-only).
    ExecutionOutput {
        /// The execution, as a tool result or a cut note names it.
        execution_id: String,
        /// First byte to read.
        offset: usize,
        /// Bytes to read at most.
        limit: Option<usize>,
    },
}

/// How a `run` names its group (FLEET-1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupTarget {
    /// `host: "tag:NAME"`: every host carrying the tag.
    Tag(String),
    /// `hosts: [...]`: these hosts.
    Hosts(Vec<String>),
}

impl GroupTarget {
    /// The group's name in records and tables: `tag:NAME` or `hosts`.
    pub fn label(&self) -> String {
        match self {
            GroupTarget::Tag(tag) => format!("tag:{tag}"),
            GroupTarget::Hosts(_) => "hosts".to_owned(),
        }
    }
}

/// One `propose_plan` step as the model sent it: the draft and its declared commands
/// (GATE-9), which the runtime classifies and resolves against the inventory.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanStepCall {
    /// Title and detail (its `commands` stay empty until classified).
    pub draft: StepDraft,
    /// The declared commands.
    pub commands: Vec<DeclaredArgs>,
    /// SAFE-4: the step's check, not yet classified.
    pub check: Option<CheckArgs>,
}

/// SAFE-4: a step's check as the model sent it: `{host, command, expect_exit?,
/// expect_output?}`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckArgs {
    /// Host slug.
    pub host: String,
    /// The exact read-only command.
    pub command: String,
    /// The exit status it must give.
    #[serde(default)]
    pub expect_exit: Option<i32>,
    /// Text its standard output must contain.
    #[serde(default)]
    pub expect_output: Option<String>,
}

/// One declared command: `{host, command}`; the host may be a group (`tag:NAME`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct DeclaredArgs {
    /// Host slug or group.
    pub host: String,
    /// The exact command.
    pub command: String,
}

/// The knowledge-graph tools.
#[derive(Clone, Debug, PartialEq)]
pub enum KnowledgeCall {
    /// `list_hosts`.
    ListHosts,
    /// `get_entity`.
    GetEntity {
        /// Slug.
        slug: String,
    },
    /// `list_entities`.
    ListEntities {
        /// Kind filter.
        kind: Option<String>,
    },
    /// `get_relations`.
    GetRelations {
        /// Slug.
        slug: String,
    },
    /// `search_knowledge`.
    Search {
        /// Query text.
        query: String,
        /// Result limit.
        limit: u32,
    },
    /// `get_knowledge_content`.
    GetContent {
        /// Entry key.
        key: String,
    },
    /// `upsert_knowledge`.
    Upsert {
        /// Key (derived from the title when missing).
        key: Option<String>,
        /// Title.
        title: String,
        /// Content.
        content: String,
        /// Tags.
        tags: Vec<String>,
        /// Entity slugs.
        about: Vec<String>,
    },
    /// `update_entity_attributes`.
    UpdateAttributes {
        /// Slug.
        slug: String,
        /// JSON object patch.
        attributes: serde_json::Value,
        /// Kind for a new entity.
        kind: Option<String>,
    },
    /// `create_relationship`.
    CreateRelationship {
        /// Source slug.
        from: String,
        /// Relationship kind.
        kind: String,
        /// Target slug.
        to: String,
    },
}

impl KnowledgeCall {
    /// Whether the call writes the knowledge graph or the knowledge base.
    pub fn changes_records(&self) -> bool {
        matches!(
            self,
            KnowledgeCall::Upsert { .. }
                | KnowledgeCall::UpdateAttributes { .. }
                | KnowledgeCall::CreateRelationship { .. }
        )
    }

    /// WRITEBACK-1: whether this is a discovery or a write-back tool (or neither).
    pub fn knowledge_use(&self) -> Option<nomos_core::session::KnowledgeUse> {
        use nomos_core::session::KnowledgeUse;
        match self {
            KnowledgeCall::ListHosts
            | KnowledgeCall::GetEntity { .. }
            | KnowledgeCall::ListEntities { .. }
            | KnowledgeCall::GetRelations { .. } => Some(KnowledgeUse::Discovery),
            KnowledgeCall::UpdateAttributes { .. } | KnowledgeCall::CreateRelationship { .. } => {
                Some(KnowledgeUse::WriteBack)
            }
            KnowledgeCall::Search { .. }
            | KnowledgeCall::GetContent { .. }
            | KnowledgeCall::Upsert { .. } => None,
        }
    }
}

/// Why a call could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// No tool has that name.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// The arguments are not valid JSON or do not fit the tool's schema.
    #[error(
        "invalid arguments for {tool}: {problem}. Call {tool} again with arguments that match its schema"
    )]
    Invalid {
        /// The tool.
        tool: String,
        /// What was wrong, with the position.
        problem: String,
    },
}

#[derive(Deserialize)]
struct GoalArgs {
    goal: String,
}

#[derive(Deserialize)]
struct StepArgs {
    title: String,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    commands: Vec<DeclaredArgs>,
    #[serde(default)]
    check: Option<CheckArgs>,
}

#[derive(Deserialize)]
struct PlanArgs {
    steps: Vec<StepArgs>,
    #[serde(default)]
    revise: bool,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct UpdateStepArgs {
    seq: u32,
    status: String,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Deserialize)]
struct CompleteArgs {
    outcome: String,
    #[serde(default)]
    summary: String,
}

#[derive(Deserialize)]
struct QuestionArgs {
    question: String,
}

#[derive(Deserialize)]
struct RunArgs {
    #[serde(default)]
    host: Option<String>,
    #[serde(default)]
    hosts: Option<Vec<String>>,
    command: String,
    #[serde(default)]
    max_parallel: Option<u32>,
    #[serde(default)]
    max_failures: Option<u32>,
    #[serde(default)]
    canary: Option<u32>,
}

#[derive(Deserialize)]
struct OutputArgs {
    execution_id: String,
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
}

#[derive(Deserialize)]
struct SlugArgs {
    slug: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostArgs {
    host: String,
}

#[derive(Deserialize)]
struct KindArgs {
    #[serde(default)]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Deserialize)]
struct KeyArgs {
    key: String,
}

#[derive(Deserialize)]
struct UpsertArgs {
    #[serde(default)]
    key: Option<String>,
    title: String,
    content: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    about: Vec<String>,
}

#[derive(Deserialize)]
struct AttributesArgs {
    slug: String,
    attributes: serde_json::Value,
    #[serde(default)]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct RelationshipArgs {
    from: String,
    kind: String,
    to: String,
}

/// Reads one built-in tool call. Unknown names are [`ArgsError::UnknownTool`] (the caller
/// then tries extra tools).
pub fn parse_call(name: &str, arguments: &str) -> Result<Call, ArgsError> {
    let call = match name {
        "set_goal" => Call::Core(ToolInput::SetGoal {
            goal: read::<GoalArgs>(name, arguments)?.goal,
        }),
        "propose_plan" => {
            let args: PlanArgs = read(name, arguments)?;
            let mut steps = Vec::with_capacity(args.steps.len());
            for (idx, s) in args.steps.into_iter().enumerate() {
                if let Some(bad) = s
                    .commands
                    .iter()
                    .find(|c| c.host.trim().is_empty() || c.command.trim().is_empty())
                {
                    return Err(invalid(
                        name,
                        format!(
                            "step {} declares a command without a host or a command: {{host: {:?}, command: {:?}}}",
                            idx + 1,
                            bad.host,
                            bad.command
                        ),
                    ));
                }
                if let Some(check) = &s.check
                    && (check.host.trim().is_empty() || check.command.trim().is_empty())
                {
                    return Err(invalid(
                        name,
                        format!(
                            "step {}'s check needs a host and a command: {{host: {:?}, command: {:?}}}",
                            idx + 1,
                            check.host,
                            check.command
                        ),
                    ));
                }
                steps.push(PlanStepCall {
                    draft: StepDraft {
                        title: s.title,
                        detail: s.detail,
                        commands: Vec::new(),
                        check: None,
                    },
                    commands: s.commands,
                    check: s.check,
                });
            }
            let revision = if args.revise {
                Revision::Yes {
                    reason: args.reason,
                }
            } else {
                Revision::No
            };
            Call::ProposePlan { steps, revision }
        }
        "update_plan_step" => {
            let args: UpdateStepArgs = read(name, arguments)?;
            let status = args
                .status
                .parse::<StepStatus>()
                .map_err(|e| invalid(name, e))?;
            Call::Core(ToolInput::UpdatePlanStep {
                seq: args.seq,
                status,
                note: args.note,
            })
        }
        "complete_task" => {
            let args: CompleteArgs = read(name, arguments)?;
            let outcome = args
                .outcome
                .parse::<Outcome>()
                .map_err(|e| invalid(name, e))?;
            Call::Core(ToolInput::CompleteTask {
                outcome,
                summary: args.summary,
            })
        }
        "ask_operator" => Call::Core(ToolInput::AskOperator {
            question: read::<QuestionArgs>(name, arguments)?.question,
        }),
        "run" => {
            let args: RunArgs = read(name, arguments)?;
            if args.command.trim().is_empty() {
                return Err(invalid(name, "`command` is empty"));
            }
            // FLEET-1: `host: "tag:NAME"` or `hosts: [...]` is a group.
            match (args.host, args.hosts) {
                (Some(_), Some(_)) => {
                    return Err(invalid(name, "give either `host` or `hosts`, not both"));
                }
                (None, None) => return Err(invalid(name, "missing field `host`")),
                (Some(host), None) => match host.strip_prefix("tag:") {
                    Some(tag) => Call::RunGroup {
                        target: GroupTarget::Tag(tag.to_owned()),
                        command: args.command,
                        max_parallel: args.max_parallel,
                        max_failures: args.max_failures,
                        canary: args.canary,
                    },
                    None => Call::Run {
                        host,
                        command: args.command,
                    },
                },
                (None, Some(hosts)) => Call::RunGroup {
                    target: GroupTarget::Hosts(hosts),
                    command: args.command,
                    max_parallel: args.max_parallel,
                    max_failures: args.max_failures,
                    canary: args.canary,
                },
            }
        }
        "get_execution_output" => {
            let args: OutputArgs = read(name, arguments)?;
            Call::ExecutionOutput {
                execution_id: args.execution_id,
                offset: args.offset,
                limit: args.limit,
            }
        }
        "discover_guests" => {
            let host = read::<HostArgs>(name, arguments)?.host;
            if host.trim().is_empty() {
                return Err(invalid(name, "`host` is empty"));
            }
            Call::DiscoverGuests { host }
        }
        "list_hosts" => Call::Knowledge(KnowledgeCall::ListHosts),
        "get_entity" => Call::Knowledge(KnowledgeCall::GetEntity {
            slug: read::<SlugArgs>(name, arguments)?.slug,
        }),
        "list_entities" => Call::Knowledge(KnowledgeCall::ListEntities {
            kind: read::<KindArgs>(name, arguments)?.kind,
        }),
        "get_relations" => Call::Knowledge(KnowledgeCall::GetRelations {
            slug: read::<SlugArgs>(name, arguments)?.slug,
        }),
        "search_knowledge" => {
            let args: SearchArgs = read(name, arguments)?;
            Call::Knowledge(KnowledgeCall::Search {
                query: args.query,
                limit: args.limit.unwrap_or(10).clamp(1, 50),
            })
        }
        "get_knowledge_content" => Call::Knowledge(KnowledgeCall::GetContent {
            key: read::<KeyArgs>(name, arguments)?.key,
        }),
        "upsert_knowledge" => {
            let args: UpsertArgs = read(name, arguments)?;
            Call::Knowledge(KnowledgeCall::Upsert {
                key: args.key,
                title: args.title,
                content: args.content,
                tags: args.tags,
                about: args.about,
            })
        }
        "update_entity_attributes" => {
            let args: AttributesArgs = read(name, arguments)?;
            if !args.attributes.is_object() {
                return Err(invalid(name, "`attributes` must be a JSON object"));
            }
            Call::Knowledge(KnowledgeCall::UpdateAttributes {
                slug: args.slug,
                attributes: args.attributes,
                kind: args.kind,
            })
        }
        "create_relationship" => {
            let args: RelationshipArgs = read(name, arguments)?;
            Call::Knowledge(KnowledgeCall::CreateRelationship {
                from: args.from,
                kind: args.kind,
                to: args.to,
            })
        }
        other => return Err(ArgsError::UnknownTool(other.to_owned())),
    };
    Ok(call)
}

/// Parses JSON arguments; an empty string counts as `{}` (some models send it for tools
/// without parameters).
fn read<T: DeserializeOwned>(tool: &str, arguments: &str) -> Result<T, ArgsError> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    serde_json::from_str(text).map_err(|e| invalid(tool, e))
}

fn invalid(tool: &str, problem: impl std::fmt::Display) -> ArgsError {
    ArgsError::Invalid {
        tool: tool.to_owned(),
        problem: problem.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // rule: TURN-5
    #[test]
    fn malformed_json_names_the_problem_and_position() {
        let err = parse_call("run", r#"{"host": "local", "command": "ls""#).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("invalid arguments for run: "), "{text}");
        assert!(text.contains("line 1 column"), "{text}");
    }

    // rule: TURN-5
    #[test]
    fn missing_field_and_bad_enum_are_named() {
        let err = parse_call("propose_plan", r#"{"revise": true}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field `steps`"), "{err}");
        let err = parse_call("update_plan_step", r#"{"seq": 1, "status": "finished"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown step status `finished`"), "{err}");
    }

    #[test]
    fn revise_flag_carries_the_reason() {
        let call = parse_call(
            "propose_plan",
            r#"{"steps":[{"title":"a"}],"revise":true,"reason":"disk moved"}"#,
        )
        .unwrap();
        let Call::ProposePlan { revision, .. } = call else {
            panic!("{call:?}")
        };
        assert_eq!(
            revision,
            Revision::Yes {
                reason: Some("disk moved".into())
            }
        );
    }

    #[test]
    fn empty_arguments_count_as_an_empty_object() {
        assert_eq!(
            parse_call("list_hosts", "").unwrap(),
            Call::Knowledge(KnowledgeCall::ListHosts)
        );
        assert_eq!(
            parse_call("nope", "{}"),
            Err(ArgsError::UnknownTool("nope".into()))
        );
    }
}
