#!/usr/bin/env bash
# Install what is missing, then for each PostgreSQL version (default: 15,
# 17 and 18): get that PostgreSQL (scripts/pg.sh), build idgen warning-free
# and install it, and run every test suite: pg_regress, isolation, TAP.
# Each suite starts its own servers (Unix sockets only) and stops them.
#
#   bash scripts/test-it.sh                 15, 17 and 18
#   bash scripts/test-it.sh --pg "17 18"    only these
#   bash scripts/test-it.sh --sanitize-full also PostgreSQL 17 built with
#                                           the sanitizers, every suite on it
#   bash scripts/test-it.sh --serial        one lane and one test at a time
#
# With 15 among the versions, it also builds the Debian package and tests
# it installed (scripts/test-deb.sh), and runs the libFuzzer targets
# (scripts/fuzz.sh): two more suites.  With 17, it runs idgen under the
# sanitizers (scripts/sanitize.sh), one more.  With 18, it tests the
# release archives (scripts/test-dist.sh: make dist, idgen installed from
# the zip, the pg_regress and isolation suites from the tarball), one
# more.
#
# The versions run at the same time, in lanes of their own: 15 then the
# package then the fuzz targets; 17 then the sanitizers; 18 then the
# release archives.  A version
# built from source (17, 18) is built in its lane, while 15's suites run.
# Within a version the TAP tests run IDGEN_TEST_JOBS at a time (default
# 3; prove -j).  Their servers, etcd and services take ports through
# PostgreSQL's get_free_port, which every lane shares (PG_TEST_PORT_DIR).
# --serial runs the lanes one after another, each test alone
# (IDGEN_TEST_JOBS=1): slower, for a machine that is short of memory or
# to tell a race between tests from a failure of one.
#
# Each lane writes to a log of its own; they are printed whole, in order,
# once every lane has ended (a line a minute says what is running).  Then
# a summary per version, with its count of TAP assertions, and one line
# "suites: N passed, M failed" (three suites per version, the package,
# the sanitizers, the fuzz targets and the release archives); exits
# non-zero if any suite
# failed.  On failure it shows the diffs and the failing TAP logs and
# keeps that version's test directory.
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	echo "usage: $(basename "$0") [--pg \"$IDGEN_PG_VERSIONS\"] [--sanitize-full] [--serial]" >&2
	exit 2
}
versions=$IDGEN_PG_VERSIONS
sanitize=""
serial=""
jobs=${IDGEN_TEST_JOBS:-3}
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || usage; versions=$2; shift ;;
		--pg=*) versions=${1#--pg=} ;;
		--sanitize-full) sanitize=--full ;;
		--serial) serial=1 jobs=1 ;;
		-h|--help) usage ;;
		*) usage ;;
	esac
	shift
done
versions=$(check_pg_versions "$versions") || exit 2
case $jobs in
	[1-9] | [1-9][0-9]) ;;
	*) echo "$(basename "$0"): IDGEN_TEST_JOBS must be a number from 1 to 99" >&2; exit 2 ;;
esac

require_root
# A test build of idgen: the TAP tests freeze its clock with the setting
# idgen.test_clock, which only a test build has.
export IDGEN_TEST_BUILD=1
install_packages etcd-server etcd-client
# t/071_sqlsmith.pl runs SQLsmith, in the PostgreSQL 15 suite only (like
# t/070_api_fuzz.pl: the SQL API is the same on every version); there it
# must run, not skip.
install_packages sqlsmith
export IDGEN_SQLSMITH_REQUIRED=1
# t/031_node_client.pl runs a real node-postgres client: it needs node and
# npm (Debian's nodejs and npm, unless some node and npm are installed
# already, as from NodeSource, whose nodejs conflicts with Debian's npm),
# and npm installs the package "pg" from the registry, or from the npm
# cache kept here between runs (it then works offline).  With
# IDGEN_NODE_REQUIRED the test fails instead of skipping when it cannot.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	install_packages nodejs npm
fi
npm_cache=${IDGEN_PG_CACHE:-/var/cache/idgen}/npm
mkdir -p "$npm_cache"
chown postgres: "$npm_cache"
# t/060_pgbouncer.pl, t/061_partman.pl and t/062_patroni.pl run on
# PostgreSQL 15 only, with Debian's pgbouncer, pg_partman
# (postgresql-15-partman installs into Debian's PostgreSQL 15, the one
# scripts/pg.sh uses) and Patroni (whose service starts only once
# /etc/patroni/config.yml exists; the test runs its own).  On 15 they
# fail, rather than skip, when the component is missing.
# Debian's pgbouncer package starts a service of its own (on localhost);
# the test starts its own pgbouncer, so a service this run installed is
# stopped again.
case " $versions " in
	*" 15 "*)
		had_pgbouncer=$(dpkg-query -W -f='${Status}' pgbouncer 2>/dev/null || true)
		install_packages pgbouncer postgresql-15-partman patroni
		if [ "$had_pgbouncer" != "install ok installed" ]; then
			systemctl stop pgbouncer >/dev/null 2>&1 ||
				service pgbouncer stop >/dev/null 2>&1 || true
		fi
		;;
