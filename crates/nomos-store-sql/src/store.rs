//! The store port's reads and simple writes, once for every SQL backend, and the
//! [`impl_store!`](crate::impl_store) macro that implements the port with them.

use nomos_core::chain::{ChainCursor, ChainedEvent};
use nomos_core::event::EventRecord;
use nomos_core::ports::store::{
    ArchiveFilter, AuditMark, ExecutionFilter, GoalFilter, ListOrder, SessionFilter,
    SessionSnapshot, StoreError,
};
use nomos_core::record::{
    Approval, Entity, Execution, Message, Relationship, SessionRecord, ToolCallRecord,
};
use nomos_core::{ApprovalId, ExecutionId, SessionId, Timestamp};
use uuid::Uuid;

use crate::backend::{Arg, SqlBackend, SqlWriteTx, Statement};
use crate::knowledge::{attribute_patch, merge_attributes, require_attributes_object};
use crate::sql::SHARED;
use crate::{RecordRow, record, snapshot};

/// Implements `nomos_core::ports::store::Store` for a type that implements
/// [`SqlBackend`](crate::backend::SqlBackend), with the shared code of this module.
///
/// The writes whose shape is the backend's own are its inherent methods of these names:
/// `check_schema(&self)`, `probe(&self)` (EXEC-9's write that changes nothing),
/// `commit_one(&self, Commit)`, `commit_all(&self, Vec<Commit>)`,
/// `write_knowledge(&self, &KnowledgeEntry)`,
/// `select_knowledge(&self, &str)` and `search(&self, &str, u32)`, each returning what
/// the port method does.
#[macro_export]
macro_rules! impl_store {
    ($store:ty) => {
        #[$crate::__private::async_trait]
        impl ::nomos_core::ports::store::Store for $store {
            async fn check(&self) -> Result<(), ::nomos_core::ports::store::StoreError> {
                self.check_schema().await
            }

            async fn probe_write(&self) -> Result<(), ::nomos_core::ports::store::StoreError> {
                self.probe().await
            }

            async fn load_session(
                &self,
                id: ::nomos_core::SessionId,
            ) -> Result<
                Option<::nomos_core::ports::store::SessionSnapshot>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::load_session(self, id).await
            }

            async fn load_sessions(
                &self,
                ids: &[::nomos_core::SessionId],
            ) -> Result<
                Vec<::nomos_core::ports::store::SessionSnapshot>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::load_sessions(self, ids).await
            }

            async fn last_messages(
                &self,
                ids: &[::nomos_core::SessionId],
            ) -> Result<Vec<::nomos_core::record::Message>, ::nomos_core::ports::store::StoreError>
            {
                $crate::store::last_messages(self, ids).await
            }

            async fn commit(
                &self,
                commit: ::nomos_core::ports::store::Commit,
            ) -> Result<
                ::nomos_core::ports::store::CommitReceipt,
                ::nomos_core::ports::store::StoreError,
            > {
                self.commit_one(commit).await
            }

            async fn commit_batch(
                &self,
                commits: Vec<::nomos_core::ports::store::Commit>,
            ) -> Result<
                Vec<
                    Result<
                        ::nomos_core::ports::store::CommitReceipt,
                        ::nomos_core::ports::store::StoreError,
                    >,
                >,
                ::nomos_core::ports::store::StoreError,
            > {
                self.commit_all(commits).await
            }

            async fn delete_session(
                &self,
                id: ::nomos_core::SessionId,
            ) -> Result<(), ::nomos_core::ports::store::StoreError> {
                $crate::store::delete_session(self, id).await
            }

            async fn list_sessions(
                &self,
                filter: &::nomos_core::ports::store::SessionFilter,
            ) -> Result<
                Vec<::nomos_core::record::SessionRecord>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::list_sessions(self, filter).await
            }

            async fn messages(
                &self,
                session: ::nomos_core::SessionId,
            ) -> Result<Vec<::nomos_core::record::Message>, ::nomos_core::ports::store::StoreError>
            {
                $crate::store::messages(self, session).await
            }

            async fn tool_calls(
                &self,
                session: ::nomos_core::SessionId,
            ) -> Result<
                Vec<::nomos_core::record::ToolCallRecord>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::tool_calls(self, session).await
            }

            async fn execution(
                &self,
                id: ::nomos_core::ExecutionId,
            ) -> Result<
                Option<::nomos_core::record::Execution>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::execution(self, id).await
            }

            async fn list_executions(
                &self,
                filter: &::nomos_core::ports::store::ExecutionFilter,
            ) -> Result<
                Vec<::nomos_core::record::Execution>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::list_executions(self, filter).await
            }

            async fn approval(
                &self,
                id: ::nomos_core::ApprovalId,
            ) -> Result<
                Option<::nomos_core::record::Approval>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::approval(self, id).await
            }

            async fn pending_approvals(
                &self,
                session: Option<::nomos_core::SessionId>,
            ) -> Result<
                Vec<::nomos_core::record::Approval>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::pending_approvals(self, session).await
            }

            async fn events_after(
                &self,
                session: Option<::nomos_core::SessionId>,
                after: i64,
                limit: u32,
            ) -> Result<
                Vec<::nomos_core::event::EventRecord>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::events_after(self, session, after, limit).await
            }

            async fn newest_global_seq(&self) -> Result<i64, ::nomos_core::ports::store::StoreError> {
                $crate::store::newest_global_seq(self).await
            }

            async fn newest_seq(
                &self,
                session: ::nomos_core::SessionId,
            ) -> Result<i64, ::nomos_core::ports::store::StoreError> {
                $crate::store::newest_seq(self, session).await
            }

            async fn chained_events(
                &self,
                cursor: ::nomos_core::chain::ChainCursor,
                limit: u32,
            ) -> Result<
                Vec<::nomos_core::chain::ChainedEvent>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::chained_events(self, cursor, limit).await
            }

            async fn upsert_entity(
                &self,
                entity: &::nomos_core::record::Entity,
            ) -> Result<(), ::nomos_core::ports::store::StoreError> {
                $crate::store::upsert_entity(self, entity).await
            }

            async fn entity(
                &self,
                slug: &str,
            ) -> Result<Option<::nomos_core::record::Entity>, ::nomos_core::ports::store::StoreError>
            {
                $crate::store::entity(self, slug).await
            }

            async fn list_entities(
                &self,
                kind: Option<&str>,
            ) -> Result<Vec<::nomos_core::record::Entity>, ::nomos_core::ports::store::StoreError>
            {
                $crate::store::list_entities(self, kind).await
            }

            async fn update_entity_attributes(
                &self,
                slug: &str,
                patch: &::serde_json::Value,
                now: ::nomos_core::Timestamp,
            ) -> Result<::nomos_core::record::Entity, ::nomos_core::ports::store::StoreError> {
                $crate::store::patch_entity(self, slug, patch, now).await
            }

            async fn create_relationship(
                &self,
                relationship: &::nomos_core::record::Relationship,
            ) -> Result<(), ::nomos_core::ports::store::StoreError> {
                $crate::store::create_relationship(self, relationship).await
            }

            async fn relations(
                &self,
                slug: &str,
            ) -> Result<
                Vec<::nomos_core::record::Relationship>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::relations(self, slug).await
            }

            async fn upsert_knowledge(
                &self,
                entry: &::nomos_core::record::KnowledgeEntry,
            ) -> Result<(), ::nomos_core::ports::store::StoreError> {
                self.write_knowledge(entry).await
            }

            async fn knowledge(
                &self,
                key: &str,
            ) -> Result<
                Option<::nomos_core::record::KnowledgeEntry>,
                ::nomos_core::ports::store::StoreError,
            > {
                self.select_knowledge(key).await
            }

            async fn search_knowledge(
                &self,
                query: &str,
                limit: u32,
            ) -> Result<
                Vec<::nomos_core::ports::store::KnowledgeHit>,
                ::nomos_core::ports::store::StoreError,
            > {
                self.search(query, limit).await
            }

            async fn last_audited(
                &self,
                slugs: &[String],
            ) -> Result<
                Vec<::nomos_core::ports::store::AuditMark>,
                ::nomos_core::ports::store::StoreError,
            > {
                $crate::store::last_audited(self, slugs).await
            }
        }
    };
}

