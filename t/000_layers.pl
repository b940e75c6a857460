# The house in layers: no file uses a file of a higher layer (src/LAYERS),
# except the edges listed there as debt, and every debt edge still exists.
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

my (%layer_of, @layers, %debt);
open my $fh, '<', 'src/LAYERS' or die "src/LAYERS: $!";
while (<$fh>)
{
	s/#.*//;
	next unless /\S/;
	if (/^\s*debt:\s*(\w+)\s*->\s*(\w+)\s*$/)
	{
		$debt{"$1 -> $2"} = 1;
	}
	elsif (/^\s*(\w+):\s*(.*)$/)
	{
		push @layers, $1;
		$layer_of{$_} = $#layers for split ' ', $2;
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
done_testing();
