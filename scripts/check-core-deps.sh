#!/usr/bin/env bash
# Fails when nomos-core's normal dependency tree contains an async runtime or any I/O
# stack: the core decides, it never does.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$(cargo tree -p nomos-core -e normal --prefix none --format '{p}' | awk '{print $1}' | sort -u)
bad=$(printf '%s\n' "$tree" | grep -Ex 'tokio|sqlx.*|reqwest|russh.*|hyper|mio|async-std|smol|axum' || true)
if [ -n "$bad" ]; then
  echo "nomos-core must not depend on: $bad" >&2
  exit 1
fi
echo "nomos-core dependency tree is pure ($(printf '%s\n' "$tree" | wc -l) crates)"
