# A dropped generator created again with another definition takes a slot
# of its own while the server runs (the old definition keeps its values
# until a restart), and every name defined, dropped or not, keeps one.
# Where idgen.max_generators leaves none, the re-creation is refused with
# 53400 and nothing is committed: the old definition stays dropped.  A
# restart alone frees nothing (the dropped name is loaded again); with the
# setting raised, the same re-creation succeeds and continues the number
# line.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('slot_room', conf => q{
idgen.max_generators = 2
});
$node->start;
wait_for_keeper($node);

# two counters fill the two slots; each draws, so the keeper runs both
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('full_a', 'top:3=1 seq:31');
	SELECT idgen_create_generator('full_b', 'top:3=2 seq:31');
	CREATE TABLE drawn AS
	  SELECT idgen_next('full_a') AS id FROM generate_series(1, 200)});
ok($node->poll_query_until('postgres', q{SELECT idgen_next('full_b') > 0}),
	'both generators run');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM idgen_generator_status WHERE name IN ('full_a', 'full_b')}),
	'2', 'the status shows both');

$node->safe_psql('postgres', q{SELECT idgen_drop_generator('full_a', force => true)});
my $report = error_report_of($node, q{
	SELECT idgen_create_generator('full_a', 'top:3=3 seq:31', stripes => 2, owned => '0')});
like($report, qr/ERROR:\s+53400: no room on this server for a new definition of generator "full_a"/,
	'a re-creation with another definition and no slot left: 53400');
like($report, qr/HINT:\s+Raise those settings/, 'the hint says to raise the setting');
is($node->safe_psql('postgres',
		q{SELECT layout, dropped IS NOT NULL FROM idgen_generator WHERE name = 'full_a'}),
	'top:3=1 seq:31|t', 'nothing was committed: the old definition stays, dropped');

$node->restart;
wait_for_keeper($node);
like(error_of($node, q{
	SELECT idgen_create_generator('full_a', 'top:3=3 seq:31', stripes => 2, owned => '0')}),
	qr/^53400: /, 'a restart alone frees no slot: the dropped name is loaded again');
$node->append_conf('postgresql.conf', 'idgen.max_generators = 3');
$node->restart;
wait_for_keeper($node);
# (its NOTICE says where it begins: a number that depends on prefetch)
$node->safe_psql('postgres', q{
	SET client_min_messages = warning;
	SELECT idgen_create_generator('full_a', 'top:3=3 seq:31', stripes => 2, owned => '0')});
ok($node->poll_query_until('postgres', q{SELECT idgen_next('full_a') > 0}),
	'with the setting raised, the re-creation is accepted and runs');
is($node->safe_psql('postgres', q{
	WITH s AS (SELECT max(id & ((1::bigint << 31) - 1)) AS top FROM drawn),
	     n AS (SELECT idgen_next('full_a') AS id FROM generate_series(1, 200))
	SELECT count(*) FROM n, s WHERE (n.id & ((1::bigint << 31) - 1)) <= s.top}),
	'0', 'and continues above every value the old definition handed out');

$node->stop;
done_testing();
