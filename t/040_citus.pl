# idgen on a Citus cluster: a coordinator (node id 10) and two workers
# (11, 12), all with shared_preload_libraries = 'citus,idgen'.
#
# Distributed tables keyed by snowflake_id() (events, distributed by the
# ID), by a named generator (orders, by customer) and by instagram_id()
# with the tenant as logical shard (posts, by tenant), and a reference
# table (tags).  Rows are written through the coordinator (INSERT ...
# SELECT from a series and from a distributed table, multi-row VALUES,
# COPY) and on the workers (through Citus' routing of the distributed
# table, and straight into a shard table), and by pgbench on all three
# nodes at once.  Every ID is unique, and decodes to the node that
# evaluated it: the node the statement was sent to, except for INSERT ...
# SELECT from a distributed table, which Citus runs as "repartition": the
# workers that hold the source shards evaluate the DEFAULT.
#
# Then the failure modes: create_distributed_table on a table that has
# rows; a node added to the running cluster and the shards rebalanced
# onto it; a node with a node id already in use, found by the fleet
# check; a node without idgen in shared_preload_libraries (55000 from
# that node, relayed by the coordinator).
#
# Needs Citus installed in the PostgreSQL under test (scripts/citus.sh);
# skips without it, and on PostgreSQL 15 (Citus 14 needs 16 or later).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# ---- is Citus there? ----
my $pg_config = 'pg_config';    # PGXS puts the bindir under test first in PATH
my ($major) = `$pg_config --version` =~ /PostgreSQL (\d+)/
  or die "cannot run $pg_config";
plan skip_all => "Citus 14 needs PostgreSQL 16 or later (this is $major)"
  if $major < 16;
my ($pkglibdir, $bindir) = split /\n/, `$pg_config --pkglibdir --bindir`;
unless (-e "$pkglibdir/citus.so")
{
	my $why = "Citus is not installed in $pkglibdir: run "
	  . "scripts/citus.sh $bindir/pg_config as root, or put citus-14.0.1.tar.gz in "
	  . "../shared/vendor beside the repository and run scripts/test-it.sh";
	# scripts/test-it.sh sets this when it had the sources to build Citus
	if ($ENV{IDGEN_CITUS_REQUIRED})
	{
		fail($why);
		done_testing();
		exit;
	}
	plan skip_all => $why;
}

# ---- the cluster ----
# Each node owns its own range of instagram shards (tenants): instagram
# IDs carry no node id, so two nodes issuing for one logical shard could
# issue the same ID.
my $coord = citus_node('coordinator', 10, extra => "idgen.shards = '0-999'\n");
my $w1 = citus_node('worker1', 11, extra => "idgen.shards = '1000-1999'\n");
my $w2 = citus_node('worker2', 12, extra => "idgen.shards = '2000-2999'\n");
my %node_id = (coordinator => 10, worker1 => 11, worker2 => 12);

sub add_node
{
	my ($node) = @_;
	$coord->safe_psql('postgres',
		sprintf("SELECT citus_add_node('%s', %d)", $node->host, $node->port));
}
$coord->safe_psql('postgres',
	sprintf("SELECT citus_set_coordinator_host('%s', %d)", $coord->host, $coord->port));
add_node($_) for $w1, $w2;
is($coord->safe_psql('postgres',
	'SELECT count(*) FROM pg_dist_node WHERE isactive AND shouldhaveshards'),
	'2', 'the coordinator knows two active workers');
is(citus_fleet_duplicates($coord), '', 'fleet check: every node has its own node id');

# A named generator must be defined on every node that evaluates a
# DEFAULT using it, with the same definition (idgen.database is postgres).
my $define_orders = q{SELECT idgen_create_generator('orders', layout => 'tsid')};
$_->safe_psql('postgres', $define_orders) for $coord, $w1, $w2;

