-- CONTROL-6: when the operator archived the session (it leaves the board), in Unix
-- milliseconds like every other time column; NULL while it is listed.
ALTER TABLE sessions ADD COLUMN archived_at INTEGER;
