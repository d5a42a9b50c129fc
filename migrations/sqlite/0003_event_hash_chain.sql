-- AUDIT-2: each event row stores SHA-256(prev_hash || canonical JSON of the event), per
-- session, as 64 lowercase hex digits (nomos_core::chain). Rows written before this
-- migration are hashed in order by the store when it opens (SQL cannot build the
-- canonical JSON), so the column stays nullable.
ALTER TABLE events ADD COLUMN hash TEXT;
-- The rows the store still has to hash at open.
CREATE INDEX events_unhashed ON events (session_id) WHERE hash IS NULL;