/// Builds one record from each row.
fn build<B: SqlBackend, T>(
    rows: &[B::Row],
    record: fn(&B::Row) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    rows.iter().map(record).collect()
}

/// A session aggregate, read in one snapshot.
pub async fn load_session<B: SqlBackend>(
    db: &B,
    id: SessionId,
) -> Result<Option<SessionSnapshot>, StoreError> {
    let id_arg = || vec![Arg::Id(id.as_uuid())];
    let sets = db
        .fetch_in_snapshot(vec![
            Statement::new(SHARED.session, id_arg(), "loading a session"),
            Statement::new(SHARED.session_steps, id_arg(), "loading plan steps"),
            Statement::new(SHARED.session_executions, id_arg(), "loading executions"),
            Statement::new(SHARED.session_approvals, id_arg(), "loading approvals"),
            Statement::new(SHARED.session_fanouts, id_arg(), "loading fan-outs"),
        ])
        .await?;
    let [sessions, steps, executions, approvals, fanouts] = five(sets)?;
    let Some(row) = sessions.first() else {
        return Ok(None);
    };
    Ok(Some(SessionSnapshot {
        record: record::session(row)?,
        steps: build::<B, _>(&steps, record::step)?,
        executions: build::<B, _>(&executions, record::execution)?,
        approvals: build::<B, _>(&approvals, record::approval)?,
        fanouts: build::<B, _>(&fanouts, record::fanout)?,
    }))
}

