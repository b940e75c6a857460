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
#
# With 15 among the versions, it also builds the Debian package and tests
# it installed (scripts/test-deb.sh), and runs the libFuzzer targets
# (scripts/fuzz.sh): two more suites.  With 17, it runs idgen under the
# sanitizers (scripts/sanitize.sh), one more.
#
# Prints a summary per version and ends with one line
# "suites: N passed, M failed" (three suites per version, the package,
# the sanitizers and the fuzz targets); exits non-zero
# if any suite failed.  On failure it shows the diffs and the failing TAP
# logs and keeps that version's test directory.
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	echo "usage: $(basename "$0") [--pg \"$IDGEN_PG_VERSIONS\"] [--sanitize-full]" >&2
	exit 2
}
versions=$IDGEN_PG_VERSIONS
sanitize=""
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || usage; versions=$2; shift ;;
		--pg=*) versions=${1#--pg=} ;;
		--sanitize-full) sanitize=--full ;;
		-h|--help) usage ;;
		*) usage ;;
	esac
	shift
done
versions=$(check_pg_versions "$versions") || exit 2

require_root
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
old_install=""
install_old() {
	[ -n "$old_install" ] && return 0
	local config
	if ! config=$(bash "$IDGEN_SRC/scripts/pg.sh" "$upgrade_from"); then
		echo "*** PostgreSQL $upgrade_from is not available (needed by t/021_pg_upgrade.pl)"
		old_install=/nonexistent/postgresql-$upgrade_from
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
	old_install=$(dirname "$("$config" --bindir)")
}

total_passed=0 total_failed=0
summary=()
for version in $versions; do
	say "PostgreSQL $version"
	t0=$SECONDS
	passed=0 failed=0 report="" label="PostgreSQL $version"
	extra_env=(IDGEN_NODE_REQUIRED=1 IDGEN_ETCD_REQUIRED=1 IDGEN_NPM_CACHE="$npm_cache")
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
		summary+=("$label: not available: 0 passed, 3 failed")
		total_failed=$((total_failed + 3))
		continue
	fi
	label="PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}')"
	work=$(private_copy)
	if ! build_and_install "$work"; then
		echo "*** building or installing idgen for PostgreSQL $version FAILED (kept in $work)"
		summary+=("$label: build FAILED: 0 passed, 3 failed")
		total_failed=$((total_failed + 3))
		continue
	fi
	[ "$version" = "$upgrade_from" ] && old_install=$(dirname "$PG_BIN")
	if [ "$version" = 18 ]; then
		install_old
		extra_env+=(IDGEN_OLD_INSTALL="$old_install")
	fi
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
	run_suite TAP REGRESS= ISOLATION= PROVE_FLAGS=--verbose

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
	summary+=("$label: $passed passed, $failed failed (build $(duration "$t_build")$report; total $(duration $((SECONDS - t0))))")
	total_passed=$((total_passed + passed))
	total_failed=$((total_failed + failed))
done

# The Debian package (debian/): scripts/test-deb.sh builds it, installs
# it with apt-get into Debian's PostgreSQL 15 (taking out the idgen built
# from the tree first), runs the pg_regress and isolation suites against
# it, purges it, and leaves idgen installed from the tree again.  It
# counts as one more suite, after the PostgreSQL 15 suites have finished.
case " $versions " in
	*" 15 "*)
		say "Debian package postgresql-15-idgen"
		deb_log=$(mktemp)
		if bash "$IDGEN_SRC/scripts/test-deb.sh" 2>&1 | tee "$deb_log"; then
			total_passed=$((total_passed + 1))
		else
			total_failed=$((total_failed + 1))
		fi
		summary+=("$(tail -n 1 "$deb_log")")
		rm -f "$deb_log"
		;;
esac

# The sanitizers (scripts/sanitize.sh): idgen built with AddressSanitizer
# and UndefinedBehaviorSanitizer, run in PostgreSQL 17 (pg_regress,
# isolation and a few TAP tests; with --sanitize-full, PostgreSQL built
# with them too and every suite).  One more suite; any report fails it.
case " $versions " in
	*" 17 "*)
		say "sanitizers"
		san_log=$(mktemp)
		if bash "$IDGEN_SRC/scripts/sanitize.sh" $sanitize 2>&1 | tee "$san_log"; then
			total_passed=$((total_passed + 1))
		else
			total_failed=$((total_failed + 1))
		fi
		summary+=("$(tail -n 1 "$san_log")")
		rm -f "$san_log"
		;;
esac

# The libFuzzer targets of the parsers (scripts/fuzz.sh, fuzz/): built
# against PostgreSQL 15's headers and bitcode, 10 s each, one more suite.
# A crash or a failed property fails it and keeps the input.
case " $versions " in
	*" 15 "*)
		say "libFuzzer targets"
		fuzz_log=$(mktemp)
		if bash "$IDGEN_SRC/scripts/fuzz.sh" 2>&1 | tee "$fuzz_log"; then
			fuzz_ok=1
		else
			fuzz_ok=0
		fi
		fuzz_line=$(sed -n 's/^==> \(fuzzed .*\)/\1/p' "$fuzz_log" | tail -n 1)
		if [ "$fuzz_ok" = 1 ]; then
			total_passed=$((total_passed + 1))
			summary+=("libFuzzer: ${fuzz_line:-ok}")
		else
			total_failed=$((total_failed + 1))
			summary+=("libFuzzer: FAILED (${fuzz_line:-see above})")
		fi
		rm -f "$fuzz_log"
		;;
esac

say "summary"
printf '%s\n' "${summary[@]}"
echo "suites: $total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
