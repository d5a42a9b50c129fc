#!/usr/bin/env bash
# Backfill bench on PostgreSQL. For each size (default: 100000), it seeds that many
# sessions of eight kinds (half of them need a repair) with generate_series, runs the
# release `nomos-backfill --apply` under /usr/bin/time -v and reports its wall time,
# rate and peak memory, next to the time of a set-based UPDATE over the same rows on a
# copy of the seeded database.
#
#   benches/backfill/run.sh                 # 100k sessions
#   benches/backfill/run.sh 100000 1000000  # 100k, then 1M
#
# Each apply is bounded by BENCH_TIMEOUT seconds (default 1800). BENCH_PROFILE=debug
# measures the debug build instead of the release one (quicker to build, slower to run).
set -euo pipefail
cd "$(dirname "$0")/../.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000)
timeout_secs=${BENCH_TIMEOUT:-1800}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/nomos-target}
profile=${BENCH_PROFILE:-release}
if [ "$profile" = release ]; then
    cargo build --release -q -p nomos-backfill
else
    cargo build -q -p nomos-backfill
fi
bin=$CARGO_TARGET_DIR/$profile/nomos-backfill

. scripts/pg-up.sh >/dev/null
trap '. scripts/pg-down.sh >/dev/null' EXIT
work=$(mktemp -d /tmp/nomos-backfill-bench.XXXXXX)
export PGCONNECT_TIMEOUT=10 PGOPTIONS="--client-min-messages=warning"

now_s() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

printf '%-9s %-9s %-10s %-11s %-9s %-10s %-10s\n' sessions seed_s apply_s sessions/s peak_MiB changed update_s
for n in "${sizes[@]}"; do
    db=bench_$n
    url="postgres://postgres@127.0.0.1:$PGPORT/$db"
    psql "$NOMOS_TEST_PG_URL" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
    "$bin" --database-url "$url" --migrate --json >/dev/null
    t0=$(now_s)
    psql "$url" -q -v n="$n" -f benches/backfill/seed.sql >/dev/null
    t1=$(now_s)
    psql "$NOMOS_TEST_PG_URL" -qc "DROP DATABASE IF EXISTS ${db}_update" \
        -c "CREATE DATABASE ${db}_update TEMPLATE $db"
    t2=$(now_s)
    /usr/bin/time -v -o "$work/time-$n.txt" timeout "$timeout_secs" \
        "$bin" --database-url "$url" --apply --json >"$work/report-$n.json"
    t3=$(now_s)
    u0=$(now_s)
    psql "postgres://postgres@127.0.0.1:$PGPORT/${db}_update" -q \
        -f benches/backfill/set_based_update.sql >/dev/null
    u1=$(now_s)
    peak_kib=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$work/time-$n.txt")
    changed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sessions_changed"])' "$work/report-$n.json")
    apply_s=$(elapsed "$t2" "$t3")
    rate=$(awk -v n="$n" -v s="$apply_s" 'BEGIN { printf "%.0f", n / s }')
    printf '%-9s %-9s %-10s %-11s %-9s %-10s %-10s\n' "$n" "$(elapsed "$t0" "$t1")" "$apply_s" \
        "$rate" "$((peak_kib / 1024))" "$changed" "$(elapsed "$u0" "$u1")"
    # Idempotence at scale: a second run finds nothing to change.
    again=$("$bin" --database-url "$url" --apply --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["sessions_changed"])')
    [ "$again" = 0 ] || { echo "second run changed $again sessions" >&2; exit 1; }
    psql "$NOMOS_TEST_PG_URL" -qc "DROP DATABASE $db" -c "DROP DATABASE ${db}_update"
done
echo "reports: $work"
