#!/usr/bin/env bash
# Build idgen's libFuzzer targets (fuzz/fuzz_*.c, each compiled with the
# base-layer files it fuzzes, from src/) and run each for a bounded time.
#
#   bash scripts/fuzz.sh                      every target, 10 s each
#   bash scripts/fuzz.sh --seconds 600        longer
#   bash scripts/fuzz.sh --only "layout codec"
#   bash scripts/fuzz.sh --grow-corpus        merge new inputs into fuzz/corpus/
#
# Each target starts from a copy of its corpus (fuzz/corpus/<target>),
# so a run never changes the repository unless --grow-corpus is given:
# then the inputs that reached new code are merged back, minimised.
#
# Prints, per target: runs executed, corpus size at the end, crashes
# (inputs that crashed, tripped a sanitizer or an Assert, failed a
# property, leaked, or ran too long).  A crash is kept under the work
# directory's crashes/<target>/, shown, and makes the script exit 1;
# the work directory is then kept (otherwise removed, unless --keep).
#
# Needs clang and libclang-rt-14-dev (installed from Debian if missing,
# which needs root) and PostgreSQL 15's server headers, bitcode, and
# static libpgcommon.a and libpgport.a (scripts/pg.sh).  PG_CONFIG may
# name another pg_config; only 15's has been tried.
set -euo pipefail
. "$(dirname "$0")/common.sh"

targets_all="layout codec counter_owned shards clock epoch lease_word sync_flag etcd_answer"

usage() {
	echo "usage: $(basename "$0") [--seconds N] [--only \"$targets_all\"] [--grow-corpus] [--keep]" >&2
	exit 2
}
seconds=10
targets=$targets_all
grow=0
keep=0
while [ $# -gt 0 ]; do
	case $1 in
		--seconds) [ $# -ge 2 ] || usage; seconds=$2; shift ;;
		--seconds=*) seconds=${1#--seconds=} ;;
		--only) [ $# -ge 2 ] || usage; targets=$2; shift ;;
		--only=*) targets=${1#--only=} ;;
		--grow-corpus) grow=1 ;;
		--keep) keep=1 ;;
		*) usage ;;
	esac
	shift
done
case $seconds in '' | *[!0-9]* | 0) usage ;; esac
for t in $targets; do
	case " $targets_all " in *" $t "*) ;; *) echo "$(basename "$0"): no target \"$t\" (targets: $targets_all)" >&2; exit 2 ;; esac
done

# The base-layer files each target compiles besides its own and the stubs.
sources_of() {
	case $1 in
		layout | counter_owned | clock) echo src/base/layout.c src/base/counter.c src/base/ranges.c ;;
		codec) echo src/base/codec.c ;;
		lease_word) echo "" ;;		# the lease word is composed in idgen.h
		sync_flag) echo "" ;;		# the reading is inline in compat.h
		shards) echo src/base/ranges.c ;;	# fuzz_shards.c includes src/base/guc.c
		# fuzz_epoch.c includes src/base/guc.c; PostgreSQL's date and time parser
		# comes from the server's own bitcode, compiled below
		epoch) echo "src/base/ranges.c $work/pg_datetime.o $work/pg_timestamp.o $work/pg_date.o -Wl,--gc-sections -lm" ;;
		# fuzz_etcd_answer.c includes src/lease/etcd.c and the lease files, whose
		# counter floors translate seq values (src/base/counter.c); jsonb
		# from the server's bitcode, its JSON parser from libpgcommon.a
		etcd_answer) echo "src/base/counter.c src/base/ranges.c $work/pg_jsonb.o $work/pg_jsonb_util.o $work/pg_jsonfuncs.o" \
			"$work/pg_json.o $work/pg_numeric.o $work/pg_list.o" \
			"$work/pgcommon/jsonapi.o $work/pgcommon/base64.o $work/pgcommon/wchar.o" \
			"$work/pgcommon/qsort_arg.o -Wl,--gc-sections -lm" ;;
	esac
}

missing=""
for p in clang libclang-rt-14-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	require_root
	install_packages $missing
fi
if [ -z "${PG_CONFIG:-}" ]; then
	if [ -x /usr/lib/postgresql/15/bin/pg_config ] && [ -d /usr/include/postgresql/15/server ]; then
		PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
	else
		require_root
		use_pg 15 || exit 1
	fi
fi
includes=$("$PG_CONFIG" --includedir-server)

work=$(mktemp -d /tmp/idgen-fuzz.XXXXXX)
cleanup() { [ "$keep" = 1 ] || [ "${failed:-0}" != 0 ] || rm -rf "$work"; }
trap cleanup EXIT

