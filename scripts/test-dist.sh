#!/usr/bin/env bash
# Test the release archives as a user gets them: make them with "make
# dist" in a fresh clone of the commit checked out here (HEAD; changes
# not committed are not in it), check them, install idgen from the zip
# into a PostgreSQL that has no idgen, and run the pg_regress and
# isolation suites from the unpacked tarball against that installation.
#
#   bash scripts/test-dist.sh                     PostgreSQL 18 of scripts/pg.sh
#   PG_CONFIG=/path/bin/pg_config bash scripts/test-dist.sh
#   bash scripts/test-dist.sh --keep              keep the work directory
#
# Steps, in a work directory under /tmp:
#  1. git clone of this repository, HEAD checked out; "make dist" there.
#  2. sha256sum -c SHA256SUMS, which must name the zip and the tarball.
#  3. The zip and the tarball hold the same files, all under one top
#     directory idgen-VERSION/; nothing of git, CI or a build; every file
#     the shipped Makefile builds and tests from (DATA, the sources of
#     OBJS, REGRESS and ISOLATION with their expected output).
#  4. META.json against the PGXN Meta Spec 1.0 (required keys, the type and
#     form of each key the spec defines, no other keys but x_*), its name
#     and version those of the archive, and every file and directory it
#     names present in the archive.
#  5. A clean PostgreSQL: a private copy of PG_CONFIG's installation (a
#     source build, which is relocatable) with every idgen file taken out;
#     nothing is ever installed into the installation itself.
#  6. "pgxn install PATH/idgen-VERSION.zip" (Debian's pgxnclient) into that
#     copy: it unpacks, builds and installs with no network (a local zip
#     needs none; its mirror is set to a closed local port, so that any
#     attempt to reach one would fail).
#  7. "make installcheck TAP_TESTS=" as the postgres user in the unpacked
#     tarball: the Makefile's REGRESS and ISOLATION suites, each on a
#     temporary server of its own (Unix socket only), which loads the
#     library installed from the zip (installcheck builds nothing, and the
#     tree is checked for build outputs after it).
#
# Run as root (it installs pgxnclient if missing and installs idgen into
# the copy); the suites run as postgres.  The work directory is removed
# at the end (with --keep, kept), and a server of the suites still running
# then is stopped.  Prints one line last, "dist: ..." with what passed or
# what failed, and exits non-zero on any failure.
set -uo pipefail
. "$(dirname "$0")/common.sh"

keep=""
case ${1:-} in
	"") ;;
	--keep) keep=1 ;;
	*) echo "usage: $(basename "$0") [--keep]" >&2; exit 2 ;;
esac

t0=$SECONDS
failed=""
fail() {
	failed=$*
	echo "*** $*"
	return 1
}

require_root
install_packages pgxnclient unzip
if [ -z "${PG_CONFIG:-}" ]; then
	PG_CONFIG=$(bash "$IDGEN_SRC/scripts/pg.sh" 18) ||
		{ echo "dist: FAILED: PostgreSQL 18 is not available"; exit 1; }
fi
[ -x "$PG_CONFIG" ] || { echo "dist: FAILED: no pg_config at $PG_CONFIG"; exit 1; }

work=$(mktemp -d /tmp/idgen-dist.XXXXXX)
chmod 755 "$work"
pgdir=$work/pg

# The long steps (pgxn install, the suites) run in a process group of
# their own, so that an interrupted run can end them (and the server of a
# suite) at once: run them with "long", which waits for them.
child=""
long() {
	setsid -w "$@" &
	child=$!
	wait "$child"
	local rc=$?
	child=""
	return $rc
}
# The suites' servers stop when pg_regress ends; after an interrupted run
# one may be left in the unpacked tree: stop it before removing the tree.
cleanup() {
	local pidfile
	[ -z "$cleaned" ] || return 0
	cleaned=1
	if [ -n "$child" ]; then
		kill -TERM -- "-$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	for pidfile in "$work"/tar/*/tmp_check*/data/postmaster.pid; do
		[ -f "$pidfile" ] || continue
		runuser -u postgres -- "$pgdir/bin/pg_ctl" -D "$(dirname "$pidfile")" -m immediate -s stop || true
	done
	# (to the script's own output: a step's output may be redirected now)
	if [ -n "$keep" ]; then
		echo "work directory kept: $work" >&3
	else
		rm -rf "$work"
	fi
	if [ -n "$interrupted" ]; then
		echo "dist: FAILED: interrupted ($(duration $((SECONDS - t0))))" >&3
	fi
}
exec 3>&1
interrupted="" cleaned=""
trap cleanup EXIT
trap 'interrupted=1; exit 130' INT TERM

