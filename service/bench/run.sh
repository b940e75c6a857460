#!/bin/bash
# The service's benchmark in one command: a throwaway PostgreSQL with idgen,
# set up as docs/service.md says, then bench.js (autocannon against the
# service and the trivial endpoint), then everything it started is stopped
# and removed.  A benchmark that prints numbers, not a test.
#
# usage: bash service/bench/run.sh [bench.js options: --seconds 10
#          --connections 32 --pipelining 1 --rounds 4 --warmup 5 --batch N]
# environment:
#   PG_CONFIG   pg_config of the PostgreSQL with idgen installed (default:
#               pg_config on PATH); its initdb, pg_ctl and psql are used
#   BENCH_PORT  the service's port (default 18080; the trivial server: +1)
# Run it as an ordinary user, or as root: then PostgreSQL runs as the user
# postgres.  Needs `npm ci` in service/ (autocannon is a devDependency).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
service=$(dirname "$here")
docs="$service/../docs/service.md"
bindir=$("${PG_CONFIG:-pg_config}" --bindir)
port=${BENCH_PORT:-18080}

[ -d "$service/node_modules/autocannon" ] || { echo "run.sh: run npm ci in $service first" >&2; exit 2; }

as_pg=()
[ "$(id -u)" = 0 ] && as_pg=(runuser -u postgres --)

tmp=$(mktemp -d /tmp/idgen-bench.XXXXXX)
data="$tmp/data"
pg_started=
cleanup() {
	if [ -n "$pg_started" ]; then
		"${as_pg[@]}" "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ ${#as_pg[@]} -gt 0 ] && chown postgres: "$tmp"

# A server of its own: a Unix socket in $tmp, no TCP
"${as_pg[@]}" "$bindir/initdb" -D "$data" -A trust -U postgres --no-sync >/dev/null
cat >>"$data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$tmp'
shared_preload_libraries = 'idgen'
idgen.node_id = 69
fsync = off
EOF
"${as_pg[@]}" "$bindir/pg_ctl" -D "$data" -l "$tmp/postgresql.log" -w start >/dev/null
pg_started=1
echo "PostgreSQL $("${as_pg[@]}" "$bindir/psql" -h "$tmp" -U postgres -d postgres -XAtc 'SHOW server_version'), pid $(head -1 "$data/postmaster.pid"), socket in $tmp"

# Wait for the keeper to create the extension in idgen.database, then the
# setup SQL of docs/service.md: its first sql block
for i in $(seq 100); do
	"${as_pg[@]}" "$bindir/psql" -h "$tmp" -U postgres -d postgres -XAtc \
		"SELECT 1 FROM pg_extension WHERE extname = 'idgen'" 2>/dev/null | grep -q 1 && break
	sleep 0.1
done
awk '/^```sql$/ { on = 1; next } on && /^```$/ { exit } on' "$docs" \
	| "${as_pg[@]}" "$bindir/psql" -h "$tmp" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 >/dev/null

cat >"$tmp/config.json" <<EOF
{
  "listen": { "host": "127.0.0.1", "port": $port },
  "database": { "host": "$tmp", "database": "postgres", "user": "idgen_service" },
  "buffer": { "size": 10000, "refill_below": 5000, "chunk": 5000 },
  "namespaces": { "1": "legacy" }
}
EOF
echo "service configuration: buffer 10000, refill below 5000, chunks of 5000; generator legacy of docs/service.md"
cd "$service"
node bench/bench.js "$tmp/config.json" "$@"
