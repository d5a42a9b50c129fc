# Starts a throwaway PostgreSQL 15 server for tests and benches. Source it:
#
#   . scripts/pg-up.sh        # exports NOMOS_TEST_PG_URL, PGTMP, PGPORT
#   cargo test -p nomos-postgres
#   . scripts/pg-down.sh
#
# The server listens on 127.0.0.1 at a free port (or $PGPORT if set), keeps its
# socket and data under $PGTMP, runs with fsync off, and trusts local connections.
# Sourcing does not change the caller's shell options.

nomos_pg_up() {
    local pgbin=/usr/lib/postgresql/15/bin
    if [ ! -x "$pgbin/initdb" ]; then
        echo "pg-up: $pgbin/initdb not found (apt-get install postgresql-15)" >&2
        return 1
    fi
    local port=${PGPORT:-}
    if [ -z "$port" ]; then
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') || return 1
    fi
    local tmp
    tmp=$(mktemp -d /tmp/nomos-pg.XXXXXX) || return 1
    local as_pg=()
    if [ "$(id -u)" = 0 ]; then
        chown postgres:postgres "$tmp" || return 1   # initdb refuses to run as root
        as_pg=(runuser -u postgres --)
    fi
    if ! "${as_pg[@]}" "$pgbin/initdb" -D "$tmp/data" -U postgres --auth=trust --no-sync \
            -E UTF8 --locale=C.UTF-8 >"$tmp/initdb.log" 2>&1; then
        echo "pg-up: initdb failed:" >&2; cat "$tmp/initdb.log" >&2; rm -rf "$tmp"; return 1
    fi
    if ! "${as_pg[@]}" "$pgbin/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 30 \
            -o "-p $port -k $tmp -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
            start >/dev/null; then
        echo "pg-up: server did not start:" >&2; cat "$tmp/server.log" >&2; rm -rf "$tmp"; return 1
    fi
    PGTMP=$tmp
    PGPORT=$port
    NOMOS_TEST_PG_URL="postgres://postgres@127.0.0.1:$port/postgres"
    export PGTMP PGPORT NOMOS_TEST_PG_URL
    echo "postgres up: pid=$(head -1 "$tmp/data/postmaster.pid") NOMOS_TEST_PG_URL=$NOMOS_TEST_PG_URL"
}

nomos_pg_up
