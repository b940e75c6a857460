#!/usr/bin/env bash
# Run idgen's suites under AddressSanitizer and UndefinedBehaviorSanitizer.
# Any sanitizer report fails the run, even when every suite passes.
#
#   bash scripts/sanitize.sh              quick: idgen instrumented, PostgreSQL 17 not
#   bash scripts/sanitize.sh --full       PostgreSQL 17 instrumented too, every suite
#   bash scripts/sanitize.sh --tap "t/014_counter_generators.pl"   other TAP tests
#   bash scripts/sanitize.sh --keep       keep the work directory, even on success
#
# Quick (the default, a few minutes once PostgreSQL 17 is built): idgen is
# built with -fsanitize=address,undefined (and -fno-wrapv, see below)
# against the PostgreSQL 17 of scripts/pg.sh, installed into a private copy
# of that installation (never into the shared one), and the servers run
# with gcc's ASan runtime preloaded (PostgreSQL itself is not
# instrumented, only idgen's code is checked).  It runs pg_regress, the
# isolation suite and the TAP tests of the keeper, named generators and
# counters ($quick_tap below).
#
# Full (--full): PostgreSQL 17 itself is built with the same sanitizers,
# from the same Debian source package, by scripts/pg.sh into
# $IDGEN_PG_CACHE/pg17-asan (once, reused later; about 15 minutes on 2
# cores), and every suite runs, every TAP test included (with --tap, only
# those).
#
# No suppression file: PostgreSQL 17 runs without a report at both levels,
# its uninstrumented code under the preloaded runtime as well as its
# instrumented build.  Should one of its own reports ever need hiding, it
# goes in a suppression file with the reason, never one of idgen's.
#
# Run as root, like the other scripts; the build and the servers run as the
# postgres user, on Unix sockets only, in a directory under /tmp that the
# run removes (kept on failure or with --keep).  The sanitizers write their
# reports to files there (log_path); after the suites the run reads those
# and the server logs, and counts every report.  Ends with one line
# "sanitizers: N suites passed, M failed, R reports" and exits non-zero if
# a suite failed or R is not 0.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# TAP tests of the quick run: the keeper's durable reservation and its
# backoff, counters (striping, logical replication, fail-closed at the
# reservation), named generators (under concurrency, across restarts, with
# the clock stepped by libfaketime) and their lookup by the keeper.  About
# two minutes under the sanitizers on 2 cores.
quick_tap="t/010_keeper_durability.pl t/013_named_generators.pl t/014_counter_generators.pl t/016_registry_lookup.pl t/029_counter_fail_closed.pl"

usage() {
	echo "usage: $(basename "$0") [--full] [--tap \"t/NNN_x.pl ...\"] [--keep]" >&2
	exit 2
}
full="" tap="" keep=""
while [ $# -gt 0 ]; do
	case $1 in
		--full) full=1 ;;
		--tap) [ $# -ge 2 ] || usage; tap=$2; shift ;;
		--tap=*) tap=${1#--tap=} ;;
		--keep) keep=1 ;;
		*) usage ;;
	esac
	shift
done

require_root
# a test build, with idgen.test_clock, which the TAP tests use
export IDGEN_TEST_BUILD=1
install_packages
libasan=$(gcc -print-file-name=libasan.so)
[ -e "$libasan" ] || { echo "$(basename "$0"): gcc's libasan not found" >&2; exit 1; }

san_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
t0=$SECONDS

