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
#
# What the source keeper keeps as configuration travels: a shard's floor
# (instagram_id_advance) and release (instagram_id_release), and a counter
# generator with its durable state.  Restored into the running target's
# keeper database, the keeper takes them without a restart: the released
# shard refuses, the advanced one issues above its floor, and the counter
# resumes above its restored state even when its definition is restored
# before its state row, as a parallel pg_restore may do.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# --- the source: its keeper keeps the reservation in app -----------------------
my $src = idgen_node('source', conf => q{
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
# a shard advanced ten minutes ahead of the clock (the target may issue
# that far ahead), another released, and a
# counter that has handed out values
$src->safe_psql('app', q{
	SELECT instagram_id_advance(7, instagram_id_from_time(clock_timestamp() + interval '10 min', 7), force => true);
	SELECT instagram_id_release(9);
	SELECT idgen_create_generator('tickets', 'zone:7=3 seq:40');
	SELECT count(idgen_next('tickets')) FROM generate_series(1, 2500);
});
ok($src->poll_query_until('app', q{
	SELECT (SELECT count(*) FROM idgen_shard_floor WHERE shard = 7) > 0
	   AND (SELECT reserved >= 2500 FROM idgen_counter_state WHERE name = 'tickets')}),
	'the source keeper made the floor, the release and the counter durable');
my $floor_rows = q{SELECT string_agg(format('%s %s %s', shard, id, released), ', ' ORDER BY shard, event) FROM idgen_shard_floor};
my $floors = $src->safe_psql('app', $floor_rows);
like($floors, qr/^7 \d+ f, 9 \d+ t$/, 'the source holds a floor of shard 7 and a release of shard 9');
my $floor7 = $src->safe_psql('app', 'SELECT max(id) FROM idgen_shard_floor WHERE shard = 7');
my $tickets = $src->safe_psql('app', q{SELECT reserved FROM idgen_counter_state WHERE name = 'tickets'});

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
my $dst = idgen_node('target', conf => q{
idgen.node_id = 32
idgen.max_lead = '15min'
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
is($dst->safe_psql('app', $floor_rows), $floors,
	'the shard floors and releases are restored');
$dst->safe_psql('postgres', 'CREATE DATABASE fresh');
$dst->safe_psql('fresh', 'CREATE EXTENSION idgen');
is(extension_members($dst, 'app'), extension_members($dst, 'fresh'),
	'the restored extension equals a fresh CREATE EXTENSION');

# and into the target's own keeper database, where the extension exists,
# the counter's definition first and the rest once the keeper has loaded
# it: the order a parallel pg_restore may commit them in
my ($list) = run_command([ 'pg_restore', '-l', "$dir/app.dump" ]);
my @definitions = grep { /TABLE DATA \S+ idgen_generator / } split /\n/, $list;
is(scalar(@definitions), 1, 'the dump carries the definitions');
PostgreSQL::Test::Utils::append_to_file("$dir/first.list", "$_\n") for @definitions;
PostgreSQL::Test::Utils::append_to_file("$dir/rest.list", "$_\n")
  for grep { !/TABLE DATA \S+ idgen_generator / } split /\n/, $list;
command_ok([ 'pg_restore', '--exit-on-error', '-L', "$dir/first.list", '-d', $dst->connstr('postgres'), "$dir/app.dump" ],
	'pg_restore of the definitions alone into the target\'s keeper database');
ok($dst->poll_query_until('postgres',
		q{SELECT state = 'refused' FROM idgen_generator_status WHERE name = 'tickets'}),
	'a counter whose state is not restored yet is refused');
command_ok([ 'pg_restore', '--exit-on-error', '-L', "$dir/rest.list", '-d', $dst->connstr('postgres'), "$dir/app.dump" ],
	'then the rest (idgen.database) works too');
is($dst->safe_psql('postgres', $fingerprint), $data, 'the data is intact there as well');
is($dst->safe_psql('postgres', $floor_rows), $floors,
	'the shard floors and releases are restored there');

# The keeper takes them while the server runs.  The release and the floor
# are taken by one load: once shard 9 refuses, shard 7 has its floor.
ok(wait_until(sub { error_of($dst, 'SELECT instagram_id(9)') =~ /^22023: shard 9 is not owned/ }),
	'the restored release of shard 9 is taken: it refuses (22023)');
is($dst->safe_psql('postgres', "SELECT instagram_id(7) > $floor7"), 't',
	'shard 7 issues above its restored floor, ten minutes ahead of the clock');
ok($dst->poll_query_until('postgres',
		q{SELECT state = 'active' FROM idgen_generator_status WHERE name = 'tickets'}),
	'the counter is taken once its state row is restored, without a restart');
is($dst->safe_psql('postgres',
		qq{SELECT (idgen_decode('tickets', idgen_next('tickets')) ->> 'seq')::bigint >= $tickets}),
	't', 'and resumes above its restored durable state');

# --- rows of a pre-release 1.1, without the column "space" -------------------
# A dump taken from a build of 1.1 before ID spaces names the columns it
# has; restored, its generators are each an ID space of their own, as they
# were (look-alikes were refused then), and keep their IDs: each counter
# resumes above its state.  Two counters of one layout, as such a dump
# could not hold, show that neither is compared with the other.
$dst->safe_psql('postgres', q{
	COPY idgen_generator (name, layout, epoch, unit_ms, created, dropped, prefetch, refill, stripes, owned, segment, start) FROM stdin;
old_a	seq:40	2020-01-01 00:00:00+00	1	2026-01-01 00:00:00+00	\N	1000	500	1	0	1	0
old_b	seq:40	2020-01-01 00:00:00+00	1	2026-01-01 00:00:00+00	\N	1000	500	1	0	1	0
\.
	INSERT INTO idgen_counter_state VALUES ('old_a', 7000), ('old_b', 9000);});
is($dst->safe_psql('postgres', q{
	SELECT idgen_next('old_a') >= 7000 AND idgen_next('old_b') >= 9000}),
	't', 'restored rows of a pre-release 1.1: each counter resumes above its state');
is($dst->safe_psql('postgres', q{
	SELECT string_agg(name || ':' || coalesce(space, 'own'), ' ' ORDER BY name)
	  FROM idgen_generator_status WHERE name LIKE 'old\_%'}),
	'old_a:own old_b:own', 'each is an ID space of its own');

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
