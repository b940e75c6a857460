# Shared by scripts/try-it.sh and scripts/test-it.sh (sourced, not run).
#
# Both need, on Debian 12 as root: PostgreSQL 15 and its server headers
# from Debian's packages, idgen built and installed into that PostgreSQL,
# and a copy of the source tree the "postgres" user can write to, since
# initdb and the servers the tests start refuse to run as root.

PG_MAJOR=${PG_MAJOR:-15}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/$PG_MAJOR/bin/pg_config}
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
IDGEN_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Warnings are errors in our code.  PostgreSQL's own headers trip
# -Wunused-parameter and -Wsign-compare under -Wextra, so those two are off.
IDGEN_CFLAGS=${IDGEN_CFLAGS:--Wall -Wextra -Werror -Wno-unused-parameter -Wno-sign-compare}

say() { printf '\n==> %s\n' "$*"; }

require_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "$(basename "$0"): run as root (prefix the command with sudo): it installs packages and idgen itself" >&2
		exit 2
	fi
}

# Install from Debian's packages whatever of these is missing.
install_packages() {
	local want="postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR postgresql-contrib build-essential libipc-run-perl faketime libfaketime $*"
	local missing=""
	for p in $want; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		say "installing from Debian:$missing"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
	fi
}

# Copy the source tree to a fresh directory owned by postgres; print its path.
private_copy() {
	local dir
	dir=$(mktemp -d /tmp/idgen.XXXXXX)
	tar -C "$IDGEN_SRC" --exclude=.git --exclude='tmp_check*' --exclude=results \
		--exclude=output_iso --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - . |
		tar -C "$dir" -xf -
	chown -R postgres: "$dir"
	chmod 755 "$dir"
	echo "$dir"
}

# Build as postgres in the copy, install as root.
build_and_install() {
	local dir=$1
	say "building idgen with $PG_CONFIG"
	runuser -u postgres -- make -C "$dir" -s PG_CONFIG="$PG_CONFIG" PG_CFLAGS="$IDGEN_CFLAGS"
	make -C "$dir" -s PG_CONFIG="$PG_CONFIG" install
}

# Everything both scripts do first: check root, install what is missing,
# copy the tree for postgres, build and install.  Sets $work.
prepare() {
	require_root
	install_packages "$@"
	work=$(private_copy)
	build_and_install "$work"
}
