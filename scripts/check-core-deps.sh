#!/usr/bin/env bash
# Fails when nomos-core's (or nomos-classify's) normal dependency tree contains an async
# runtime or any I/O stack: the core and the classifier decide, they never do.
set -euo pipefail
cd "$(dirname "$0")/.."
for crate in nomos-core nomos-classify; do
  tree=$(cargo tree -p "$crate" -e normal --prefix none --format '{p}' | awk '{print $1}' | sort -u)
  bad=$(printf '%s\n' "$tree" | grep -Ex 'tokio|sqlx.*|reqwest|russh.*|hyper|mio|async-std|smol|axum' || true)
  if [ -n "$bad" ]; then
    echo "$crate must not depend on: $bad" >&2
    exit 1
  fi
  echo "$crate dependency tree is pure ($(printf '%s\n' "$tree" | wc -l) crates)"
done
