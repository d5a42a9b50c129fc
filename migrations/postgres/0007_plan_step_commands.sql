-- GATE-9: the commands a plan step declares (a JSON array of {host, members, command,
-- classification}); NULL for steps that declared none.
ALTER TABLE plan_steps ADD COLUMN commands jsonb;