/// Several session aggregates in id order, read in one snapshot with five queries.
pub async fn load_sessions<B: SqlBackend>(
    db: &B,
    ids: &[SessionId],
) -> Result<Vec<SessionSnapshot>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = B::SQL;
    let ids_arg = || vec![Arg::Ids(ids.iter().map(|id| id.as_uuid()).collect())];
    let sets = db
        .fetch_in_snapshot(vec![
            Statement::new(sql.sessions_in, ids_arg(), "loading sessions"),
            Statement::new(sql.steps_in, ids_arg(), "loading plan steps"),
            Statement::new(sql.executions_in, ids_arg(), "loading executions"),
            Statement::new(sql.approvals_in, ids_arg(), "loading approvals"),
            Statement::new(sql.fanouts_in, ids_arg(), "loading fan-outs"),
        ])
        .await?;
    let [sessions, steps, executions, approvals, fanouts] = five(sets)?;
    Ok(snapshot::assemble(
        build::<B, _>(&sessions, record::session)?,
        build::<B, _>(&steps, record::step)?,
        build::<B, _>(&executions, record::execution)?,
        build::<B, _>(&approvals, record::approval)?,
        build::<B, _>(&fanouts, record::fanout)?,
    ))
}

/// The row sets of the five statements of a snapshot read.
fn five<R>(sets: Vec<Vec<R>>) -> Result<[Vec<R>; 5], StoreError> {
    let n = sets.len();
    sets.try_into()
        .map_err(|_| StoreError::Backend(format!("a snapshot read of five queries gave {n}")))
}

/// The newest message other than a note of each session, in session id order.
pub async fn last_messages<B: SqlBackend>(
    db: &B,
    ids: &[SessionId],
) -> Result<Vec<Message>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids = Arg::Ids(ids.iter().map(|id| id.as_uuid()).collect());
    let statement = Statement::new(B::SQL.last_messages, vec![ids], "loading last messages");
    build::<B, _>(&db.fetch_all(statement).await?, record::message)
}

/// Deletes a session and everything it owns (the foreign keys cascade).
pub async fn delete_session<B: SqlBackend>(db: &B, id: SessionId) -> Result<(), StoreError> {
    let statement = Statement::new(
        SHARED.delete_session,
        vec![Arg::Id(id.as_uuid())],
        format!("deleting session {id}"),
    );
    if db.execute(statement).await? == 0 {
        return Err(StoreError::NotFound {
            what: format!("session {id}"),
        });
    }
    Ok(())
}

