#!/usr/bin/env bash
# Runs the session property tests for 1,000,000 cases (or the count given as $1) in a
# release build, and prints how long they took and how many distinct dangerous sequences
# (cases that tried a non-read-only command) they generated. CI keeps the default count.
set -uo pipefail
cd "$(dirname "$0")/.."
cases="${1:-1000000}"
cargo test --release -p nomos-core --lib --no-run || exit 1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
PROPTEST_CASES="$cases" NOMOS_PROPS_REPORT=1 cargo test --release -p nomos-core --lib \
  session::tests::properties -- --nocapture >"$log" 2>&1
status=$?
end=$(date +%s)
grep -E 'session properties|test result|panicked|minimal failing|FAILED' "$log"
[ "$status" -eq 0 ] || tail -n 60 "$log"
echo "session properties, $cases cases, release build: $((end - start)) s"
exit "$status"
