#!/usr/bin/env bash
# Baseline for the store bench: pgbench against the same kind of throwaway server the
# store tests use, then (with --store) the criterion store_commit bench against the
# very same server, so both numbers come from one run.
#
#   benches/pgbench.sh            # pgbench -S (select-only) and -N (simple update)
#   benches/pgbench.sh --store    # ... and then cargo bench --bench store_commit
#
# Uses $NOMOS_TEST_PG_URL when set; otherwise starts a server with scripts/pg-up.sh
# and stops it on exit. Knobs: DURATION (seconds, default 10), CLIENTS (4), JOBS (2),
# SCALE (10).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
duration=${DURATION:-10}
clients=${CLIENTS:-4}
jobs=${JOBS:-2}
scale=${SCALE:-10}
run_store=no
[ "${1:-}" = "--store" ] && run_store=yes

started=no
if [ -z "${NOMOS_TEST_PG_URL:-}" ]; then
    # shellcheck source=../scripts/pg-up.sh
    . "$here/scripts/pg-up.sh"
    started=yes
    trap '. "$here/scripts/pg-down.sh" >/dev/null' EXIT
fi

admin=$NOMOS_TEST_PG_URL
db=nomos_pgbench_$$
base=${admin%/*}
url="$base/$db"
psql -q "$admin" -c "CREATE DATABASE $db" >/dev/null
cleanup_db() { psql -q "$admin" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true; }
if [ "$started" = yes ]; then
    trap 'cleanup_db; . "$here/scripts/pg-down.sh" >/dev/null' EXIT
else
    trap cleanup_db EXIT
fi

echo "pgbench: init scale $scale" >&2
pgbench -q -i -s "$scale" "$url" >/dev/null 2>&1

tps() {
    pgbench "$@" -T "$duration" -c "$clients" -j "$jobs" "$url" 2>/dev/null \
        | awk '/^tps = / { print $3; exit }'
}
select_tps=$(tps -S)
update_tps=$(tps -N)
echo "pgbench select-only (-S, ${clients} clients, ${duration}s): ${select_tps} tps"
echo "pgbench simple-update (-N, ${clients} clients, ${duration}s): ${update_tps} tps"

if [ "$run_store" = yes ]; then
    export NOMOS_TEST_PG_URL
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/nomos-target}
    (cd "$here" && cargo bench -q -p nomos-benches --bench store_commit 2>/dev/null) \
        | awk '/^store_commit\// { name = $1 } /thrpt:/ { print name ": " $0 }'
fi
