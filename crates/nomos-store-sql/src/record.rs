//! Rows of each table read back into the core's records, for any [`RecordRow`].

use nomos_core::event::EventRecord;
use nomos_core::fanout::Fanout;
use nomos_core::ports::store::{AuditMark, StoreError};
use nomos_core::record::{
    Approval, Entity, Execution, ExecutionKind, KnowledgeEntry, KnowledgeLoop, Message, PlanStep,
    Relationship, SessionRecord, ToolCallOutcome, ToolCallRecord,
};
use nomos_core::{ApprovalId, ExecutionId, MessageId, SessionId, StepId};

use crate::RecordRow;
use crate::event_codec::decode_event;

/// A `sessions` row.
pub fn session<B, R: RecordRow<B>>(row: &R) -> Result<SessionRecord, StoreError> {
    Ok(SessionRecord {
        id: SessionId(row.uuid("id")?),
        status: row.spelled("status")?,
        goal: row.opt_text("goal")?,
        summary: row.opt_text("summary")?,
        board_outcome: row.opt_spelled("board_outcome")?,
        plan_generation: row.u32("plan_generation")?,
        assent: row.opt_json("assent")?,
        knowledge: row.parsed("knowledge", KnowledgeLoop::parse)?,
        nudged_at: row.opt_timestamp("nudged_at")?,
        client: row.opt_text("client")?,
        owner: row.opt_text("created_by")?,
        archived_at: row.opt_timestamp("archived_at")?,
        plan_approvals: row.opt_json("plan_approvals")?,
        n_messages: row.u64("n_messages")?,
        created_at: row.timestamp("created_at")?,
        last_activity_at: row.timestamp("last_activity_at")?,
        version: row.int("version")?,
    })
}

/// A `plan_steps` row.
pub fn step<B, R: RecordRow<B>>(row: &R) -> Result<PlanStep, StoreError> {
    Ok(PlanStep {
        id: StepId(row.uuid("id")?),
        session_id: SessionId(row.uuid("session_id")?),
        generation: row.u32("generation")?,
        seq: row.u32("seq")?,
        title: row.text("title")?,
        detail: row.opt_text("detail")?,
        status: row.spelled("status")?,
        note: row.opt_text("note")?,
        started_at: row.opt_timestamp("started_at")?,
        finished_at: row.opt_timestamp("finished_at")?,
        updated_at: row.timestamp("updated_at")?,
        commands: row.opt_json("commands")?.unwrap_or_default(),
        check: row.opt_json("step_check")?,
    })
}

/// An `executions` row.
pub fn execution<B, R: RecordRow<B>>(row: &R) -> Result<Execution, StoreError> {
    Ok(Execution {
        id: ExecutionId(row.uuid("id")?),
        session_id: SessionId(row.uuid("session_id")?),
        tool_call_id: row.opt_text("tool_call_id")?,
        kind: {
            let kind = row.text("kind")?;
            ExecutionKind::parse(&kind)
                .ok_or_else(|| StoreError::Invalid(format!("column kind: unknown kind `{kind}`")))?
        },
        host: row.text("host")?,
        command: row.text("command")?,
        class: row.spelled("class")?,
        reason: row.text("reason")?,
        generation: row.u32("generation")?,
        step_seq: row.opt_u32("step_seq")?,
        status: row.spelled("status")?,
        created_at: row.timestamp("created_at")?,
        started_at: row.opt_timestamp("started_at")?,
        finished_at: row.opt_timestamp("finished_at")?,
        output: row.opt_json("output")?,
        error: row.opt_text("error")?,
    })
}

/// An `approvals` row.
/// A fan-out (FLEET-1): its record is stored whole in `body`.
pub fn fanout<B, R: RecordRow<B>>(row: &R) -> Result<Fanout, StoreError> {
    row.json("body")
}

