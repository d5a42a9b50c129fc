# Stops the server started by scripts/pg-up.sh and removes its directory. Source it
# (or run it with PGTMP set).

nomos_pg_down() {
    if [ -z "${PGTMP:-}" ] || [ ! -d "$PGTMP" ]; then
        echo "pg-down: PGTMP is not set to a server directory" >&2
        return 1
    fi
    local as_pg=()
    if [ "$(id -u)" = 0 ]; then
        as_pg=(runuser -u postgres --)
    fi
    "${as_pg[@]}" /usr/lib/postgresql/15/bin/pg_ctl -D "$PGTMP/data" -m fast -w stop >/dev/null
    rm -rf "$PGTMP"
    echo "postgres down: removed $PGTMP"
    unset PGTMP PGPORT NOMOS_TEST_PG_URL
}

nomos_pg_down
