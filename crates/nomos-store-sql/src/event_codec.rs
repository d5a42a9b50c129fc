//! The stored form of a [`DomainEvent`]: the `payload` column of `events`.
//!
//! A payload is a JSON object in a versioned envelope: the key `v` names the format
//! version, the other keys are the event in that version's form. Version 1 is the
//! core's serde form of `DomainEvent` (`type` is the kind, the fields beside it), the
//! form every payload had before the version was written; a payload without `v` is
//! therefore version 1. The stores write [`EVENT_FORMAT`] and read every version up to
//! it, so a change to the core's serde form that old rows would not read gets a new
//! version here and an upgrade of the older ones, not a silent misreading.
//!
//! The envelope is part of the payload, so the AUDIT-2 hash covers the version too.

use nomos_core::event::DomainEvent;
use nomos_core::ports::store::StoreError;
use serde_json::Value;

/// The format version the stores write.
pub const EVENT_FORMAT: u64 = 1;

/// The key of the format version in a stored payload.
pub const VERSION_KEY: &str = "v";

/// The stored payload of an event: its serde form with `"v": EVENT_FORMAT`.
pub fn encode_event(event: &DomainEvent) -> Result<Value, StoreError> {
    let mut value = serde_json::to_value(event)
        .map_err(|e| StoreError::Invalid(format!("event payload of {}: {e}", event.kind())))?;
    let Value::Object(map) = &mut value else {
        return Err(StoreError::Invalid(format!(
            "event payload of {}: not a JSON object",
            event.kind()
        )));
    };
    if map.contains_key(VERSION_KEY) {
        return Err(StoreError::Invalid(format!(
            "event payload of {}: a field named `{VERSION_KEY}` clashes with the format version",
            event.kind()
        )));
    }
    map.insert(VERSION_KEY.to_owned(), Value::from(EVENT_FORMAT));
    Ok(value)
}

