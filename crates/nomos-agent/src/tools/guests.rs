//! `discover_guests` (FLEET-3): a Proxmox node's containers and VMs, found by fixed
//! read-only commands that each go through the gate like any `run` (classified, recorded
//! as executions), then written to the knowledge graph (an entity per guest that
//! `runs_on` the node) and handed to the executor as hosts.
//!
//! The server's refresh, at start-up and on demand, is the same tool call in a session
//! of its own ([`Agent::discover_node`]), so it is gated and recorded the same way.

use nomos_core::CommandClass;
use nomos_core::ports::chat::ToolCall;
use nomos_core::proxmox::{
    Guest, GuestConfig, GuestKind, ListedGuest, PCT_LIST, QM_LIST, config_command, parse_config,
    parse_pct_list, parse_qm_list,
};
use nomos_core::record::{ExecOutput, ToolCallOutcome};
use nomos_core::session::{Action, KnowledgeUse, Session, ToolInput};
use nomos_core::{SessionId, Timestamp};
use serde_json::json;
use uuid::Uuid;

use crate::agent::Agent;
use crate::client::{Access, CallReply};
use crate::error::AgentError;
use crate::exec::tool_call_record;

/// The model tool's name.
pub const DISCOVER_GUESTS: &str = "discover_guests";

/// What a server-side discovery did: the session that records it and the tool's reply.
#[derive(Clone, Debug)]
pub struct NodeDiscovery {
    /// The session its executions and its call are recorded in.
    pub session_id: SessionId,
    /// The call's outcome and result text (one line per guest, or why it failed).
    pub reply: CallReply,
}

/// Why a discovery stopped, as the model or the operator reads it.
type Stopped = String;

/// The session that records the server's discoveries of `node`: the same for every
/// refresh of that node (a UUIDv5 of its slug), so they read as one history.
pub fn discovery_session_id(node: &str) -> SessionId {
    SessionId(Uuid::new_v5(
        &Uuid::NAMESPACE_OID,
        format!("nomos:discovery:{node}").as_bytes(),
    ))
}

impl Agent {
    /// FLEET-3: discovers the guests of Proxmox node `node` in the node's discovery
    /// session (`discover_guests` through the path of every tool call), as the server does
    /// at start-up and on `POST /api/hosts/{slug}/discover`. Every refresh of a node is
    /// recorded in the same session (a UUIDv5 of the node's slug), so restarts do not add
    /// sessions to the history.
    pub async fn discover_node(&self, node: &str) -> Result<NodeDiscovery, AgentError> {
        let id = discovery_session_id(node);
        if self.inner.store.load_session(id).await?.is_none() {
            let now = self.now();
            let mut session =
                Session::create_for_client(id, now, self.inner.config.session, "nomos-server");
            session.append_note(
                now,
                &format!(
                    "This session records the server's discovery of the guests of {node} (discover_guests): read-only commands, gated and recorded like any run."
                ),
            );
            match self.inner.store.commit(session.take_commit()).await {
                Ok(receipt) => self.publish(&receipt.events),
                // Another refresh of the same node created it first: use that one.
                Err(_) if self.inner.store.load_session(id).await?.is_some() => {}
                Err(e) => return Err(e.into()),
            }
        }
        let arguments = json!({ "host": node }).to_string();
        let reply = self
            .call_tool(id, Access::Operate, DISCOVER_GUESTS, &arguments)
            .await?;
        Ok(NodeDiscovery {
            session_id: id,
            reply,
        })
    }

    /// `discover_guests(host)`: the discovery, then the call's record (with the
    /// WRITEBACK-1 accounting of a discovery) in one commit.
    pub(crate) async fn handle_discover(
        &self,
        id: SessionId,
        call: &ToolCall,
        started: Timestamp,
        host: String,
    ) -> Result<CallReply, AgentError> {
        let (outcome, text) = match self.discover(id, &call.id, &host).await? {
            Ok(text) => (ToolCallOutcome::Ok, text),
            Err(text) => (ToolCallOutcome::Error, text),
        };
        let stored = self
            .mutate(id, |session, now| {
                if outcome == ToolCallOutcome::Ok {
                    session.handle_knowledge_use(now, KnowledgeUse::Discovery);
                }
                session.record_tool_call(tool_call_record(id, call, started, now, outcome, &text))
            })
            .await?;
        Ok(CallReply::new(outcome, stored))
    }

    async fn discover(
        &self,
        id: SessionId,
        call_id: &str,
        node: &str,
    ) -> Result<Result<String, Stopped>, AgentError> {
        let executor = self.inner.executor.clone();
        let hosts = executor.hosts();
        if !hosts.iter().any(|h| h.slug == node) {
            let known: Vec<String> = hosts.into_iter().map(|h| h.slug).collect();
            let error = nomos_core::ports::exec::ExecError::UnknownHost {
                host: node.to_owned(),
                known,
            };
            return Ok(Err(error.to_string()));
        }
        let nodes = executor.proxmox_nodes();
        if !nodes.iter().any(|n| n == node) {
            return Ok(Err(not_a_node(node, &nodes)));
        }
        let mut listed = Vec::new();
        for (command, parse) in [
            (PCT_LIST, parse_pct_list as fn(&str) -> Vec<ListedGuest>),
            (QM_LIST, parse_qm_list),
        ] {
            match self.gated_read(id, call_id, node, command).await? {
                Ok(stdout) => listed.extend(parse(&stdout)),
                Err(stopped) => return Ok(Err(stopped)),
            }
        }
        let mut guests = Vec::with_capacity(listed.len());
        let mut unread = Vec::new();
        for entry in listed {
            let command = config_command(entry.kind, entry.vmid);
            let config: Option<GuestConfig> =
                match self.gated_read(id, call_id, node, &command).await? {
                    Ok(stdout) => Some(parse_config(entry.kind, &stdout)),
                    Err(why) => {
                        unread.push(why);
                        None
                    }
                };
            guests.push(Guest::from_listing(node, entry, config));
        }
        let through = match executor.set_guests(node, &guests) {
            Ok(through) => through,
            Err(error) => return Ok(Err(format!("discover_guests: {error}"))),
        };
        self.write_guests(node, &guests).await?;
        Ok(Ok(result_text(node, &guests, &through, &unread)))
    }

