#!/usr/bin/env bash
# What a node-id lease in etcd adds to a generator call.  Not a test: it
# prints figures and never fails on speed.
#
#   bash bench/lease.sh [--pg VERSION] [--reps N]
#
# Run as root on Debian 12: installs what is missing (etcd-server too),
# builds and installs idgen into PostgreSQL VERSION (15 by default), starts
# an etcd on loopback and one server on a Unix socket, both in a temporary
# directory, and removes them at the end.  Each repetition starts the
# server twice, without leases and with idgen.lease_endpoints pointing at
# that etcd, and times SELECT count(<call>) FROM generate_series(1, 1000000)
# for snowflake_id() and a named layout with node fields, net of the floor
# SELECT count(g) FROM generate_series(1, 1000000) g of the same run.  It
# prints the median (min..max) net ns per call of each, and the
# difference.  idgen.max_lead is raised so that the clock policy never
# acts.
set -euo pipefail

reps=5 pg=15
while [ $# -gt 0 ]; do
	case $1 in
		--reps) reps=$2; shift ;;
		--pg) pg=$2; shift ;;
		-h|--help) sed -n '2,17p' "$0"; exit 0 ;;
		*) echo "usage: bench/lease.sh [--pg VERSION] [--reps N]" >&2; exit 2 ;;
	esac
	shift
done

. "$(dirname "$0")/../scripts/common.sh"
case " $IDGEN_PG_VERSIONS " in
	*" $pg "*) PG_MAJOR=$pg ;;
	*) echo "--pg: PostgreSQL $pg is not supported ($IDGEN_PG_VERSIONS)" >&2; exit 2 ;;
esac
prepare etcd-server >/dev/null

data=$work/data port=5497 etcd_port=23979 etcd_peer=23980 etcd_pid=""
as_pg() { runuser -u postgres -- "$@"; }
cleanup() {
	[ -f "$data/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast stop >/dev/null || true
	[ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null && wait "$etcd_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# etcd runs as root (it needs no other user): so $! is its own PID, which
# the cleanup stops and waits for
etcd --name bench --data-dir "$work/etcd" \
	--listen-client-urls "http://127.0.0.1:$etcd_port" \
	--advertise-client-urls "http://127.0.0.1:$etcd_port" \
	--listen-peer-urls "http://127.0.0.1:$etcd_peer" \
	--initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
	--initial-cluster "bench=http://127.0.0.1:$etcd_peer" >"$work/etcd.log" 2>&1 &
etcd_pid=$!

as_pg "$PG_BIN/initdb" -D "$data" -A trust --no-sync >/dev/null
cat >>"$data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
shared_preload_libraries = 'idgen'
idgen.node_id = 1
idgen.max_lead = 1h
idgen.lease_ttl = 10
include_if_exists = 'lease.conf'
EOF

sql() { as_pg "$PG_BIN/psql" -X -q -At -h "$work" -p "$port" -d postgres -v ON_ERROR_STOP=1 "$@"; }
start() {	# $1 = value of idgen.lease_endpoints
	echo "idgen.lease_endpoints = '$1'" >"$data/lease.conf"
	as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$work/server.log" -w start >/dev/null
	for _ in $(seq 300); do
		[ "$(sql -c "SELECT keeper_state = 'ready' AND lease_state IN ('off', 'held') FROM idgen_status(), idgen_lease_status()" 2>/dev/null)" = t ] && return 0
		sleep 0.1
	done
	echo "the server did not become ready with idgen.lease_endpoints = '$1':" >&2
	sql -c "SELECT keeper_state, keeper_message, lease_state, lease_holder, lease_error FROM idgen_status(), idgen_lease_status()" >&2 || true
	tail -n 5 "$work/server.log" >&2
	tail -n 20 "$work/etcd.log" >&2
	exit 1
}
stop() { as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null; }

start ""
sql -c "CREATE SCHEMA bench;
CREATE FUNCTION bench.time_ms(q text) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN EXECUTE q; RETURN extract(epoch FROM clock_timestamp() - t0) * 1000; END \$\$;
CREATE TABLE bench.lease (mode text, call text, rep int, ms float8, floor_ms float8);
SELECT idgen_create_generator('b_legacy', 'time:42 datacenter:3 worker:6 seq:12', epoch => '2020-08-02 18:33:54.706+00');" >/dev/null
stop

say "PostgreSQL $PG_MAJOR: $reps repetitions, leases off and on, 1,000,000 calls each"
for rep in $(seq "$reps"); do
	for mode in off on; do
		if [ "$mode" = on ]; then start "http://127.0.0.1:$etcd_port"; else start ""; fi
		[ "$mode" = on ] && [ "$(sql -c "SELECT lease_state FROM idgen_lease_status()")" != held ] && {
			echo "no lease held" >&2
			exit 1
		}
		# warm up the new backend's caches and the generators first
		for call in "snowflake_id()" "idgen_next('b_legacy')"; do
			sql -c "SELECT count($call) FROM generate_series(1, 200000)" >/dev/null
		done
		floor=$(sql -c "SELECT bench.time_ms('SELECT count(g) FROM generate_series(1, 1000000) g')")
		for call in "snowflake_id()" "idgen_next('b_legacy')"; do
			ms=$(sql -c "SELECT bench.time_ms(\$q\$SELECT count($call) FROM generate_series(1, 1000000)\$q\$)")
			sql -c "INSERT INTO bench.lease VALUES ('$mode', \$q\$$call\$q\$, $rep, $ms, $floor)"
		done
		stop
	done
	printf '.'
done
echo
start ""
echo "call|leases off: net ns/call, median (min..max)|leases on|on - off (medians)" | column -t -s '|'
sql -c "
WITH net AS (
	SELECT call, mode, (ms - floor_ms) AS ns FROM bench.lease
), m AS (
	SELECT call, mode,
		   percentile_cont(0.5) WITHIN GROUP (ORDER BY ns) AS med,
		   min(ns) AS lo, max(ns) AS hi
	  FROM net GROUP BY call, mode
)
SELECT off.call AS call,
	   format('%s (%s..%s)', round(off.med::numeric, 1), round(off.lo::numeric, 1), round(off.hi::numeric, 1)) AS \"off: net ns/call\",
	   format('%s (%s..%s)', round(on_.med::numeric, 1), round(on_.lo::numeric, 1), round(on_.hi::numeric, 1)) AS \"on: net ns/call\",
	   round((on_.med - off.med)::numeric, 1) AS \"on - off\"
  FROM m off JOIN m on_ ON on_.call = off.call AND on_.mode = 'on'
 WHERE off.mode = 'off'
 ORDER BY 1" | column -t -s '|'
