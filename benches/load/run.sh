#!/usr/bin/env bash
# Runs the load check against SQLite, then against a throwaway PostgreSQL on loopback.
# Build first: cargo build --release -p nomos-server -p nomos-benches --features nomos-server/postgres --bin nomos-server --bin nomos-load
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${CARGO_TARGET_DIR:-$here/../../target}
load="$target/release/nomos-load"
[ -x "$load" ] || { echo "run.sh: $load not found; build it first (see the top of this file)" >&2; exit 1; }
# 1000 subscribers hold 1000 connections on each side.
ulimit -n "$(ulimit -Hn)"
"$load" "$@"

PGBIN=/usr/lib/postgresql/15/bin
PGPORT=${PGPORT:-55439}
PGTMP=$(mktemp -d /tmp/nomos-load-pg.XXXXXX)
chown postgres:postgres "$PGTMP"   # initdb refuses to run as root
trap 'runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGTMP/data" -m fast -w stop >/dev/null 2>&1 || true; rm -rf "$PGTMP"' EXIT
runuser -u postgres -- "$PGBIN/initdb" -D "$PGTMP/data" -U postgres --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >"$PGTMP/initdb.log"
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGTMP/data" -l "$PGTMP/server.log" -w -t 30 \
  -o "-p $PGPORT -k $PGTMP -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" start >/dev/null
runuser -u postgres -- "$PGBIN/createdb" -h "$PGTMP" -p "$PGPORT" nomos
# One server, then two on the same database (REPLICA), in one run.
"$load" --database-url "postgres://postgres@127.0.0.1:$PGPORT/nomos" --processes 2 --compare-processes "$@"