$coord->safe_psql('postgres', q{
	CREATE TABLE events (
		id      bigint PRIMARY KEY DEFAULT snowflake_id(),
		path    text NOT NULL,
		payload int);
	SELECT create_distributed_table('events', 'id');
	CREATE TABLE orders (
		customer_id int NOT NULL,
		id          bigint NOT NULL DEFAULT idgen_next('orders'),
		path        text NOT NULL,
		PRIMARY KEY (customer_id, id));
	SELECT create_distributed_table('orders', 'customer_id');
	CREATE TABLE posts (
		tenant_id int NOT NULL,
		id        bigint NOT NULL,
		path      text NOT NULL,
		PRIMARY KEY (tenant_id, id));
	SELECT create_distributed_table('posts', 'tenant_id');
	CREATE TABLE tags (
		id   bigint PRIMARY KEY DEFAULT snowflake_id(),
		path text NOT NULL);
	SELECT create_reference_table('tags');
});

# A DEFAULT cannot derive the shard from the tenant column: PostgreSQL
# forbids column references in defaults, so the shard is passed in the
# INSERT (or set by a trigger, which Citus allows on distributed tables
# only with citus.enable_unsafe_triggers).
like(error_of($coord, q{ALTER TABLE posts ALTER COLUMN id
	SET DEFAULT instagram_id((tenant_id % 8192)::int)}),
	qr/^0A000: cannot use column reference in DEFAULT expression/,
	'DEFAULT instagram_id(tenant_id % 8192) is refused (0A000)');

# ---- writes through the coordinator ----
my $copy_rows = join('', map { "c_copy\n" } 1 .. 5000);
$coord->safe_psql('postgres', qq{
	INSERT INTO events (path, payload) SELECT 'c_series', g FROM generate_series(1, 20000) g;
	INSERT INTO events (path) VALUES ('c_values'), ('c_values'), ('c_values'), ('c_values');
	COPY events (path) FROM STDIN;
$copy_rows\\.
	INSERT INTO events (path, payload) SELECT 'c_from_dist', payload FROM events WHERE path = 'c_series';
	INSERT INTO orders (customer_id, path) SELECT g % 1000, 'c_series' FROM generate_series(1, 10000) g;
	COPY orders (customer_id, path) FROM STDIN;
@{[ join('', map { "$_\tc_copy\n" } 1 .. 2000) ]}\\.
	INSERT INTO posts (tenant_id, id, path)
		SELECT t, instagram_id(t), 'c_series' FROM generate_series(0, 999) t, generate_series(1, 10);
	INSERT INTO posts (tenant_id, id, path) VALUES (7, instagram_id(7), 'c_values'), (8, instagram_id(8), 'c_values');
	INSERT INTO tags (path) SELECT 'c_series' FROM generate_series(1, 500);
});
like($coord->safe_psql('postgres', q{EXPLAIN (COSTS OFF)
	INSERT INTO events (path, payload) SELECT 'c_from_dist', payload FROM events}),
	qr/INSERT\/SELECT method: repartition/,
	'INSERT ... SELECT from a distributed table with a volatile DEFAULT: Citus repartitions');

# ---- writes on the workers ----
for my $w ($w1, $w2)
{
	my $name = $w->name;
	$w->safe_psql('postgres', qq{
		INSERT INTO events (path, payload) SELECT '$name', 0 FROM generate_series(1, 3000);
		INSERT INTO events (path) VALUES ('$name'), ('$name');
		COPY events (path) FROM STDIN;
@{[ join('', map { "$name\n" } 1 .. 1000) ]}\\.
		INSERT INTO orders (customer_id, path) SELECT g % 1000, '$name' FROM generate_series(1, 3000) g;
		INSERT INTO tags (path) SELECT '$name' FROM generate_series(1, 200);
	});
	# straight into one of its own shard tables, for a customer of that shard
	my ($shard, $customer) = split /\|/, $w->safe_psql('postgres', q{
		SELECT s.shard_name, c
		  FROM citus_shards s, generate_series(1, 1000) c
		 WHERE s.table_name = 'orders'::regclass
		   AND s.nodeport = current_setting('port')::int
		   AND s.shardid = get_shard_id_for_distribution_column('orders', c)
		 ORDER BY c LIMIT 1});
	$w->safe_psql('postgres', qq{
		INSERT INTO $shard (customer_id, path) SELECT $customer, '$name shard' FROM generate_series(1, 1000)});
}
$w1->safe_psql('postgres', q{
	INSERT INTO posts (tenant_id, id, path)
		SELECT t, instagram_id(t), 'worker1' FROM generate_series(1000, 1999) t, generate_series(1, 5) s});
