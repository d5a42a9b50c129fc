-- SAFE-4: a plan step's check (a JSON object {host, command, classification, expect_exit,
-- expect_output, result}); NULL for steps that declared none.
ALTER TABLE plan_steps ADD COLUMN step_check jsonb;
-- SAFE-1..4: an execution may also be a check of a step (`check`) or a safety net Nomos ran
-- around a change (`safety`).
ALTER TABLE executions DROP CONSTRAINT executions_kind_check;
ALTER TABLE executions ADD CONSTRAINT executions_kind_check CHECK (kind IN ('command', 'preview', 'check', 'safety'));
