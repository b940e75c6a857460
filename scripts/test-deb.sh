#!/usr/bin/env bash
# Build idgen's Debian package for PostgreSQL 15 and test it as a DBA gets
# it: on a PostgreSQL 15 without idgen, install the .deb with apt-get, run
# the pg_regress and isolation suites against the installed package, then
# purge it and check that nothing of idgen is left.
#
#   bash scripts/test-deb.sh      (as root, on Debian 12)
#
# Steps: install the packaging tools; build with dpkg-buildpackage, as the
# "postgres" user, in a copy of the source tree (the tree itself is left
# as it is); lintian (no errors allowed; its warnings are printed); take
# out any idgen installed into PostgreSQL 15 from a source build ("make
# uninstall"); apt-get install ./postgresql-15-idgen_*.deb; check with
# dpkg -L that its files are where this PostgreSQL looks for extensions;
# "make installcheck" for the pg_regress and isolation suites (not TAP),
# which builds nothing, so the servers it starts (temporary, Unix socket
# only) load the package's library; apt-get purge and check that no idgen
# file remains.
#
# Whatever happened, it ends by installing idgen into PostgreSQL 15 from
# the source tree again (as scripts/test-it.sh does), so that what runs
# after it finds PostgreSQL 15 as before, and prints one line:
# "deb: ..." with "ok" or "FAILED" and what failed.  Exits non-zero on any
# failure, keeping its build directory for a look.
set -uo pipefail
. "$(dirname "$0")/common.sh"

t0=$SECONDS
pkg=postgresql-15-idgen
failed=""
fail() {
	failed=$*
	echo "*** $*"
	return 1
}

require_root
install_packages postgresql-server-dev-all debhelper dpkg-dev lintian
use_pg 15 || { echo "deb: FAILED: PostgreSQL 15 is not available"; exit 1; }
pkglibdir=$("$PG_CONFIG" --pkglibdir)
extdir=$("$PG_CONFIG" --sharedir)/extension

# Every idgen file under this PostgreSQL (library, bitcode, SQL, control).
idgen_files() {
	find "$pkglibdir" "$extdir" \( -name 'idgen*' -o -path '*/bitcode/idgen' \) -print 2>/dev/null
}

# The build directory: the package's files land beside the copy.
top=$(mktemp -d /tmp/idgen-deb.XXXXXX)
chmod 755 "$top"
src=$top/idgen
mv "$(private_copy)" "$src"
chown postgres: "$top"
as_postgres() { runuser -u postgres -- env HOME="$top" "$@"; }