esac

# t/021_pg_upgrade.pl runs pg_upgrade on a cluster with idgen in use, from
# an older PostgreSQL to the one under test.  It runs in the PostgreSQL 18
# suite, which gets the old installation through IDGEN_OLD_INSTALL; idgen
# must be installed there too, also when that version is not tested in
# this run.  The old version is IDGEN_UPGRADE_FROM, 17 by default: Debian
# 12's PostgreSQL 15.20 gives every column an attribute option
# (pg_attver) that the PostgreSQL 18.6 of Debian's source package does not
# know, so pg_upgrade from that 15 to that 18 fails on any table, idgen or
# not.  IDGEN_UPGRADE_FROM=15 tries it anyway.
upgrade_from=${IDGEN_UPGRADE_FROM:-17}
check_pg_versions "$upgrade_from" >/dev/null || exit 2
# The lanes share a state directory: each lane's log, its results
# (results.LANE: "passed failed" and summary lines) and the marker by which
# the lane of $upgrade_from tells the 18 lane where idgen is installed.
state=$(mktemp -d /tmp/idgen-test-it.XXXXXX)
chmod 755 "$state"
# One directory of port reservations for every server, etcd and service
# that the lanes' tests start (PostgreSQL's get_free_port locks a port in
# it; without it each version's tests would reserve ports apart).
export PG_TEST_PORT_DIR=$state/portlock
mkdir -p "$PG_TEST_PORT_DIR"
chown postgres: "$PG_TEST_PORT_DIR"

# Where idgen is installed for t/021_pg_upgrade.pl: in this run's lane of
# $upgrade_from, which writes the marker once idgen is installed there,
# or here, for a run that does not test that version.
old_marker=$state/old-install
install_old() {
	local config dir
	if ! config=$(bash "$IDGEN_SRC/scripts/pg.sh" "$upgrade_from"); then
		echo "*** PostgreSQL $upgrade_from is not available (needed by t/021_pg_upgrade.pl)"
		echo "/nonexistent/postgresql-$upgrade_from" >"$old_marker"
		return 0
	fi
	(
		PG_CONFIG=$config
		w=$(private_copy)
		build_and_install "$w" >/dev/null
		rc=$?
		rm -rf "$w"
		exit $rc
	) || echo "*** could not install idgen into PostgreSQL $upgrade_from (needed by t/021_pg_upgrade.pl)"
	# set even after a failure, so that t/021 fails visibly instead of skipping
	dir=$(dirname "$("$config" --bindir)")
	echo "$dir" >"$old_marker"
}
wait_old() {
	local waited=0
	while [ ! -s "$old_marker" ]; do
		sleep 5
		waited=$((waited + 5))
		if [ "$waited" -ge 3600 ]; then
			echo "*** no idgen in PostgreSQL $upgrade_from after an hour (needed by t/021_pg_upgrade.pl)"
			echo "/nonexistent/postgresql-$upgrade_from" >"$old_marker"
		fi
	done
	cat "$old_marker"
}

