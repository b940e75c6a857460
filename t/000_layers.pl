# The house by process: which code may use which.  src/ holds a folder
# per process and protocol, and src/README has the map:
#
#   base     code without state that any process runs: layouts, counter
#            arithmetic, clocks, text forms, settings
#   shared   the shared memory and the issuing engine, used by backends
#            and the keeper alike
#   backend  the SQL functions that backends run
#   keeper   the background worker
#   lease    the keeper's node-id leases in etcd
#
# and src/idgen.c, the library's entry, which may use anything; the
# headers at the top (idgen.h, compat.h) are everyone's.  base uses base;
# shared uses base and shared; backend uses base, shared and backend;
# keeper and lease use base, shared, keeper and lease.  So backend code
# never uses the keeper's or the lease's code, nor includes their
# headers.  A file "uses" another when its object leaves undefined a
# symbol the other's defines (nm), or when it includes the other's
# header.  No files use each other in a cycle.  src/README's map names
# every file under src/, and no file that is not there.
#
# Each check first runs on a planted violation, which it must find: a
# check that cannot fail proves nothing.  Needs no server; runs after
# make.
use strict;
use warnings;
use File::Find;
use Test::More;

my $src = 'src';
my @objects;
# (an object without its source is left from an earlier layout)
find(sub { push @objects, $File::Find::name if /\.o$/ && -f ($_ =~ s/\.o$/.c/r) }, $src);
plan skip_all => 'no built objects in src/ (run after make)' unless @objects;
my ($nm) = grep { -x } map { "$_/nm" } split /:/, $ENV{PATH};
BAIL_OUT('nm (binutils) is needed to read the objects') unless $nm;

my %may = (
	top => [qw(top)],
	base => [qw(top base)],
	shared => [qw(top base shared)],
	backend => [qw(top base shared backend)],
	keeper => [qw(top base shared keeper lease)],
	lease => [qw(top base shared keeper lease)],
	entry => [qw(top base shared backend keeper lease)]);

# "keeper/main.c" -> keeper; "idgen.c" -> entry; "idgen.h" -> top
sub group_of
{
	my ($file) = @_;
	return $1 if $file =~ m{^(\w+)/};
	return $file =~ /\.h$/ ? 'top' : 'entry';
}

sub allowed
{
	my ($from, $to) = @_;
	my $g = group_of($from);
	return 0 unless $may{$g};
	return scalar grep { $_ eq group_of($to) } @{ $may{$g} };
}

# Edges that break the rules, as "from -> to (why)".
sub forbidden
{
	my ($edges) = @_;
	my @bad;
	for my $edge (sort keys %$edges)
	{
		my ($from, $to) = split / -> /, $edge;
		push @bad, "$edge (" . join(', ', sort keys %{ $edges->{$edge} }) . ')'
		  unless allowed($from, $to);
	}
	return @bad;
}

# Files that use each other, directly or through others: the strongly
# connected components of the graph (Tarjan's algorithm).
sub cycles
{
	my ($edges) = @_;
	my %next;
	for my $edge (keys %$edges)
	{
		my ($from, $to) = split / -> /, $edge;
		push @{ $next{$from} }, $to;
	}
	my ($index, %index_of, %low, @stack, %on_stack, @found) = (0);
	my $visit;
	$visit = sub {
		my ($v) = @_;
		$index_of{$v} = $low{$v} = $index++;
		push @stack, $v;
		$on_stack{$v} = 1;
		for my $w (sort @{ $next{$v} || [] })
		{
			if (!exists $index_of{$w})
			{
				$visit->($w);
				$low{$v} = $low{$w} if $low{$w} < $low{$v};
			}
			elsif ($on_stack{$w})
			{
				$low{$v} = $index_of{$w} if $index_of{$w} < $low{$v};
			}
		}
		return unless $low{$v} == $index_of{$v};
		my @component;
		while (1)
		{
			my $w = pop @stack;
			$on_stack{$w} = 0;
			push @component, $w;
			last if $w eq $v;
		}
		push @found, join(' ', sort @component) if @component > 1;
	};
	$visit->($_) for grep { !exists $index_of{$_} } sort keys %next;
	undef $visit;
	return sort @found;
}