run() {
	local log deb lint errors warnings f

	say "building the package (dpkg-buildpackage -us -uc -b) in $src"
	log=$top/build.log
	if ! (cd "$src" && as_postgres dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
		tail -n 40 "$log"
		fail "dpkg-buildpackage failed (log: $log)"
		return 1
	fi
	deb=$(ls "$top"/${pkg}_*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || { fail "dpkg-buildpackage made no $pkg package"; return 1; }
	say "built $(basename "$deb")"

	say "lintian"
	local lint_rc=0
	lint=$(as_postgres lintian "$top"/idgen_*.changes 2>&1) || lint_rc=$?
	[ -n "$lint" ] && printf '%s\n' "$lint"
	errors=$(printf '%s\n' "$lint" | grep -c '^E: ' || true)
	warnings=$(printf '%s\n' "$lint" | grep -c '^W: ' || true)
	lint_report="lintian: $errors errors, $warnings warnings"
	echo "$lint_report"
	[ "$errors" -eq 0 ] || { fail "lintian reports $errors errors"; return 1; }
	# lintian exits non-zero on error tags (none here) or when it cannot run
	[ "$lint_rc" -eq 0 ] || { fail "lintian failed (exit $lint_rc)"; return 1; }

	say "removing idgen from PostgreSQL 15 before installing the package"
	if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q ' installed$'; then
		apt_locked env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "$pkg" >/dev/null
	fi
	make -C "$src" -s PG_CONFIG="$PG_CONFIG" uninstall
	f=$(idgen_files)
	[ -z "$f" ] || { printf '%s\n' "$f"; fail "idgen files remain in PostgreSQL 15 after make uninstall"; return 1; }

	say "apt-get install ./$(basename "$deb")"
	if ! (cd "$top" && apt_locked env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$(basename "$deb")") >"$top/install.log" 2>&1; then
		cat "$top/install.log"
		fail "apt-get install of $(basename "$deb") failed"
		return 1
	fi
	dpkg -L "$pkg" | grep -E '/(idgen[^/]*)$'
	for f in "$pkglibdir/idgen.so" "$extdir/idgen.control" "$extdir/idgen--1.0.sql" "$extdir/idgen--1.0--1.1.sql"; do
		dpkg -L "$pkg" | grep -qxF "$f" || { fail "$pkg does not install $f"; return 1; }
		[ -f "$f" ] || { fail "$f is missing after installing $pkg"; return 1; }
	done
	echo "the package's files are where PostgreSQL 15 looks: $pkglibdir, $extdir"

	# The pg_regress and isolation suites against the package: installcheck
	# builds nothing (PGXS's installcheck needs no "all"), and the tree was
	# cleaned by the package build, so the idgen.so the servers load is the
	# package's.
	say "pg_regress and isolation suites against the installed package"
	log=$top/regress.log
	as_postgres make -C "$src" -s PG_CONFIG="$PG_CONFIG" installcheck TAP_TESTS= >"$log" 2>&1
	local rc=$?
	cat "$log"
	f=$(find "$src" -path "$src/debian" -prune -o \( -name '*.so' -o -name '*.o' \) -print)
	[ -z "$f" ] || { fail "the test step built idgen in the tree ($f)"; return 1; }
	regress_report=$(grep -E '^ *(All [0-9]+ tests passed|[0-9]+ of [0-9]+ tests failed)' "$log" |
		sed 's/^ *//; s/[. ]*$//' |
		awk 'NR == 1 { printf "pg_regress: %s", $0 } NR == 2 { printf ", isolation: %s", $0 }')
	if [ "$rc" -ne 0 ]; then
		for f in "$src/regression.diffs" "$src/output_iso/regression.diffs"; do
			[ -s "$f" ] && cat "$f"
		done
		fail "suites against the package: ${regress_report:-failed}"
		return 1
	fi

	say "apt-get purge $pkg"
	apt_locked env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "$pkg" >/dev/null ||
		{ fail "apt-get purge $pkg failed"; return 1; }
	! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q ' installed$' ||
		{ fail "$pkg is still installed after purge"; return 1; }
	f=$(idgen_files; ls -d /usr/share/doc/$pkg 2>/dev/null)
	[ -z "$f" ] || { printf '%s\n' "$f"; fail "idgen files remain after purging $pkg"; return 1; }
	echo "purged: no idgen file remains in PostgreSQL 15"
}

lint_report="" regress_report=""
run

# Leave PostgreSQL 15 with idgen from the source tree, as before.
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q ' installed$'; then
	apt_locked env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "$pkg" >/dev/null
fi
fresh=$(private_copy)
if build_and_install "$fresh"; then
	rm -rf "$fresh"
else
	rm -rf "$fresh"
	[ -n "$failed" ] || failed="reinstalling idgen into PostgreSQL 15 from the tree failed"
	echo "*** reinstalling idgen into PostgreSQL 15 from the tree failed"
fi

took=$(duration $((SECONDS - t0)))
if [ -n "$failed" ]; then
	echo "build directory kept in $top"
	echo "deb: FAILED: $failed ($took)"
	exit 1
fi
rm -rf "$top"
echo "deb: ok: $pkg built, $lint_report, installed, ${regress_report:-suites passed}, purged clean ($took)"
