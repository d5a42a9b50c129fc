//! Turns the parts of a reply (streamed or whole) into the port's answer or its real failure.

use nomos_core::ports::chat::{ChatResponse, FinishReason, ModelError, ToolCall, Usage};

use crate::wire;

/// Everything a reply said, before the rules about refusals, limits and emptiness apply.
#[derive(Debug, Default)]
pub(crate) struct ReplyParts {
    pub content: String,
    pub refusal: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    pub usage: Usage,
}

impl ReplyParts {
    /// TURN-2: refusal text, a content filter, the token limit and an empty reply are errors
    /// that say so; anything else is the answer.
    pub fn into_response(self) -> Result<ChatResponse, ModelError> {
        let refusal = self.refusal.trim();
        if !refusal.is_empty() {
            return Err(ModelError::Refusal(refusal.to_owned()));
        }
        let finish_reason = match self.finish_reason.as_deref() {
            Some(reason) => wire::finish_reason(reason),
            None if self.tool_calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        match finish_reason {
            FinishReason::ContentFilter => {
                let said = self.content.trim();
                let message = if said.is_empty() {
                    "the provider's content filter stopped the reply (finish_reason=content_filter)"
                        .to_owned()
                } else {
                    format!(
                        "the provider's content filter stopped the reply (finish_reason=content_filter) after: {said}"
                    )
                };
                return Err(ModelError::Refusal(message));
            }
            FinishReason::Length => return Err(ModelError::Length),
            _ => {}
        }
        let content = (!self.content.is_empty()).then_some(self.content);
        let response = ChatResponse {
            content,
            tool_calls: self.tool_calls,
            finish_reason,
            usage: self.usage,
        };
        if response.is_empty() {
            return Err(ModelError::Empty {
                finish_reason: self.finish_reason.unwrap_or_else(|| "none".to_owned()),
            });
        }
        Ok(response)
    }
}
