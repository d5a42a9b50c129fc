#!/usr/bin/env bash
# The web UI's test command: installs Chromium when missing, installs the locked npm
# packages, type-checks, runs the unit tests, checks that the committed web/dist is what
# web/src builds to, builds the server and runs the end-to-end suite in headless Chromium.
# Ends with one line, `N passed, N failed`; exits non-zero on any failure.
# NOMOS_SERVER_BIN names a prebuilt server binary (then nothing is built);
# NOMOS_SCREENSHOTS_DIR moves the screenshots out of docs/screenshots; NOMOS_E2E_RUNS sets how
# often the end-to-end suite runs (once; twice when CI=true).
set -uo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/nomos-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
unset RUST_BACKTRACE

passed=0
failed=0
work=$(mktemp -d /tmp/nomos-web-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

step() { printf '\n== %s\n' "$*"; }
# A check that is not a test suite counts as one test.
check() {
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    echo "FAILED: $name"
    failed=$((failed + 1))
  fi
}
finish() {
  echo
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}

step "chromium"
if ! command -v chromium >/dev/null; then
  echo "installing chromium from Debian"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/dev/null; }
fi
if ! command -v chromium >/dev/null; then
  echo "FAILED: chromium is not installed and could not be installed"
  failed=$((failed + 1))
  finish
fi
chromium --version 2>/dev/null

step "npm ci"
if ! npm --prefix web ci --no-audit --no-fund; then
  echo "FAILED: npm ci"
  failed=$((failed + 1))
  finish
fi

step "type-check (svelte-check)"
check "type-check" npm --prefix web run --silent check

step "unit tests (vitest)"
(cd web && npx vitest run --reporter=default --reporter=json --outputFile="$work/vitest.json")
unit=$?
if [ -s "$work/vitest.json" ]; then
  read -r unit_passed unit_failed < <(node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(r.numPassedTests, r.numFailedTests + (r.numTotalTestSuites > 0 && r.success === false && r.numFailedTests === 0 ? 1 : 0));
  ' "$work/vitest.json")
  passed=$((passed + unit_passed))
  failed=$((failed + unit_failed))
elif [ "$unit" -ne 0 ]; then
  echo "FAILED: vitest did not run"
  failed=$((failed + 1))
fi

step "web/dist is what web/src builds to"
fresh() {
  NOMOS_WEB_OUT="$work/dist" npm --prefix web run --silent build >"$work/build.log" 2>&1 || { cat "$work/build.log"; return 1; }
  if ! diff -r "$work/dist" web/dist; then
    echo "web/dist is stale: run \`npm --prefix web run build\` and commit web/dist"
    return 1
  fi
  echo "web/dist is up to date"
}
check "dist freshness" fresh

step "build nomos-server"
if [ -n "${NOMOS_SERVER_BIN:-}" ]; then
  echo "using NOMOS_SERVER_BIN=$NOMOS_SERVER_BIN"
elif ! cargo build -q -p nomos-server; then
  echo "FAILED: cargo build -p nomos-server"
  failed=$((failed + 1))
  finish
fi

# In CI the suite runs twice: a case that passes only now and then fails the run.
runs=${NOMOS_E2E_RUNS:-1}
if [ "${CI:-}" = "true" ] && [ -z "${NOMOS_E2E_RUNS:-}" ]; then runs=2; fi
for run in $(seq 1 "$runs"); do
  step "end-to-end tests, run $run of $runs (headless chromium, real server, scripted model)"
  (cd web && node --test --test-concurrency=1 \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$work/e2e-$run.tap" e2e/)
  e2e=$?
  e2e_passed=$(grep -cE '^ok ' "$work/e2e-$run.tap" 2>/dev/null || true)
  e2e_failed=$(grep -cE '^not ok ' "$work/e2e-$run.tap" 2>/dev/null || true)
  passed=$((passed + ${e2e_passed:-0}))
  failed=$((failed + ${e2e_failed:-0}))
  if [ "$e2e" -ne 0 ] && [ "${e2e_failed:-0}" -eq 0 ]; then
    echo "FAILED: the end-to-end suite did not run to the end (run $run)"
    failed=$((failed + 1))
  fi
done
echo "screenshots: docs/screenshots/"
finish
