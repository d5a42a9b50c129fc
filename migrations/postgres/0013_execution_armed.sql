-- SAFE-3: a change run with its revert armed is `armed` until the operator's Confirm, and
-- `reverted` when the revert fired.
ALTER TABLE executions DROP CONSTRAINT executions_status_check;
ALTER TABLE executions ADD CONSTRAINT executions_status_check CHECK (status IN ('pending_approval', 'approved', 'running', 'completed', 'failed', 'cancelled', 'armed', 'reverted'));