/// Session rows matching a filter, in the order it asks.
pub async fn list_sessions<B: SqlBackend>(
    db: &B,
    filter: &SessionFilter,
) -> Result<Vec<SessionRecord>, StoreError> {
    let goal = match filter.goal {
        GoalFilter::Any => "any",
        GoalFilter::Set => "set",
        GoalFilter::Unset => "unset",
    };
    let args = vec![
        Arg::Statuses(filter.statuses.iter().map(|s| s.as_str()).collect()),
        Arg::OptTime(filter.idle_since),
        Arg::Text(goal.to_owned()),
        Arg::OptId(filter.after.map(|a| a.as_uuid())),
        Arg::Limit(filter.limit),
        Arg::OptTime(filter.before.map(|c| c.created_at)),
        Arg::OptId(filter.before.map(|c| c.id.as_uuid())),
        Arg::OptText(filter.text.clone()),
        Arg::Text(
            match filter.archived {
                ArchiveFilter::Any => "any",
                ArchiveFilter::Listed => "listed",
                ArchiveFilter::Archived => "archived",
            }
            .to_owned(),
        ),
        Arg::OptText(filter.owner.clone()),
    ];
    let lists = B::SQL.list_sessions;
    let sql = match filter.order {
        ListOrder::OldestFirst => lists.oldest_first,
        ListOrder::NewestFirst => lists.newest_first,
    };
    let statement = Statement::new(sql, args, "listing sessions");
    build::<B, _>(&db.fetch_all(statement).await?, record::session)
}

/// A session's transcript.
pub async fn messages<B: SqlBackend>(db: &B, id: SessionId) -> Result<Vec<Message>, StoreError> {
    let args = vec![Arg::Id(id.as_uuid())];
    let rows = db
        .fetch_all(Statement::new(SHARED.messages, args, "loading messages"))
        .await?;
    build::<B, _>(&rows, record::message)
}

/// A session's tool calls.
pub async fn tool_calls<B: SqlBackend>(
    db: &B,
    id: SessionId,
) -> Result<Vec<ToolCallRecord>, StoreError> {
    let args = vec![Arg::Id(id.as_uuid())];
    let rows = db
        .fetch_all(Statement::new(
            SHARED.tool_calls,
            args,
            "loading tool calls",
        ))
        .await?;
    build::<B, _>(&rows, record::tool_call)
}

/// One row by id, built into a record.
async fn one<B: SqlBackend, T>(
    db: &B,
    statement: Statement,
    record: fn(&B::Row) -> Result<T, StoreError>,
) -> Result<Option<T>, StoreError> {
    db.fetch_optional(statement)
        .await?
        .as_ref()
        .map(record)
        .transpose()
}

/// One execution.
pub async fn execution<B: SqlBackend>(
    db: &B,
    id: ExecutionId,
) -> Result<Option<Execution>, StoreError> {
    let args = vec![Arg::Id(id.as_uuid())];
    let statement = Statement::new(SHARED.execution, args, "loading an execution");
    one(db, statement, record::execution).await
}

/// Executions matching a filter, in its order.
pub async fn list_executions<B: SqlBackend>(
    db: &B,
    filter: &ExecutionFilter,
) -> Result<Vec<Execution>, StoreError> {
    let lists = &B::SQL.executions;
    let sql = match (filter.order, filter.before.is_some()) {
        (ListOrder::OldestFirst, false) => lists.oldest_first,
        (ListOrder::OldestFirst, true) => lists.oldest_first_before,
        (ListOrder::NewestFirst, false) => lists.newest_first,
        (ListOrder::NewestFirst, true) => lists.newest_first_before,
    };
    let args = vec![
        Arg::Statuses(filter.statuses.iter().map(|s| s.as_str()).collect()),
        Arg::OptId(filter.session.map(|s| s.as_uuid())),
        Arg::OptTime(filter.started_before),
        Arg::OptTime(filter.created_before),
        Arg::Limit(filter.limit),
        Arg::OptTime(filter.before.map(|c| c.created_at)),
        Arg::OptId(filter.before.map(|c| c.id.as_uuid())),
    ];
    let rows = db
        .fetch_all(Statement::new(sql, args, "listing executions"))
        .await?;
    build::<B, _>(&rows, record::execution)
}