/// Reads a stored payload of any known version; `what` names the row in an error.
pub fn decode_event(mut payload: Value, what: &str) -> Result<DomainEvent, StoreError> {
    let Value::Object(map) = &mut payload else {
        return Err(StoreError::Invalid(format!(
            "{what}: the payload is not a JSON object"
        )));
    };
    let version = match map.remove(VERSION_KEY) {
        None => 1,
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or_default(),
        Some(other) => {
            return Err(StoreError::Invalid(format!(
                "{what}: format version `{other}` is not a positive integer"
            )));
        }
    };
    match version {
        1 => serde_json::from_value(payload)
            .map_err(|e| StoreError::Invalid(format!("{what}: not a version 1 event: {e}"))),
        other => Err(StoreError::Invalid(format!(
            "{what}: event format version {other} is unknown to this build, which reads 1 to {EVENT_FORMAT}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// One payload of every kind exactly as the stores wrote it before the version was
    /// written (version 1 without `v`). These rows exist in databases: they must decode.
    const V1_ROWS: &str = r#"
{"type":"session.created"}
{"type":"task.status","from":"planning","to":"executing","reason":null}
{"type":"task.goal","goal":"Free disk space on web1"}
{"type":"task.board_outcome","outcome":"partial"}
{"type":"plan.proposed","generation":2,"steps":["Check disk","Clean logs"],"revision_reason":"logs are elsewhere"}
{"type":"plan.step.started","generation":2,"seq":1}
{"type":"plan.step.finished","generation":2,"seq":1,"status":"done"}
{"type":"plan.step.checked","generation":2,"seq":1,"execution_id":"00000000-0000-0000-0000-00000000000e","verdict":{"verdict":"failed","reason":"check `systemctl is-active nginx` on web1 failed: it exited 3"}}
{"type":"safety.net","execution_id":"00000000-0000-0000-0000-00000000000e","safety_execution_id":"00000000-0000-0000-0000-00000000000f","action":{"action":"backed_up","file":{"path":"/etc/app.conf","copy":"/var/lib/nomos/backup/e/1","uid":0,"gid":0,"mode":"644","size":12,"sha256":"abab"}}}
{"type":"plan.assent","generation":2,"expires_at":"2026-11-30T08:30:00Z","granted_by":"alice","username":"alice@example.org","request_id":"req-1"}
{"type":"plan.assent","generation":1,"expires_at":"2026-11-30T08:30:00.250Z"}
{"type":"assent.closed","generation":2,"reason":"plan_finished"}
{"type":"plan.assent_closed","generation":1}
{"type":"execution.created","execution_id":"00000000-0000-0000-0000-00000000000e","host":"web1","command":"df -h","class":"read_only","status":"running"}
{"type":"execution.status","execution_id":"00000000-0000-0000-0000-00000000000e","status":"completed","exit_code":0,"error":null}
{"type":"approval.requested","approval_id":"00000000-0000-0000-0000-00000000000a","execution_id":"00000000-0000-0000-0000-00000000000e","expires_at":"2026-11-30T09:00:00Z"}
{"type":"approval.resolved","approval_id":"00000000-0000-0000-0000-00000000000a","status":"approved","decided_by":"bob","request_id":"req-2"}
{"type":"approval.resolved","approval_id":"00000000-0000-0000-0000-00000000000a","status":"expired","reason":"expired"}
{"type":"message.appended","message_id":"00000000-0000-0000-0000-00000000000b","role":"assistant"}
{"type":"tool.called","call_id":"call-1","name":"run","outcome":"refused"}
{"type":"task.nudged"}
{"type":"turn.started","cause":"continuation"}
{"type":"turn.done","error":"the model endpoint timed out","n_tool_calls":3}
{"type":"turn.stopped","stopped_by":"alice","request_id":"req-3"}
{"type":"assent.revoked","generation":2,"revoked_by":"alice","username":"alice@example.org"}
{"type":"plan.rejected","generation":3,"rejected_by":"alice","reason":"not during office hours"}
{"type":"task.closed","outcome":"failure","note":"the host is gone","closed_by":"alice"}
{"type":"session.archived","archived":true,"by":"alice"}
{"type":"output.redacted","call_id":"call-2","tool":"run","kinds":[{"kind":"private key","count":1}]}
{"type":"approval.progress","approval_id":"00000000-0000-0000-0000-00000000000a","approved_by":"alice","approvals":1,"required":2}
{"type":"decision.refused","decision":"approval","principal":"alice","approval_id":"00000000-0000-0000-0000-00000000000a","reason":"alice already approved it"}
{"type":"plan.progress","generation":2,"approved_by":"alice","approvals":1,"required":2}
"#;

    fn v1_rows() -> Vec<Value> {
        V1_ROWS
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[test]
    fn rows_written_before_the_version_decode_as_version_1_and_cover_every_kind() {
        let mut kinds = Vec::new();
        for row in v1_rows() {
            let event = decode_event(row.clone(), "row").unwrap_or_else(|e| panic!("{row}: {e}"));
            kinds.push(event.kind());
        }
        for kind in DomainEvent::KINDS {
            assert!(kinds.contains(kind), "no version 1 row of kind {kind}");
        }
    }

    #[test]
    fn an_event_is_written_with_its_version_and_reads_back_the_same() {
        for row in v1_rows() {
            let event = decode_event(row, "row").unwrap();
            let stored = encode_event(&event).unwrap();
            assert_eq!(stored[VERSION_KEY], EVENT_FORMAT, "{stored}");
            assert_eq!(stored["type"], event.kind(), "{stored}");
            assert_eq!(decode_event(stored, "row").unwrap(), event);
        }
    }

    #[test]
    fn today_s_payload_is_yesterday_s_plus_the_version() {
        // Rows of the current kinds re-encode to the same fields: the version is the only
        // key the envelope adds (the old kind `plan.assent_closed` reads as `assent.closed`).
        for row in v1_rows() {
            if row["type"] == "plan.assent_closed" {
                continue;
            }
            let mut stored = encode_event(&decode_event(row.clone(), "row").unwrap()).unwrap();
            stored.as_object_mut().unwrap().remove(VERSION_KEY);
            assert_eq!(stored, row);
        }
    }

    #[test]
    fn an_unknown_or_malformed_version_is_refused_naming_the_row() {
        let newer = serde_json::json!({"v": 2, "type": "task.nudged"});
        let err = decode_event(newer, "event 7 of session s").unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid(m) if m.contains("event 7 of session s") && m.contains("version 2")),
            "{err:?}"
        );
        let text = serde_json::json!({"v": "one", "type": "task.nudged"});
        let err = decode_event(text, "event 8").unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid(m) if m.contains("event 8") && m.contains("\"one\"")),
            "{err:?}"
        );
        let err = decode_event(serde_json::json!([1]), "event 9").unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid(m) if m.contains("not a JSON object")),
            "{err:?}"
        );
    }
}
