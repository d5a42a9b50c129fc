//! The `Store` port implemented for [`SqliteStore`].

use async_trait::async_trait;
use nomos_core::event::EventRecord;
use nomos_core::ports::store::{
    AuditMark, Commit, CommitReceipt, ExecutionFilter, KnowledgeHit, SessionFilter,
    SessionSnapshot, Store, StoreError,
};
use nomos_core::record::{
    Approval, Entity, Execution, KnowledgeEntry, Message, Relationship, SessionRecord,
    ToolCallRecord,
};
use nomos_core::{ApprovalId, ExecutionId, SessionId, Timestamp};
use nomos_store_sql::schema::check_schema;

use crate::error::db_error;
use crate::open::{SqliteStore, applied_version, known_version};

#[async_trait]
impl Store for SqliteStore {
    async fn check(&self) -> Result<(), StoreError> {
        let mut conn = self
            .read
            .acquire()
            .await
            .map_err(|e| db_error(e, "connecting"))?;
        check_schema(applied_version(&mut conn).await?, known_version())
    }

    async fn probe_write(&self) -> Result<(), StoreError> {
        self.rewrite_user_version().await
    }

    async fn load_session(&self, id: SessionId) -> Result<Option<SessionSnapshot>, StoreError> {
        self.read_session(id).await
    }

    async fn load_sessions(&self, ids: &[SessionId]) -> Result<Vec<SessionSnapshot>, StoreError> {
        self.read_sessions(ids).await
    }

    async fn last_messages(&self, ids: &[SessionId]) -> Result<Vec<Message>, StoreError> {
        self.select_last_messages(ids).await
    }

    async fn commit(&self, commit: Commit) -> Result<CommitReceipt, StoreError> {
        self.commit_one(commit).await
    }

    async fn commit_batch(
        &self,
        commits: Vec<Commit>,
    ) -> Result<Vec<Result<CommitReceipt, StoreError>>, StoreError> {
        self.commit_many(commits).await
    }

    async fn delete_session(&self, id: SessionId) -> Result<(), StoreError> {
        self.remove_session(id).await
    }

    async fn list_sessions(
        &self,
        filter: &SessionFilter,
    ) -> Result<Vec<SessionRecord>, StoreError> {
        self.select_sessions(filter).await
    }

    async fn messages(&self, session: SessionId) -> Result<Vec<Message>, StoreError> {
        self.select_messages(session).await
    }

    async fn tool_calls(&self, session: SessionId) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.select_tool_calls(session).await
    }

    async fn execution(&self, id: ExecutionId) -> Result<Option<Execution>, StoreError> {
        self.select_execution(id).await
    }

    async fn list_executions(
        &self,
        filter: &ExecutionFilter,
    ) -> Result<Vec<Execution>, StoreError> {
        self.select_executions(filter).await
    }

    async fn approval(&self, id: ApprovalId) -> Result<Option<Approval>, StoreError> {
        self.select_approval(id).await
    }

    async fn pending_approvals(
        &self,
        session: Option<SessionId>,
    ) -> Result<Vec<Approval>, StoreError> {
        self.select_pending_approvals(session).await
    }

    async fn events_after(
        &self,
        session: Option<SessionId>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<EventRecord>, StoreError> {
        self.select_events(session, after, limit).await
    }

    async fn newest_global_seq(&self) -> Result<i64, StoreError> {
        self.select_newest_global_seq().await
    }

    async fn newest_seq(&self, session: SessionId) -> Result<i64, StoreError> {
        self.select_newest_seq(session).await
    }

    async fn chained_events(
        &self,
        cursor: nomos_core::chain::ChainCursor,
        limit: u32,
    ) -> Result<Vec<nomos_core::chain::ChainedEvent>, StoreError> {
        self.select_chained_events(cursor, limit).await
    }

    async fn upsert_entity(&self, entity: &Entity) -> Result<(), StoreError> {
        self.write_entity(entity).await
    }

    async fn entity(&self, slug: &str) -> Result<Option<Entity>, StoreError> {
        self.select_entity(slug).await
    }

    async fn list_entities(&self, kind: Option<&str>) -> Result<Vec<Entity>, StoreError> {
        self.select_entities(kind).await
    }

    async fn update_entity_attributes(
        &self,
        slug: &str,
        patch: &serde_json::Value,
        now: Timestamp,
    ) -> Result<Entity, StoreError> {
        self.patch_entity(slug, patch, now).await
    }

    async fn create_relationship(&self, relationship: &Relationship) -> Result<(), StoreError> {
        self.write_relationship(relationship).await
    }

    async fn relations(&self, slug: &str) -> Result<Vec<Relationship>, StoreError> {
        self.select_relations(slug).await
    }

    async fn upsert_knowledge(&self, entry: &KnowledgeEntry) -> Result<(), StoreError> {
        self.write_knowledge(entry).await
    }

    async fn knowledge(&self, key: &str) -> Result<Option<KnowledgeEntry>, StoreError> {
        self.select_knowledge(key).await
    }

    async fn search_knowledge(
        &self,
        query: &str,
        limit: u32,
    ) -> Result<Vec<KnowledgeHit>, StoreError> {
        self.search(query, limit).await
    }

    async fn last_audited(&self, slugs: &[String]) -> Result<Vec<AuditMark>, StoreError> {
        self.select_last_audited(slugs).await
    }
}