# Record a result of lane $lane: one suite passed or failed, or a line of
# the summary.
result() { echo "$2" >>"$state/results.$lane.$1"; }

# pg_regress, isolation and TAP on PostgreSQL $1, in lane $lane.
run_version() {
	local version=$1 t0=$SECONDS passed=0 failed=0 report="" label="PostgreSQL $1"
	local work t_build t_citus had_citus tap_log assertions=""
	say "PostgreSQL $version"
	extra_env=(IDGEN_NODE_REQUIRED=1 IDGEN_ETCD_REQUIRED=1 IDGEN_EXPORTER_REQUIRED=1 IDGEN_NPM_CACHE="$npm_cache")
	if [ "$version" = 15 ]; then
		extra_env+=(IDGEN_PGBOUNCER_REQUIRED=1 IDGEN_PARTMAN_REQUIRED=1 IDGEN_PATRONI_REQUIRED=1)
	fi
	# t/072_soak.pl, the fault-injecting soak (about 100 s), runs in the
	# PostgreSQL 17 suite only, where no other integration test runs.
	if [ "$version" = 17 ]; then
		extra_env+=(IDGEN_SOAK=1)
	fi

	if ! use_pg "$version"; then
		echo "*** PostgreSQL $version is not available"
		[ "$version" = "$upgrade_from" ] && echo "/nonexistent/postgresql-$version" >"$old_marker"
		result summary "$label: not available: 0 passed, 3 failed"
		result failed 3
		return 0
	fi
	label="PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}')"
	work=$(private_copy)
	if ! build_and_install "$work"; then
		echo "*** building or installing idgen for PostgreSQL $version FAILED (kept in $work)"
		[ "$version" = "$upgrade_from" ] && echo "/nonexistent/postgresql-$version" >"$old_marker"
		result summary "$label: build FAILED: 0 passed, 3 failed"
		result failed 3
		return 0
	fi
	[ "$version" = "$upgrade_from" ] && dirname "$PG_BIN" >"$old_marker"
	# t/040_citus.pl runs on a Citus cluster: scripts/citus.sh builds
	# Citus into this PostgreSQL from ../shared/vendor when it is missing
	# (nothing on 15).  With the sources there, the test must run, not skip.
	if [ "$version" -ge 16 ]; then
		t_citus=$SECONDS
		had_citus=$([ -e "$("$PG_CONFIG" --pkglibdir)/citus.so" ] && echo y || true)
		bash "$IDGEN_SRC/scripts/citus.sh" "$PG_CONFIG" ||
			echo "*** building Citus for PostgreSQL $version FAILED (t/040_citus.pl will fail)"
		if [ -z "$had_citus" ]; then
			report=", Citus build $(duration $((SECONDS - t_citus)))"
		fi
		if [ -f "${IDGEN_VENDOR:-$IDGEN_SRC/../shared/vendor}/citus-14.0.1.tar.gz" ]; then
			extra_env+=(IDGEN_CITUS_REQUIRED=1)
		fi
	fi
	t_build=$((SECONDS - t0))

	mk() { runuser -u postgres -- env "${extra_env[@]}" make -C "$work" -s PG_CONFIG="$PG_CONFIG" "$@"; }

	# Run the three suites separately so that one failing does not hide
	# the others; each is a slice of "make installcheck".
	run_suite() {
		local name=$1 t=$SECONDS
		shift
		say "PostgreSQL $version: $name"
		if mk installcheck "$@"; then
			passed=$((passed + 1))
			report="$report, $name ok $(duration $((SECONDS - t)))"
		else
			failed=$((failed + 1))
			report="$report, $name FAILED $(duration $((SECONDS - t)))"
			echo "*** PostgreSQL $version: $name FAILED"
		fi
	}
	run_suite pg_regress ISOLATION= TAP_TESTS=
	run_suite isolation REGRESS= TAP_TESTS=
	if [ "$version" = 18 ]; then
		extra_env+=(IDGEN_OLD_INSTALL="$(wait_old)")
	fi
	# prove's own summary ("Files=47, Tests=1125, ...") gives the count
	# of assertions, which the summary line shows.
	tap_log=$state/tap.$version
	say "PostgreSQL $version: TAP, $jobs tests at a time (the output follows when they end)"
	run_suite TAP REGRESS= ISOLATION= PROVE_FLAGS="-j$jobs --timer" >"$tap_log" 2>&1
	cat "$tap_log"
	assertions=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' "$tap_log" | tail -n 1)

	if [ "$failed" -ne 0 ]; then
		for f in "$work"/regression.diffs "$work"/output_iso/regression.diffs; do
			[ -s "$f" ] && { say "$f"; cat "$f"; }
		done
		# failed assertions, and tests that died or bailed out midway
		for f in "$work"/tmp_check/log/regress_log_*; do
			[ -e "$f" ] && grep -qE 'not ok|Looks like your test (exited|died)|Bail out' "$f" || continue
			# why first (an SQL error or a timeout that ended the test), then the end
			say "$f (what failed)"
			grep -E '\([0-9.]+s\) (not ok|#   Failed test)|error running SQL|timed out|died|Bail out' "$f" | head -n 20 || true
			say "$f (last 80 lines)"
			tail -n 80 "$f"
		done
		echo "test output for PostgreSQL $version kept in $work"
	else
		rm -rf "$work"
	fi
	result summary "$label: $passed passed, $failed failed (build $(duration "$t_build")$report; ${assertions:-no} TAP assertions; total $(duration $((SECONDS - t0))))"
	result passed "$passed"
	result failed "$failed"
}

