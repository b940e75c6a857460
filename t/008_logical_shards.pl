# Instagram-style logical shards over two servers, seen through a
# postgres_fdw coordinator.  Server A owns shards 0-3, server B 4-7
# (idgen.shards), each shard a schema whose table defaults to
# instagram_id(<shard>).  Both insert concurrently; IDs are globally unique
# and decode to their shard.  Then shard 3 moves from A to B, whose clock is
# a minute behind: with instagram_id_advance() its new IDs are above all its old
# ones, and ownership is handed over by reloading idgen.shards.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

sub shard_ddl
{
	my ($k) = @_;
	return "CREATE SCHEMA shard_$k;
	        CREATE TABLE shard_$k.photos (
	            id      bigint PRIMARY KEY DEFAULT instagram_id($k),
	            caption text NOT NULL);";
}

my $a = idgen_node('server_a', conf => "idgen.node_id = 1\nidgen.shards = '0-3'\n");
$a->start;
wait_for_keeper($a);

my $b = idgen_node('server_b', conf => q{
idgen.node_id = 2
idgen.shards = '4-7'
idgen.max_lead = 120s
});
my ($set_b_clock, $start_b) = fake_clock($b, '-60s');
$start_b->('start');
wait_for_keeper($b);

$a->safe_psql('postgres', join('', map { shard_ddl($_) } 0 .. 3));
$b->safe_psql('postgres', join('', map { shard_ddl($_) } 4 .. 7));

# --- the guard ---------------------------------------------------------------
like(error_of($a, 'SELECT instagram_id(5)'), qr/^22023: shard 5 is not owned by this server/,
	'server A refuses a shard it does not own (22023)');
my ($ret, $out, $err) = $a->psql('postgres', 'SELECT instagram_id(5)');
like($err, qr/DETAIL:\s+"idgen.shards" is "0-3"/, 'the error shows the setting');
like($err, qr/HINT:\s+Generate IDs for shard 5 on the server that owns it/, 'and says what to do');

# --- the coordinator ------------------------------------------------------------
my $c = PostgreSQL::Test::Cluster->new('coordinator');
$c->init;
$c->start;
# the coordinator issues no IDs: idgen without preload, for the decoders
my $fdw = "CREATE EXTENSION postgres_fdw; CREATE EXTENSION idgen;";
for my $s ([ 'a', $a ], [ 'b', $b ])
{
	my ($name, $node) = @$s;
	$fdw .= sprintf("CREATE SERVER %s FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '%s', port '%s', dbname 'postgres', batch_size '1000');
	                 CREATE USER MAPPING FOR CURRENT_USER SERVER %s;",
		$name, $node->host, $node->port, $name);
}
for my $k (0 .. 7)
{
	$fdw .= sprintf("CREATE SCHEMA shard_%d; IMPORT FOREIGN SCHEMA shard_%d FROM SERVER %s INTO shard_%d;",
		$k, $k, $k < 4 ? 'a' : 'b', $k);
}
my $view = 'CREATE VIEW all_photos AS '
  . join(' UNION ALL ', map { "SELECT $_ AS shard, id, caption FROM shard_$_.photos" } 0 .. 7);
$c->safe_psql('postgres', $fdw . $view);

# --- concurrent inserts on both servers ----------------------------------------------
concurrent_pgbench(4, map {
	my ($node, $lo, $hi) = @$_;
	[ $node, "\\set s random($lo, $hi)\nINSERT INTO shard_:s.photos (caption) SELECT 'old' FROM generate_series(1, 10);\n" ]
} [ $a, 0, 3 ], [ $b, 4, 7 ]);

my $check = q{
	SELECT count(*) > 0, count(*) = count(DISTINCT id), bool_and(instagram_id_shard(id) = shard),
	       count(DISTINCT shard)
	  FROM all_photos};
is($c->safe_psql('postgres', $check), 't|t|t|8',
	'through the coordinator: IDs of all 8 shards are unique and decode to their shard');

# --- move shard 3 from A to B ---------------------------------------------------------
# 1. A gives it up (reload, then release: every session stops at once) and
#    refuses it from then on; release says how far it got
alter_system_and_reload($a, { 'idgen.shards' => '0-2' });
ok($a->poll_query_until('postgres', "SELECT current_setting('idgen.shards') = '0-2'"),
	'server A reloaded its shards');
my $released = $a->safe_psql('postgres', 'SELECT instagram_id_release(3)');
like(error_of($a, 'SELECT instagram_id(3)'), qr/^22023: shard 3 is not owned/,
	'after the reload, A refuses shard 3');

# 2. its rows are copied to B
$b->safe_psql('postgres', shard_ddl(3));
$c->safe_psql('postgres', q{
	CREATE SCHEMA b_shard_3;
	IMPORT FOREIGN SCHEMA shard_3 FROM SERVER b INTO b_shard_3;
	INSERT INTO b_shard_3.photos SELECT * FROM shard_3.photos;
	DROP VIEW all_photos;
	DROP FOREIGN TABLE shard_3.photos;
	IMPORT FOREIGN SCHEMA shard_3 FROM SERVER b INTO shard_3;} . $view);
my $old_max = $a->safe_psql('postgres', 'SELECT max(id) FROM shard_3.photos');
is($b->safe_psql('postgres', 'SELECT max(id) FROM shard_3.photos'), $old_max,
	'shard 3 rows copied to B');
cmp_ok($released, '>=', $old_max, 'the ID release returned is at or above every row of shard 3');

# 3. B generates above them, then takes ownership (reload).  B's clock,
#    a minute behind, is frozen a minute before the released ID, so that it
#    stays behind shard 3's rows however long the test takes.
$set_b_clock->(utc_clock_spec($a->safe_psql('postgres',
	"SELECT extract(epoch FROM instagram_id_time($released)) - 60")));
is($b->safe_psql('postgres', "SELECT clock_timestamp() < instagram_id_time($released)"), 't',
	'B\'s clock is behind every row of shard 3');
like(error_of($b, 'SELECT instagram_id(3)'), qr/^22023: shard 3 is not owned/,
	'B refuses shard 3 until it owns it');
$b->safe_psql('postgres', "SELECT instagram_id_advance(3, $released)");
alter_system_and_reload($b, { 'idgen.shards' => '3-7' });
ok($b->poll_query_until('postgres', "SELECT instagram_id_shard(instagram_id(3)) = 3"),
	'server B reloaded its shards and issues for shard 3');
$b->safe_psql('postgres',
	"INSERT INTO shard_3.photos (caption) SELECT 'new' FROM generate_series(1, 2000)");

is($b->safe_psql('postgres', q{
	SELECT min(id) FILTER (WHERE caption = 'new') > max(id) FILTER (WHERE caption = 'old'),
	       bool_and(instagram_id_shard(id) = 3)
	  FROM shard_3.photos}),
	't|t', "on B, shard 3's new IDs are above all its old ones, though B's clock is a minute behind");
is($b->safe_psql('postgres', q{
	SELECT bool_and(instagram_id_time(id) > clock_timestamp()) FROM shard_3.photos WHERE caption = 'new'}),
	't', 'they were issued ahead of B\'s own clock: the advance, not the clock, put them there');
is($c->safe_psql('postgres', $check), 't|t|t|8',
	'through the coordinator, after the move: still unique, still decoding to their shard');

$c->stop;
$b->stop;
$a->stop;
done_testing();