$w2->safe_psql('postgres', q{
	INSERT INTO posts (tenant_id, id, path)
		SELECT t, instagram_id(t), 'worker2' FROM generate_series(2000, 2999) t, generate_series(1, 5) s});
like(error_of($w1, q{INSERT INTO posts (tenant_id, id, path) VALUES (5, instagram_id(5), 'x')}),
	qr/^22023: /, 'a worker refuses a tenant whose instagram shard another node owns (22023)');

# ---- all three nodes at once ----
my %range = (coordinator => [ 0, 999 ], worker1 => [ 1000, 1999 ], worker2 => [ 2000, 2999 ]);
concurrent_pgbench(5, map {
	my $name = $_->name;
	my ($lo, $hi) = @{ $range{$name} };
	[ $_, qq{\\set c random(1, 1000)
\\set t random($lo, $hi)
INSERT INTO events (path) VALUES ('pgb $name'), ('pgb $name');
INSERT INTO orders (customer_id, path) VALUES (:c, 'pgb $name');
INSERT INTO posts (tenant_id, id, path) VALUES (:t, instagram_id(:t), 'pgb $name');
INSERT INTO tags (path) VALUES ('pgb $name');
} ]
} $coord, $w1, $w2);

# ---- what ended up where ----
# Which node ids each write path produced, as "path:node,node".
sub nodes_by_path
{
	my ($table, $decode) = @_;
	return $coord->safe_psql('postgres', qq{
		SELECT string_agg(format('%s:%s', path, nodes), ' ' ORDER BY path COLLATE "C")
		  FROM (SELECT path, string_agg(DISTINCT node::text, ',') AS nodes
		          FROM (SELECT path, $decode AS node FROM $table) d GROUP BY path) s});
}
is(nodes_by_path('events', 'snowflake_id_node(id)'),
	'c_copy:10 c_from_dist:11,12 c_series:10 c_values:10 '
	  . 'pgb coordinator:10 pgb worker1:11 pgb worker2:12 worker1:11 worker2:12',
	'events: coordinator writes carry node 10, worker writes their worker\'s, '
	  . 'INSERT ... SELECT from a distributed table the source workers\'');
is(nodes_by_path('orders', q{(idgen_decode('orders', id)->>'node')::int}),
	'c_copy:10 c_series:10 pgb coordinator:10 pgb worker1:11 pgb worker2:12 '
	  . 'worker1:11 worker1 shard:11 worker2:12 worker2 shard:12',
	'orders (named generator): the same, also for rows written into a shard table');
is(nodes_by_path('tags', 'snowflake_id_node(id)'),
	'c_series:10 pgb coordinator:10 pgb worker1:11 pgb worker2:12 worker1:11 worker2:12',
	'tags (reference table): each row carries the node it was written on');

my %rows;
for my $table (qw(events orders posts tags))
{
	my ($n, $distinct) = split /\|/,
	  $coord->safe_psql('postgres', "SELECT count(*), count(DISTINCT id) FROM $table");
	$rows{$table} = $n;
	is($distinct, $n, "$table: $n rows, no duplicate ID");
}
is($coord->safe_psql('postgres', q{
	SELECT count(DISTINCT id) FROM (
		SELECT id FROM events UNION ALL SELECT id FROM tags) s}),
	$rows{events} + $rows{tags}, 'no snowflake ID occurs in both events and tags');
is($coord->safe_psql('postgres', q{
	SELECT bool_and(instagram_id_shard(id) = tenant_id) FROM posts}),
	't', 'posts: every ID carries its tenant as instagram shard');
is($coord->safe_psql('postgres', q{
	SELECT count(DISTINCT result) FROM run_command_on_placements('tags',
		$$SELECT count(*) || ':' || sum(id) FROM %s$$)}),
	'1', 'tags: every placement of the reference table holds the same IDs');
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM run_command_on_placements('tags', $$SELECT 1 FROM %s LIMIT 1$$)}),
	'3', 'tags: placed on the coordinator and both workers');

