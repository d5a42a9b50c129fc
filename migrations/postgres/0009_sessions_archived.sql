-- CONTROL-6: when the operator archived the session (it leaves the board); NULL while it is
-- listed.
ALTER TABLE sessions ADD COLUMN archived_at timestamptz;
