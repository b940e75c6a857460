# Eight pgbench clients for ten seconds, inserting with DEFAULT
# snowflake_id(), DEFAULT instagram_id(7) and instagram_id() of random
# shards into tables with no unique constraint: not one duplicate, and
# every ID decodes to its node or shard.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('bench', conf => "idgen.node_id = 99\nmax_connections = 20\n");
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	CREATE TABLE sf (id bigint DEFAULT snowflake_id(), client int);
	CREATE TABLE ig7 (id bigint DEFAULT instagram_id(7), client int);
	CREATE TABLE igr (shard int, id bigint);
});

$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --time=10',
	0,
	[qr{processed: [1-9]\d*$}m],
	[qr{^$}],
	'8 clients insert for 10 s without errors',
	{
		'idgen_insert' => q{
\set s random(0, 31)
INSERT INTO sf (client) SELECT :client_id FROM generate_series(1, 20);
INSERT INTO ig7 (client) SELECT :client_id FROM generate_series(1, 20);
INSERT INTO igr (shard, id) SELECT :s, instagram_id(:s) FROM generate_series(1, 5);
}
	});

# however fast the machine: all eight clients ran, each its own rows
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM sf');
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(DISTINCT client) FROM sf), (SELECT count(DISTINCT client) FROM ig7)}),
	'8|8', "every one of the 8 clients inserted ($rows snowflake rows)");
note "rows: sf $rows, ig7 " . $node->safe_psql('postgres', 'SELECT count(*) FROM ig7')
  . ', igr ' . $node->safe_psql('postgres', 'SELECT count(*) FROM igr');

is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM sf'),
	'0', 'snowflake: zero duplicates');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM ig7'),
	'0', 'instagram shard 7 (column DEFAULT): zero duplicates');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM igr'),
	'0', 'instagram, random shards: zero duplicates');
is($node->safe_psql('postgres', q{
	SELECT bool_and(snowflake_id_node(id) = 99) FROM sf}), 't',
	'every snowflake ID decodes to this node');
is($node->safe_psql('postgres', q{
	SELECT bool_and(instagram_id_shard(id) = 7) FROM ig7}), 't',
	'every shard 7 ID decodes to shard 7');
is($node->safe_psql('postgres', q{
	SELECT bool_and(instagram_id_shard(id) = shard), count(DISTINCT shard) > 1 FROM igr}), 't|t',
	'random-shard IDs decode to their shard');
# Nothing was issued that did not land in a row, and nothing twice.
is($node->safe_psql('postgres', 'SELECT snowflake_issued, instagram_issued FROM idgen_status()'),
	$node->safe_psql('postgres', 'SELECT (SELECT count(*) FROM sf), (SELECT count(*) FROM ig7) + (SELECT count(*) FROM igr)'),
	'idgen_status() counted exactly the IDs inserted');

$node->stop;
done_testing();
