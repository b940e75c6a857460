# Shared by scripts/try-it.sh, scripts/test-it.sh and bench/bench.sh
# (sourced, not run).
#
# They need, on Debian 12 as root: a PostgreSQL of each version asked for
# (scripts/pg.sh: Debian's packages for 15, a build from Debian's source
# packages for 17 and 18, cached outside the checkout), idgen built and
# installed into it, and a copy of the source tree the "postgres" user can
# write to, since initdb and the servers the tests start refuse to run as
# root.

# Versions these scripts support, in the order test-it.sh runs them.
IDGEN_PG_VERSIONS="15 17 18"
PG_MAJOR=${PG_MAJOR:-15}
IDGEN_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Warnings are errors in our code.  PostgreSQL's own headers trip
# -Wunused-parameter and -Wsign-compare under -Wextra, so those two are off.
IDGEN_CFLAGS=${IDGEN_CFLAGS:--Wall -Wextra -Werror -Wno-unused-parameter -Wno-sign-compare}

say() { printf '\n==> %s\n' "$*"; }

# "75" -> "1m15s"
duration() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

require_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "$(basename "$0"): run as root (prefix the command with sudo): it installs packages and idgen itself" >&2
		exit 2
	fi
}

# Check a "--pg" argument: a space-separated list of supported versions.
# Prints them in ascending order, each once.
check_pg_versions() {
	local v out=""
	for v in $1; do
		case " $IDGEN_PG_VERSIONS " in
			*" $v "*) ;;
			*)
				echo "$(basename "$0"): PostgreSQL $v is not supported (supported: $IDGEN_PG_VERSIONS)" >&2
				return 2
				;;
		esac
		out="$out $v"
	done
	[ -n "$out" ] || { echo "$(basename "$0"): --pg needs at least one version" >&2; return 2; }
	printf '%s\n' $out | sort -n -u | tr '\n' ' ' | sed 's/ $//'
}

# Install from Debian's packages whatever of these is missing (PostgreSQL
# itself comes through scripts/pg.sh).  postgresql-common creates the
# postgres user the servers run as, which a run of PostgreSQL 17 or 18
# alone (built from source) would otherwise lack on a fresh machine.
# test-it.sh runs its lanes at the same time, and each may install what
# it lacks: every use of apt-get and dpkg in these scripts holds this
# lock, so that none fails on dpkg's own.
IDGEN_APT_LOCK=/var/lock/idgen-apt.lock
# (flock -o: the lock is not passed on to apt-get, nor to a daemon that a
# package's maintainer script starts, which would hold it for good.)
apt_locked() { flock -o "$IDGEN_APT_LOCK" "$@"; }
# Packages whose service must not start when they are installed:
# Debian's prometheus-postgres-exporter starts one listening on every
# interface (port 9187); t/081_exporter.pl runs the binary itself, on
# loopback.  These are installed in an apt-get call of their own during
# which /usr/sbin/policy-rc.d answers 101 ("action forbidden"), which
# invoke-rc.d and deb-systemd-invoke obey, so no maintainer script starts
# a service; the file is written only if there is none (Docker's images
# ship one that does the same) and removed again after that call.  The
# service is then disabled, so that it does not start at the next boot
# either.
IDGEN_NO_SERVICE_PACKAGES="prometheus-postgres-exporter"
install_packages() {
	local want="build-essential libcurl4-openssl-dev libipc-run-perl faketime libfaketime postgresql-common $IDGEN_NO_SERVICE_PACKAGES $*"
	local missing="" plain="" held=""
	for p in $want; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
	done
	[ -n "$missing" ] || return 0
	for p in $missing; do
		case " $IDGEN_NO_SERVICE_PACKAGES " in
			*" $p "*) held="$held $p" ;;
			*) plain="$plain $p" ;;
		esac
	done
	say "installing from Debian:$missing"
	apt_locked bash -c '
		set -e
		plain=$1 held=$2 policy=/usr/sbin/policy-rc.d
		install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }
		apt-get update -qq
		[ -z "$plain" ] || install $plain
		[ -n "$held" ] || exit 0
		if [ ! -e "$policy" ]; then
			trap "rm -f $policy" EXIT
			printf "#!/bin/sh\n# scripts/common.sh of idgen, for one apt-get call: start no service\nexit 101\n" >"$policy"
			chmod 755 "$policy"
		fi
		install $held
		for p in $held; do
			[ ! -e "/etc/init.d/$p" ] || update-rc.d "$p" disable >/dev/null 2>&1 || true
		done' _ "$plain" "$held"
}

# Make PostgreSQL $1 available (scripts/pg.sh installs or builds it) and
# point PG_MAJOR, PG_CONFIG and PG_BIN at it.  Returns non-zero on failure.
use_pg() {
	local config
	config=$(bash "$IDGEN_SRC/scripts/pg.sh" "$1") || return 1
	PG_MAJOR=$1
	PG_CONFIG=$config
	PG_BIN=$("$PG_CONFIG" --bindir)
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

# Build as postgres in the copy, install as root, with $PG_CONFIG.  With
# IDGEN_TEST_BUILD=1 (test-it.sh, sanitize.sh) a test build, which has the
# setting idgen.test_clock that some TAP tests freeze the clock with.
build_and_install() {
	local dir=$1 hooks=no
	[ "${IDGEN_TEST_BUILD:-}" = 1 ] && hooks=yes
	say "building idgen with $PG_CONFIG${IDGEN_TEST_BUILD:+ (a test build)}"
	runuser -u postgres -- make -C "$dir" -s PG_CONFIG="$PG_CONFIG" PG_CFLAGS="$IDGEN_CFLAGS" \
		WITH_TEST_HOOKS=$hooks &&
		make -C "$dir" -s PG_CONFIG="$PG_CONFIG" WITH_TEST_HOOKS=$hooks install
}

# Everything try-it and bench do first: check root, install what is
# missing, get PostgreSQL $PG_MAJOR, copy the tree for postgres, build and
# install.  Sets $work.
prepare() {
	require_root
	install_packages "$@"
	use_pg "$PG_MAJOR" || exit 1
	work=$(private_copy)
	build_and_install "$work" || exit 1
}