# Time-range scans with snowflake_id_from_time() on the distributed key:
# the middle half of the rows by time, counted by ID range and by the
# decoded time.
my ($lo, $hi) = split /\|/, $coord->safe_psql('postgres', q{
	SELECT snowflake_id_time(percentile_disc(0.25) WITHIN GROUP (ORDER BY id)),
	       snowflake_id_time(percentile_disc(0.75) WITHIN GROUP (ORDER BY id))
	  FROM events});
my ($by_id, $by_time) = split /\|/, $coord->safe_psql('postgres', qq{
	SELECT (SELECT count(*) FROM events
	         WHERE id >= snowflake_id_from_time('$lo') AND id < snowflake_id_from_time('$hi')),
	       (SELECT count(*) FROM events
	         WHERE snowflake_id_time(id) >= '$lo' AND snowflake_id_time(id) < '$hi')});
cmp_ok($by_id, '>', 0, 'events: the time range holds rows');
is($by_id, $by_time, 'events: an ID range from snowflake_id_from_time() finds exactly the rows of that time range');
is($coord->safe_psql('postgres', qq{
	SELECT count(*) FROM events WHERE id >= snowflake_id_from_time('$lo') AND id < snowflake_id_from_time('$hi')
	   AND NOT (snowflake_id_time(id) >= '$lo' AND snowflake_id_time(id) < '$hi')}),
	'0', 'events: and no row outside it');

# ---- create_distributed_table on a table that already has rows ----
$coord->safe_psql('postgres', q{
	CREATE TABLE legacy (id bigint PRIMARY KEY DEFAULT snowflake_id(), path text NOT NULL);
	INSERT INTO legacy (path) SELECT 'before' FROM generate_series(1, 5000)});
my $fingerprint = q{SELECT count(*) || ':' || md5(string_agg(id::text, ',' ORDER BY id))
	FROM legacy WHERE path = 'before'};
my $before = $coord->safe_psql('postgres', $fingerprint);
$coord->safe_psql('postgres', q{
	SELECT create_distributed_table('legacy', 'id');
	SELECT truncate_local_data_after_distributing_table('legacy');
	INSERT INTO legacy (path) SELECT 'after' FROM generate_series(1, 2000)});
$w1->safe_psql('postgres', q{INSERT INTO legacy (path) SELECT 'after w1' FROM generate_series(1, 2000)});
is($coord->safe_psql('postgres', $fingerprint), $before,
	'create_distributed_table keeps the rows and their IDs');
is($coord->safe_psql('postgres', q{
	SELECT count(*) || ' ' || count(DISTINCT id) || ' '
	       || (min(id) FILTER (WHERE path = 'after') > max(id) FILTER (WHERE path = 'before'))
	  FROM legacy}),
	'9000 9000 true', 'legacy: new rows get new IDs above the old ones, no duplicate');

# ---- a node added to the running cluster ----
my $w3 = citus_node('worker3', 13, extra => "idgen.shards = '3000-3999'\n");
$w3->safe_psql('postgres', $define_orders);    # before it gets shards
add_node($w3);
$coord->safe_psql('postgres',
	q{SELECT rebalance_table_shards(shard_transfer_mode => 'block_writes')});
cmp_ok($coord->safe_psql('postgres', sprintf(q{
	SELECT count(*) FROM citus_shards WHERE nodeport = %d}, $w3->port)),
	'>', 0, 'the rebalancer moved shards onto the new worker');
is(citus_fleet_duplicates($coord), '', 'fleet check: still one node id per node');
concurrent_pgbench(3, map {
	my $name = $_->name;
	[ $_, qq{\\set c random(1, 1000)
INSERT INTO events (path) VALUES ('grown $name'), ('grown $name');
INSERT INTO orders (customer_id, path) VALUES (:c, 'grown $name');
INSERT INTO tags (path) VALUES ('grown $name');
} ]
} $coord, $w1, $w3);
$coord->safe_psql('postgres', q{
	INSERT INTO events (path, payload) SELECT 'grown from_dist', payload FROM events WHERE path = 'c_series';
	CREATE TABLE after_add (id bigint PRIMARY KEY DEFAULT snowflake_id(), path text NOT NULL);
	SELECT create_distributed_table('after_add', 'id');
	INSERT INTO after_add (path) SELECT 'grown from_dist' FROM events WHERE path = 'c_series'});