# The Debian package (debian/): scripts/test-deb.sh builds it, installs
# it with apt-get into Debian's PostgreSQL 15 (taking out the idgen built
# from the tree first), runs the pg_regress and isolation suites against
# it, purges it, and leaves idgen installed from the tree again.  It
# counts as one more suite, in the lane of 15 after its suites.
run_deb() {
	local log=$state/deb.log
	say "Debian package postgresql-15-idgen"
	if bash "$IDGEN_SRC/scripts/test-deb.sh" >"$log" 2>&1; then
		result passed 1
	else
		result failed 1
	fi
	cat "$log"
	result summary "$(tail -n 1 "$log")"
}

# The sanitizers (scripts/sanitize.sh): idgen built with AddressSanitizer
# and UndefinedBehaviorSanitizer, run in a private copy of PostgreSQL 17
# (pg_regress, isolation and a few TAP tests; with --sanitize-full,
# PostgreSQL built with them too and every suite).  One more suite, in
# the lane of 17; any report fails it.
run_sanitizers() {
	local log=$state/sanitize.log
	say "sanitizers"
	if bash "$IDGEN_SRC/scripts/sanitize.sh" $sanitize >"$log" 2>&1; then
		result passed 1
	else
		result failed 1
	fi
	cat "$log"
	result summary "$(tail -n 1 "$log")"
}

# The libFuzzer targets of the parsers (scripts/fuzz.sh, fuzz/): built
# against PostgreSQL 15's headers and bitcode, 10 s each, one more suite.
# A crash or a failed property fails it and keeps the input.
run_fuzz() {
	local log=$state/fuzz.log ok line
	say "libFuzzer targets"
	if bash "$IDGEN_SRC/scripts/fuzz.sh" >"$log" 2>&1; then ok=1; else ok=0; fi
	cat "$log"
	line=$(sed -n 's/^==> \(fuzzed .*\)/\1/p' "$log" | tail -n 1)
	if [ "$ok" = 1 ]; then
		result passed 1
		result summary "libFuzzer: ${line:-ok}"
	else
		result failed 1
		result summary "libFuzzer: FAILED (${line:-see above})"
	fi
}

# The release archives (scripts/test-dist.sh): make dist in a fresh clone
# of HEAD, the checksums, META.json against the PGXN Meta Spec, pgxn
# install of the zip into a private copy of PostgreSQL 18 with no idgen in
# it, and the pg_regress and isolation suites from the unpacked tarball
# against that installation.  One more suite, in the lane of 18; its
# PostgreSQL is scripts/pg.sh's 18, as use_pg finds it.
run_dist() {
	local log=$state/dist.log
	say "release archives (make dist)"
	if PG_CONFIG="" bash "$IDGEN_SRC/scripts/test-dist.sh" >"$log" 2>&1; then
		result passed 1
	else
		result failed 1
	fi
	cat "$log"
	result summary "$(tail -n 1 "$log")"
}