# META.json against the PGXN Meta Spec 1.0.  $1: the META.json, $2: the
# unpacked distribution, $3: a file listing the archive's paths (relative
# to its top directory, directories with a trailing "/"), $4: the name and
# $5 the version the archive carries.  Prints each problem; exits non-zero
# if there is one.
validate_meta() {
	perl -MJSON::PP -MB -e '
use strict;
use warnings;
my ($file, $tree, $listing, $want_name, $want_version) = @ARGV;
my @err;
my $meta = eval {
	local $/;
	open my $fh, "<", $file or die "cannot read $file: $!\n";
	JSON::PP->new->utf8->decode(<$fh>);
};
if (!defined $meta) { print "META.json is not valid JSON: $@"; exit 1; }
my %in_archive;
{
	open my $fh, "<", $listing or die "cannot read $listing: $!\n";
	while (<$fh>) { chomp; $in_archive{$_} = 1; }
}

# A JSON string, as opposed to a number, a boolean, an array or an object.
sub is_str {
	my ($v) = @_;
	return 0 if !defined $v || ref $v;
	my $f = B::svref_2object(\$v)->FLAGS;
	return ($f & B::SVp_POK) && !($f & (B::SVp_IOK | B::SVp_NOK));
}
sub is_obj { ref $_[0] eq "HASH" }
sub is_arr { ref $_[0] eq "ARRAY" }
my $semver = qr/(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?/;
sub is_version { is_str($_[0]) && $_[0] =~ /\A$semver\z/ }
# A Term: two characters or more, no slash, backslash, space or control.
sub is_term { is_str($_[0]) && $_[0] =~ /\A[^\/\\\s[:cntrl:]]{2,}\z/ }
# A version range: 0, or comma-separated versions each with an optional
# operator.
sub is_range {
	my ($v) = @_;
	return 1 if defined $v && !ref $v && !is_str($v) && $v == 0;
	return 0 unless is_str($v);
	return 1 if $v eq "0";
	for my $part (split /,\s*/, $v, -1) {
		return 0 unless $part =~ /\A(?:(?:[=!]=|[<>]=?)\s*)?$semver\z/;
	}
	return 1;
}
sub nonempty_str { is_str($_[0]) && length $_[0] > 0 }
sub custom { $_[0] =~ /\A[xX]_./ }
# A Path, relative, in unix form, naming a file ($kind "f") or a
# directory ("d") that the archive holds.
sub check_path {
	my ($where, $v, $kind) = @_;
	if (!is_str($v) || length $v < 2 || $v =~ m{\A/|\\|(?:\A|/)\.\.(?:/|\z)}) {
		push @err, "$where must be a relative unix path of 2 characters or more";
		return;
	}
	(my $p = $v) =~ s{/+\z}{};
	my $ok = $kind eq "d" ? (-d "$tree/$p" && $in_archive{"$p/"}) : (-f "$tree/$p" && $in_archive{$p});
	push @err, "$where names \"$v\", which is not a " . ($kind eq "d" ? "directory" : "file") . " in the archive"
		unless $ok;
}

my %known = map { $_ => 1 } qw(name version abstract maintainer license provides meta-spec
	description generated_by tags no_index prereqs release_status resources);
for my $k (qw(name version abstract maintainer license provides meta-spec)) {
	push @err, "required key \"$k\" is missing" unless exists $meta->{$k};
}
for my $k (sort keys %$meta) {
	push @err, "unknown key \"$k\" (the spec allows x_* for custom keys)" unless $known{$k} || custom($k);
}

push @err, "name must be a Term (2 or more characters, no slash, backslash, space or control character)"
	if exists $meta->{name} && !is_term($meta->{name});
push @err, "version must be a semantic version (X.Y.Z)"
	if exists $meta->{version} && !is_version($meta->{version});
for my $k (qw(abstract description generated_by)) {
	push @err, "$k must be a non-empty string" if exists $meta->{$k} && !nonempty_str($meta->{$k});
}

if (exists $meta->{maintainer}) {
	my $m = $meta->{maintainer};
	push @err, "maintainer must be a non-empty string or a non-empty array of them"
		unless nonempty_str($m) || (is_arr($m) && @$m && !grep { !nonempty_str($_) } @$m);
}

my %licenses = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1 artistic_2 bsd freebsd
	gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0 mit mozilla_1_0 mozilla_1_1 openssl perl_5
	postgresql qpl_1_0 ssleay sun zlib open_source restricted unrestricted unknown);
if (exists $meta->{license}) {
	my $l = $meta->{license};
	my $ok = (is_str($l) && $licenses{$l})
		|| (is_arr($l) && @$l && !grep { !is_str($_) || !$licenses{$_} } @$l)
		|| (is_obj($l) && %$l && !grep { !is_str($_) || !/\A[a-z][a-z0-9+.-]*:\S+\z/i } values %$l);
	push @err, "license must be one of the spec'\''s license strings, an array of them, or an object of names to URIs"
		unless $ok;
}

if (exists $meta->{"meta-spec"}) {
	my $s = $meta->{"meta-spec"};
	if (!is_obj($s)) {
		push @err, "meta-spec must be an object";
	} else {
		push @err, "meta-spec.version must be 1.0.x"
			unless is_str($s->{version}) && $s->{version} =~ /\A1\.0\.\d+\z/;
		push @err, "meta-spec.url, if given, must be the spec'\''s own address (.../meta/spec.txt)"
			if exists $s->{url} && !(is_str($s->{url}) && $s->{url} =~ m{\Ahttps?://[^/]+/meta/spec\.txt\z});
		for (sort keys %$s) {
			push @err, "meta-spec has an unknown key \"$_\"" unless /\A(?:version|url)\z/ || custom($_);
		}
	}
}

if (exists $meta->{provides}) {
	my $p = $meta->{provides};
	if (!is_obj($p) || !%$p) {
		push @err, "provides must be an object naming at least one extension";
	} else {
		for my $ext (sort keys %$p) {
			my $e = $p->{$ext};
			push @err, "provides: \"$ext\" is not a Term" unless is_term($ext);
			if (!is_obj($e)) { push @err, "provides.$ext must be an object"; next; }
			push @err, "provides.$ext.file is missing" unless exists $e->{file};
			check_path("provides.$ext.file", $e->{file}, "f") if exists $e->{file};
			push @err, "provides.$ext.version must be a semantic version" unless is_version($e->{version});
			push @err, "provides.$ext.abstract must be a non-empty string"
				if exists $e->{abstract} && !nonempty_str($e->{abstract});
			check_path("provides.$ext.docfile", $e->{docfile}, "f") if exists $e->{docfile};
			for (sort keys %$e) {
				push @err, "provides.$ext has an unknown key \"$_\""
					unless /\A(?:file|version|abstract|docfile)\z/ || custom($_);
			}
		}
	}
}

if (exists $meta->{release_status}) {
	push @err, "release_status must be stable, testing or unstable"
		unless is_str($meta->{release_status}) && $meta->{release_status} =~ /\A(?:stable|testing|unstable)\z/;
}

if (exists $meta->{tags}) {
	my $t = $meta->{tags};
	push @err, "tags must be a non-empty array of strings of 2 to 255 characters, without slash, backslash or control characters"
		unless is_arr($t) && @$t
		&& !grep { !is_str($_) || length $_ > 255 || !/\A[^\/\\[:cntrl:]]{2,}\z/ } @$t;
}

if (exists $meta->{no_index}) {
	my $n = $meta->{no_index};
	if (!is_obj($n) || !(exists $n->{file} || exists $n->{directory})) {
		push @err, "no_index must be an object with file or directory";
	} else {
		for my $k (sort keys %$n) {
			if ($k ne "file" && $k ne "directory") {
				push @err, "no_index has an unknown key \"$k\"" unless custom($k);
				next;
			}
			my $list = $n->{$k};
			my @paths = is_arr($list) ? @$list : ($list);
			my %seen;
			push @err, "no_index.$k must be a path or a non-empty array of distinct paths"
				if is_arr($list) && (!@$list || grep { $seen{defined $_ ? $_ : ""}++ } @$list);
			check_path("no_index.$k", $_, $k eq "file" ? "f" : "d") for @paths;
		}
	}
}

if (exists $meta->{prereqs}) {
	my $p = $meta->{prereqs};
	if (!is_obj($p) || !%$p) {
		push @err, "prereqs must be a non-empty object";
	} else {
		for my $phase (sort keys %$p) {
			if ($phase !~ /\A(?:configure|build|test|runtime|develop)\z/) {
				push @err, "prereqs has an unknown phase \"$phase\"" unless custom($phase);
				next;
			}
			my $rels = $p->{$phase};
			if (!is_obj($rels) || !%$rels) { push @err, "prereqs.$phase must be a non-empty object"; next; }
			for my $rel (sort keys %$rels) {
				if ($rel !~ /\A(?:requires|recommends|suggests|conflicts)\z/) {
					push @err, "prereqs.$phase has an unknown relationship \"$rel\"" unless custom($rel);
					next;
				}
				my $deps = $rels->{$rel};
				if (!is_obj($deps)) { push @err, "prereqs.$phase.$rel must be an object"; next; }
				for my $dep (sort keys %$deps) {
					push @err, "prereqs.$phase.$rel: \"$dep\" is not a Term" unless is_term($dep);
					push @err, "prereqs.$phase.$rel.$dep must be a version range (0, \"1.2.3\", \">= 1.2.3, < 2.0.0\")"
						unless is_range($deps->{$dep});
				}
			}
		}
	}
}

if (exists $meta->{resources}) {
	my $r = $meta->{resources};
	if (!is_obj($r) || !%$r) {
		push @err, "resources must be a non-empty object";
	} else {
		for my $k (sort keys %$r) {
			next if custom($k);
			if ($k eq "homepage") {
				push @err, "resources.homepage must be a URI" unless is_str($r->{$k}) && $r->{$k} =~ /\A[a-z][a-z0-9+.-]*:\S+\z/i;
			} elsif ($k eq "bugtracker" || $k eq "repository") {
				push @err, "resources.$k must be a non-empty object" unless is_obj($r->{$k}) && %{$r->{$k}};
			} else {
				push @err, "resources has an unknown key \"$k\"";
			}
		}
	}
}

# What this archive is: its name and version are META.json'\''s.
push @err, "name is \"$meta->{name}\", but the archive is of $want_name"
	if is_str($meta->{name}) && $meta->{name} ne $want_name;
push @err, "version is $meta->{version}, but the archive is of $want_version"
	if is_str($meta->{version}) && $meta->{version} ne $want_version;
push @err, "provides does not name the extension $want_name"
	if is_obj($meta->{provides}) && !exists $meta->{provides}{$want_name};

if (@err) {
	print "META.json: $_\n" for @err;
	exit 1;
}
printf "META.json: valid (PGXN Meta Spec %s), %s %s, release_status %s, provides %s\n",
	$meta->{"meta-spec"}{version}, $meta->{name}, $meta->{version}, $meta->{release_status} // "(none)",
	join(", ", map { "$_ ($meta->{provides}{$_}{file})" } sort keys %{$meta->{provides}});
' "$@"
}

# A variable of the shipped Makefile (with its PGXS), as make sees it.
make_var() {
	make -s --no-print-directory -C "$1" PG_CONFIG="$PG_CONFIG" \
		--eval='idgen-print-%: ; @echo $($*)' "idgen-print-$2"
}

run() {
	local clone=$work/clone head log name version zip tgz f missing rc
	local srcdir=$work/tar pkglibdir extdir

	# 1. A fresh clone, at the commit checked out here.
	head=$(git -C "$IDGEN_SRC" rev-parse --verify HEAD) || { fail "$IDGEN_SRC is not a git checkout"; return 1; }
	say "git clone of $IDGEN_SRC at $(git -C "$IDGEN_SRC" rev-parse --short HEAD)"
	if [ -n "$(git -C "$IDGEN_SRC" status --porcelain --untracked-files=no)" ]; then
		echo "(the tree has uncommitted changes: they are not in the archives, which are made from HEAD)"
	fi
	git clone -q --no-checkout "$IDGEN_SRC" "$clone" &&
		git -C "$clone" fetch -q "$IDGEN_SRC" HEAD &&
		git -C "$clone" checkout -q --detach FETCH_HEAD ||
		{ fail "git clone of $IDGEN_SRC failed"; return 1; }
	[ "$(git -C "$clone" rev-parse HEAD)" = "$head" ] ||
		{ fail "the clone is at $(git -C "$clone" rev-parse HEAD), not at HEAD $head"; return 1; }

	say "make dist"
	log=$work/dist.log
	if ! make -C "$clone" -s PG_CONFIG="$PG_CONFIG" dist >"$log" 2>&1; then
		cat "$log"
		fail "make dist failed"
		return 1
	fi
	cat "$log"
	name=$(make_var "$clone" EXTENSION)
	version=$(perl -MJSON::PP -0777 -ne 'print decode_json($_)->{version}' "$clone/META.json")
	zip=$name-$version.zip
	tgz=$name-$version.tar.gz
	dist_name=$name-$version
	for f in "$zip" "$tgz" SHA256SUMS; do
		[ -s "$clone/dist/$f" ] || { fail "make dist made no dist/$f"; return 1; }
	done
	ls -l "$clone/dist"

	# 2. The checksums.
	say "sha256sum -c SHA256SUMS"
	(cd "$clone/dist" && sha256sum -c SHA256SUMS) || { fail "SHA256SUMS does not match the archives"; return 1; }
	[ "$(awk '{ sub(/^\*/, "", $2); print $2 }' "$clone/dist/SHA256SUMS" | sort)" = "$(printf '%s\n' "$zip" "$tgz" | sort)" ] ||
		{ fail "SHA256SUMS does not cover exactly $zip and $tgz"; return 1; }

	# 3. What the archives hold.
	say "the archives' contents"
	unzip -Z1 "$clone/dist/$zip" | sort >"$work/zip.list" || { fail "$zip is not a readable zip"; return 1; }
	tar -tzf "$clone/dist/$tgz" | sort >"$work/tar.list" || { fail "$tgz is not a readable tarball"; return 1; }
	f=$(grep -v "^$dist_name/" "$work/zip.list" "$work/tar.list")
	[ -z "$f" ] || { printf '%s\n' "$f"; fail "files outside the top directory $dist_name/"; return 1; }
	# git writes a directory entry for every directory in both formats
	if ! diff "$work/zip.list" "$work/tar.list" >"$work/lists.diff"; then
		cat "$work/lists.diff"
		fail "the zip and the tarball do not hold the same files"
		return 1
	fi
	sed "s|^$dist_name/||; /^\$/d" "$work/zip.list" >"$work/archive.list"
	f=$(grep -E '(^|/)\.git(/|$)|^\.ci/|(^|/)(tmp_check[^/]*|results|output_iso|dist|node_modules)/|\.(o|so|bc)$|(^|/)(regression\.(diffs|out)|\.test-hooks)$' "$work/archive.list")
	[ -z "$f" ] || { printf '%s\n' "$f"; fail "the archives hold files of git, CI or a build"; return 1; }
	mkdir -p "$work/zip" "$srcdir"
	unzip -q "$clone/dist/$zip" -d "$work/zip" && tar -C "$srcdir" -xzf "$clone/dist/$tgz" ||
		{ fail "unpacking the archives failed"; return 1; }
	if ! diff -r "$work/zip/$dist_name" "$srcdir/$dist_name" >"$work/trees.diff"; then
		head -n 40 "$work/trees.diff"
		fail "the zip and the tarball differ in content"
		return 1
	fi
	srcdir=$srcdir/$dist_name
	# Everything the shipped Makefile builds and tests from.
	missing=""
	for f in META.json Makefile "$name.control" LICENSE README.md $(make_var "$srcdir" DATA) \
		$(make_var "$srcdir" OBJS | tr ' ' '\n' | sed -n 's/\.o$/.c/p'); do
		[ -f "$srcdir/$f" ] || missing="$missing $f"
	done
	for f in $(make_var "$srcdir" REGRESS); do
		[ -f "$srcdir/sql/$f.sql" ] || missing="$missing sql/$f.sql"
		[ -f "$srcdir/expected/$f.out" ] || missing="$missing expected/$f.out"
	done
	for f in $(make_var "$srcdir" ISOLATION); do
		[ -f "$srcdir/specs/$f.spec" ] || missing="$missing specs/$f.spec"
		[ -f "$srcdir/expected/$f.out" ] || missing="$missing expected/$f.out"
	done
	# --temp-config files of the suites
	for f in $(make_var "$srcdir" REGRESS_OPTS) $(make_var "$srcdir" ISOLATION_OPTS); do
		case $f in --temp-config=*) [ -f "$srcdir/${f#--temp-config=}" ] || missing="$missing ${f#--temp-config=}" ;; esac
	done
	[ -z "$missing" ] || { fail "the archives lack files the Makefile needs:$missing"; return 1; }
	nfiles=$(grep -vc '/$' "$work/archive.list")
	echo "$zip and $tgz: the same $nfiles files under $dist_name/, with all the Makefile builds and tests from"

	# 4. META.json.
	say "META.json against the PGXN Meta Spec"
	validate_meta "$srcdir/META.json" "$srcdir" "$work/archive.list" "$name" "$version" >"$work/meta.log"
	rc=$?
	cat "$work/meta.log"
	[ "$rc" -eq 0 ] || { fail "META.json is not valid"; return 1; }
	meta_status=$(sed -n 's/.*release_status \([a-z()]*\),.*/\1/p' "$work/meta.log")

	# 5. A clean PostgreSQL: a private copy, without idgen.
	say "a private copy of $(dirname "$("$PG_CONFIG" --bindir)"), without idgen"
	cp -a "$(dirname "$("$PG_CONFIG" --bindir)")" "$pgdir" || { fail "copying PostgreSQL failed"; return 1; }
	pg_config=$pgdir/bin/pg_config
	pkglibdir=$("$pg_config" --pkglibdir)
	extdir=$("$pg_config" --sharedir)/extension
	case "$pkglibdir $extdir" in
		"$pgdir"/*" $pgdir"/*) ;;
		*) fail "the copy of PostgreSQL is not relocatable (its pg_config names $pkglibdir, $extdir): give the PG_CONFIG of a source build"; return 1 ;;
	esac
	idgen_files() {
		find "$pkglibdir" "$extdir" \( -name 'idgen*' -o -path '*/bitcode/idgen' \) -print 2>/dev/null
	}
	idgen_files | xargs -r rm -rf
	f=$(idgen_files)
	[ -z "$f" ] || { printf '%s\n' "$f"; fail "idgen files remain in the copy"; return 1; }
	echo "$("$pg_config" --version) in $pgdir, no idgen file in $pkglibdir or $extdir"

	# 6. Install from the zip with pgxn, offline.
	say "pgxn install $zip"
	log=$work/install.log
	if ! long pgxn install --mirror http://127.0.0.1:9/ --make make \
		--pg_config "$pg_config" "$clone/dist/$zip" >"$log" 2>&1; then
		tail -n 40 "$log"
		fail "pgxn install $zip failed"
		return 1
	fi
	grep -E '^(INFO|WARNING|ERROR)' "$log"
	for f in "$pkglibdir/$name.so" "$extdir/$name.control" $(make_var "$srcdir" DATA | tr ' ' '\n' | sed "s|^|$extdir/|"); do
		[ -f "$f" ] || { fail "pgxn install did not install $f"; return 1; }
	done
	echo "installed from $zip: $(idgen_files | sed "s|^$pgdir/||" | sort | tr '\n' ' ')"

	# 7. The suites, from the unpacked tarball, against the installation.
	say "make installcheck TAP_TESTS= in the unpacked $tgz"
	chown -R postgres: "$work/tar"
	log=$work/regress.log
	long runuser -u postgres -- make -C "$srcdir" -s PG_CONFIG="$pg_config" installcheck TAP_TESTS= >"$log" 2>&1
	rc=$?
	cat "$log"
	f=$(find "$srcdir" \( -name '*.so' -o -name '*.o' -o -name '*.bc' \) -print)
	[ -z "$f" ] || { printf '%s\n' "$f"; fail "installcheck built idgen in the tree: the suites did not test the installed library"; return 1; }
	regress_passed=$(sed -n 's/^[# ]*All \([0-9]*\) tests passed.*/\1/p' "$log" | head -n 1)
	iso_passed=$(sed -n 's/^[# ]*All \([0-9]*\) tests passed.*/\1/p' "$log" | sed -n 2p)
	if [ "$rc" -ne 0 ] || [ -z "$regress_passed" ] || [ -z "$iso_passed" ]; then
		for f in "$srcdir/regression.diffs" "$srcdir/output_iso/regression.diffs"; do
			[ -s "$f" ] && cat "$f"
		done
		fail "the suites failed against the installation from the archive"
		return 1
	fi
	n_regress=$(make_var "$srcdir" REGRESS | wc -w)
	n_iso=$(make_var "$srcdir" ISOLATION | wc -w)
	[ "$regress_passed" -eq "$n_regress" ] && [ "$iso_passed" -eq "$n_iso" ] ||
		{ fail "$regress_passed and $iso_passed tests passed, but the Makefile has $n_regress and $n_iso"; return 1; }
}

dist_name="" nfiles="" meta_status="" regress_passed="" iso_passed=""
run
# the work directory goes (or is kept) before the last line
cleanup
took=$(duration $((SECONDS - t0)))
if [ -n "$failed" ]; then
	echo "dist: FAILED: $failed ($took)"
	exit 1
fi
echo "dist: $dist_name.zip and .tar.gz ($nfiles files), checksums ok, META.json valid ($meta_status), installed from the zip with pgxn install, $((regress_passed + iso_passed)) tests passed (pg_regress $regress_passed, isolation $iso_passed) ($took)"
