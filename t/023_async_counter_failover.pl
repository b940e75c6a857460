# Counters after an asynchronous failover: what the docs claim.  A counter
# has no clock to fall back on, so a standby that did not receive the
# primary's newest counter reservations hands out the lost window's values
# again once promoted, unless its IDs differ in another field: a counter
# that embeds the node id, with the standby's own node id, cannot meet
# the old primary's IDs.  (With synchronous replication nothing is lost:
# t/014_counter_generators.pl.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $primary = idgen_node('async_primary', allows_streaming => 1, conf => "idgen.node_id = 1\n");
$primary->start;
wait_for_keeper($primary);
$primary->safe_psql('postgres', q{
	SELECT idgen_create_generator('plain', 'seq:31');
	SELECT idgen_create_generator('worker', 'zone:7=3 worker:16 seq:40');
	CREATE TABLE drawn (g text, id bigint)});

# an asynchronous standby with its own node id
my $standby = standby_from_backup($primary, 'async_standby', conf => "idgen.node_id = 2\n");
$primary->safe_psql('postgres', q{
	INSERT INTO drawn SELECT 'plain', idgen_next('plain') FROM generate_series(1, 100);
	INSERT INTO drawn SELECT 'worker', idgen_next('worker') FROM generate_series(1, 100)});
$primary->wait_for_catchup($standby);

# The standby stops receiving; the primary goes on, reserving further, and
# is lost: the standby never sees those reservations.
$standby->stop('fast');
$primary->safe_psql('postgres', q{
	INSERT INTO drawn SELECT 'plain', idgen_next('plain') FROM generate_series(1, 5000);
	INSERT INTO drawn SELECT 'worker', idgen_next('worker') FROM generate_series(1, 5000)});
my %old;
for (split /\n/, $primary->safe_psql('postgres', q{SELECT g || ' ' || id FROM drawn}))
{
	my ($g, $id) = split / /;
	$old{$g}{$id} = 1;
}
is(scalar(keys %{ $old{plain} }) . '|' . scalar(keys %{ $old{worker} }), '5100|5100',
	'the primary handed out 5,100 values of each counter');
$primary->stop('immediate');

$standby->start;
$standby->promote;
wait_for_keeper($standby);
my %repeated = (plain => 0, worker => 0);
for (split /\n/, $standby->safe_psql('postgres', q{
	SELECT 'plain ' || idgen_next('plain') FROM generate_series(1, 5000)
	UNION ALL
	SELECT 'worker ' || idgen_next('worker') FROM generate_series(1, 5000)}))
{
	my ($g, $id) = split / /;
	$repeated{$g}++ if $old{$g}{$id};
}
cmp_ok($repeated{plain}, '>', 0,
	"a counter without the node id hands out the lost window's values again ($repeated{plain} of 5,000)");
is($repeated{worker}, 0,
	'a counter that embeds the node id, on a standby with its own node id, repeats none');

done_testing();
