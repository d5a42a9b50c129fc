//! Sessions driven by an outside client (MCP-1, MCP-2): another agent calls Nomos's tools
//! itself, one call at a time, through the same path as the model's calls in a turn, so
//! the same gates decide. Nomos's own model never speaks in such a session.

use nomos_core::ports::chat::ToolCall;
use nomos_core::record::ToolCallOutcome;
use nomos_core::session::Session;
use nomos_core::{ApprovalId, SessionId, Timestamp};
use uuid::Uuid;

use crate::agent::Agent;
use crate::error::AgentError;
use crate::exec::tool_call_record;
use crate::tools::{Call, ExtraToolKind, parse_call};

/// What the caller of a tool may do: the role of whoever stands behind the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Every tool, under the gates (the model in a turn; an operator's client).
    Operate,
    /// Only tools that read Nomos's own records (a viewer's client): never `run`, never a
    /// lifecycle or write-back tool.
    ReadOnly,
}

/// The result of one tool call, as its caller gets it back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallReply {
    /// How it ended.
    pub outcome: ToolCallOutcome,
    /// The result text (a directive when refused).
    pub text: String,
    /// GATE-5: the approval this call requested (or found already waiting), if any.
    pub approval_id: Option<ApprovalId>,
}

impl CallReply {
    /// A reply without an approval.
    pub fn new(outcome: ToolCallOutcome, text: String) -> CallReply {
        CallReply {
            outcome,
            text,
            approval_id: None,
        }
    }
}

impl Agent {
    /// MCP-1: creates a session driven by an outside client, named after it (`name
    /// version`), with a note that says who drives it.
    pub async fn create_client_session(&self, client: &str) -> Result<SessionId, AgentError> {
        self.create_client_session_by(client, None).await
    }

    /// [`Agent::create_client_session`] for the principal `owner` (the token the client
    /// authenticated with): AUTHZ-1's owner, and AUTHZ-2's requester, whose decisions on
    /// this session's requests are refused whatever its role.
    pub async fn create_client_session_by(
        &self,
        client: &str,
        owner: Option<&str>,
    ) -> Result<SessionId, AgentError> {
        let id = SessionId(Uuid::new_v4());
        let now = self.now();
        let mut session = Session::create_for_client(id, now, self.inner.config.session, client);
        if let Some(owner) = owner {
            session = session.owned_by(owner);
        }
        session.append_note(
            now,
            &format!(
                "This session is driven by the MCP client {client}: its tool calls come from that client, under the same gates; approvals are decided here."
            ),
        );
        let commit = session.take_commit();
        let receipt = self.inner.store.commit(commit).await?;
        self.publish(&receipt.events);
        Ok(id)
    }

    /// MCP-1: one tool call of the outside client that drives session `id`. It waits for
    /// the session's writer (TURN-8), then goes through the path of the model's calls in a
    /// turn; the call is recorded with the client's name (MCP-2).
    pub async fn call_tool(
        &self,
        id: SessionId,
        access: Access,
        name: &str,
        arguments: &str,
    ) -> Result<CallReply, AgentError> {
        let _guard = self.inner.locks.lock(id).await;
        let call = self.mark_client_call(id, name, arguments).await?;
        self.handle_call(id, access, &call).await
    }

    /// MCP-2: records a call the client's transport answered itself (waiting for a
    /// decision), started at `started`, so the session view shows every call it made.
    pub async fn record_client_call(
        &self,
        id: SessionId,
        name: &str,
        arguments: &str,
        started: Timestamp,
        reply: &CallReply,
    ) -> Result<(), AgentError> {
        let _guard = self.inner.locks.lock(id).await;
        let call = self.mark_client_call(id, name, arguments).await?;
        self.mutate(id, |session, now| {
            session.record_tool_call(tool_call_record(
                id,
                &call,
                started,
                now,
                reply.outcome,
                &reply.text,
            ));
        })
        .await
    }

    /// The call as the transcript keeps it: an assistant message marked with the client's
    /// name, carrying the call (MCP-2).
    async fn mark_client_call(
        &self,
        id: SessionId,
        name: &str,
        arguments: &str,
    ) -> Result<ToolCall, AgentError> {
        let Some(client) = self.session(id).await?.record.client else {
            return Err(AgentError::NotAClientSession(id));
        };
        let call = ToolCall {
            id: format!("mcp-{}", Uuid::new_v4()),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        };
        let request = nomos_core::record::ToolCallRequest {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        };
        let marker = format!("via MCP: {client}");
        self.mutate(id, |session, now| {
            session.append_assistant_message(now, &marker, vec![request.clone()])
        })
        .await?;
        Ok(call)
    }

    /// Whether a caller with `access` may make this call; the refusal text when not.
    pub(crate) fn access_refusal(&self, access: Access, call: &ToolCall) -> Option<String> {
        if access == Access::Operate {
            return None;
        }
        let reads = match parse_call(&call.name, &call.arguments) {
            Ok(Call::Knowledge(knowledge)) => !knowledge.changes_records(),
            Ok(_) => false,
            Err(_) => self
                .inner
                .extra
                .find(&call.name)
                .is_none_or(|tool| tool.kind() == ExtraToolKind::ReadOnly),
        };
        if reads {
            return None;
        }
        Some(format!(
            "Refused: {} needs the operator role; this caller may only read (list_hosts and the knowledge tools that read).",
            call.name
        ))
    }
}
