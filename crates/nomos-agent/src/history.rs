//! Building the conversation sent to the model from the persisted transcript (TURN-7:
//! every tool call has exactly one result, dangling calls are closed as interrupted), kept
//! per session as it commits (`live.rs`).

#[cfg(test)]
use std::collections::HashMap;

use nomos_core::Role;
#[cfg(test)]
use nomos_core::ports::chat::{ChatMessage, ToolCall};
use nomos_core::record::Message;
#[cfg(test)]
use nomos_core::record::{ToolCallRecord, ToolCallRequest};

mod live;

pub(crate) use live::{CommitRows, Histories, ModelHistory};

/// The result text of a call that never got one (a crash, a cut stream).
pub const INTERRUPTED_RESULT: &str = "interrupted: this call got no result (the turn stopped before it finished). Do not assume it ran; check state read-only before acting again.";

/// The conversation, and the calls that had no result and must be closed first.
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct History {
    pub messages: Vec<ChatMessage>,
    pub dangling: Vec<ToolCallRequest>,
}

/// Builds the conversation: system prompt, then messages in order, each assistant
/// message followed by the results of its calls. The reference the live history
/// ([`ModelHistory`]) is tested against.
#[cfg(test)]
pub(crate) fn build_history(
    system_prompt: &str,
    messages: &[Message],
    calls: &[ToolCallRecord],
) -> History {
    let results: HashMap<&str, &ToolCallRecord> =
        calls.iter().map(|c| (c.call_id.as_str(), c)).collect();
    let mut out = Vec::with_capacity(messages.len() + calls.len() + 1);
    out.push(ChatMessage::System {
        content: system_prompt.into(),
    });
    let mut dangling = Vec::new();
    for message in messages {
        match message.role {
            Role::Operator => out.push(ChatMessage::User {
                content: message.content.as_str().into(),
            }),
            Role::Note => out.push(ChatMessage::User {
                content: format!("[Nomos] {}", message.content).into(),
            }),
            Role::Assistant => {
                let content = (!message.content.trim().is_empty()).then(|| message.content.clone());
                let tool_calls = message
                    .tool_calls
                    .iter()
                    .map(|c| ToolCall {
                        id: c.call_id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect();
                out.push(ChatMessage::Assistant {
                    content: content.map(Into::into),
                    tool_calls,
                });
                for call in &message.tool_calls {
                    let content = match results.get(call.call_id.as_str()) {
                        Some(record) => record.result.clone(),
                        None => {
                            dangling.push(call.clone());
                            INTERRUPTED_RESULT.to_owned()
                        }
                    };
                    out.push(ChatMessage::Tool {
                        call_id: call.call_id.as_str().into(),
                        content: content.into(),
                    });
                }
            }
        }
    }
    History {
        messages: out,
        dangling,
    }
}

/// The operator's last message, for resume notes (RESUME-1).
pub(crate) fn last_operator_message(messages: &[Message]) -> Option<&str> {
    messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Operator)
        .map(|m| m.content.as_str())
}

#[cfg(test)]
mod tests {
    use nomos_core::record::ToolCallOutcome;
    use nomos_core::{SessionId, Timestamp};
    use uuid::Uuid;

    use super::*;

    fn message(n: u64, role: Role, content: &str, calls: &[&str]) -> Message {
        let session = SessionId(Uuid::from_u128(1));
        Message {
            id: session.message_id(n),
            session_id: session,
            role,
            content: content.to_owned(),
            tool_calls: calls
                .iter()
                .map(|id| ToolCallRequest {
                    call_id: (*id).to_owned(),
                    name: "run".to_owned(),
                    arguments: "{}".to_owned(),
                })
                .collect(),
            created_at: Timestamp::EPOCH,
        }
    }

    // rule: TURN-7
    #[test]
    fn every_call_gets_exactly_one_result_and_dangling_ones_are_interrupted() {
        let messages = [
            message(1, Role::Operator, "check", &[]),
            message(2, Role::Assistant, "", &["a", "b"]),
        ];
        let calls = [ToolCallRecord {
            session_id: SessionId(Uuid::from_u128(1)),
            call_id: "a".into(),
            name: "run".into(),
            arguments: "{}".into(),
            result: "ok".into(),
            outcome: ToolCallOutcome::Ok,
            started_at: Timestamp::EPOCH,
            duration_ms: 1,
        }];
        let history = build_history("sys", &messages, &calls);
        let results: Vec<(&str, &str)> = history
            .messages
            .iter()
            .filter_map(|m| match m {
                ChatMessage::Tool { call_id, content } => Some((&**call_id, &**content)),
                _ => None,
            })
            .collect();
        assert_eq!(results, [("a", "ok"), ("b", INTERRUPTED_RESULT)]);
        assert_eq!(history.dangling.len(), 1);
        assert_eq!(history.dangling[0].call_id, "b");
    }
}
