# The house in layers: no file uses a file of a higher layer (src/LAYERS),
# except the edges listed there as debt, and every debt edge still exists;
# no files use each other in a cycle, except the cycles listed there, and
# every listed cycle still exists.
# Read from the built objects: a symbol one object leaves undefined (nm -u)
# and another defines is an edge between their source files.  Needs no
# server.
use strict;
use warnings;
use Test::More;

my @objects = glob('src/*.o');
plan skip_all => 'no built objects in src/ (run after make)' unless @objects;
my ($nm) = grep { -x } map { "$_/nm" } split /:/, $ENV{PATH};
BAIL_OUT('nm (binutils) is needed to read the objects') unless $nm;

my (%layer_of, @layers, %debt, %known_cycle);
open my $fh, '<', 'src/LAYERS' or die "src/LAYERS: $!";
while (<$fh>)
{
	s/#.*//;
	next unless /\S/;
	if (/^\s*debt:\s*(\w+)\s*->\s*(\w+)\s*$/)
	{
		$debt{"$1 -> $2"} = 1;
	}
	elsif (/^\s*cycle:(.*)$/)
	{
		my @files = split ' ', $1;
		die "src/LAYERS: a cycle needs two files or more, line $.: $_"
		  unless @files >= 2 && !grep { !/^\w+$/ } @files;
		$known_cycle{ join(' ', sort @files) } = 1;
	}
	elsif (/^\s*debt:/)
	{
		die "src/LAYERS: a debt line is \"debt: from -> to\", line $.: $_";
	}
	elsif (/^\s*(\w+):\s*(.*)$/)
	{
		push @layers, $1;
		for (split ' ', $2)
		{
			die "src/LAYERS: $_ is in two layers, line $."
			  if defined $layer_of{$_};
			$layer_of{$_} = $#layers;
		}
	}
	else
	{
		die "src/LAYERS: cannot read line $.: $_";
	}
}
close $fh;

my (%defined_in, %used_by);
for my $o (@objects)
{
	my ($file) = $o =~ m{src/(\w+)\.o$};
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

my @unplaced = grep { !defined $layer_of{$_} } sort map { m{src/(\w+)\.o$} } @objects;
is("@unplaced", '', 'every source file has its layer in src/LAYERS');

my (@up, @paid);
for my $edge (sort keys %edges)
{
	my ($from, $to) = split / -> /, $edge;
	next unless defined $layer_of{$from} && defined $layer_of{$to};
	next unless $layer_of{$to} > $layer_of{$from};
	next if $debt{$edge};
	push @up, "$edge (" . join(', ', sort keys %{ $edges{$edge} }) . ")";
}
is(join("\n", @up), '', 'no file uses a file of a higher layer, beyond the listed debt');
@paid = grep { !$edges{$_} } sort keys %debt;
is(join("\n", @paid), '', 'every edge listed as debt still exists (remove it when it is gone)');
note scalar(keys %debt) . ' edges of debt remain';

# Files that use each other, directly or through others: the strongly
# connected components of the graph of edges (Tarjan's algorithm).
my %next;
for my $edge (keys %edges)
{
	my ($from, $to) = split / -> /, $edge;
	push @{ $next{$from} }, $to;
}
my ($index, %index_of, %low, @stack, %on_stack, @cycles) = (0);
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
	push @cycles, join(' ', sort @component) if @component > 1;
};
$visit->($_) for grep { !exists $index_of{$_} } sort keys %next;
my %cycle = map { $_ => 1 } @cycles;
is(join("\n", grep { !$known_cycle{$_} } sort keys %cycle), '',
	'no files use each other in a cycle, beyond the listed ones');
is(join("\n", grep { !$cycle{$_} } sort keys %known_cycle), '',
	'every cycle listed still exists (remove it when it is gone)');
note "cycle: $_" for sort keys %cycle;
note scalar(keys %cycle) . ' cycles between files remain';
done_testing();
