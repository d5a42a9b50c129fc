//! [`NomosMcp`]: the MCP server of one MCP session, mapped to one Nomos session.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use nomos_agent::{Access, Agent, AgentError, CallReply};
use nomos_core::SessionId;
use nomos_core::record::ToolCallOutcome;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::approval::{ApprovalRequest, WaitArgs, wait_for_approval};
use crate::progress::with_progress;
use crate::resources;
use crate::tools::{WAIT_FOR_APPROVAL, is_builtin_served, served_tools};

/// The protocol versions served: the ones with an `initialize` handshake, since each MCP
/// session maps to a Nomos session created there.
pub const SUPPORTED_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
];

/// Who stands behind an HTTP request: put in the request's extensions by the HTTP layer
/// that authenticated it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The token's name (or the JWT's subject).
    pub name: String,
    /// What its role allows.
    pub access: Access,
}

/// The MCP server of one MCP session. A transport makes one per MCP session.
#[derive(Clone)]
pub struct NomosMcp {
    agent: Agent,
    /// The access of every call when no [`Caller`] comes with the request (stdio: whoever
    /// runs the process owns the data directory). Over HTTP this is `ReadOnly`.
    default_access: Access,
    /// Where the web UI lives, when no request names a host (stdio).
    base_url: Option<String>,
    session: Arc<Mutex<Option<SessionId>>>,
}

impl NomosMcp {
    /// A server over `agent`. `default_access` applies to requests without a [`Caller`];
    /// `base_url` is where the web UI lives when requests do not say (stdio).
    pub fn new(agent: Agent, default_access: Access, base_url: Option<String>) -> NomosMcp {
        NomosMcp {
            agent,
            default_access,
            base_url,
            session: Arc::new(Mutex::new(None)),
        }
    }

    /// The Nomos session of this MCP session, once initialized.
    pub fn session_id(&self) -> Option<SessionId> {
        *self
            .session
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn require_session(&self) -> Result<SessionId, ErrorData> {
        self.session_id().ok_or_else(|| {
            ErrorData::invalid_request(
                "the session is not initialized; send initialize first",
                None,
            )
        })
    }

    fn caller(&self, context: &RequestContext<RoleServer>) -> Access {
        caller_of(context).map_or(self.default_access, |caller| caller.access)
    }

    /// AUTHZ-1, MCP-2: whose sessions this client reaches: the sessions its principal
    /// created over HTTP; over stdio (no principal) only this MCP session's.
    fn reach(&self, context: &RequestContext<RoleServer>) -> resources::Reach {
        match caller_of(context) {
            Some(caller) => resources::Reach::Principal(caller.name.clone()),
            None => resources::Reach::Session(self.session_id()),
        }
    }

    /// The web UI's base URL: the request's `Host` when there is one, else the configured one.
    fn web_base(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        let from_request = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get(http::header::HOST))
            .and_then(|host| host.to_str().ok())
            .map(|host| format!("http://{host}"));
        from_request.or_else(|| self.base_url.clone())
    }
}

/// The caller the HTTP layer authenticated, when the request came over HTTP.
fn caller_of(context: &RequestContext<RoleServer>) -> Option<&Caller> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
}

/// The name a session carries: the client's `name version`.
fn client_name(info: &Implementation) -> String {
    let name = info.name.trim();
    let name = if name.is_empty() { "mcp-client" } else { name };
    match info.version.trim() {
        "" => name.to_owned(),
        version => format!("{name} {version}"),
    }
}

/// The text blocks of a result, joined.
fn result_text(result: &CallToolResult) -> String {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

fn internal(error: AgentError) -> ErrorData {
    tracing::error!(%error, "an MCP call failed in the runtime");
    ErrorData::internal_error(error.to_string(), None)
}

impl ServerHandler for NomosMcp {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("nomos", env!("CARGO_PKG_VERSION")))
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
        .with_instructions(
            "Nomos runs commands on the operator's hosts under its gates: propose a plan before changing anything; state-changing commands run only after the operator approved the plan in Nomos; a destructive command returns an approval request; call wait_for_approval to wait for the operator's decision. No tool can decide an approval.",
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(SUPPORTED_VERSIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let result = self.negotiate_initialize(&request)?;
        if self.session_id().is_none() {
            let name = client_name(&request.client_info);
            // AUTHZ-1, AUTHZ-2: the session is owned by the principal of the token.
            let owner = caller_of(&context).map(|caller| caller.name.clone());
            let id = self
                .agent
                .create_client_session_by(&name, owner.as_deref())
                .await
                .map_err(internal)?;
            tracing::info!(session = %id, client = %name, "MCP session started");
            *self
                .session
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(id);
        }
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(served_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let session = self.require_session()?;
        let name = request.name.as_ref();
        let arguments = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
        if name == WAIT_FOR_APPROVAL {
            let started = self.agent.now();
            let result = match WaitArgs::parse(&arguments) {
                Ok(args) => {
                    let web = self.web_base(&context);
                    wait_for_approval(&self.agent, session, args, web.as_deref(), &context.ct)
                        .await
                        .map_err(internal)?
                }
                Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
            };
            // MCP-2: the wait is recorded like every other call of the client.
            let outcome = match result.is_error {
                Some(true) => ToolCallOutcome::Error,
                _ => ToolCallOutcome::Ok,
            };
            let reply = CallReply::new(outcome, result_text(&result));
            self.agent
                .record_client_call(session, name, &arguments.to_string(), started, &reply)
                .await
                .map_err(internal)?;
            return Ok(result.into());
        }
        if !is_builtin_served(name) {
            let names: Vec<String> = served_tools()
                .into_iter()
                .map(|t| t.name.into_owned())
                .collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{name}`; available tools: {}",
                    names.join(", ")
                ),
                None,
            ));
        }
        let access = self.caller(&context);
        let arguments = arguments.to_string();
        let call = self.agent.call_tool(session, access, name, &arguments);
        let reply = with_progress(call, &context).await.map_err(internal)?;
        let mut text = reply.text.clone();
        let mut structured = serde_json::json!({ "outcome": reply.outcome.as_str() });
        if let Some(approval_id) = reply.approval_id {
            let request =
                ApprovalRequest::load(&self.agent, approval_id, self.web_base(&context).as_deref())
                    .await
                    .map_err(internal)?;
            text.push_str(&format!("\n\n{}", request.describe()));
            structured["approval"] = serde_json::to_value(&request).unwrap_or_default();
        }
        let content = vec![ContentBlock::text(text)];
        let mut result = match reply.outcome {
            ToolCallOutcome::Ok => CallToolResult::success(content),
            ToolCallOutcome::Refused | ToolCallOutcome::Error | ToolCallOutcome::Interrupted => {
                CallToolResult::error(content)
            }
        };
        result.structured_content = Some(structured);
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let listed = resources::list(&self.agent, &self.reach(&context), self.session_id())
            .await
            .map_err(internal)?;
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let result = resources::read(&self.agent, &self.reach(&context), &request.uri).await?;
        Ok(result.into())
    }
}
