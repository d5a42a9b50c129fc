-- SAFE-4: a plan step's check (a JSON object {host, command, classification, expect_exit,
-- expect_output, result}); NULL for steps that declared none.
ALTER TABLE plan_steps ADD COLUMN step_check TEXT CHECK (step_check IS NULL OR json_valid(step_check));
-- SAFE-1..4: an execution may also be a check of a step (`check`) or a safety net Nomos ran
-- around a change (`safety`). SQLite cannot alter a column's CHECK, so the column is
-- renamed, added again with the wider CHECK, copied, and the old one dropped.
ALTER TABLE executions RENAME COLUMN kind TO kind_before_safety;
ALTER TABLE executions ADD COLUMN kind TEXT NOT NULL DEFAULT 'command' CHECK (kind IN ('command', 'preview', 'check', 'safety'));
UPDATE executions SET kind = kind_before_safety;
ALTER TABLE executions DROP COLUMN kind_before_safety;
