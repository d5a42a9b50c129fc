#!/usr/bin/env bash
# Stops the sshd started by scripts/sshd-up.sh (and the sessions it serves) and
# removes its directory. Reads NOMOS_TEST_SSHD_DIR and NOMOS_TEST_SSHD_PORT, or
# takes the directory as its first argument.
set -u
dir=${1:-${NOMOS_TEST_SSHD_DIR:-}}
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    echo "sshd-down: no sshd directory (set NOMOS_TEST_SSHD_DIR or pass it)" >&2
    exit 1
fi
port=${NOMOS_TEST_SSHD_PORT:-$(awk '/^Port /{print $2}' "$dir/sshd_config")}
if [ -s "$dir/sshd.pid" ]; then
    pid=$(cat "$dir/sshd.pid")
    # The listener and its per-connection children (and their commands).
    pids="$pid"
    frontier="$pid"
    while [ -n "$frontier" ]; do
        next=""
        for p in $frontier; do
            for c in $(pgrep -P "$p" 2>/dev/null); do next="$next $c"; done
        done
        pids="$pids $next"
        frontier=$(echo $next)
    done
    kill $pids 2>/dev/null
fi
# PID 1 here may not reap: wait on the port, not on the process.
for _ in $(seq 100); do
    ss -Hltn "sport = :$port" | grep -q . || break
    sleep 0.1
done
rm -rf "$dir"
echo "sshd down: port $port"
