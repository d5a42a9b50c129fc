//! `get_execution_output`: the model reads, a slice at a time, the output that the cut of a
//! long tool result kept from it (TURN-9). Read-only; only the session's own executions.

use nomos_core::record::ToolCallOutcome;
use nomos_core::{ExecutionId, SessionId};

use crate::agent::Agent;
use crate::error::AgentError;
use crate::exec::result_text;

impl Agent {
    /// Bytes `offset..offset + limit` of the execution's result text (the text its tool result
    /// had before any cut, ANSI escapes stripped), with where the slice sits in the whole.
    pub(crate) async fn execution_output(
        &self,
        id: SessionId,
        execution_id: &str,
        offset: usize,
        limit: Option<usize>,
    ) -> Result<(ToolCallOutcome, String), AgentError> {
        let error = |text: String| Ok((ToolCallOutcome::Error, text));
        let Ok(parsed) = execution_id.trim().parse::<ExecutionId>() else {
            return error(format!(
                "get_execution_output: `{execution_id}` is not an execution id"
            ));
        };
        let execution = match self.inner.store.execution(parsed).await? {
            Some(execution) if execution.session_id == id => execution,
            _ => {
                return error(format!(
                    "get_execution_output: this session has no execution `{execution_id}`"
                ));
            }
        };
        let text = match (&execution.output, &execution.error) {
            (Some(output), _) => result_text(&Ok(output.clone())),
            (None, Some(error)) => format!("no output: {error}"),
            (None, None) => format!("no output yet (the execution is {})", execution.status),
        };
        // Offsets count in the text the model reads: ANSI escapes stripped (see budget.rs).
        let text = crate::budget::strip_ansi(&text);
        // A slice never larger than what one tool result may show, note included.
        let most = self
            .inner
            .config
            .model_output_bytes
            .saturating_sub(200)
            .max(256);
        let limit = limit.unwrap_or(most).clamp(1, most);
        Ok((ToolCallOutcome::Ok, slice(&text, offset, limit)))
    }
}

/// The slice on character boundaries, headed by where it sits in the whole.
fn slice(text: &str, offset: usize, limit: usize) -> String {
    let total = text.len();
    let mut start = offset.min(total);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    // Rounded up, so a slice is never empty before the end.
    let mut end = start.saturating_add(limit).min(total);
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let next = if end < total {
        format!("; the next offset is {end}")
    } else {
        "; this is the end".to_owned()
    };
    format!(
        "[bytes {start}..{end} of {total}{next}]\n{}",
        &text[start..end]
    )
}

#[cfg(test)]
mod tests {
    use super::slice;

    #[test]
    fn a_slice_says_where_it_sits_and_where_to_go_on() {
        assert_eq!(
            slice("abcdefgh", 2, 3),
            "[bytes 2..5 of 8; the next offset is 5]\ncde"
        );
        assert_eq!(
            slice("abcdefgh", 6, 10),
            "[bytes 6..8 of 8; this is the end]\ngh"
        );
        assert_eq!(slice("abc", 9, 1), "[bytes 3..3 of 3; this is the end]\n");
        assert_eq!(slice("aé", 2, 1), "[bytes 1..3 of 3; this is the end]\né");
    }
}
