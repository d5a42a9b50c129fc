#!/usr/bin/env bash
# Runs the classifier's execution oracle (CLASSIFY-9) on N commands (100000 by default):
# the corpus, the preview forms, the golden cases and the option tables first, then
# generated commands up to N, each classified read_only run traced in a sandbox. Prints
# the time, the counts per shell and every refutation; exits 1 when any verdict is refuted.
# Extra arguments go to the binary (`--seed`, `--workers`, `--batch`, `--timeout-ms`,
# `--findings FILE`).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/nomos-target}"
count="${1:-100000}"
shift || true
cargo build -q --locked -p nomos-oracle
exec "${CARGO_TARGET_DIR}/debug/nomos-oracle" "$count" "$@"
