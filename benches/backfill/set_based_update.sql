-- The set-based comparison: roughly the same session and execution rows the backfill
-- repairs, changed by two UPDATEs in one transaction. It writes no events, closes no
-- plan steps, keeps no per-session version check and puts no answer in a summary,
-- which is why the backfill does not work this way; it shows the floor.
\set ON_ERROR_STOP on
BEGIN;
UPDATE executions SET status = 'failed', error = 'execution timed out', finished_at = now()
WHERE status = 'running' AND started_at < now() - interval '10 minutes'
  AND session_id IN (SELECT id FROM sessions WHERE last_activity_at < now() - interval '1 day');
UPDATE sessions s
SET status = CASE WHEN s.goal IS NULL THEN 'done' ELSE 'partial' END,
    board_outcome = CASE WHEN s.goal IS NULL THEN 'success' ELSE 'partial' END,
    summary = 'closed by backfill', version = s.version + 1, last_activity_at = now()
WHERE s.status IN ('active', 'planning', 'executing')
  AND s.last_activity_at < now() - interval '1 day'
  AND NOT EXISTS (SELECT 1 FROM approvals a WHERE a.session_id = s.id AND a.status = 'pending')
  AND (s.goal IS NOT NULL
       OR EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.role = 'assistant'));
COMMIT;
