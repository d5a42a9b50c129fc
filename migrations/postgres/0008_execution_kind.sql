-- GATE-10: an execution is a command the model asked for, or a read-only preview Nomos ran
-- before showing a request.
ALTER TABLE executions ADD COLUMN kind text NOT NULL DEFAULT 'command' CHECK (kind IN ('command', 'preview'));