# The project headers a source text includes, as paths under src/: a name
# is looked for beside the file, then under src/ (as the compiler does).
sub includes_of
{
	my ($file, $text) = @_;
	my ($dir) = $file =~ m{^(.*)/} ? ($1) : ('');
	my @found;
	while ($text =~ /^\s*#\s*include\s+"([^"]+)"/mg)
	{
		my $name = $1;
		my $beside = $dir eq '' ? $name : "$dir/$name";
		if (-f "$src/$beside") { push @found, $beside; }
		elsif (-f "$src/$name") { push @found, $name; }
	}
	return @found;
}

# The files under src/ that src/README's map does not name, and the names
# in it of files that do not exist.  The map names a folder ("  keeper/")
# and then its files by their names; the files at the top come first.
sub map_mismatch
{
	my ($map, @files) = @_;
	my ($folder, %named) = ('');
	for my $line (split /\n/, $map)
	{
		$folder = "$1/" if $line =~ m{^  (\w+)/(?:\s|$)};
		my ($names) = $line =~ m{^\s{2,}(\w+\.[ch](?:,\s*\w+\.[ch])*)(?:\s|$)};
		next unless defined $names;
		$named{"$folder$_"} = 1 for split /,\s*/, $names;
	}
	my %exists = map { $_ => 1 } @files;
	return ((map { "not in the map: $_" } grep { !$named{$_} } sort keys %exists),
		(map { "in the map, not in src/: $_" } grep { !$exists{$_} } sort keys %named));
}

sub read_file
{
	my ($path) = @_;
	open my $fh, '<', $path or die "$path: $!";
	local $/;
	my $text = <$fh>;
	close $fh;
	return $text;
}

# ---- what there is ----

my (%defined_in, %used_by);
for my $o (@objects)
{
	(my $file = $o) =~ s{^$src/}{};
	$file =~ s/\.o$/.c/;
	for (`$nm -g --defined-only $o`)
	{
		$defined_in{$1} = $file if /^\S*\s+[A-Za-z]\s+(\S+)$/;
	}
	for (`$nm -u $o`)
	{
		push @{ $used_by{$file} }, $1 if /^\s+U\s+(\S+)$/;
	}
}
my %edges;
for my $file (keys %used_by)
{
	for my $sym (@{ $used_by{$file} })
	{
		my $to = $defined_in{$sym};
		$edges{"$file -> $to"}{$sym} = 1 if defined $to && $to ne $file;
	}
}

my @sources;
find(sub { push @sources, $File::Find::name if /\.[ch]$/ }, $src);
s{^$src/}{} for @sources;
my %include_edges;
for my $file (@sources)
{
	$include_edges{"$file -> $_"}{'#include'} = 1
	  for grep { $_ ne $file } includes_of($file, read_file("$src/$file"));
}

# ---- the checks, each on a planted violation first ----

my %planted = ('keeper/main.c -> base/clock.c' => { ok => 1 },
	'backend/named.c -> keeper/main.c' => { planted => 1 });
is(join("\n", forbidden(\%planted)), 'backend/named.c -> keeper/main.c (planted)',
	'the use check finds a planted use of the keeper by backend code');
my $planted_text = read_file("$src/backend/named.c") . qq{\n#include "keeper/keeper.h"\n};
my %planted_includes = map { ("backend/named.c -> $_" => { '#include' => 1 }) }
  includes_of('backend/named.c', $planted_text);
is(join("\n", grep { /keeper/ } forbidden(\%planted_includes)),
	'backend/named.c -> keeper/keeper.h (#include)',
	'the include check finds a planted include of a keeper header');
is(join("\n", cycles({ 'base/codec.c -> base/clock.c' => {}, 'base/clock.c -> base/codec.c' => {},
				'base/clock.c -> base/ranges.c' => {} })),
	'base/clock.c base/codec.c', 'the cycle check finds a planted cycle');
my ($readme) = read_file("$src/README") =~ /^The house by process\n-+\n(.*?)^\S[^\n]*\n-+\n/ms;
BAIL_OUT('src/README has no section "The house by process"') unless defined $readme;
(my $planted_readme = $readme) =~ s{^(\s+)main\.c}{$1mian.c}m;
is(join("\n", map_mismatch($planted_readme, @sources)),
	"not in the map: keeper/main.c\nin the map, not in src/: keeper/mian.c",
	'the map check finds a planted misnamed file');

my @unplaced = grep { !$may{ group_of($_) } && group_of($_) ne 'top' } sort @sources;
is("@unplaced", '', 'every source file is in a folder of the house (or is src/idgen.[ch], src/compat.h)');
is(join("\n", forbidden(\%edges)), '',
	'no file uses the code of a process or protocol it may not (nm)');
is(join("\n", forbidden(\%include_edges)), '',
	'no file includes the header of a process or protocol it may not');
is(join("\n", cycles(\%edges)), '', 'no files use each other in a cycle');
is(join("\n", map_mismatch($readme, @sources)), '',
	'src/README names every file under src/, and no other');
# nm read the objects: a check over no edges would pass whatever the code
ok($edges{'keeper/main.c -> shared/storage.c'} && $edges{'backend/named.c -> shared/slots.c'},
	'the uses read from the objects include ones known to be there ('
	  . scalar(keys %edges) . ' uses between files)');
done_testing();
