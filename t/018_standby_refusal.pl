# On a physical standby every entry point that issues IDs or changes
# server-wide state refuses with 25006, and decoding by layout works.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
shared_preload_libraries = 'idgen'
idgen.node_id = 7
});
$primary->start;
wait_for_keeper($primary);
$primary->safe_psql('postgres', q{
	CREATE ROLE app;
	SELECT idgen_create_generator('timed', 'time:41 tag:3=3 node:10 seq:9');
	SELECT idgen_create_generator('count', 'zone:4=5 seq:27');
	SELECT idgen_create_generator('sharded', 'time:40 shard:4 seq:19', epoch => '2022-06-01+00');
	SELECT idgen_grant_generator('timed', 'app');
	SELECT idgen_next('timed'), idgen_next('count'), idgen_next('sharded', 1), snowflake_id(), instagram_id(3);
});
my $id = $primary->safe_psql('postgres', 'SELECT snowflake_id()');
my $ig3 = $primary->safe_psql('postgres', 'SELECT instagram_id(3)');

my $standby = standby_from_backup($primary, 'standby', conf => "idgen.node_id = 8\n");
$primary->wait_for_catchup($standby);

for my $call (
	'snowflake_id()', 'instagram_id(3)', 'snowflake_id_batch(10)',
	'instagram_id_batch(3, 10)', 'idgen_uuidv7()', 'idgen_flake128()',
	q{idgen_next('timed')}, q{idgen_next('count')}, q{idgen_next_int('count')},
	q{idgen_next('sharded', 1)}, q{idgen_next_batch('timed', 10)},
	q{idgen_next_batch('count', 10)}, q{idgen_next_batch('sharded', 10, 1)},
	"instagram_id_advance(3, $ig3)", "instagram_id_advance(3, $ig3, true)",
	'instagram_id_release(3)',
	q{idgen_create_generator('new_one', 'time:41 tag:3=4 node:10 seq:9')},
	q{idgen_drop_generator('timed', true)},
	q{idgen_grant_generator('timed', 'app')},
	q{idgen_revoke_generator('timed', 'app')})
{
	like(error_of($standby, "SELECT $call"), qr/^25006: /, "on a standby, $call refuses with 25006");
}

# decoding by name needs the definitions, which the keeper loads, and it
# does not run on a standby
like(error_of($standby, "SELECT idgen_decode('timed', $id)"),
	qr/^25006: named generators are not available during recovery/,
	'on a standby, decoding by name refuses with 25006, saying why');

# decoding by layout reads no server state
is($standby->safe_psql('postgres', qq{
	SELECT snowflake_id_node($id), (snowflake_id_decode($id)).node,
	       (idgen_decode_layout($id, 'snowflake') ->> 'worker')::int,
	       instagram_id_shard(instagram_id_from_parts(now(), 3, 0))}),
	'7|7|7|3', 'decoding by layout works on the standby');

$standby->stop;
$primary->stop;
done_testing();
