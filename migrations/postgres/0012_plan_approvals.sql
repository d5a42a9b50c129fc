-- AUTHZ-3: how many distinct operators the current plan needs and who approved it so far
-- (generation, required, the digest approved and the deciders, in order); NULL when the
-- plan needs one.
ALTER TABLE sessions ADD COLUMN plan_approvals jsonb;