like(nodes_by_path('events', 'snowflake_id_node(id)'),
	qr/grown coordinator:10 grown from_dist:(11,)?(12,)?13 grown worker1:11 grown worker3:13 /,
	'after the rebalance the new worker writes and evaluates with its own node id');
is(nodes_by_path('after_add', 'snowflake_id_node(id)'), 'grown from_dist:11,12,13',
	'a table distributed after the node joined: IDs from all three source workers');
for my $table (qw(events orders tags after_add))
{
	my ($n, $distinct) = split /\|/,
	  $coord->safe_psql('postgres', "SELECT count(*), count(DISTINCT id) FROM $table");
	$rows{$table} = $n;
	is($distinct, $n, "after adding a node, $table: $n rows, no duplicate ID");
}

# ---- a node with a node id already in use ----
my $dup = citus_node('worker_dup', 11);
$dup->safe_psql('postgres', $define_orders);
add_node($dup);
is(citus_fleet_duplicates($coord), '11:2', 'fleet check: finds node id 11 on two nodes');
$coord->safe_psql('postgres', sprintf(q{SELECT citus_remove_node('%s', %d)}, $dup->host, $dup->port));
is(citus_fleet_duplicates($coord), '', 'fleet check: clean once that node is removed');
$dup->stop;

# ---- a node without idgen in shared_preload_libraries ----
my $bare = citus_node('worker_bare', 15, preload => 'citus');
add_node($bare);
is($bare->safe_psql('postgres',
	q{SELECT extversion IS NOT NULL FROM pg_extension WHERE extname = 'idgen'}),
	't', 'citus_add_node creates idgen on the new node');
is($bare->safe_psql('postgres', 'SELECT preloaded FROM idgen_status()'),
	'f', 'but idgen is not preloaded there');
like(error_of($bare, q{INSERT INTO events (path) VALUES ('bare')}),
	qr/^55000: snowflake_id\(\) requires idgen to be loaded via "shared_preload_libraries"/,
	'a write on that node fails with 55000');
# a table with shards on that node: writes the coordinator evaluates
# succeed, a repartitioned INSERT ... SELECT fails on that node
$coord->safe_psql('postgres', q{
	CREATE TABLE probe (id bigint PRIMARY KEY DEFAULT snowflake_id(), path text NOT NULL);
	SELECT create_distributed_table('probe', 'id', colocate_with => 'none');
	INSERT INTO probe (path) SELECT 'coordinator' FROM generate_series(1, 1000)});
is($coord->safe_psql('postgres', sprintf(q{
	SELECT count(*) > 0 FROM citus_shards WHERE table_name = 'probe'::regclass AND nodeport = %d},
	$bare->port)), 't', 'probe has shards on that node');
my ($ret, $out, $err) = $coord->psql('postgres',
	"\\set VERBOSITY verbose\nINSERT INTO probe (path) SELECT path FROM probe",
	on_error_stop => 1, timeout => scaled(60));
like($err, qr/ERROR:\s+55000: snowflake_id\(\) requires idgen to be loaded/,
	'the coordinator relays 55000 from that node for INSERT ... SELECT');
my $where = sprintf('while executing command on %s:%d', $bare->host, $bare->port);
like($err, qr/CONTEXT:\s+\Q$where\E/, 'and names the node in CONTEXT');
note("error relayed by the coordinator:\n$err");
is($coord->safe_psql('postgres', 'SELECT count(*) FROM probe'), '1000',
	'the failed INSERT ... SELECT left nothing behind');

note(join(', ', map { "$_: $rows{$_} rows" } sort keys %rows));
$_->stop for $bare, $w3, $w2, $w1, $coord;
done_testing();