work=$(mktemp -d /tmp/san-work.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/reports" "$work/tmp"
chown postgres: "$work/reports" "$work/tmp"

# Sanitizer settings for every process of the run.  detect_leaks=0:
# PostgreSQL frees by memory context and exits without freeing, so leak
# reports would be noise.  detect_stack_use_after_return=0: its fake
# stacks would confuse PostgreSQL's stack depth check.  Reports go to
# files, one per process, which the run reads at the end.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:print_stacktrace=1:detect_stack_use_after_return=0:log_path=$work/reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$work/reports/ubsan"
# With --full every PostgreSQL program carries the runtime, so ASan may
# start behind libfaketime in any of them (pg_ctl too; see the wrapper
# below).
[ -z "$full" ] || ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0"

if [ -n "$full" ]; then
	say "PostgreSQL 17 built with the sanitizers (scripts/pg.sh)"
	t_pg=$SECONDS
	# configure's test programs and the build's tools run instrumented too;
	# their reports are not idgen's and go to stderr, not to the run's files
	config=$(IDGEN_PG_VARIANT=asan IDGEN_PG_EXTRA_CFLAGS="$san_flags" \
		ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
		bash "$IDGEN_SRC/scripts/pg.sh" 17) || exit 1
	echo "PostgreSQL ready in $(duration $((SECONDS - t_pg)))"
else
	config=$(bash "$IDGEN_SRC/scripts/pg.sh" 17) || exit 1
fi

# A private copy of the installation, so that idgen built with the
# sanitizers never lands in the one the other scripts share.
pgdir=$work/pg
cp -a "$(dirname "$("$config" --bindir)")" "$pgdir"
PG_CONFIG=$pgdir/bin/pg_config
# Every server (and initdb's bootstrap) starts through a wrapper.
#
# Quick: uninstrumented PostgreSQL loads the instrumented idgen.so, so the
# wrapper preloads the ASan runtime.  The server keeps the wrapper's path
# as its own (exec -a): pg_ctl restart starts the command line the server
# recorded in postmaster.opts, which must be the wrapper again.  A server
# started without the runtime stops at once ("ASan runtime does not come
# first"), which counts as a report.
#
# Both: tests that run a server under libfaketime (fake_clock in
# t/IdgenTest.pm) preload it.  It must come before the ASan runtime: the
# other way round a process hangs before main, since gcc 12's ASan
# allocator reads the clock while it holds its lock, and libfaketime's
# clock_gettime looks up the real one with dlsym on first use, which
# allocates.  ASan refuses to start behind another preloaded library
# unless told not to check (verify_asan_link_order=0), which the wrapper
# does only then; libfaketime replaces no allocator function.
mv "$pgdir/bin/postgres" "$pgdir/bin/postgres.real"
if [ -n "$full" ]; then
	runtime=""
else
	runtime=$libasan
fi
cat >"$pgdir/bin/postgres" <<EOF
#!/bin/bash
if [ -n "\$LD_PRELOAD" ]; then
	export ASAN_OPTIONS="\$ASAN_OPTIONS:verify_asan_link_order=0"
fi
${runtime:+export LD_PRELOAD="\${LD_PRELOAD:+\$LD_PRELOAD:}$runtime"}
exec -a "\$0" "\${0%/*}/postgres.real" "\$@"
EOF
chmod 755 "$pgdir/bin/postgres"

src=$(private_copy)
# PostgreSQL compiles with -fwrapv, which makes signed overflow defined
# and so hides it from UndefinedBehaviorSanitizer.  idgen's own code does
# not rely on wrapping (bit layouts and tick arithmetic must not wrap
# silently), so its files are built with -fno-wrapv here: a signed
# overflow in idgen is then a report.  PostgreSQL keeps -fwrapv.
IDGEN_CFLAGS="$IDGEN_CFLAGS $san_flags -fno-wrapv"
build_and_install "$src" || { echo "*** building idgen with the sanitizers FAILED (kept in $work, $src)"; exit 1; }

mk() {
	runuser -u postgres -- env ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" \
		TMPDIR="$work/tmp" PATH="$pgdir/bin:$PATH" \
		make -C "$src" -s PG_CONFIG="$PG_CONFIG" "$@"
}
passed=0 failed=0 report=""
run_suite() {
	local name=$1 t=$SECONDS
	shift
	say "sanitizers: $name"
	if mk installcheck "$@"; then
		passed=$((passed + 1))
		report="$report, $name ok $(duration $((SECONDS - t)))"
	else
		failed=$((failed + 1))
		report="$report, $name FAILED $(duration $((SECONDS - t)))"
		echo "*** sanitizers: $name FAILED"
	fi
}
if [ -n "$tap" ]; then
	tap_tests=$tap
elif [ -n "$full" ]; then
	tap_tests=$(cd "$src" && echo t/[0-9]*.pl)
else
	tap_tests=$quick_tap
fi

run_suite pg_regress ISOLATION= TAP_TESTS=
run_suite isolation REGRESS= TAP_TESTS=
if [ -n "$tap_tests" ]; then
	run_suite TAP REGRESS= ISOLATION= PROVE_FLAGS=--verbose PROVE_TESTS="$tap_tests"
fi

# Every report: the sanitizers' own files, and the server logs (pg_regress
# in log/, isolation in output_iso/log/, TAP in tmp_check/log/), since not
# every report honours log_path: UndefinedBehaviorSanitizer's, from the
# instrumented idgen in an uninstrumented server, go to the server's
# stderr, which is its log.
pattern='==[0-9]+==ERROR: |runtime error:|ASan runtime does not come first'
reports=0
for f in "$work"/reports/* "$src"/log/* "$src"/output_iso/log/* "$src"/tmp_check/log/*; do
	[ -f "$f" ] || continue
	n=$(grep -cE "$pattern" "$f" || true)
	[ "$n" -gt 0 ] || continue
	reports=$((reports + n))
	say "sanitizer report in $f"
	grep -E -A 40 "$pattern" "$f" | head -n 80
done

if [ "$failed" -ne 0 ]; then
	for f in "$src"/regression.diffs "$src"/output_iso/regression.diffs; do
		[ -s "$f" ] && { say "$f"; head -n 200 "$f"; }
	done
	for f in "$src"/tmp_check/log/regress_log_*; do
		[ -e "$f" ] && grep -qE 'not ok|Looks like your test (exited|died)|Bail out' "$f" &&
			{ say "$f (last 60 lines)"; tail -n 60 "$f"; }
	done
fi

level=${full:+full (PostgreSQL 17 and idgen instrumented)}
level=${level:-quick (idgen instrumented, PostgreSQL 17 preloading the ASan runtime)}
say "summary"
echo "$level: ${report#, }; total $(duration $((SECONDS - t0)))"
if [ "$failed" -ne 0 ] || [ "$reports" -ne 0 ] || [ -n "$keep" ]; then
	echo "output kept in $work and $src"
else
	rm -rf "$work" "$src"
fi
echo "sanitizers: $passed suites passed, $failed failed, $reports reports"
[ "$failed" -eq 0 ] && [ "$reports" -eq 0 ]