/// An approval.
pub fn approval<B, R: RecordRow<B>>(row: &R) -> Result<Approval, StoreError> {
    Ok(Approval {
        id: ApprovalId(row.uuid("id")?),
        session_id: SessionId(row.uuid("session_id")?),
        execution_id: ExecutionId(row.uuid("execution_id")?),
        binding: row.json("binding")?,
        binding_hash: row.text("binding_hash")?,
        status: row.spelled("status")?,
        requested_at: row.timestamp("requested_at")?,
        expires_at: row.timestamp("expires_at")?,
        decided_at: row.opt_timestamp("decided_at")?,
        decided_by: row.opt_text("decided_by")?,
        approvers_required: row.u32("approvers_required")?,
        approved_by: row.opt_json("approved_by")?.unwrap_or_default(),
    })
}

/// A `messages` row.
pub fn message<B, R: RecordRow<B>>(row: &R) -> Result<Message, StoreError> {
    Ok(Message {
        id: MessageId(row.uuid("id")?),
        session_id: SessionId(row.uuid("session_id")?),
        role: row.spelled("role")?,
        content: row.text("content")?,
        tool_calls: row.json("tool_calls")?,
        created_at: row.timestamp("created_at")?,
    })
}

/// A `tool_calls` row.
pub fn tool_call<B, R: RecordRow<B>>(row: &R) -> Result<ToolCallRecord, StoreError> {
    Ok(ToolCallRecord {
        session_id: SessionId(row.uuid("session_id")?),
        call_id: row.text("call_id")?,
        name: row.text("name")?,
        arguments: row.text("arguments")?,
        result: row.text("result")?,
        outcome: row.parsed("outcome", ToolCallOutcome::parse)?,
        started_at: row.timestamp("started_at")?,
        duration_ms: row.u64("duration_ms")?,
    })
}

/// An `events` row.
pub fn event<B, R: RecordRow<B>>(row: &R) -> Result<EventRecord, StoreError> {
    let session_id = SessionId(row.uuid("session_id")?);
    let seq = row.int("seq")?;
    let payload: serde_json::Value = row.json("payload")?;
    let what = format!("column payload of event {seq} of session {session_id}");
    Ok(EventRecord {
        global_seq: row.int("global_seq")?,
        session_id,
        seq,
        at: row.timestamp("at")?,
        event: decode_event(payload, &what)?,
    })
}

/// An `entities` row.
pub fn entity<B, R: RecordRow<B>>(row: &R) -> Result<Entity, StoreError> {
    Ok(Entity {
        slug: row.text("slug")?,
        kind: row.text("kind")?,
        name: row.text("name")?,
        attributes: row.json("attributes")?,
        updated_at: row.timestamp("updated_at")?,
    })
}

/// A `relationships` row.
pub fn relationship<B, R: RecordRow<B>>(row: &R) -> Result<Relationship, StoreError> {
    Ok(Relationship {
        from: row.text("from_slug")?,
        kind: row.text("kind")?,
        to: row.text("to_slug")?,
        created_at: row.timestamp("created_at")?,
    })
}

/// A `knowledge` row with its tags and subjects, which each backend stores its own way.
pub fn knowledge_entry<B, R: RecordRow<B>>(
    row: &R,
    tags: Vec<String>,
    about: Vec<String>,
) -> Result<KnowledgeEntry, StoreError> {
    Ok(KnowledgeEntry {
        key: row.text("key")?,
        title: row.text("title")?,
        content: row.text("content")?,
        tags,
        about,
        created_at: row.timestamp("created_at")?,
        updated_at: row.timestamp("updated_at")?,
    })
}

/// A row of the last-audit query: a `slug` and a nullable `last_audited_at`.
pub fn audit_mark<B, R: RecordRow<B>>(row: &R) -> Result<AuditMark, StoreError> {
    Ok(AuditMark {
        slug: row.text("slug")?,
        last_audited_at: row.opt_timestamp("last_audited_at")?,
    })
}

/// An `events` row with its chain hash (AUDIT-2); the payload is read as plain JSON,
/// so a row edited into something that is no event still reaches the verifier.
pub fn chained_event<B, R: RecordRow<B>>(
    row: &R,
) -> Result<nomos_core::chain::ChainedEvent, StoreError> {
    Ok(nomos_core::chain::ChainedEvent {
        session_id: SessionId(row.uuid("session_id")?),
        seq: row.int("seq")?,
        at: row.timestamp("at")?,
        kind: row.text("kind")?,
        payload: row.json("payload")?,
        hash: row.opt_text("hash")?,
    })
}
