-- Nomos schema for SQLite, migration 1.
-- Timestamps are INTEGER milliseconds since the Unix epoch (UTC).
-- Ids are lowercase hyphenated UUID text. Enum-like columns are TEXT with CHECK lists.

CREATE TABLE sessions (
    id               TEXT    PRIMARY KEY NOT NULL,
    status           TEXT    NOT NULL CHECK (status IN ('active', 'planning', 'executing', 'awaiting_input', 'done', 'failed', 'partial')),
    goal             TEXT,
    summary          TEXT,
    board_outcome    TEXT    CHECK (board_outcome IN ('success', 'failure', 'partial')),
    plan_generation  INTEGER NOT NULL CHECK (plan_generation >= 0),
    assent           TEXT    CHECK (assent IS NULL OR json_valid(assent)),
    knowledge        TEXT    NOT NULL CHECK (knowledge IN ('untouched', 'discovered', 'written_back')),
    nudged_at        INTEGER,
    n_messages       INTEGER NOT NULL CHECK (n_messages >= 0),
    created_at       INTEGER NOT NULL,
    last_activity_at INTEGER NOT NULL,
    version          INTEGER NOT NULL CHECK (version >= 1)
);
-- SWEEP-1..3: sessions by status and idle time.
CREATE INDEX sessions_status_last_activity ON sessions (status, last_activity_at);

CREATE TABLE plan_steps (
    id          TEXT    PRIMARY KEY NOT NULL,
    session_id  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    generation  INTEGER NOT NULL CHECK (generation >= 1),
    seq         INTEGER NOT NULL CHECK (seq >= 1),
    title       TEXT    NOT NULL,
    detail      TEXT,
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed', 'skipped', 'replaced')),
    note        TEXT,
    started_at  INTEGER,
    finished_at INTEGER,
    updated_at  INTEGER NOT NULL,
    -- PLAN-1
    UNIQUE (session_id, generation, seq)
);

CREATE TABLE executions (
    id           TEXT    PRIMARY KEY NOT NULL,
    session_id   TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    tool_call_id TEXT,
    host         TEXT    NOT NULL,
    command      TEXT    NOT NULL,
    class        TEXT    NOT NULL CHECK (class IN ('read_only', 'config_mutation', 'destructive')),
    reason       TEXT    NOT NULL,
    generation   INTEGER NOT NULL CHECK (generation >= 0),
    step_seq     INTEGER CHECK (step_seq >= 1),
    status       TEXT    NOT NULL CHECK (status IN ('pending_approval', 'approved', 'running', 'completed', 'failed', 'cancelled')),
    created_at   INTEGER NOT NULL,
    started_at   INTEGER,
    finished_at  INTEGER,
    output       TEXT    CHECK (output IS NULL OR json_valid(output)),
    error        TEXT
);
-- EXEC-3: running executions started before a time; non-terminal ones created before a time.
CREATE INDEX executions_status_started_at ON executions (status, started_at);
CREATE INDEX executions_status_created_at ON executions (status, created_at);
CREATE INDEX executions_session_created_at ON executions (session_id, created_at, id);

CREATE TABLE approvals (
    id           TEXT    PRIMARY KEY NOT NULL,
    session_id   TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    execution_id TEXT    NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    binding      TEXT    NOT NULL CHECK (json_valid(binding)),
    binding_hash TEXT    NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
    requested_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    decided_at   INTEGER,
    decided_by   TEXT
);
CREATE INDEX approvals_status_requested_at ON approvals (status, requested_at);
CREATE INDEX approvals_session_requested_at ON approvals (session_id, requested_at, id);

CREATE TABLE messages (
    position   INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT    NOT NULL UNIQUE,
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role       TEXT    NOT NULL CHECK (role IN ('operator', 'assistant', 'note')),
    content    TEXT    NOT NULL,
    tool_calls TEXT    NOT NULL CHECK (json_valid(tool_calls)),
    created_at INTEGER NOT NULL
);
CREATE INDEX messages_session_position ON messages (session_id, position);

CREATE TABLE tool_calls (
    position    INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    call_id     TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    arguments   TEXT    NOT NULL,
    result      TEXT    NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('ok', 'refused', 'error', 'interrupted')),
    started_at  INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
    -- TURN-4: each tool call is persisted exactly once.
    UNIQUE (session_id, call_id)
);
CREATE INDEX tool_calls_session_position ON tool_calls (session_id, position);

CREATE TABLE events (
    global_seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    at         INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    payload    TEXT    NOT NULL CHECK (json_valid(payload)),
    UNIQUE (session_id, seq)
);

CREATE TABLE entities (
    slug       TEXT    PRIMARY KEY NOT NULL,
    kind       TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    attributes TEXT    NOT NULL CHECK (json_valid(attributes) AND json_type(attributes) = 'object'),
    updated_at INTEGER NOT NULL
);
CREATE INDEX entities_kind_slug ON entities (kind, slug);

CREATE TABLE relationships (
    from_slug  TEXT    NOT NULL REFERENCES entities (slug) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    to_slug    TEXT    NOT NULL REFERENCES entities (slug) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (from_slug, kind, to_slug)
);
CREATE INDEX relationships_to_slug ON relationships (to_slug);

CREATE TABLE knowledge (
    key        TEXT    PRIMARY KEY NOT NULL,
    title      TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE knowledge_tags (
    key      TEXT    NOT NULL REFERENCES knowledge (key) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    tag      TEXT    NOT NULL,
    PRIMARY KEY (key, position)
);
CREATE INDEX knowledge_tags_tag ON knowledge_tags (tag, key);

CREATE TABLE knowledge_about (
    key      TEXT    NOT NULL REFERENCES knowledge (key) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    slug     TEXT    NOT NULL,
    PRIMARY KEY (key, position)
);
-- WRITEBACK-3: entries about a slug.
CREATE INDEX knowledge_about_slug ON knowledge_about (slug, key);

-- Full-text index over title, content and tags, maintained by the adapter in the
-- same transaction as the knowledge row.
CREATE VIRTUAL TABLE knowledge_fts USING fts5 (
    key UNINDEXED,
    title,
    content,
    tags,
    tokenize = 'unicode61'
);
