//! The OpenAPI document, generated from the handlers and DTOs (utoipa). The committed copy
//! is `crates/nomos-http/openapi.json`; a test fails when it drifts from this.

use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::api::{approvals, control, hosts, knowledge, sessions, system, tokens};
use crate::{dto, error, event_dto, events};

#[derive(OpenApi)]
#[openapi(
    info(title = "Nomos API", description = "Sessions, plans, approvals and live events of the Nomos operations agent."),
    paths(
        sessions::create, sessions::list, sessions::read, sessions::remove,
        sessions::post_message, sessions::resume, sessions::plan, sessions::activity,
        sessions::transcript, sessions::export,
        approvals::executions, approvals::session_executions, approvals::pending,
        approvals::decide,
        control::stop, control::revoke_assent, control::decide_plan, control::cancel_approval, control::grants,
        control::session_approvals, control::close, control::archive, control::unarchive,
        crate::api::safety::restore,
        crate::api::safety::rollback,
        knowledge::entities, knowledge::entity, knowledge::relations, knowledge::search,
        hosts::hosts, hosts::reachability, hosts::discover,
        tokens::list, tokens::create, tokens::revoke,
        events::session_events, events::global_events,
        system::healthz, system::readyz, system::metrics, system::info, system::openapi,
    ),
    components(schemas(error::ErrorBody, error::ErrorDetail, dto::DecisionDto,
        event_dto::EventRecordDto)),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The document.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    // The version is the crate's; keep the committed file stable across releases.
    doc.info.version = "v1".to_owned();
    doc
}

/// The document as pretty JSON, the form committed to the repository.
pub fn document_json() -> String {
    let doc = document();
    let mut text = doc.to_pretty_json().unwrap_or_default();
    text.push('\n');
    text
}