cd "$IDGEN_SRC"
case " $targets " in
	*" epoch "*)
		bitcode=$("$PG_CONFIG" --pkglibdir)/bitcode/postgres/utils/adt
		for f in datetime timestamp date; do
			if [ ! -f "$bitcode/$f.bc" ]; then
				echo "$(basename "$0"): $bitcode/$f.bc is missing (a PostgreSQL built without LLVM?): the epoch target needs it" >&2
				exit 1
			fi
			clang -c -O1 -ffunction-sections -fdata-sections -Wno-override-module \
				-o "$work/pg_$f.o" "$bitcode/$f.bc"
		done
		;;
esac
case " $targets " in
	*" etcd_answer "*)
		# jsonb and numeric from the server's bitcode; the JSON lexer and
		# parser (src/common/jsonapi.c), base64 and the encoding tables are
		# not in it: their frontend builds come from libpgcommon.a, and
		# qsort_arg from libpgport.a (both in pkglibdir on Debian)
		bitcode=$("$PG_CONFIG" --pkglibdir)/bitcode/postgres
		for f in utils/adt/jsonb utils/adt/jsonb_util utils/adt/jsonfuncs utils/adt/json \
			utils/adt/numeric nodes/list; do
			if [ ! -f "$bitcode/$f.bc" ]; then
				echo "$(basename "$0"): $bitcode/$f.bc is missing (a PostgreSQL built without LLVM?): the etcd_answer target needs it" >&2
				exit 1
			fi
			clang -c -O1 -ffunction-sections -fdata-sections -Wno-override-module \
				-o "$work/pg_$(basename "$f").o" "$bitcode/$f.bc"
		done
		mkdir -p "$work/pgcommon"
		extract() {			# a static library's name, then the members to take
			local lib=$1 d
			shift
			for d in "$("$PG_CONFIG" --pkglibdir)" "$("$PG_CONFIG" --libdir)"; do
				if [ -f "$d/$lib" ]; then
					(cd "$work/pgcommon" && ar x "$d/$lib" "$@")
					return
				fi
			done
			echo "$(basename "$0"): $lib not found (postgresql-server-dev-15 ships it): the etcd_answer target needs it" >&2
			exit 1
		}
		extract libpgcommon.a jsonapi.o base64.o wchar.o
		extract libpgport.a qsort_arg.o
		;;
esac
say "building $(echo $targets | wc -w) targets with $(clang --version | head -n 1) against $includes"
for t in $targets; do
	# Asserts in, as in a cassert build; every sanitizer report is fatal
	clang -g -O1 -Wall -Werror -Wno-ignored-attributes -DUSE_ASSERT_CHECKING \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-I"$includes" -Isrc -o "$work/fuzz_$t" \
		"fuzz/fuzz_$t.c" $(sources_of "$t") fuzz/stubs.c fuzz/unreached.c
done

say "running each for ${seconds}s (work directory $work)"
failed=0
total_start=$(date +%s)
printf '%-14s %12s %8s %8s %8s\n' target runs corpus crashes time
for t in $targets; do
	corpus=$work/corpus/$t
	crashes=$work/crashes/$t
	mkdir -p "$corpus" "$crashes"
	cp fuzz/corpus/"$t"/* "$corpus"/
	start=$(date +%s)
	rc=0
	"$work/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" \
		>"$work/$t.log" 2>&1 || rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
	ncrash=$(find "$crashes" -type f | wc -l)
	printf '%-14s %12s %8s %8s %7ss\n' "$t" "${runs:-?}" "$(find "$corpus" -type f | wc -l)" \
		"$ncrash" "$(($(date +%s) - start))"
	if [ "$rc" != 0 ] || [ "$ncrash" != 0 ]; then
		failed=$((failed + 1))
		{
			echo "--- $t failed (exit $rc); its log ($work/$t.log) ends:"
			# the failed check or sanitizer report, without libFuzzer's
			# progress lines and the stack frames
			grep -v -e '^#[0-9]' -e 'Uses: ' -e '^ *#[0-9]' -e '^INFO: ' "$work/$t.log" |
				tail -n 25
			for f in "$crashes"/*; do
				[ -f "$f" ] || continue
				echo "--- kept $f ($(wc -c <"$f") bytes), reproduce with: $work/fuzz_$t $f"
				od -An -c "$f" | head -n 8
			done
		} >&2
	elif [ "$grow" = 1 ]; then
		"$work/fuzz_$t" -merge=1 "fuzz/corpus/$t" "$corpus" >>"$work/$t.log" 2>&1
	fi
done
say "fuzzed $(echo $targets | wc -w) targets in $(duration $(($(date +%s) - total_start))): $failed failed"
if [ "$failed" != 0 ]; then
	echo "crashing inputs kept in $work/crashes" >&2
	exit 1
fi
