-- SAFE-3: a change run with its revert armed is `armed` until the operator's Confirm, and
-- `reverted` when the revert fired. SQLite cannot alter a column's CHECK, so the column is
-- renamed, added again with the wider CHECK, copied, and the old one dropped (with the
-- indexes that name it, made again after).
DROP INDEX executions_status_started_at;
DROP INDEX executions_status_created_at;
ALTER TABLE executions RENAME COLUMN status TO status_before_armed;
ALTER TABLE executions ADD COLUMN status TEXT NOT NULL DEFAULT 'pending_approval' CHECK (status IN ('pending_approval', 'approved', 'running', 'completed', 'failed', 'cancelled', 'armed', 'reverted'));
UPDATE executions SET status = status_before_armed;
ALTER TABLE executions DROP COLUMN status_before_armed;
CREATE INDEX executions_status_started_at ON executions (status, started_at);
CREATE INDEX executions_status_created_at ON executions (status, created_at);