# A lane: what runs after what.  15 takes its package and the fuzz
# targets, 17 the sanitizers, 18 the release archives.
run_lane() {
	lane=$1
	run_version "$1"
	case $1 in
		15) run_deb; run_fuzz ;;
		17) run_sanitizers ;;
		18) run_dist ;;
	esac
}

# t/021 in the 18 lane needs idgen installed into $upgrade_from; a run
# without that version's lane installs it first.
case " $versions " in
	*" 18 "*)
		case " $versions " in
			*" $upgrade_from "*) ;;
			*) install_old ;;
		esac
		;;
esac

t_all=$SECONDS
pids=()
lane_versions=()
# Whether lane i still runs: not once it has written its status, whatever
# process its PID has come to name since
lane_running() {
	[ ! -e "$state/lane.${lane_versions[$1]}.rc" ] && kill -0 "${pids[$1]}" 2>/dev/null
}
for version in $versions; do
	if [ -n "$serial" ]; then
		run_lane "$version" >"$state/lane.$version.log" 2>&1 || true
		cat "$state/lane.$version.log"
	else
		# a lane that ends writes its status, 0 (one that a fault of this
		# script stops, under errexit, writes nothing, which counts as a
		# failure): bash forgets a finished job's status once its PID is
		# reused, and a run forks so many processes that PIDs wrap (32,768
		# by default) before it ends
		{ run_lane "$version"; echo $? >"$state/lane.$version.rc"; } \
			>"$state/lane.$version.log" 2>&1 &
		pids+=($!)
		lane_versions+=("$version")
	fi
done
if [ -z "$serial" ]; then
	# a line a minute while the lanes run: which are still at work, and
	# at what (the last "==>" line of each)
	while :; do
		running=""
		for i in "${!pids[@]}"; do
			lane_running "$i" && running=y
		done
		[ -n "$running" ] || break
		for _ in $(seq 60); do
			sleep 1
			running=""
			for i in "${!pids[@]}"; do
				lane_running "$i" && running=y
			done
			[ -n "$running" ] || break
		done
		[ -n "$running" ] || break
		line="$(duration $((SECONDS - t_all))):"
		for version in $versions; do
			line="$line [$version: $(sed -n 's/^==> //p' "$state/lane.$version.log" | tail -n 1)]"
		done
		echo "$line"
	done
	# a lane that ended otherwise than by finishing (killed, or a fault of
	# this script: then it wrote no status) fails the run, whatever it
	# recorded
	wait || true
	lane_failed=0
	for version in $versions; do
		[ "$(cat "$state/lane.$version.rc" 2>/dev/null)" = 0 ] ||
			lane_failed=$((lane_failed + 1))
	done
	for version in $versions; do
		say "lane of PostgreSQL $version (its whole log)"
		cat "$state/lane.$version.log"
	done
fi

total_passed=0 total_failed=0
summary=()
for version in $versions; do
	for n in $(cat "$state/results.$version.passed" 2>/dev/null); do
		total_passed=$((total_passed + n))
	done
	for n in $(cat "$state/results.$version.failed" 2>/dev/null); do
		total_failed=$((total_failed + n))
	done
	if [ ! -s "$state/results.$version.summary" ]; then
		# a lane that ended before it could say anything
		summary+=("PostgreSQL $version: the lane ended early: 0 passed, 3 failed")
		total_failed=$((total_failed + 3))
		continue
	fi
	mapfile -t -O "${#summary[@]}" summary <"$state/results.$version.summary"
done
if [ "${lane_failed:-0}" -ne 0 ]; then
	summary+=("$lane_failed lane(s) did not finish: their logs above say where they stopped")
	total_failed=$((total_failed + lane_failed))
fi
rm -rf "$state"

say "summary"
printf '%s\n' "${summary[@]}"
echo "all lanes in $(duration $((SECONDS - t_all)))"
echo "suites: $total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
