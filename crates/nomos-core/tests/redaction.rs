//! SECRET-2 at the core: the tool result a session stores for the model is redacted, with an
//! `output.redacted` event naming the kinds and counts, while the execution's stored output
//! keeps the original for the operator; a continuation that quotes the output is redacted too.

use nomos_core::classify::classify;
use nomos_core::event::{DomainEvent, RedactedKind};
use nomos_core::record::{ExecOutput, ToolCallOutcome, ToolCallRecord};
use nomos_core::resume::continuation_outcome;
use nomos_core::session::{Action, Session, SessionConfig, ToolInput};
use nomos_core::{SessionId, Span, Timestamp};

const KEY: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----";

fn output(stdout: String) -> ExecOutput {
    ExecOutput {
        exit_code: Some(0),
        signal: None,
        stdout,
        stderr: String::new(),
        stdout_cut: 0,
        stderr_cut: 0,
        duration_ms: 5,
    }
}

// rule: SECRET-2
#[test]
fn the_stored_tool_result_is_redacted_and_the_execution_keeps_the_original() {
    let now = Timestamp::from_millis(1_800_000_000_000);
    let id = SessionId::from(uuid::Uuid::from_u128(21));
    let mut session = Session::create(id, now, SessionConfig::spec_defaults());
    let command = "cat /srv/app/config.yml";
    let reply = session.handle_tool(
        now,
        "call_1",
        ToolInput::Run {
            host: "local".to_owned(),
            command: command.to_owned(),
            classification: classify(command),
            preview: None,
        },
    );
    let Some(Action::Dispatch { execution_id }) = reply.action else {
        panic!("{reply:?}");
    };
    let stdout = format!("port: 8443\nkey: |\n{KEY}\napi_token: s3cr3t-t0ken\n");
    let later = now + Span::from_millis(50);
    session
        .handle_execution_finished(later, execution_id, Ok(output(stdout.clone())))
        .unwrap();
    let _ = session.take_commit();
    let stored = session.record_tool_call(ToolCallRecord {
        session_id: id,
        call_id: "call_1".to_owned(),
        name: "run".to_owned(),
        arguments: "{}".to_owned(),
        result: format!("exit 0 (5 ms)\nstdout:\n{stdout}"),
        outcome: ToolCallOutcome::Ok,
        started_at: now,
        duration_ms: 50,
    });
    assert!(stored.contains("[redacted: private key]"), "{stored}");
    assert!(
        stored.contains("api_token: [redacted: secret value]"),
        "{stored}"
    );
    assert!(!stored.contains("MIIEowIBAAKCAQEA"), "{stored}");
    assert!(!stored.contains("s3cr3t-t0ken"), "{stored}");
    assert!(stored.contains("port: 8443"), "{stored}");
    assert!(stored.contains("2 secrets were redacted"), "{stored}");
    assert!(stored.contains("do not retry the read"), "{stored}");
    let commit = session.take_commit();
    assert_eq!(commit.tool_calls.len(), 1);
    assert_eq!(commit.tool_calls[0].result, stored);
    let redacted: Vec<&DomainEvent> = commit
        .events
        .iter()
        .map(|e| &e.event)
        .filter(|e| matches!(e, DomainEvent::OutputRedacted { .. }))
        .collect();
    assert_eq!(
        redacted,
        [&DomainEvent::OutputRedacted {
            call_id: "call_1".to_owned(),
            tool: "run".to_owned(),
            kinds: vec![
                RedactedKind {
                    kind: "private key".to_owned(),
                    count: 1
                },
                RedactedKind {
                    kind: "secret value".to_owned(),
                    count: 1
                },
            ],
        }]
    );
    let execution = session.execution(execution_id).unwrap();
    assert_eq!(execution.output.as_ref().unwrap().stdout, stdout);
    // EXEC-4's continuation quotes the output for the model: redacted as well.
    let note = continuation_outcome(execution, None);
    assert!(!note.contains("MIIEowIBAAKCAQEA"), "{note}");
    assert!(note.contains("[redacted: private key]"), "{note}");
}

// rule: SECRET-2
#[test]
fn a_result_without_secrets_is_stored_as_it_is_with_no_event() {
    let now = Timestamp::from_millis(1_800_000_000_000);
    let id = SessionId::from(uuid::Uuid::from_u128(22));
    let mut session = Session::create(id, now, SessionConfig::spec_defaults());
    let _ = session.take_commit();
    let result = "exit 0 (3 ms)\nstdout:\nsha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n";
    let stored = session.record_tool_call(ToolCallRecord {
        session_id: id,
        call_id: "call_9".to_owned(),
        name: "run".to_owned(),
        arguments: "{}".to_owned(),
        result: result.to_owned(),
        outcome: ToolCallOutcome::Ok,
        started_at: now,
        duration_ms: 3,
    });
    assert_eq!(stored, result);
    let commit = session.take_commit();
    assert!(
        !commit
            .events
            .iter()
            .any(|e| matches!(e.event, DomainEvent::OutputRedacted { .. }))
    );
}
