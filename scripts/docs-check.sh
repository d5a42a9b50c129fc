#!/usr/bin/env bash
# docs-check.sh [README]: runs the fenced shell blocks of README.md that are marked
# runnable, so the commands the README shows cannot rot.
#
# A block's info string says when it runs:
#   ```sh runnable                   with a server running on SQLite
#   ```sh runnable-offline           after that server is stopped; it is started again after
#                                    and must come up ready (restores are checked this way)
#   ```sh runnable-postgres          with a server running on a fresh PostgreSQL database
#   ```sh runnable-postgres-offline  after that server is stopped (then started and checked)
# The PostgreSQL blocks need a server: NOMOS_TEST_PG_URL (scripts/pg-up.sh exports it) or
# DATABASE_URL, on which a fresh database is made and dropped; without one they are
# reported as not run, loudly. Blocks of a phase run in README order, each in
# `bash -euo pipefail` with a 60 s bound, in a fresh directory (the data directory is
# ./data), with nomos-server and nomos-backfill on PATH and NOMOS_URL set to the server's
# loopback address. A failing block fails the check with its README line. Before the
# blocks run, a session is created through the API; after an offline phase the restarted
# server must still have it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
readme=${1:-README.md}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/nomos-target}"
unset RUST_BACKTRACE
pg_url=${NOMOS_TEST_PG_URL:-${DATABASE_URL:-}}
for name in $(env | grep -o '^NOMOS_[A-Z0-9_]*' || true); do unset "$name"; done

# The README's blocks use PostgreSQL and MCP too: the server with every part.
cargo build -q --locked -p nomos-server --all-features -p nomos-backfill
export PATH="$CARGO_TARGET_DIR/debug:$PATH"

work=$(mktemp -d /tmp/nomos-docs-check.XXXXXX)
server_pid=
pg_db=
cleanup() {
  set +e
  [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  if [ -n "$pg_db" ]; then
    psql -q "$pg_url" -c "DROP DATABASE IF EXISTS $pg_db" >/dev/null 2>&1
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Extract the blocks: $work/blocks/NNNN.PHASE.sh, NNNN the README line of the fence.
mkdir -p "$work/blocks"
awk -v out="$work/blocks" '
  /^```/ && !inside {
    info = substr($0, 4)
    n = split(info, words, " ")
    phase = ""
    if (words[1] == "sh" || words[1] == "bash") {
      for (i = 2; i <= n; i++) if (words[i] ~ /^runnable/) phase = words[i]
    }
    inside = 1
    if (phase != "") file = sprintf("%s/%04d.%s.sh", out, NR, phase); else file = ""
    next
  }
  /^```/ && inside { inside = 0; file = ""; next }
  inside && file != "" { print > file }
' "$root/$readme"

phases="runnable runnable-offline runnable-postgres runnable-postgres-offline"
n_blocks=0
for block in "$work"/blocks/*.sh; do
  [ -e "$block" ] || continue
  phase=$(basename "$block" .sh); phase=${phase#*.}
  case " $phases " in
    *" $phase "*) n_blocks=$((n_blocks + 1)) ;;
    *) echo "docs-check: $readme line $(basename "$block" | cut -c1-4): unknown marker \`$phase\`" >&2; exit 1 ;;
  esac
done
if [ "$n_blocks" -eq 0 ]; then
  echo "docs-check: no runnable blocks in $readme" >&2
  exit 1
fi

# start_server DIR: starts nomos-server in DIR on a free loopback port; sets NOMOS_URL.
start_server() {
  local dir=$1
  (cd "$dir" && exec nomos-server --listen 127.0.0.1:0 >"$dir/server.out" 2>>"$dir/server.log") &
  server_pid=$!
  for _ in $(seq 300); do
    if grep -q 'Nomos is running' "$dir/server.out" 2>/dev/null; then
      NOMOS_URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$dir/server.out" | head -1)
      export NOMOS_URL
      return 0
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "docs-check: the server did not start; its log:" >&2
  cat "$dir/server.log" >&2
  exit 1
}

stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || { echo "docs-check: the server did not stop cleanly" >&2; exit 1; }
  server_pid=
}

# run_phase PHASE DIR: runs the blocks of PHASE in DIR.
run_phase() {
  local phase=$1 dir=$2 block line
  for block in "$work"/blocks/*."$phase".sh; do
    [ -e "$block" ] || continue
    line=$(basename "$block" | cut -c1-4 | sed 's/^0*//')
    echo "-- $readme line $line ($phase)"
    sed 's/^/   $ /' "$block"
    if ! (cd "$dir" && timeout 60 bash -euo pipefail "$block"); then
      echo "docs-check: the block at $readme line $line failed" >&2
      exit 1
    fi
    echo
  done
}

# seed_session DIR: creates a session through the API, so a restore can be seen to keep it.
seed_session() {
  local token
  token=$(cat "$1/data/operator-token")
  seeded=$(curl -fsS -X POST -H "Authorization: Bearer $token" "$NOMOS_URL/api/sessions" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
}

# check_ready DIR: the restarted server answers /readyz and still has the seeded session.
check_ready() {
  local token
  token=$(cat "$1/data/operator-token")
  curl -fsS "$NOMOS_URL/readyz" >/dev/null || { echo "docs-check: not ready after restart" >&2; exit 1; }
  curl -fsS -o /dev/null -H "Authorization: Bearer $token" "$NOMOS_URL/api/sessions/$seeded" \
    || { echo "docs-check: session $seeded is gone after the restore" >&2; exit 1; }
  echo "-- restarted server is ready and has session $seeded"
}

mkdir -p "$work/sqlite"
start_server "$work/sqlite"
seed_session "$work/sqlite"
run_phase runnable "$work/sqlite"
stop_server
run_phase runnable-offline "$work/sqlite"
start_server "$work/sqlite"
check_ready "$work/sqlite"
stop_server

if ls "$work"/blocks/*.runnable-postgres*.sh >/dev/null 2>&1; then
  if [ -z "$pg_url" ]; then
    echo "docs-check: NOT RUN: the runnable-postgres blocks (no NOMOS_TEST_PG_URL or DATABASE_URL; scripts/pg-up.sh sets one)"
  else
    pg_db="nomos_docs_$$"
    psql -q "$pg_url" -c "CREATE DATABASE $pg_db" >/dev/null
    export NOMOS_DATABASE_URL="${pg_url%/*}/$pg_db"
    mkdir -p "$work/postgres"
    start_server "$work/postgres"
    seed_session "$work/postgres"
    run_phase runnable-postgres "$work/postgres"
    stop_server
    run_phase runnable-postgres-offline "$work/postgres"
    start_server "$work/postgres"
    check_ready "$work/postgres"
    stop_server
    unset NOMOS_DATABASE_URL
  fi
fi
echo "docs-check: $n_blocks runnable block(s) of $readme passed"
