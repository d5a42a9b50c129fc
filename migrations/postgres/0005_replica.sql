-- REPLICA-2: the server processes sharing this database, each with a heartbeat (the
-- database's clock), and the owner of each execution and of each session's last turn.
CREATE TABLE instances (
    id           uuid        PRIMARY KEY,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    host         text        NOT NULL,
    pid          integer     NOT NULL
);

-- The instance a connection works for: set per connection (`nomos.instance`) by a server
-- that shares the database; NULL for tools and for a server alone.
CREATE FUNCTION nomos_instance() RETURNS uuid LANGUAGE sql STABLE AS
$$ SELECT NULLIF(current_setting('nomos.instance', true), '')::uuid $$;

-- The process that dispatched an execution owns it until it ends.
ALTER TABLE executions ADD COLUMN owner uuid;
CREATE FUNCTION nomos_execution_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.status IS DISTINCT FROM OLD.status THEN
        NEW.owner := COALESCE(nomos_instance(), NEW.owner);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER executions_owner BEFORE INSERT OR UPDATE ON executions
    FOR EACH ROW EXECUTE FUNCTION nomos_execution_owner();

-- The process that wrote a session last (it held the session's lease) owns its open turn.
ALTER TABLE sessions ADD COLUMN owner uuid;
CREATE FUNCTION nomos_session_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.owner := COALESCE(nomos_instance(), NEW.owner);
    RETURN NEW;
END $$;
CREATE TRIGGER sessions_owner BEFORE INSERT OR UPDATE ON sessions
    FOR EACH ROW EXECUTE FUNCTION nomos_session_owner();

-- REPLICA-3: the process that committed an event, and one notification per committing
-- statement (delivered at commit; PostgreSQL folds equal notifications of a transaction).
ALTER TABLE events ADD COLUMN origin uuid DEFAULT nomos_instance();
CREATE FUNCTION nomos_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('nomos_events', COALESCE(nomos_instance()::text, ''));
    RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION nomos_events_notify();
