#!/usr/bin/env bash
# Install what is missing, build and install idgen, and run every test
# suite: pg_regress, isolation, TAP.  Each suite starts its own servers
# (Unix sockets only) and stops them.  Exits non-zero if any suite fails.
set -euo pipefail
. "$(dirname "$0")/common.sh"

prepare

mk() { runuser -u postgres -- make -C "$work" -s PG_CONFIG="$PG_CONFIG" "$@"; }

# Run the three suites separately so that one failing does not hide the
# others; each is a slice of "make installcheck".
passed=0 failed=0
run_suite() {
	local name=$1; shift
	say "$name"
	if mk installcheck "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "*** $name FAILED"
	fi
}
run_suite "pg_regress" ISOLATION= TAP_TESTS=
run_suite "isolation" REGRESS= TAP_TESTS=
run_suite "TAP" REGRESS= ISOLATION= PROVE_FLAGS=--verbose

if [ "$failed" -ne 0 ]; then
	for f in "$work"/regression.diffs "$work"/output_iso/regression.diffs; do
		[ -s "$f" ] && { say "$f"; cat "$f"; }
	done
	for f in "$work"/tmp_check/log/regress_log_*; do
		[ -e "$f" ] && grep -q 'not ok' "$f" && { say "$f (last 80 lines)"; tail -n 80 "$f"; }
	done
	echo "test output kept in $work"
else
	rm -rf "$work"
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