    /// One fixed read-only command of a discovery, through the gate like a `run`: it is
    /// classified, and runs as an execution of the session only when the gate dispatches
    /// it. Its stdout, or why it did not run or failed.
    async fn gated_read(
        &self,
        id: SessionId,
        call_id: &str,
        node: &str,
        command: &str,
    ) -> Result<Result<String, Stopped>, AgentError> {
        let classification = crate::shells::classify_for(
            &self.inner.config.classifier,
            self.inner.executor.as_ref(),
            &[node],
            command,
        );
        if classification.class != CommandClass::ReadOnly {
            // Never an approval request for a discovery: it only reads.
            return Ok(Err(format!(
                "discover_guests runs only read-only commands, and `{command}` is classified {} ({}); it did not run",
                classification.class.as_str(),
                classification.reason
            )));
        }
        let input = ToolInput::Run {
            host: node.to_owned(),
            command: command.to_owned(),
            classification,
            // A discovery command is read-only: it never waits, so it has no preview.
            preview: None,
        };
        let (reply, actions) = self
            .mutate_acting(id, |session, now| {
                session.handle_tool(now, call_id, input.clone())
            })
            .await?;
        crate::exec::log_gate_decision(id, node, &input, &reply);
        let Some(execution_id) = actions.into_iter().find_map(|action| match action {
            Action::Dispatch { execution_id } => Some(execution_id),
            _ => None,
        }) else {
            return Ok(Err(format!(
                "`{command}` on {node} did not run: {}",
                reply.text
            )));
        };
        let (outcome, text) = self
            .dispatch(id, execution_id, node.to_owned(), command.to_owned(), None)
            .await;
        let output: Option<ExecOutput> = self
            .inner
            .store
            .execution(execution_id)
            .await?
            .and_then(|e| e.output);
        Ok(match output {
            Some(output) if outcome == ToolCallOutcome::Ok && output.exit_code == Some(0) => {
                Ok(output.stdout)
            }
            _ => Err(format!("`{command}` on {node}: {text}")),
        })
    }

    /// Each guest as an entity (attributes merged into one the inventory already seeded)
    /// with `runs_on` its node.
    async fn write_guests(&self, node: &str, guests: &[Guest]) -> Result<(), AgentError> {
        let store = self.inner.store.as_ref();
        let now = self.now();
        // A relationship needs both ends; an embedding may not have seeded the node.
        if store.entity(node).await?.is_none() {
            store
                .upsert_entity(&nomos_core::record::Entity {
                    slug: node.to_owned(),
                    kind: node
                        .split_once(':')
                        .map_or(node, |(kind, _)| kind)
                        .to_owned(),
                    name: node
                        .split_once(':')
                        .map_or(node, |(_, name)| name)
                        .to_owned(),
                    attributes: json!({ "proxmox": true }),
                    updated_at: now,
                })
                .await?;
        }
        for guest in guests {
            let slug = guest.slug();
            if store.entity(&slug).await?.is_some() {
                store
                    .update_entity_attributes(&slug, &guest.attributes(), now)
                    .await?;
            } else {
                store.upsert_entity(&guest.entity(now)).await?;
            }
            let runs_on = guest.runs_on(now);
            let known =
                store.relations(&slug).await?.iter().any(|r| {
                    r.from == runs_on.from && r.kind == runs_on.kind && r.to == runs_on.to
                });
            if !known {
                store.create_relationship(&runs_on).await?;
            }
        }
        Ok(())
    }
}

/// The directive error for a host that is not a Proxmox node.
fn not_a_node(host: &str, nodes: &[String]) -> String {
    let known = if nodes.is_empty() {
        "none is marked `proxmox = true` in the inventory".to_owned()
    } else {
        format!("the Proxmox nodes are: {}", nodes.join(", "))
    };
    format!(
        "discover_guests: {host} is not a Proxmox node ({known}). Call discover_guests with a Proxmox node, or use list_hosts and run for other hosts."
    )
}

/// The tool's result: one line per guest with how it is reached.
fn result_text(node: &str, guests: &[Guest], through: &[String], unread: &[String]) -> String {
    let count = |kind: GuestKind| guests.iter().filter(|g| g.kind == kind).count();
    let mut text = format!(
        "{node}: {} containers, {} VMs (entities runs_on {node}; hosts for run)",
        count(GuestKind::Lxc),
        count(GuestKind::Vm)
    );
    for guest in guests {
        let slug = guest.slug();
        let ips = if guest.ips.is_empty() {
            "-".to_owned()
        } else {
            guest.ips.join(" ")
        };
        let reach = match guest.kind {
            GuestKind::Lxc if through.contains(&slug) => format!("run through {node} (pct exec)"),
            GuestKind::Lxc => "run over its own SSH (inventory)".to_owned(),
            GuestKind::Vm => "run only if the inventory gives it an address".to_owned(),
        };
        text.push_str(&format!(
            "\n{slug} | vmid {} | {} | {ips} | {reach}",
            guest.vmid, guest.status
        ));
    }
    for why in unread {
        text.push_str(&format!("\nconfig not read: {why}"));
    }
    text
}