/// One approval.
pub async fn approval<B: SqlBackend>(
    db: &B,
    id: ApprovalId,
) -> Result<Option<Approval>, StoreError> {
    let args = vec![Arg::Id(id.as_uuid())];
    let statement = Statement::new(SHARED.approval, args, "loading an approval");
    one(db, statement, record::approval).await
}

/// Pending approvals, of one session or of all.
pub async fn pending_approvals<B: SqlBackend>(
    db: &B,
    session: Option<SessionId>,
) -> Result<Vec<Approval>, StoreError> {
    let args = vec![Arg::OptId(session.map(|s| s.as_uuid()))];
    let rows = db
        .fetch_all(Statement::new(
            B::SQL.pending_approvals,
            args,
            "listing pending approvals",
        ))
        .await?;
    build::<B, _>(&rows, record::approval)
}

/// Events after a position, of one session or of all.
pub async fn events_after<B: SqlBackend>(
    db: &B,
    session: Option<SessionId>,
    after: i64,
    limit: u32,
) -> Result<Vec<EventRecord>, StoreError> {
    let limit = Arg::Int(i64::from(limit));
    let statement = match session {
        Some(id) => Statement::new(
            SHARED.session_events,
            vec![Arg::Id(id.as_uuid()), Arg::Int(after), limit],
            "reading events",
        ),
        None => Statement::new(
            SHARED.global_events,
            vec![Arg::Int(after), limit],
            "reading events",
        ),
    };
    build::<B, _>(&db.fetch_all(statement).await?, record::event)
}

/// The newest `global_seq`, 0 for an empty log: the end of the primary-key index.
pub async fn newest_global_seq<B: SqlBackend>(db: &B) -> Result<i64, StoreError> {
    let statement = Statement::new(
        SHARED.newest_global_seq,
        Vec::new(),
        "reading the newest event",
    );
    let row = db.fetch_optional(statement).await?;
    row.map_or(Ok(0), |row| row.int("global_seq"))
}

/// A session's newest `seq`, 0 without events: the end of its `(session_id, seq)` range.
pub async fn newest_seq<B: SqlBackend>(db: &B, id: SessionId) -> Result<i64, StoreError> {
    let statement = Statement::new(
        SHARED.newest_seq,
        vec![Arg::Id(id.as_uuid())],
        "reading a session's newest event",
    );
    let row = db.fetch_optional(statement).await?;
    row.map_or(Ok(0), |row| row.int("seq"))
}

/// AUDIT-2: events with their hashes in `(session_id, seq)` order after a cursor.
pub async fn chained_events<B: SqlBackend>(
    db: &B,
    cursor: ChainCursor,
    limit: u32,
) -> Result<Vec<ChainedEvent>, StoreError> {
    let (sql, session, seq) = match cursor {
        ChainCursor::Session { session, after_seq } => {
            (SHARED.chained_session_events, session.as_uuid(), after_seq)
        }
        // The nil uuid sorts first both as text and as `uuid`.
        ChainCursor::All { after } => {
            let (session, seq) = after.map_or((Uuid::nil(), 0), |(s, q)| (s.as_uuid(), q));
            (SHARED.chained_events, session, seq)
        }
    };
    let args = vec![Arg::Id(session), Arg::Int(seq), Arg::Int(i64::from(limit))];
    let rows = db
        .fetch_all(Statement::new(sql, args, "reading chained events"))
        .await?;
    build::<B, _>(&rows, record::chained_event)
}

/// Inserts or replaces an entity by slug.
pub async fn upsert_entity<B: SqlBackend>(db: &B, entity: &Entity) -> Result<(), StoreError> {
    require_attributes_object(&entity.slug, &entity.attributes)?;
    let args = vec![
        Arg::Text(entity.slug.clone()),
        Arg::Text(entity.kind.clone()),
        Arg::Text(entity.name.clone()),
        Arg::Json(entity.attributes.clone()),
        Arg::Time(entity.updated_at),
    ];
    let what = format!("entity {}", entity.slug);
    db.execute(Statement::new(SHARED.upsert_entity, args, what))
        .await?;
    Ok(())
}

