# A throwaway PostgreSQL for the benchmark scripts (Debian's package; as the tests start theirs).
#   source scripts/lib/postgres.sh; pg_start DIR; … $PG_URL/DBNAME …; pg_stop
# pg_start: a new cluster in DIR/pg on a free loopback port, trusted, one database `bench`
# (empty). PG_PSQL runs psql on it. When root, the server runs as the `postgres` user.
pg_start() {
    local dir=$1/pg bin
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    [ -n "$bin" ] || { echo "PostgreSQL is missing: apt-get install postgresql" >&2; return 1; }
    PG_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p "$dir"; chmod 755 "$1"
    PG_AS=(); [ "$(id -u)" -eq 0 ] && { chown postgres "$dir"; PG_AS=(runuser -u postgres --); }
    "${PG_AS[@]}" "$bin/initdb" -A trust -U postgres --no-sync -E UTF8 -D "$dir/data" >/dev/null
    "${PG_AS[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
        -o "-p $PG_PORT -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
    PG_DIR=$dir; PG_BIN=$bin; PG_URL=postgresql://postgres@127.0.0.1:$PG_PORT
    PG_PSQL=(psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres)
    "${PG_PSQL[@]}" -d postgres -c 'CREATE DATABASE bench' >/dev/null
}

pg_stop() {
    [ -n "${PG_DIR:-}" ] && "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1
    PG_DIR=
}
