#!/usr/bin/env bash
# Install what is missing, build and install idgen, start a throwaway
# PostgreSQL 15 server with idgen preloaded (Unix socket only, in a
# temporary directory), run scripts/demo.sql against it, then stop the
# server and delete the directory.  Set IDGEN_KEEP=1 to keep the server
# running instead; the script then prints how to connect and stop it.
set -euo pipefail
. "$(dirname "$0")/common.sh"

prepare

data=$work/data
as_pg() { runuser -u postgres -- "$@"; }
cleanup() {
	if [ -f "$data/postmaster.pid" ]; then
		as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast stop >/dev/null || true
	fi
	rm -rf "$work"
}
if [ "${IDGEN_KEEP:-0}" != 1 ]; then
	trap cleanup EXIT
fi

say "starting a throwaway server in $data"
as_pg "$PG_BIN/initdb" -D "$data" -A trust --no-sync >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$work/server.log" -w \
	-o "-c listen_addresses='' -k $work -p 5499 -c shared_preload_libraries=idgen -c idgen.node_id=1" \
	start >/dev/null

# an application database, as a user would have; idgen's keeper keeps its
# reservation in "postgres" (idgen.database) by itself
say "running scripts/demo.sql in a new database \"demo\""
as_pg createdb -h "$work" -p 5499 demo
as_pg psql -X -h "$work" -p 5499 -d demo -v ON_ERROR_STOP=1 -f "$work/scripts/demo.sql"

if [ "${IDGEN_KEEP:-0}" = 1 ]; then
	say "server left running: psql -h $work -p 5499 -U postgres demo"
	echo "    stop it and clean up: runuser -u postgres -- $PG_BIN/pg_ctl -D $data stop && rm -rf $work"
else
	say "done; the server is stopped and $work removed"
fi
