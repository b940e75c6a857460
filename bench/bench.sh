#!/usr/bin/env bash
# idgen benchmark: compares idgen's generators with nextval(), gen_random_uuid()
# and Instagram's PL/pgSQL next_id() in one run on one throwaway server.
# Not a test: it prints figures and never fails on speed.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bench/bench.sh [--pg VERSION] [--quick] [--reps N] [--seconds S]
                      [--clients "1 2 4 8"] [--large-rows N]
       bench/bench.sh [--pg VERSION] --profile

Run as root on Debian 12 (it installs what is missing, gets PostgreSQL
VERSION through scripts/pg.sh (15 by default; 17 and 18 are built from
Debian's source packages on first use), builds and installs idgen, then
starts its own server as the postgres user on a Unix socket in a temporary
directory and removes it at the end).

Measures, in one run so that ratios are comparable:

  1. ns per call in one session: median (min..max) over N repetitions of
     SELECT count(<generator>) FROM generate_series(1, 1000000), net of the
     floor SELECT count(g) FROM generate_series(1, 1000000) g measured in the
     same repetition.  The net cost includes the function call itself.  For
     this part idgen.max_lead is raised so that the clock policy never acts.
  2. sustained single-session rate with the default idgen.max_lead: a
     pre-run first uses up all timestamp borrowing, then a run of several
     seconds is timed; reported as IDs/s and as a fraction of the layout's
     ceiling (4,096,000/s snowflake, 1,024,000/s per instagram shard).
  3. INSERT rows/s, 100-row statements, generator as the column DEFAULT
     (table with a btree index on the id), pgbench at each client count,
     S seconds per run, N repetitions; each run is checked for duplicates.
  4. large table: --large-rows rows (default 10,000,000) loaded by one
     pgbench client in 1,000-row INSERT statements into a table whose
     PRIMARY KEY defaults to the generator (snowflake_id(), bigserial,
     gen_random_uuid(), and uuidv7() on PostgreSQL 18 and later); rows/s
     over the whole load (wall clock, one run each) and the final size of
     the primary key index and of the table.  An untimed load of the same
     size runs first, so that no timed load pays for creating WAL files.
     --large-rows 0 skips it.

On PostgreSQL 18 and later, part 1 also measures the built-in uuidv7().

Options:
  --quick        3 repetitions, 3 s pgbench runs (default: 5 and 5 s)
  --reps N       repetitions of every measurement
  --seconds S    duration of each pgbench run
  --clients L    client counts for part 3 (default "1 2 4 8")
  --large-rows N rows per table in part 4 (a multiple of 1,000; 0 skips it)
  --calls-only   part 1 only (per-call costs), for more repetitions of it
  --pg VERSION   PostgreSQL version to measure: 15 (default), 17 or 18
  --profile      instead: sample with perf (software cpu-clock event) where a
                 backend spends its time in SELECT count(snowflake_id()) over
                 30,000,000 rows, and print the top symbols
  -h, --help     this text

The server runs with synchronous_commit = off so that part 3 measures the
generators and the inserts rather than the disk's fsync latency (idgen's
keeper still commits its reservations synchronously).
EOF
}

reps=5 seconds=5 clients="1 2 4 8" profile=0 large_rows=10000000 pg=15 calls_only=0
while [ $# -gt 0 ]; do
	case $1 in
		--quick) reps=3 seconds=3 ;;
		--reps) reps=$2; shift ;;
		--seconds) seconds=$2; shift ;;
		--clients) clients=$2; shift ;;
		--large-rows) large_rows=$2; shift ;;
		--pg) pg=$2; shift ;;
		--profile) profile=1 ;;
		--calls-only) calls_only=1 large_rows=0 ;;
		-h|--help) usage; exit 0 ;;
		*) usage >&2; exit 2 ;;
	esac
	shift
done

if [ $((large_rows % 1000)) -ne 0 ]; then
	echo "--large-rows must be a multiple of 1,000" >&2
	exit 2
fi

. "$(dirname "$0")/../scripts/common.sh"
case " $IDGEN_PG_VERSIONS " in
	*" $pg "*) PG_MAJOR=$pg ;;
	*) echo "--pg: PostgreSQL $pg is not supported ($IDGEN_PG_VERSIONS)" >&2; exit 2 ;;
esac
prepare $([ "$profile" = 1 ] && echo linux-perf) >/dev/null

