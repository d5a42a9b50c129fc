#!/usr/bin/env bash
# Runs the classifier's execution oracle (CLASSIFY-9) on N distinct commands (100000 by
# default): the corpus, the preview forms, the golden cases and the option tables first,
# then generated commands up to N, each classified read_only run traced in a sandbox under
# sh, bash and busybox sh; then fixtures/classify/secret-reads.tsv, when it exists (SECRET-1).
# Prints a progress line per 5,000 commands on stderr, then the time, the counts per shell,
# the read_only count and every refutation; exits 1 when any verdict is refuted or any
# secret-read row disagrees with its trace. Runs one sandbox at a time, niced, unless told
# otherwise. Extra arguments go to the binary (`--seed`, `--workers`, `--batch`,
# `--timeout-ms`, `--findings FILE` to append the refutations one line per class,
# `--commands FILE` to run only the given commands).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/nomos-target}"
count="${1:-100000}"
shift || true
cargo build -q --locked -p nomos-oracle
exec nice -n 10 "${CARGO_TARGET_DIR}/debug/nomos-oracle" "$count" "$@"
