-- The executions list (`GET /api/executions`), oldest or newest first, in keyset pages
-- by (created_at, id): an index walk that stops at the page's limit, whatever the filters.
CREATE INDEX executions_created_at_id ON executions (created_at, id);
