#!/usr/bin/env bash
# Build Citus into the PostgreSQL of PG_CONFIG, for t/040_citus.pl.
#
#   bash scripts/citus.sh /var/cache/idgen/pg17/bin/pg_config
#
# Does nothing (and succeeds) when that PostgreSQL already has citus.so,
# when it is older than 16 (Citus 14 supports PostgreSQL 16 to 18), or
# when the Citus source tarball is not there.  The tarball is not part of
# idgen: it is looked for in ../shared/vendor beside the repository
# (IDGEN_VENDOR overrides), unpacked into a temporary directory, built
# there and installed; the sources never enter the repository.  Run as
# root: it installs Debian packages Citus needs to build and writes into
# the PostgreSQL installation.  Progress goes to stderr.
set -euo pipefail

config=${1:?usage: citus.sh PG_CONFIG}
citus_version=14.0.1
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vendor=${IDGEN_VENDOR:-$src/../shared/vendor}
tarball=$vendor/citus-$citus_version.tar.gz
log() { printf '%s\n' "citus.sh: $*" >&2; }

pg_num=$("$config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
if [ "$pg_num" -lt 16 ]; then
	log "PostgreSQL $pg_num: Citus $citus_version needs 16 or later, nothing to do"
	exit 0
fi
if [ -e "$("$config" --pkglibdir)/citus.so" ]; then
	log "PostgreSQL $pg_num already has citus.so, nothing to do"
	exit 0
fi
if [ ! -f "$tarball" ]; then
	log "no $tarball: t/040_citus.pl will skip on PostgreSQL $pg_num"
	exit 0
fi

# What Citus' configure and build need beyond PostgreSQL's own build
# (PostgreSQL's headers and libpq come from PG_CONFIG): a C compiler and
# make.  libcurl, lz4 and zstd are optional and left out.
missing=""
for p in build-essential; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	log "installing from Debian:$missing"
	# IDGEN_APT_LOCK of common.sh; -o: not passed on (common.sh says why)
	flock -o /var/lock/idgen-apt.lock bash -c 'apt-get update -qq >&2 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2' \
		_ $missing
fi

work=$(mktemp -d /tmp/idgen-citus.XXXXXX)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$tarball"
cd "$work/citus-$citus_version"
t0=$SECONDS
log "building Citus $citus_version for PostgreSQL $pg_num (a few minutes)"
./configure PG_CONFIG="$config" --without-libcurl --without-lz4 --without-zstd \
	>"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log" >&2; exit 1; }
{
	make -j"$(nproc)"
	make install
} >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; exit 1; }
log "installed Citus $citus_version into PostgreSQL $pg_num in $((SECONDS - t0))s"
