//! Rows of each table read back into the core's records.

use nomos_core::event::{DomainEvent, EventRecord};
use nomos_core::ports::store::StoreError;
use nomos_core::record::{
    Approval, Entity, Execution, KnowledgeLoop, Message, PlanStep, SessionRecord, ToolCallOutcome,
    ToolCallRecord,
};
use nomos_core::{ApprovalId, ExecutionId, MessageId, SessionId, StepId};
use sqlx::sqlite::SqliteRow;

use crate::codec::{
    int, json, opt_json, opt_text, opt_ts, opt_u32, parsed, spelled, text, ts, u32_col, u64_col,
    uuid,
};

/// A `sessions` row.
pub(crate) fn session(row: &SqliteRow) -> Result<SessionRecord, StoreError> {
    let board_outcome = match opt_text(row, "board_outcome")? {
        None => None,
        Some(value) => Some(
            value
                .parse()
                .map_err(|e| StoreError::Invalid(format!("column board_outcome: {e}")))?,
        ),
    };
    Ok(SessionRecord {
        id: SessionId(uuid(row, "id")?),
        status: spelled(row, "status")?,
        goal: opt_text(row, "goal")?,
        summary: opt_text(row, "summary")?,
        board_outcome,
        plan_generation: u32_col(row, "plan_generation")?,
        assent: opt_json(row, "assent")?,
        knowledge: parsed(row, "knowledge", KnowledgeLoop::parse)?,
        nudged_at: opt_ts(row, "nudged_at")?,
        n_messages: u64_col(row, "n_messages")?,
        created_at: ts(row, "created_at")?,
        last_activity_at: ts(row, "last_activity_at")?,
        version: int(row, "version")?,
    })
}

/// A `plan_steps` row.
pub(crate) fn step(row: &SqliteRow) -> Result<PlanStep, StoreError> {
    Ok(PlanStep {
        id: StepId(uuid(row, "id")?),
        session_id: SessionId(uuid(row, "session_id")?),
        generation: u32_col(row, "generation")?,
        seq: u32_col(row, "seq")?,
        title: text(row, "title")?,
        detail: opt_text(row, "detail")?,
        status: spelled(row, "status")?,
        note: opt_text(row, "note")?,
        started_at: opt_ts(row, "started_at")?,
        finished_at: opt_ts(row, "finished_at")?,
        updated_at: ts(row, "updated_at")?,
    })
}

/// An `executions` row.
pub(crate) fn execution(row: &SqliteRow) -> Result<Execution, StoreError> {
    Ok(Execution {
        id: ExecutionId(uuid(row, "id")?),
        session_id: SessionId(uuid(row, "session_id")?),
        tool_call_id: opt_text(row, "tool_call_id")?,
        host: text(row, "host")?,
        command: text(row, "command")?,
        class: spelled(row, "class")?,
        reason: text(row, "reason")?,
        generation: u32_col(row, "generation")?,
        step_seq: opt_u32(row, "step_seq")?,
        status: spelled(row, "status")?,
        created_at: ts(row, "created_at")?,
        started_at: opt_ts(row, "started_at")?,
        finished_at: opt_ts(row, "finished_at")?,
        output: opt_json(row, "output")?,
        error: opt_text(row, "error")?,
    })
}

/// An `approvals` row.
pub(crate) fn approval(row: &SqliteRow) -> Result<Approval, StoreError> {
    Ok(Approval {
        id: ApprovalId(uuid(row, "id")?),
        session_id: SessionId(uuid(row, "session_id")?),
        execution_id: ExecutionId(uuid(row, "execution_id")?),
        binding: json(row, "binding")?,
        binding_hash: text(row, "binding_hash")?,
        status: spelled(row, "status")?,
        requested_at: ts(row, "requested_at")?,
        expires_at: ts(row, "expires_at")?,
        decided_at: opt_ts(row, "decided_at")?,
        decided_by: opt_text(row, "decided_by")?,
    })
}

/// A `messages` row.
pub(crate) fn message(row: &SqliteRow) -> Result<Message, StoreError> {
    Ok(Message {
        id: MessageId(uuid(row, "id")?),
        session_id: SessionId(uuid(row, "session_id")?),
        role: spelled(row, "role")?,
        content: text(row, "content")?,
        tool_calls: json(row, "tool_calls")?,
        created_at: ts(row, "created_at")?,
    })
}

/// A `tool_calls` row.
pub(crate) fn tool_call(row: &SqliteRow) -> Result<ToolCallRecord, StoreError> {
    Ok(ToolCallRecord {
        session_id: SessionId(uuid(row, "session_id")?),
        call_id: text(row, "call_id")?,
        name: text(row, "name")?,
        arguments: text(row, "arguments")?,
        result: text(row, "result")?,
        outcome: parsed(row, "outcome", ToolCallOutcome::parse)?,
        started_at: ts(row, "started_at")?,
        duration_ms: u64_col(row, "duration_ms")?,
    })
}

/// An `events` row.
pub(crate) fn event(row: &SqliteRow) -> Result<EventRecord, StoreError> {
    let event: DomainEvent = json(row, "payload")?;
    Ok(EventRecord {
        global_seq: int(row, "global_seq")?,
        session_id: SessionId(uuid(row, "session_id")?),
        seq: int(row, "seq")?,
        at: ts(row, "at")?,
        event,
    })
}

/// An `entities` row.
pub(crate) fn entity(row: &SqliteRow) -> Result<Entity, StoreError> {
    Ok(Entity {
        slug: text(row, "slug")?,
        kind: text(row, "kind")?,
        name: text(row, "name")?,
        attributes: json(row, "attributes")?,
        updated_at: ts(row, "updated_at")?,
    })
}
