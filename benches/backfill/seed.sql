-- Seeds :n sessions of eight kinds (one in eight of each) into a migrated Nomos
-- PostgreSQL database, rows shaped as the store writes them (migrations/postgres):
--   0 trivial, never completed        1 trivial, no answer     2 idle goal, step running
--   3 awaiting input                  4 awaiting approval      5 execution left running
--   6 terminal, leftover step + execution running              7 healthy, done
-- All went idle ten days (plus up to a day) ago. Usage: psql -v n=100000 -f seed.sql
\set ON_ERROR_STOP on
BEGIN;
CREATE TEMP TABLE seed ON COMMIT DROP AS
SELECT i, gen_random_uuid() AS id, i % 8 AS kind,
       now() - interval '10 days' - make_interval(secs => i % 86400) AS t0
FROM generate_series(1, :n) AS i;

INSERT INTO sessions (id, status, goal, summary, board_outcome, plan_generation, assent,
                      knowledge, nudged_at, n_messages, created_at, last_activity_at, version)
SELECT id,
       (ARRAY['active', 'active', 'executing', 'awaiting_input', 'executing', 'executing',
              'partial', 'done'])[kind + 1],
       CASE WHEN kind IN (0, 1, 7) THEN NULL ELSE 'upgrade packages on hubris' END,
       CASE kind WHEN 6 THEN 'nginx restart hung' WHEN 7 THEN 'Linux 6.1.0-18-amd64.' END,
       CASE kind WHEN 6 THEN 'partial' WHEN 7 THEN 'success' END,
       CASE WHEN kind IN (2, 4, 5) THEN 1 WHEN kind = 6 THEN 2 ELSE 0 END,
       NULL,
       CASE WHEN kind IN (2, 4, 5, 6) THEN 'discovered' ELSE 'untouched' END,
       NULL,
       CASE WHEN kind IN (0, 7) THEN 2 ELSE 1 END,
       t0, t0 + interval '1 minute', 1
FROM seed;

INSERT INTO messages (id, session_id, role, content, tool_calls, created_at)
SELECT gen_random_uuid(), id, 'operator', 'what is the uptime of hubris?', '[]'::jsonb,
       t0 + interval '1 second'
FROM seed;
INSERT INTO messages (id, session_id, role, content, tool_calls, created_at)
SELECT gen_random_uuid(), id, 'assistant',
       'hubris has been up for 41 days, 3 hours and 12 minutes; load average is 0.42, 0.38, '
       || '0.35 and the root filesystem is 63% full, which leaves about 37 GiB free.',
       '[]'::jsonb, t0 + interval '2 seconds'
FROM seed WHERE kind IN (0, 7);

-- Plans: generation 1 with step 1 running and step 2 pending (kinds 2, 4, 5, 6); kind 6
-- also has a closed generation 2 (a revision left generation 1's step 1 running).
INSERT INTO plan_steps (id, session_id, generation, seq, title, detail, status, note,
                        started_at, finished_at, updated_at)
SELECT gen_random_uuid(), id, 1, s.seq, s.title, NULL,
       CASE WHEN s.seq = 1 THEN 'running' WHEN kind = 6 THEN 'replaced' ELSE 'pending' END,
       NULL,
       CASE WHEN s.seq = 1 THEN t0 + interval '20 seconds' END,
       CASE WHEN s.seq = 2 AND kind = 6 THEN t0 + interval '50 seconds' END,
       t0 + interval '20 seconds'
FROM seed, (VALUES (1, 'inspect'), (2, 'apply the change')) AS s(seq, title)
WHERE kind IN (2, 4, 5, 6);
INSERT INTO plan_steps (id, session_id, generation, seq, title, detail, status, note,
                        started_at, finished_at, updated_at)
SELECT gen_random_uuid(), id, 2, s.seq, s.title, NULL, 'skipped', 'closed at task completion',
       t0 + interval '55 seconds', t0 + interval '55 seconds', t0 + interval '55 seconds'
FROM seed, (VALUES (1, 'check nginx config'), (2, 'Write back what was learned')) AS s(seq, title)
WHERE kind = 6;

INSERT INTO executions (id, session_id, tool_call_id, host, command, class, reason, generation,
                        step_seq, status, created_at, started_at, finished_at, output, error)
SELECT gen_random_uuid(), id, 'call_3', 'hubris',
       CASE kind WHEN 2 THEN 'df -h /' WHEN 4 THEN 'rm -rf /var/log/old'
                 ELSE 'apt-get upgrade -y' END,
       CASE kind WHEN 2 THEN 'read_only' WHEN 4 THEN 'destructive' ELSE 'config_mutation' END,
       'seeded', 1, 1,
       CASE kind WHEN 2 THEN 'completed' WHEN 4 THEN 'pending_approval' ELSE 'running' END,
       t0 + interval '30 seconds',
       CASE WHEN kind <> 4 THEN t0 + interval '31 seconds' END,
       CASE WHEN kind = 2 THEN t0 + interval '32 seconds' END,
       CASE WHEN kind = 2 THEN '{"exit_code":0,"signal":null,"stdout":"ok","stderr":"","stdout_cut":0,"stderr_cut":0,"duration_ms":40}'::jsonb END,
       NULL
FROM seed WHERE kind IN (2, 4, 5, 6);

INSERT INTO approvals (id, session_id, execution_id, binding, binding_hash, status,
                       requested_at, expires_at, decided_at, decided_by)
SELECT gen_random_uuid(), e.session_id, e.id,
       '{"command":"rm -rf /var/log/old","host":"hubris","class":"destructive","generation":1}'::jsonb,
       md5(e.id::text), 'pending', e.created_at, e.created_at + interval '30 minutes', NULL, NULL
FROM executions e WHERE e.status = 'pending_approval';

INSERT INTO events (session_id, seq, at, kind, payload)
SELECT id, 1, t0, 'session.created', '{"type":"session.created"}'::jsonb FROM seed;
COMMIT;
ANALYZE;
