# pg_dump of an application database whose tables have idgen DEFAULTs
# (both generators, a generated column and an expression index over the
# decoders), restored with pg_restore into a fresh server with idgen
# preloaded and another node id.
#
# The dumped database is the source server's idgen.database, so it holds
# the source keeper's live reservation.  None of that may travel: the
# extension's sequences are members, restored by CREATE EXTENSION, never as
# data.  Checked: the dump names neither sequence; the restore works, into
# an application database and into the new server's own keeper database;
# the data is intact; the restored extension equals a fresh one; the new
# server's reservation and recorded epoch stay its own; and the DEFAULTs
# keep generating with the new node id, without a duplicate.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# --- the source: its keeper keeps the reservation in app -----------------------
my $src = PostgreSQL::Test::Cluster->new('source');
$src->init;
$src->append_conf('postgresql.conf', q{
shared_preload_libraries = 'idgen'
idgen.node_id = 31
idgen.database = 'app'
});
$src->start;
# the keeper retries until its database exists, then creates the extension
$src->safe_psql('postgres', 'CREATE DATABASE app');
wait_for_keeper_in($src, 'app');
$src->safe_psql('app', q{
	CREATE EXTENSION IF NOT EXISTS idgen;
	CREATE TABLE orders (
	    id         bigint PRIMARY KEY DEFAULT snowflake_id(),
	    created_at timestamptz GENERATED ALWAYS AS (snowflake_id_time(id)) STORED,
	    item       text NOT NULL);
	CREATE INDEX orders_node ON orders (snowflake_id_node(id));
	CREATE TABLE photos (id bigint PRIMARY KEY DEFAULT instagram_id(5), caption text NOT NULL);
	INSERT INTO orders (item) SELECT 'order ' || g FROM generate_series(1, 20000) g;
	INSERT INTO photos (caption) SELECT 'photo ' || g FROM generate_series(1, 20000) g;
});
my $durable = q{SELECT format('hwm %s %s, epoch %s %s', h.last_value, h.is_called, e.last_value, e.is_called)
                  FROM idgen_hwm h, idgen_epoch e};
like($src->safe_psql('app', $durable), qr/^hwm \d+ t, epoch \d+ t$/,
	'the dumped database holds the source keeper\'s reservation and epoch');
my $fingerprint = q{
	SELECT (SELECT format('%s %s', count(*), md5(string_agg(format('%s %s %s', id, created_at, item), ',' ORDER BY id))) FROM orders)
	       || ' / ' ||
	       (SELECT format('%s %s', count(*), md5(string_agg(id || caption, ',' ORDER BY id))) FROM photos)};
my $data = $src->safe_psql('app', $fingerprint);

my $dir = PostgreSQL::Test::Utils::tempdir;
command_ok([ 'pg_dump', '-Fc', '-f', "$dir/app.dump", '-d', $src->connstr('app') ],
	'pg_dump -Fc of the application database');
command_ok([ 'pg_dump', '-f', "$dir/app.sql", '-d', $src->connstr('app') ],
	'pg_dump (plain) of the same');
my $sql = slurp_file("$dir/app.sql");
like($sql, qr/CREATE EXTENSION IF NOT EXISTS idgen /, 'the dump creates the extension');
unlike($sql, qr/idgen_hwm|idgen_epoch/, 'the dump does not carry the extension\'s sequences');
$src->stop;

# --- the target: another node id, its keeper in postgres ------------------------
my $dst = PostgreSQL::Test::Cluster->new('target');
$dst->init;
$dst->append_conf('postgresql.conf', q{
shared_preload_libraries = 'idgen'
idgen.node_id = 32
});
$dst->start;
wait_for_keeper($dst);
# it issues IDs of its own first, so that it has a live reservation
$dst->safe_psql('postgres', 'SELECT count(snowflake_id()) FROM generate_series(1, 1000)');
my ($own_hwm) = $dst->safe_psql('postgres', 'SELECT last_value FROM idgen_hwm');
my $own_epoch = $dst->safe_psql('postgres', 'SELECT format(\'%s %s\', last_value, is_called) FROM idgen_epoch');

# into an application database
$dst->safe_psql('postgres', 'CREATE DATABASE app TEMPLATE template0');
command_ok([ 'pg_restore', '--exit-on-error', '-d', $dst->connstr('app'), "$dir/app.dump" ],
	'pg_restore into a new database on a server with idgen preloaded');
is($dst->safe_psql('app', $fingerprint), $data,
	'the data is intact (including the generated column computed from the IDs)');
is($dst->safe_psql('app', $durable), 'hwm 0 f, epoch 0 f',
	'the restored idgen_hwm and idgen_epoch are fresh, not the source\'s');
$dst->safe_psql('postgres', 'CREATE DATABASE fresh');
$dst->safe_psql('fresh', 'CREATE EXTENSION idgen');
is(extension_members($dst, 'app'), extension_members($dst, 'fresh'),
	'the restored extension equals a fresh CREATE EXTENSION');

# and into the target's own keeper database, where the extension exists
command_ok([ 'pg_restore', '--exit-on-error', '-d', $dst->connstr('postgres'), "$dir/app.dump" ],
	'pg_restore into the target\'s keeper database (idgen.database) works too');
is($dst->safe_psql('postgres', $fingerprint), $data, 'the data is intact there as well');

# --- the target's own state, and generation ---------------------------------
is($dst->safe_psql('postgres', qq{
	SELECT last_value >= $own_hwm AND is_called FROM idgen_hwm}),
	't', 'the target\'s reservation is its own and did not go backwards');
is($dst->safe_psql('postgres', 'SELECT format(\'%s %s\', last_value, is_called) FROM idgen_epoch'),
	$own_epoch, 'the target\'s recorded epoch is unchanged');

for my $db ('app', 'postgres')
{
	# Instagram IDs carry no node: moving a shard's rows to another server
	# needs instagram_id_advance() (README, "Moving a shard"), so that the
	# shard's new IDs lie above the copied ones whatever the clocks say.
	# Snowflake IDs carry the node id and need nothing.
	$dst->safe_psql($db, q{
		SELECT instagram_id_advance(5, (SELECT max(id) FROM photos));
		INSERT INTO orders (item) SELECT 'new order ' || g FROM generate_series(1, 5000) g;
		INSERT INTO photos (caption) SELECT 'new photo ' || g FROM generate_series(1, 5000) g;
	});
	is($dst->safe_psql($db, q{
		SELECT (SELECT count(*) FROM orders), (SELECT count(DISTINCT id) FROM orders),
		       (SELECT bool_and(snowflake_id_node(id) = 32) FROM orders WHERE item LIKE 'new %'),
		       (SELECT bool_and(snowflake_id_node(id) = 31) FROM orders WHERE item NOT LIKE 'new %'),
		       (SELECT bool_and(created_at = snowflake_id_time(id)) FROM orders),
		       (SELECT count(*) FROM orders WHERE snowflake_id_node(id) = 32),
		       (SELECT count(DISTINCT id) FROM photos),
		       (SELECT min(id) FILTER (WHERE caption LIKE 'new %') > max(id) FILTER (WHERE caption NOT LIKE 'new %') FROM photos)}),
		'25000|25000|t|t|t|5000|25000|t',
		"$db: the DEFAULTs generate with the new node id, no duplicate with the restored rows");
}
is($dst->safe_psql('postgres', q{
	SELECT keeper_state, reserved_until > snowflake_last_time AND reserved_until > instagram_last_time
	  FROM idgen_status()}),
	'ready|t', 'the target\'s keeper covers everything it issued');

$dst->stop;
done_testing();