/// One entity.
pub async fn entity<B: SqlBackend>(db: &B, slug: &str) -> Result<Option<Entity>, StoreError> {
    let args = vec![Arg::Text(slug.to_owned())];
    let statement = Statement::new(SHARED.entity, args, "loading an entity");
    one(db, statement, record::entity).await
}

/// Entities, optionally of one kind, by slug.
pub async fn list_entities<B: SqlBackend>(
    db: &B,
    kind: Option<&str>,
) -> Result<Vec<Entity>, StoreError> {
    let args = vec![Arg::OptText(kind.map(str::to_owned))];
    let rows = db
        .fetch_all(Statement::new(B::SQL.entities, args, "listing entities"))
        .await?;
    build::<B, _>(&rows, record::entity)
}

/// Records a relationship once; both ends must exist (the foreign keys still guard
/// against an entity deleted in between).
pub async fn create_relationship<B: SqlBackend>(
    db: &B,
    rel: &Relationship,
) -> Result<(), StoreError> {
    let ends = vec![Arg::Text(rel.from.clone()), Arg::Text(rel.to.clone())];
    let found = db
        .fetch_all(Statement::new(
            SHARED.entity_slugs,
            ends,
            "loading entities",
        ))
        .await?
        .iter()
        .map(|row| row.text("slug"))
        .collect::<Result<Vec<_>, _>>()?;
    for slug in [&rel.from, &rel.to] {
        if !found.contains(slug) {
            return Err(StoreError::NotFound {
                what: format!("entity {slug}"),
            });
        }
    }
    let args = vec![
        Arg::Text(rel.from.clone()),
        Arg::Text(rel.kind.clone()),
        Arg::Text(rel.to.clone()),
        Arg::Time(rel.created_at),
    ];
    let what = format!("relationship {} {} {}", rel.from, rel.kind, rel.to);
    db.execute(Statement::new(SHARED.insert_relationship, args, what))
        .await?;
    Ok(())
}

/// Relationships touching an entity.
pub async fn relations<B: SqlBackend>(db: &B, slug: &str) -> Result<Vec<Relationship>, StoreError> {
    let args = vec![Arg::Text(slug.to_owned())];
    let rows = db
        .fetch_all(Statement::new(
            SHARED.relations,
            args,
            "loading relationships",
        ))
        .await?;
    build::<B, _>(&rows, record::relationship)
}

/// Merges an attribute patch into an entity in one write transaction (`null` removes a
/// key); returns the entity as stored.
pub async fn patch_entity<B: SqlBackend>(
    db: &B,
    slug: &str,
    patch: &serde_json::Value,
    now: Timestamp,
) -> Result<Entity, StoreError> {
    let patch = attribute_patch(slug, patch)?;
    let mut tx = db.begin_write().await?;
    let args = vec![Arg::Text(slug.to_owned())];
    let row = tx
        .fetch_optional(Statement::new(
            B::SQL.entity_for_update,
            args,
            "loading an entity",
        ))
        .await?
        .ok_or_else(|| StoreError::NotFound {
            what: format!("entity {slug}"),
        })?;
    let mut entity = record::entity(&row)?;
    merge_attributes(&mut entity.attributes, patch);
    entity.updated_at = now;
    let args = vec![
        Arg::Json(entity.attributes.clone()),
        Arg::Time(now),
        Arg::Text(slug.to_owned()),
    ];
    let what = format!("entity {slug}");
    tx.execute(Statement::new(SHARED.set_entity_attributes, args, what))
        .await?;
    tx.commit().await?;
    Ok(entity)
}

/// WRITEBACK-3: the last audit of each slug, in the order given.
pub async fn last_audited<B: SqlBackend>(
    db: &B,
    slugs: &[String],
) -> Result<Vec<AuditMark>, StoreError> {
    if slugs.is_empty() {
        return Ok(Vec::new());
    }
    let args = vec![Arg::Texts(slugs.to_vec())];
    let rows = db
        .fetch_all(Statement::new(
            B::SQL.last_audited,
            args,
            "reading last audits",
        ))
        .await?;
    build::<B, _>(&rows, record::audit_mark)
}
