# snowflake_id() and instagram_id() are unique and increasing across all
# databases of the server, not per database: two sessions in two
# databases that take turns draw from one sequence space.
#
# idgen's clock is frozen (the test-only idgen.test_clock), so no ID takes
# its time from the clock once the frozen millisecond is full: every ID is
# the next position after the last one issued anywhere on the server.  A
# position is the ID's millisecond times the layout's capacity per
# millisecond plus its sequence number, so a turn that fills a millisecond
# and rolls into the next still continues at the next position.  Each
# turn's first position must be exactly the previous turn's last + 1, the
# previous turn being the other database's.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# 2026-06-01 12:00:00 UTC
my $frozen_ms = 1780315200000;

my $node = idgen_node('databases', conf => qq{
idgen.node_id = 9
idgen.max_lead = 10s
idgen.test_clock = '$frozen_ms'
});
$node->start;
need_test_clock($node);
wait_for_keeper($node);
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION idgen');

my %session = map { $_ => $node->background_psql($_) } qw(postgres other);

# [call, the ID's position, a check of its fixed field]
my @generators = (
	[ 'snowflake_id()', '(id >> 22) * 4096 + (id & 4095)', 'snowflake_id_node(id) = 9' ],
	[ 'instagram_id(5)', '(id >> 23) * 1024 + (id & 1023)', 'instagram_id_shard(id) = 5' ],
);

# Turns of single calls (the strict alternation of two clients), then
# turns of many calls that fill milliseconds and roll into the next.
my @turn_sizes = ((1) x 10, 1000, 5000, 1, 4097, 3, 2500, 1, 1, 10000, 7);

for my $g (@generators)
{
	my ($call, $position, $fixed) = @$g;
	my (@turns, @broken);

	for my $i (0 .. $#turn_sizes)
	{
		my $db = $i % 2 ? 'other' : 'postgres';
		my $row = $session{$db}->query_safe(qq{
			SELECT min(p), max(p), count(*) = $turn_sizes[$i] AND count(DISTINCT p) = count(*),
			       max(p) - min(p) + 1 = count(*), bool_and($fixed)
			  FROM (SELECT id, $position AS p
			          FROM (SELECT $call AS id FROM generate_series(1, $turn_sizes[$i])) c) x});
		my ($first, $last, $counted, $contiguous, $fixed_ok) = split /\|/, $row;
		push @broken, "turn $i ($db): " . join(' ', grep { defined }
				($counted eq 't' ? undef : 'count'),
				($contiguous eq 't' ? undef : 'not contiguous'),
				($fixed_ok eq 't' ? undef : 'wrong node or shard'),
				(!@turns || $first == $turns[-1][1] + 1 ? undef
				  : "first position $first, the other's last " . $turns[-1][1]))
		  if $counted ne 't' || $contiguous ne 't' || $fixed_ok ne 't'
		  || (@turns && $first != $turns[-1][1] + 1);
		push @turns, [ $first, $last ];
	}
	is(join("\n", @broken), '',
		"$call: each turn, in one database or the other, starts at exactly the position after the other's last");
}

# The positions were all borrowed ahead of the frozen clock, so no turn
# could have continued from the clock instead of from the other database.
is($node->safe_psql('postgres', q{
	SELECT snowflake_lead_ms > 0, instagram_lead_ms > 0 FROM idgen_status()}),
	't|t', 'the turns ran ahead of the frozen clock');

$session{$_}->quit for keys %session;
$node->stop;
done_testing();
