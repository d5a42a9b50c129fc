//! The committed OpenAPI document matches the code. `UPDATE_OPENAPI=1` rewrites it.

#[test]
fn the_committed_openapi_document_matches_the_code() {
    let path = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("openapi.json");
    let generated = nomos_http::openapi::document_json();
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date; run `UPDATE_OPENAPI=1 cargo test -p nomos-http --test it openapi` and commit it",
        path.display()
    );
}

#[test]
fn every_route_is_documented() {
    let doc: serde_json::Value =
        serde_json::from_str(&nomos_http::openapi::document_json()).unwrap();
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/api/sessions",
        "/api/sessions/{id}",
        "/api/sessions/{id}/messages",
        "/api/sessions/{id}/events",
        "/api/sessions/{id}/export",
        "/api/approvals/{id}/decision",
        "/api/events",
        "/healthz",
        "/readyz",
        "/metrics",
    ] {
        assert!(paths.contains_key(path), "{path} is not in the document");
    }
}

/// The kinds the document gives `EventDto` (each variant's `type`), which the web UI's
/// generated event types list.
fn documented_event_kinds() -> Vec<String> {
    let doc: serde_json::Value =
        serde_json::from_str(&nomos_http::openapi::document_json()).unwrap();
    doc["components"]["schemas"]["EventDto"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variant| {
            variant["properties"]["type"]["enum"][0]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn every_core_event_kind_is_in_the_document_and_no_other() {
    let documented = documented_event_kinds();
    let mut expected: Vec<String> = nomos_core::event::DomainEvent::KINDS
        .iter()
        .map(|kind| (*kind).to_owned())
        .collect();
    let mut sorted = documented.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(
        sorted, expected,
        "EventDto's kinds are not DomainEvent::KINDS"
    );
    let schemas = serde_json::from_str::<serde_json::Value>(&nomos_http::openapi::document_json())
        .unwrap()["components"]["schemas"]
        .clone();
    assert!(schemas.get("EventRecordDto").is_some(), "{schemas}");
}
