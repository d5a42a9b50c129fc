-- MCP-2: the outside client (an MCP client's `name version`) that drives a session in place
-- of Nomos's model; NULL for the sessions Nomos's model drives. Set at creation only.
ALTER TABLE sessions ADD COLUMN client TEXT CHECK (client IS NULL OR length(client) > 0);
