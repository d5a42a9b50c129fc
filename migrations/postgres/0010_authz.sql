-- AUTHZ-1: the principal that created a session (a token's name or an OIDC subject); NULL
-- for sessions made before owners were recorded or by code that names nobody.
ALTER TABLE sessions ADD COLUMN created_by text CHECK (created_by IS NULL OR length(created_by) > 0);
CREATE INDEX sessions_created_by ON sessions (created_by, id);
-- AUTHZ-3: how many distinct operators an approval needs, and who approved it so far (a
-- JSON array of deciders, in order).
ALTER TABLE approvals ADD COLUMN approvers_required bigint NOT NULL DEFAULT 1
    CHECK (approvers_required >= 1);
ALTER TABLE approvals ADD COLUMN approved_by jsonb;
