-- REPLICA-2: the same columns as the PostgreSQL schema. One process owns a SQLite file, so
-- it keeps its in-process session lock and nothing here is written yet: a NULL owner is
-- nobody's, which is what every row of a file is at start-up.
CREATE TABLE instances (
    id           TEXT    PRIMARY KEY,
    started_at   TEXT    NOT NULL,
    heartbeat_at TEXT    NOT NULL,
    host         TEXT    NOT NULL,
    pid          INTEGER NOT NULL
);
ALTER TABLE executions ADD COLUMN owner TEXT;
ALTER TABLE sessions ADD COLUMN owner TEXT;
ALTER TABLE events ADD COLUMN origin TEXT;
