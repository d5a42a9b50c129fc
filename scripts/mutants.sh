#!/usr/bin/env bash
# Mutation runs on the gate code (not in CI: about 30 minutes for the session files and
# an hour for the assent reader on 2 cores). Each run builds a scratch copy of the tree,
# mutates one place at a time and runs the core's tests against it; the summary lists
# what was caught, missed, unviable or timed out. Needs `cargo install cargo-mutants`.
#
#   scripts/mutants.sh session   # nomos-core/src/session/{run,approval,plan,lifecycle}.rs
#   scripts/mutants.sh assent    # nomos-core/src/assent.rs (GATE-4, the assent reader)
#   OUT=/tmp/mutants scripts/mutants.sh assent
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-mutants >/dev/null || { echo "cargo-mutants is not installed: cargo install cargo-mutants" >&2; exit 2; }
what=${1:-}
case "$what" in
  session)
    files=(-f 'crates/nomos-core/src/session/run.rs' -f 'crates/nomos-core/src/session/approval.rs'
           -f 'crates/nomos-core/src/session/plan.rs' -f 'crates/nomos-core/src/session/lifecycle.rs') ;;
  assent)
    files=(-f 'crates/nomos-core/src/assent.rs') ;;
  *)
    echo "usage: scripts/mutants.sh session|assent" >&2; exit 2 ;;
esac
out=${OUT:-${TMPDIR:-/tmp}/nomos-mutants-$what}
mkdir -p "$out"
export PROPTEST_CASES=${PROPTEST_CASES:-64}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$out/target}
cargo mutants -j 1 -p nomos-core --test-package nomos-core "${files[@]}" \
  --timeout 60 -o "$out" -C --lib