data=$work/data port=5498
as_pg() { runuser -u postgres -- "$@"; }
cleanup() {
	[ -f "$data/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast stop >/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

as_pg "$PG_BIN/initdb" -D "$data" -A trust --no-sync >/dev/null
cat >>"$data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
shared_preload_libraries = 'idgen'
idgen.node_id = 1
max_connections = 40
shared_buffers = 1GB
synchronous_commit = off
max_wal_size = 8GB
EOF
as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$work/server.log" -w start >/dev/null

sql() { as_pg "$PG_BIN/psql" -X -q -At -h "$work" -p "$port" -d postgres -v ON_ERROR_STOP=1 "$@"; }
reload_and_wait() {	# $1 = setting, $2 = value as SHOW prints it
	sql -c "SELECT pg_reload_conf()" >/dev/null
	for _ in $(seq 50); do
		[ "$(sql -c "SHOW $1")" = "$2" ] && return 0
		sleep 0.1
	done
	echo "setting $1 did not reach $2" >&2
	exit 1
}

# wait for the keeper (it creates the extension in database postgres)
for _ in $(seq 100); do
	[ "$(sql -c "SELECT count(*) FROM pg_extension WHERE extname = 'idgen'")" = 1 ] && break
	sleep 0.1
done
sql -f "$work/bench/setup.sql"

# other ID generator extensions, measured when the server has them
extra_gens=""
for ext in pg_uuidv7:'uuid_generate_v7()' pg_idkit:'idkit_ulid_generate()' ulid:'gen_ulid()' snowflake:'snowflake.nextval()'; do
	name=${ext%%:*} call=${ext#*:}
	if [ "$(sql -c "SELECT count(*) FROM pg_available_extensions WHERE name = '$name'")" = 1 ]; then
		sql -c "CREATE EXTENSION IF NOT EXISTS $name" >/dev/null && extra_gens="$extra_gens $call"
	fi
done

if [ "$profile" = 1 ]; then
	say "profile: SELECT count(snowflake_id()) FROM generate_series(1, 30000000)"
	sql -c "ALTER SYSTEM SET idgen.max_lead = '1h'" >/dev/null
	reload_and_wait idgen.max_lead 1h
	sql -c "SELECT count(snowflake_id()) FROM generate_series(1, 30000000)" >/dev/null &
	query=$!
	pid=""
	for _ in $(seq 50); do
		pid=$(sql -c "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT count(snowflake_id())%'")
		[ -n "$pid" ] && break
		sleep 0.1
	done
	perf record -q -e cpu-clock -F 2000 -p "$pid" -o "$work/perf.data" -- sleep 3 >/dev/null 2>&1
	wait "$query"
	perf report -i "$work/perf.data" --stdio --no-children --sort dso,symbol 2>/dev/null |
		grep -E '^ +[0-9.]+%' | head -20
	exit 0
fi

say "1. ns per call ($reps repetitions of 1,000,000 calls)"
sql -c "ALTER SYSTEM SET idgen.max_lead = '1h'" >/dev/null
reload_and_wait idgen.max_lead 1h
# named generators (idgen.database is postgres here): seed 002's layout,
# Sonyflake's 10 ms ticks, a 10 ms layout with more capacity per ms than
# snowflake's (Sonyflake's 25,600 IDs/s make 1,000,000 calls 39 s of
# ticks, so its figure includes the keeper extending the reservation that
# often; b_10ms shows what the unit itself costs), and seed 000's counter
# with the default prefetch of 1,000 and with 1,000,000 (a caller that
# outruns the reservation takes values ahead, made durable by its commit,
# so neither should wait for a WAL flush every prefetch values)
sql -c "SELECT idgen_create_generator('b_legacy', 'time:42 datacenter:3 worker:6 seq:12', epoch => '2020-08-02 18:33:54.706+00'),
               idgen_create_generator('b_sony', 'sonyflake'),
               idgen_create_generator('b_10ms', 'time:37 node:10 seq:16', unit => '10 ms'),
               idgen_create_generator('b_counter', 'zone:7=3 worker:16 seq:40'),
               idgen_create_generator('b_counter_1m', 'zone:7=4 worker:16 seq:40', prefetch => 1000000)" >/dev/null
gens="snowflake_id() instagram_id(1) idgen_next('b_legacy') idgen_next('b_sony') idgen_next('b_10ms') idgen_next('b_counter') idgen_next('b_counter_1m') idgen_uuidv7() idgen_flake128() nextval('bench.ins_serial_id_seq') gen_random_uuid() bench.next_id() clock_timestamp()$extra_gens"
# PostgreSQL 18's built-in UUID version 7
if [ "$(sql -c "SHOW server_version_num")" -ge 180000 ]; then
	gens="$gens uuidv7()"
fi
for rep in $(seq "$reps"); do
	floor=$(sql -c "SELECT bench.time_ms('SELECT count(g) FROM generate_series(1, 1000000) g')")
	for g in $gens; do
		ms=$(sql -c "SELECT bench.time_ms(\$q\$SELECT count($g) FROM generate_series(1, 1000000)\$q\$)")
		sql -c "INSERT INTO bench.percall VALUES (\$q\$$g\$q\$, $rep, $ms, $floor)"
	done
	printf '.'
done
echo

if [ "$calls_only" = 0 ]; then
say "2. sustained single-session rate (default idgen.max_lead, $reps repetitions)"
sql -c "ALTER SYSTEM RESET idgen.max_lead" >/dev/null
reload_and_wait idgen.max_lead 2s
sustained() {	# $1 = call, $2 = decoder, $3 = IDs to time, $4 = ceiling/s, $5 = rep
	sql -c "INSERT INTO bench.sustained
	        SELECT \$q\$$1\$q\$, $5, $3, ms, $4, lead_before, lead_after
	          FROM bench.sustained(\$q\$$1\$q\$, \$q\$$2($1)\$q\$, $3)"
}
for rep in $(seq "$reps"); do
	# first use up all borrowing, then time a run of about 4 s at the ceiling
	sustained 'snowflake_id()' snowflake_id_time 16000000 4096000 "$rep"
	sustained 'instagram_id(2)' instagram_id_time 4000000 1024000 "$rep"
	printf '.'
done
echo

say "3. INSERT rows/s, 100-row statements, DEFAULT generator ($reps x ${seconds}s per point)"
for c in $clients; do
	jobs=$((c < 2 ? c : 2))
	for rep in $(seq "$reps"); do
		for t in snowflake instagram serial uuid plpgsql; do
			sql -c "TRUNCATE bench.ins_$t"
			echo "INSERT INTO bench.ins_$t (v) SELECT g FROM generate_series(1, 100) g;" >"$work/ins_$t.sql"
			chown postgres "$work/ins_$t.sql"
			out=$(as_pg "$PG_BIN/pgbench" -n -h "$work" -p "$port" -c "$c" -j "$jobs" -T "$seconds" -f "$work/ins_$t.sql" postgres 2>&1) || {
				echo "$out" >&2
				exit 1
			}
			tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
			sql -c "INSERT INTO bench.inserts SELECT '$t', $c, $rep, $tps * 100, count(*), count(*) - count(DISTINCT id) FROM bench.ins_$t"
			printf '.'
		done
	done
done
echo

say "5. batches of 1,000 IDs delivered to one client over a Unix socket ($reps x ${seconds}s)"
for t in snowflake:'snowflake_id_batch(1000)' named:"idgen_next_batch('b_legacy', 1000)"; do
	name=${t%%:*} call=${t#*:}
	echo "SELECT $call;" >"$work/batch_$name.sql"
	chown postgres "$work/batch_$name.sql"
	for rep in $(seq "$reps"); do
		out=$(as_pg "$PG_BIN/pgbench" -n -h "$work" -p "$port" -c 1 -T "$seconds" -f "$work/batch_$name.sql" postgres 2>&1) || {
			echo "$out" >&2
			exit 1
		}
		tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
		sql -c "INSERT INTO bench.batches VALUES ('$name', $rep, $tps * 1000)"
		printf '.'
	done
done
echo

fi

if [ "$large_rows" -gt 0 ]; then
	say "4. large table: $large_rows rows in 1,000-row INSERTs, PRIMARY KEY DEFAULT generator"
	# An untimed load of the same size first: the first load of a fresh
	# server also pays for creating WAL segments, which later loads recycle.
	sql -c "CREATE TABLE bench.big_warmup (id bigserial PRIMARY KEY, v int)"
	echo "INSERT INTO bench.big_warmup (v) SELECT g FROM generate_series(1, 1000) g;" >"$work/big_warmup.sql"
	chown postgres "$work/big_warmup.sql"
	as_pg "$PG_BIN/pgbench" -n -h "$work" -p "$port" -c 1 -t $((large_rows / 1000)) -f "$work/big_warmup.sql" postgres >/dev/null 2>&1
	sql -c "DROP TABLE bench.big_warmup"
	large="snowflake:bigint:snowflake_id() bigserial:bigserial: uuid:uuid:gen_random_uuid()"
	[ "$(sql -c "SHOW server_version_num")" -ge 180000 ] && large="$large uuidv7:uuid:uuidv7()"
	for spec in $large; do
		IFS=: read -r t type default <<<"$spec"
		sql -c "CREATE TABLE bench.big_$t (id $type PRIMARY KEY ${default:+DEFAULT $default}, v int)"
		echo "INSERT INTO bench.big_$t (v) SELECT g FROM generate_series(1, 1000) g;" >"$work/big_$t.sql"
		chown postgres "$work/big_$t.sql"
		sql -c "CHECKPOINT"
		t0=$(date +%s.%N)
		out=$(as_pg "$PG_BIN/pgbench" -n -h "$work" -p "$port" -c 1 -t $((large_rows / 1000)) -f "$work/big_$t.sql" postgres 2>&1) || {
			echo "$out" >&2
			exit 1
		}
		t1=$(date +%s.%N)
		sql -c "INSERT INTO bench.large
		        SELECT '$t', count(*), $t1 - $t0, pg_relation_size('bench.big_${t}_pkey'), pg_relation_size('bench.big_$t')
		          FROM bench.big_$t"
		sql -c "DROP TABLE bench.big_$t"
		printf '.'
	done
	echo
fi

say "results"
sql -f "$work/bench/report.sql"
echo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(free -g | awk '/^Mem:/ {print $2}') GiB; $(sql -c 'SELECT version()' | cut -d, -f1)"
if [ "$calls_only" = 1 ]; then
	echo "command: bench/bench.sh --pg $pg --reps $reps --calls-only"
else
	echo "command: bench/bench.sh --pg $pg --reps $reps --seconds $seconds --clients \"$clients\" --large-rows $large_rows"
fi
