-- FLEET-1: one `run` on a group. The fan-out is written once, with the executions it
-- links (one per host); each host's state is its execution's. `body` is the record as
-- JSON (group, command, class, hosts with their execution ids, limits).
CREATE TABLE fanouts (
    id         TEXT    PRIMARY KEY NOT NULL,
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    body       TEXT    NOT NULL CHECK (json_valid(body))
);
CREATE INDEX fanouts_session_created_at ON fanouts (session_id, created_at, id);
