#!/usr/bin/env bash
# Install what is missing, get PostgreSQL (default 15; --pg "17 18" for
# others, one after the other), build and install idgen, start a
# throwaway server with idgen preloaded (Unix socket only, in a temporary
# directory), run scripts/demo.sql against it, then stop the server and
# delete the directory.  Set IDGEN_KEEP=1 to keep the servers running
# instead; the script then prints how to connect and stop each.
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	echo "usage: $(basename "$0") [--pg \"$IDGEN_PG_VERSIONS\"]" >&2
	exit 2
}
versions=15
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || usage; versions=$2; shift ;;
		--pg=*) versions=${1#--pg=} ;;
		*) usage ;;
	esac
	shift
done
versions=$(check_pg_versions "$versions") || exit 2

as_pg() { runuser -u postgres -- "$@"; }
servers=()	# "bindir|directory" of each server started
stop_and_remove() {
	local bin=${1%%|*} dir=${1#*|}
	if [ -f "$dir/data/postmaster.pid" ]; then
		as_pg "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null || true
	fi
	rm -rf "$dir"
}
cleanup() {
	local s
	for s in "${servers[@]}"; do
		stop_and_remove "$s"
	done
}
if [ "${IDGEN_KEEP:-0}" != 1 ]; then
	trap cleanup EXIT
fi

for PG_MAJOR in $versions; do
	prepare
	servers+=("$PG_BIN|$work")
	data=$work/data
	port=$((5400 + PG_MAJOR))

	say "starting a throwaway PostgreSQL $PG_MAJOR server in $data"
	as_pg "$PG_BIN/initdb" -D "$data" -A trust --no-sync >/dev/null
	as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$work/server.log" -w \
		-o "-c listen_addresses='' -k $work -p $port -c shared_preload_libraries=idgen -c idgen.node_id=1" \
		start >/dev/null

	# an application database, as a user would have; idgen's keeper keeps
	# its reservation in "postgres" (idgen.database) by itself
	say "running scripts/demo.sql in a new database \"demo\" ($("$PG_BIN/postgres" --version))"
	as_pg "$PG_BIN/createdb" -h "$work" -p "$port" demo
	as_pg "$PG_BIN/psql" -X -h "$work" -p "$port" -d demo -v ON_ERROR_STOP=1 -f "$work/scripts/demo.sql"

	if [ "${IDGEN_KEEP:-0}" = 1 ]; then
		say "server left running: $PG_BIN/psql -h $work -p $port -U postgres demo"
		echo "    stop it and clean up: runuser -u postgres -- $PG_BIN/pg_ctl -D $data stop && rm -rf $work"
	else
		stop_and_remove "$PG_BIN|$work"
		say "done; the PostgreSQL $PG_MAJOR server is stopped and $work removed"
	fi
done
