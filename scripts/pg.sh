#!/usr/bin/env bash
# Make PostgreSQL VERSION available for building and testing idgen, and
# print its pg_config path.
#
#   bash scripts/pg.sh 15    Debian 12's own binary packages
#   bash scripts/pg.sh 17    built from Debian's source package (suite trixie)
#   bash scripts/pg.sh 18    built from Debian's source package (suite sid)
#
# Source builds go to $IDGEN_PG_CACHE (default /var/cache/idgen), outside
# the checkout, and are reused: a version already built is not built again.
# The machine's own apt sources are never changed: the deb-src lines live in
# a private apt configuration under the cache, made from the mirror URI the
# machine's Debian sources already use.  Run as root.  Progress goes to
# stderr, the pg_config path alone to stdout.
#
# A variant build (17 and 18 only) goes to a directory of its own:
# IDGEN_PG_VARIANT names it ($IDGEN_PG_CACHE/pg$version-$IDGEN_PG_VARIANT)
# and IDGEN_PG_EXTRA_CFLAGS is added to the compiler and linker flags, as
# scripts/sanitize.sh --full does for AddressSanitizer:
#
#   IDGEN_PG_VARIANT=asan IDGEN_PG_EXTRA_CFLAGS='-fsanitize=address' bash scripts/pg.sh 17
set -euo pipefail

version=${1:?usage: pg.sh VERSION}
cache=${IDGEN_PG_CACHE:-/var/cache/idgen}
variant=${IDGEN_PG_VARIANT:-}
extra_cflags=${IDGEN_PG_EXTRA_CFLAGS:-}
if [ -n "$extra_cflags" ] && [ -z "$variant" ]; then
	echo "pg.sh: IDGEN_PG_EXTRA_CFLAGS needs IDGEN_PG_VARIANT (a build of its own)" >&2
	exit 2
fi
log() { printf '%s\n' "pg.sh $version: $*" >&2; }

# Install from Debian whatever of these packages is missing.
need_packages() {
	local missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		log "installing from Debian:$missing"
		# IDGEN_APT_LOCK of common.sh; -o: not passed on (common.sh says why)
		flock -o /var/lock/idgen-apt.lock bash -c 'apt-get update -qq >&2 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
				"$@" >&2' _ $missing
	fi
}

case "$version" in
15)
	if [ -n "$variant" ]; then
		echo "pg.sh: PostgreSQL 15 comes from Debian's binary packages; no variant builds" >&2
		exit 2
	fi
	need_packages postgresql-15 postgresql-server-dev-15 postgresql-contrib
	echo /usr/lib/postgresql/15/bin/pg_config
	exit 0
	;;
17) suite=trixie ;;
18) suite=sid ;;
*)
	echo "pg.sh: PostgreSQL $version is not supported (15, 17, 18)" >&2
	exit 2
	;;
esac

name=pg$version${variant:+-$variant}
prefix=$cache/$name
if [ -x "$prefix/bin/pg_config" ] && [ -f "$prefix/.complete" ]; then
	echo "$prefix/bin/pg_config"
	exit 0
fi

need_packages build-essential bison flex pkg-config libreadline-dev zlib1g-dev \
	libicu-dev libssl-dev libipc-run-perl perl bzip2 xz-utils ca-certificates

# The mirror the machine already uses for Debian (deb822 or one-line form).
mirror=$(
	{
		grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources || true
		grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
			sed 's/\[[^]]*\]//' || true
	} | awk '{print $2}' | grep -v -- '-security' | grep '/debian/\?$' | head -n 1 || true
)
[ -n "$mirror" ] || { log "no Debian mirror found in /etc/apt/sources*"; exit 1; }

apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/src"
cat >"$apt_dir/sources.list" <<EOF
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror sid main
EOF
apt_opts=(
	-o "Dir::Etc::SourceList=$apt_dir/sources.list"
	-o "Dir::Etc::SourceParts=/nonexistent"
	-o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::Cache=$apt_dir/cache"
	-o "Debug::NoLocking=1"
	-o "APT::Sandbox::User=root"
)
# A mirror can list a new point release before it carries its files.  Then
# fetch the latest earlier point release still in the pool: its .dsc must
# carry a good signature from a Debian developer's key (debian-keyring),
# and the upstream tarball must match the checksum that .dsc gives.
fetch_earlier() {
	local listed dir upstream rev major minor m dsc orig sum
	need_packages curl gnupg debian-keyring
	listed=$(apt-cache "${apt_opts[@]}" showsrc "postgresql-$version" |
		awk '/^Version:/ && !v {v=$2} /^Directory:/ && !d {d=$2} END {print v, d}')
	read -r upstream dir <<<"$listed"
	rev=-${upstream#*-}
	upstream=${upstream%%-*}
	major=${upstream%%.*}
	minor=${upstream#*.}
	case "$major.$minor" in
		"$version".[0-9]*) ;;
		*) log "cannot read the listed version \"$listed\""; return 1 ;;
	esac
	for ((m = minor - 1; m >= 0 && m >= minor - 4; m--)); do
		dsc=postgresql-${version}_$major.$m$rev.dsc
		curl -fsS -o "$work/$dsc" "${mirror%/}/$dir/${dsc//+/%2b}" 2>/dev/null || continue
		if ! gpgv --keyring /usr/share/keyrings/debian-keyring.gpg \
			--output "$work/$dsc.verified" "$work/$dsc" 2>/dev/null; then
			log "$dsc: no good signature from a Debian developer; not used"
			continue
		fi
		read -r sum orig < <(awk '/^Checksums-Sha256:/ {s=1; next} /^[^ ]/ {s=0}
			s && $3 ~ /\.orig\.tar\./ {print $1, $3}' "$work/$dsc.verified")
		[ -n "$orig" ] || continue
		log "fetching $orig (from $dsc)"
		curl -fsS -o "$work/$orig" "${mirror%/}/$dir/$orig" || continue
		if ! echo "$sum  $work/$orig" | sha256sum -c --quiet -; then
			log "$orig does not match its checksum in $dsc; not used"
			rm -f "$work/$orig"
			continue
		fi
		return 0
	done
	log "no earlier point release of postgresql-$version found on the mirror"
	return 1
}

# The private lists are shared by the builds of 17 and 18, which
# test-it.sh may run at the same time: one fetch at a time.
exec 8>"$apt_dir/fetch.lock"
flock 8
log "fetching the source package postgresql-$version ($suite)"
apt-get "${apt_opts[@]}" update -qq >&2
work=$apt_dir/src/$version${variant:+-$variant}
rm -rf "$work"
mkdir -p "$work"
if ! (cd "$work" && apt-get "${apt_opts[@]}" source --download-only -qq \
	"postgresql-$version/$suite" >&2); then
	log "the version $suite lists is not on the mirror; trying its earlier point releases"
	fetch_earlier || exit 1
fi
orig=$(ls "$work"/postgresql-"$version"_*.orig.tar.* | head -n 1)
flock -u 8
log "unpacking $(basename "$orig")"
tar -C "$work" -xf "$orig"
srcdir=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'postgresql-*' | head -n 1)

log "configuring into $prefix (the build takes several minutes)"
rm -rf "$prefix"
cd "$srcdir"
./configure --prefix="$prefix" --enable-tap-tests --with-openssl --with-icu \
	--enable-debug CFLAGS="-O2${extra_cflags:+ $extra_cflags}" \
	${extra_cflags:+LDFLAGS="$extra_cflags"} >"$work/configure.log" 2>&1 ||
	{ tail -n 30 "$work/configure.log" >&2; exit 1; }
jobs=$(nproc)
log "building with $jobs jobs"
{
	make -s -j"$jobs"
	make -s install
	for d in contrib/postgres_fdw src/test/isolation src/test/perl; do
		make -s -j"$jobs" -C "$d"
		make -s -C "$d" install
	done
} >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; exit 1; }
touch "$prefix/.complete"
rm -rf "$srcdir"
log "installed into $prefix"
echo "$prefix/bin/pg_config"
