-- Nomos schema for PostgreSQL, migration 1.
-- Enum-like columns are TEXT with CHECK lists; complex values are JSONB.

CREATE TABLE sessions (
    id               uuid        PRIMARY KEY,
    status           text        NOT NULL CHECK (status IN ('active', 'planning', 'executing', 'awaiting_input', 'done', 'failed', 'partial')),
    goal             text,
    summary          text,
    board_outcome    text        CHECK (board_outcome IN ('success', 'failure', 'partial')),
    plan_generation  bigint      NOT NULL CHECK (plan_generation >= 0),
    assent           jsonb,
    knowledge        text        NOT NULL CHECK (knowledge IN ('untouched', 'discovered', 'written_back')),
    nudged_at        timestamptz,
    n_messages       bigint      NOT NULL CHECK (n_messages >= 0),
    created_at       timestamptz NOT NULL,
    last_activity_at timestamptz NOT NULL,
    version          bigint      NOT NULL CHECK (version >= 1)
);
-- SWEEP-1..3: sessions by status and idle time.
CREATE INDEX sessions_status_last_activity ON sessions (status, last_activity_at);

CREATE TABLE plan_steps (
    id          uuid        PRIMARY KEY,
    session_id  uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    generation  bigint      NOT NULL CHECK (generation >= 1),
    seq         bigint      NOT NULL CHECK (seq >= 1),
    title       text        NOT NULL,
    detail      text,
    status      text        NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed', 'skipped', 'replaced')),
    note        text,
    started_at  timestamptz,
    finished_at timestamptz,
    updated_at  timestamptz NOT NULL,
    -- PLAN-1
    CONSTRAINT plan_steps_session_generation_seq_key UNIQUE (session_id, generation, seq)
);

CREATE TABLE executions (
    id           uuid        PRIMARY KEY,
    session_id   uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    tool_call_id text,
    host         text        NOT NULL,
    command      text        NOT NULL,
    class        text        NOT NULL CHECK (class IN ('read_only', 'config_mutation', 'destructive')),
    reason       text        NOT NULL,
    generation   bigint      NOT NULL CHECK (generation >= 0),
    step_seq     bigint      CHECK (step_seq >= 1),
    status       text        NOT NULL CHECK (status IN ('pending_approval', 'approved', 'running', 'completed', 'failed', 'cancelled')),
    created_at   timestamptz NOT NULL,
    started_at   timestamptz,
    finished_at  timestamptz,
    output       jsonb,
    error        text
);
-- EXEC-3: running executions started before a time; non-terminal ones created before a time.
CREATE INDEX executions_status_started_at ON executions (status, started_at);
CREATE INDEX executions_status_created_at ON executions (status, created_at);
CREATE INDEX executions_session_created_at ON executions (session_id, created_at, id);

CREATE TABLE approvals (
    id           uuid        PRIMARY KEY,
    session_id   uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    execution_id uuid        NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    binding      jsonb       NOT NULL,
    binding_hash text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
    requested_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    decided_at   timestamptz,
    decided_by   text
);
CREATE INDEX approvals_status_requested_at ON approvals (status, requested_at);
CREATE INDEX approvals_session_requested_at ON approvals (session_id, requested_at, id);

CREATE TABLE messages (
    position   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         uuid        NOT NULL UNIQUE,
    session_id uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role       text        NOT NULL CHECK (role IN ('operator', 'assistant', 'note')),
    content    text        NOT NULL,
    tool_calls jsonb       NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX messages_session_position ON messages (session_id, position);

CREATE TABLE tool_calls (
    position    bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id  uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    call_id     text        NOT NULL,
    name        text        NOT NULL,
    arguments   text        NOT NULL,
    result      text        NOT NULL,
    outcome     text        NOT NULL CHECK (outcome IN ('ok', 'refused', 'error', 'interrupted')),
    started_at  timestamptz NOT NULL,
    duration_ms bigint      NOT NULL CHECK (duration_ms >= 0),
    -- TURN-4: each tool call is persisted exactly once.
    CONSTRAINT tool_calls_session_call_id_key UNIQUE (session_id, call_id)
);
CREATE INDEX tool_calls_session_position ON tool_calls (session_id, position);

CREATE TABLE events (
    global_seq bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        bigint      NOT NULL CHECK (seq >= 1),
    at         timestamptz NOT NULL,
    kind       text        NOT NULL,
    payload    jsonb       NOT NULL,
    CONSTRAINT events_session_seq_key UNIQUE (session_id, seq)
);

CREATE TABLE entities (
    slug       text        PRIMARY KEY,
    kind       text        NOT NULL,
    name       text        NOT NULL,
    attributes jsonb       NOT NULL CHECK (jsonb_typeof(attributes) = 'object'),
    updated_at timestamptz NOT NULL
);
CREATE INDEX entities_kind_slug ON entities (kind, slug);

CREATE TABLE relationships (
    from_slug  text        NOT NULL REFERENCES entities (slug) ON DELETE CASCADE,
    kind       text        NOT NULL,
    to_slug    text        NOT NULL REFERENCES entities (slug) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (from_slug, kind, to_slug)
);
CREATE INDEX relationships_to_slug ON relationships (to_slug);

CREATE TABLE knowledge (
    key        text        PRIMARY KEY,
    title      text        NOT NULL,
    content    text        NOT NULL,
    tags       text[]      NOT NULL,
    about      text[]      NOT NULL,
    -- Written by the adapter from title, content and tags in the same statement.
    search     tsvector    NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX knowledge_search ON knowledge USING gin (search);
-- WRITEBACK-3: entries about a slug, by tag.
CREATE INDEX knowledge_about ON knowledge USING gin (about);
CREATE INDEX knowledge_tags ON knowledge USING gin (tags);
