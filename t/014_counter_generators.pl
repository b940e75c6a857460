# Counter generators: clock-free, durable, striped.  Two servers own the
# two stripes of one counter and insert concurrently into tables that a
# third server merges by logical replication: zero collisions, and after
# equal load their highest IDs are within a few segments.  Beside it, three
# legacy modules each count from 0 in an ID space of its own, striped over
# the same two servers: each module's IDs are distinct, dense and balanced.  After an
# immediate stop, a killed backend and a failover to a synchronous
# standby, the counter resumes above every value handed out, exactly at
# its durable reservation, skipping at most one reservation (prefetch
# values, also after a tight loop: t/015_counter_demand.pl).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $segment = 100;
my $ddl = q{CREATE TABLE tickets (id bigint PRIMARY KEY DEFAULT idgen_next('tickets'), origin int NOT NULL)};
my $modules_ddl = q{CREATE TABLE modules (module text NOT NULL, id bigint NOT NULL, origin int NOT NULL)};
my @modules = qw(a b c);

my @servers;
for my $n (1 .. 2)
{
	my $node = idgen_node("stripe$n", allows_streaming => 'logical',
		conf => "idgen.node_id = $n\nmax_connections = 20\nrestart_after_crash = on\n");
	$node->start;
	wait_for_keeper($node);
	my $owned = $n - 1;
	$node->safe_psql('postgres', qq{
		SELECT idgen_create_generator('tickets', 'seq:31', stripes => 2, owned => '$owned',
		                              segment => $segment);
		SELECT idgen_create_generator('mod_' || m, 'seq:31', stripes => 2, owned => '$owned')
		  FROM unnest('{@{[ join ',', @modules ]}}'::text[]) m;
		$ddl;
		$modules_ddl;
		CREATE PUBLICATION tickets_pub FOR TABLE tickets, modules;});
	push @servers, $node;
}

my $merge = PostgreSQL::Test::Cluster->new('merge');
$merge->init;
$merge->append_conf('postgresql.conf', "max_worker_processes = 16\nmax_logical_replication_workers = 8\n");
$merge->start;
$merge->safe_psql('postgres',
	'CREATE TABLE tickets (id bigint PRIMARY KEY, origin int NOT NULL)');
$merge->safe_psql('postgres', $modules_ddl);
for my $n (1 .. 2)
{
	my $connstr = $servers[ $n - 1 ]->connstr . ' dbname=postgres';
	$merge->safe_psql('postgres',
		"CREATE SUBSCRIPTION tickets_sub$n CONNECTION '$connstr' PUBLICATION tickets_pub");
}
$merge->wait_for_subscription_sync;

# equal load: 2 clients x 2,500 transactions x 4 rows on each server, at once
my @runs;
for my $n (1 .. 2)
{
	my $script = $servers[ $n - 1 ]->basedir . '/insert.sql';
	append_to_file($script,
		"INSERT INTO tickets (origin) SELECT $n FROM generate_series(1, 4);\n"
		  . 'INSERT INTO modules VALUES '
		  . join(', ', map { "('$_', idgen_next('mod_$_'), $n)" } @modules) . ";\n");
	my $out = '';
	push @runs, [ \$out, IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '1', '-t', '2500', '-f', $script,
		  $servers[ $n - 1 ]->connstr('postgres') ],
		'>', \$out, '2>', \$out, IPC::Run::timeout(300)) ];
}
for my $run (@runs)
{
	my ($out, $h) = @$run;
	$h->finish;
	like($$out, qr/number of failed transactions: 0 /, 'pgbench ran without failures');
}
$servers[ $_ - 1 ]->wait_for_catchup("tickets_sub$_") for 1 .. 2;

# Each module: 2 x 2,500 IDs on each server, its own number line from 0.
# Within a running server a counter is dense, so server n hands out the
# first 5,000 values of its stripe: from n - 1, every second value.
is($merge->safe_psql('postgres', q{
	SELECT string_agg(format('%s:%s/%s', module, n, d), ' ' ORDER BY module)
	  FROM (SELECT module, count(*) AS n, count(DISTINCT id) AS d
	          FROM modules GROUP BY module) s}),
	join(' ', map { "$_:10000/10000" } @modules),
	'three modules, each its own counter over both servers: 10,000 distinct IDs each');
is($merge->safe_psql('postgres', q{
	SELECT count(*) FROM (
	  SELECT module, origin FROM modules GROUP BY module, origin
	  HAVING count(*) = 5000 AND min(id) = origin - 1
	     AND max(id) = 2 * (count(*) - 1) + origin - 1
	     AND bool_and(id % 2 = origin - 1)) s}),
	'6', 'each module starts at 0, and each server\'s share is dense in its stripe: balanced');
is($merge->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM tickets'),
	'40000|40000', 'the merged table has all 40,000 rows of both servers: zero collisions');
is($merge->safe_psql('postgres', qq{
	SELECT bool_and((id / $segment) % 2 = origin - 1) FROM tickets}),
	't', 'every ID lies in a segment of its server\'s stripe');
my ($max1, $max2) = split /\|/, $merge->safe_psql('postgres',
	'SELECT max(id) FILTER (WHERE origin = 1), max(id) FILTER (WHERE origin = 2) FROM tickets');
my $apart = abs($max1 - $max2) / $segment;
cmp_ok($apart, '<=', 2,
	"balanced: after equal load the servers' highest IDs are $apart segments apart");
is($merge->safe_psql('postgres', q{
	SELECT min(id) FROM tickets}),
	'0', 'IDs start at 0');

# --- rebalancing stripes across the two servers -----------------------------
# The documented procedure: drop the old counter on every server, take the
# highest counter_bound of all servers, and create the new one everywhere
# with start => that bound.  Server 1 takes stripes 0 and 3 of 4, so half
# of its new values lie in what was server 2's stripe.
my @bounds;
for my $n (1 .. 2)
{
	my $node = $servers[ $n - 1 ];
	my $owned = $n - 1;
	my $draws = $n == 1 ? 3000 : 1000;
	$node->safe_psql('postgres', qq{
		SELECT idgen_create_generator('orders', 'top:2=1 seq:31', stripes => 2, owned => '$owned',
		                              space => 'orders');
		CREATE TABLE orders_ids AS SELECT 'old'::text AS era, idgen_next('orders') AS id
		  FROM generate_series(1, $draws);
		SELECT idgen_drop_generator('orders', force => true);});
	# the bound is the durable reservation's, also after a clean restart
	# (where the dropped counter has issued nothing since)
	$node->restart;
	wait_for_keeper($node);
	ok($node->poll_query_until('postgres',
			q{SELECT counter_bound IS NOT NULL FROM idgen_generator_status WHERE name = 'orders'}),
		"server $n reads the dropped counter's bound after a restart");
	push @bounds, $node->safe_psql('postgres',
		q{SELECT counter_bound FROM idgen_generator_status WHERE name = 'orders'});
}
my $start = $bounds[0] > $bounds[1] ? $bounds[0] : $bounds[1];
for my $n (1 .. 2)
{
	my $node = $servers[ $n - 1 ];
	my $owned = $n == 1 ? '0,3' : '1,2';
	$node->safe_psql('postgres', qq{
		SELECT idgen_create_generator('orders_v2', 'top:2=1 seq:31', stripes => 4,
		                              owned => '$owned', start => $start, space => 'orders');
		INSERT INTO orders_ids SELECT 'new', idgen_next('orders_v2') FROM generate_series(1, 3000);});
}
my @ids = map {
	split /\n/, $_->safe_psql('postgres', q{SELECT era || ' ' || id FROM orders_ids})
} @servers;
my %seen;
my ($old_max, $new_min) = (0, undef);
for (@ids)
{
	my ($era, $id) = split / /;
	$seen{$id}++;
	$old_max = $id if $era eq 'old' && $id > $old_max;
	$new_min = $id if $era eq 'new' && (!defined $new_min || $id < $new_min);
}
is(scalar(@ids) . '|' . scalar(keys %seen), '10000|10000',
	'rebalanced from 2 to 4 stripes across two servers: 10,000 values, all distinct');
cmp_ok($new_min, '>', $old_max, 'every new value lies above every old one');
like(error_of($servers[0], q{SELECT idgen_create_generator('orders', 'top:2=1 seq:31', stripes => 2, owned => '0', space => 'orders')}),
	qr/^42710: generator "orders" would issue the same IDs as generator "orders_v2"/,
	'the old counter cannot be created again over the new one\'s values');

# --- durability on server 1 -------------------------------------------------
my $a = $servers[0];
$a->safe_psql('postgres', q{
	SELECT idgen_create_generator('seq', 'zone:7=3 worker:16 seq:40');
	CREATE TABLE c (round int, id bigint);});

# 2,000,000 values from one statement
$a->safe_psql('postgres', q{INSERT INTO c SELECT 1, idgen_next('seq') FROM generate_series(1, 2000000)});
is($a->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT id),
	       max(id) - min(id) + 1 = count(*)
	  FROM c}),
	'2000000|2000000|t', '2,000,000 values from one statement: distinct and dense');

# Before a crash: wait until no extension is due (at least refill values
# remain), so that the published reservation is the durable one and stays
# put; note it and prefetch.  The reservation reaches at most prefetch
# beyond the last value handed out.
sub reservation_before_crash
{
	my ($node, $what) = @_;
	$node->poll_query_until('postgres', q{
		SELECT counter_reserved - counter_value - 1 >= refill
		  FROM idgen_generator_status WHERE name = 'seq'})
	  or die "the keeper did not extend counter seq";
	my ($reserved, $last, $step) = split /\|/, $node->safe_psql('postgres', q{
		SELECT counter_reserved, counter_value, prefetch FROM idgen_generator_status WHERE name = 'seq'});
	cmp_ok($reserved - $last - 1, '<=', $step,
		"before the $what the reservation reaches at most prefetch ($step) beyond the last value");
	return { reserved => $reserved, step => $step };
}

my $rounds = 1;
sub resumes_above
{
	my ($node, $what, $before, $taken) = @_;
	$rounds++;
	$node->safe_psql('postgres',
		"INSERT INTO c SELECT $rounds, idgen_next('seq') FROM generate_series(1, 1000)");
	# compare the counter (seq) values: a promoted standby's IDs carry
	# another worker; $taken values were taken by checks since the restart
	my $resume = $before->{reserved} + $taken;
	my $skip = $before->{step} + $taken;
	is($node->safe_psql('postgres', qq{
		SELECT min(seq) FILTER (WHERE round = $rounds) > max(seq) FILTER (WHERE round < $rounds),
		       min(seq) FILTER (WHERE round = $rounds) = $resume,
		       min(seq) FILTER (WHERE round = $rounds) - max(seq) FILTER (WHERE round < $rounds) - 1 <= $skip,
		       count(*) = count(DISTINCT seq)
		  FROM (SELECT round, (idgen_decode('seq', id) ->> 'seq')::bigint AS seq FROM c) s}),
		't|t|t|t', "$what: the counter resumes above every value handed out, at its durable reservation, skipping at most one reservation ($before->{step} values)");
}

my $before = reservation_before_crash($a, 'immediate stop');
$a->stop('immediate');
$a->start;
wait_for_keeper($a);
resumes_above($a, 'immediate stop', $before, 0);

# a killed backend: the postmaster resets shared memory
my $victim = sleeping_backend($a);
$before = reservation_before_crash($a, 'killed backend');
kill_backend($victim);
# the new shared memory is the one where nothing of seq has been issued yet
ok(wait_after_crash($a, q{
		SELECT keeper_state = 'ready'
		       AND (SELECT issued FROM idgen_generator_status WHERE name = 'seq') = 0
		  FROM idgen_status()}),
	'after the crash restart the keeper is ready');
resumes_above($a, 'killed backend', $before, 0);

# a synchronous standby, promoted after the primary's immediate stop
my $standby = standby_from_backup($a, 'stripe1_standby', conf => "idgen.node_id = 3\n");
$a->append_conf('postgresql.conf', "synchronous_standby_names = 'stripe1_standby'\n");
$a->reload;
ok($a->poll_query_until('postgres',
		"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'stripe1_standby'"),
	'the standby is synchronous');
$rounds++;
$a->safe_psql('postgres',
	"INSERT INTO c SELECT $rounds, idgen_next('seq') FROM generate_series(1, 5000)");
$before = reservation_before_crash($a, 'failover');
$a->wait_for_catchup($standby);
$a->stop('immediate');
$standby->promote;
ok(keeper_ready($standby),
	'the promoted standby is ready');
is($standby->safe_psql('postgres', q{
	SELECT (idgen_decode('seq', idgen_next('seq')) ->> 'worker')::int}),
	'3', 'its counter carries its own node id as worker');
resumes_above($standby, 'failover to a synchronous standby', $before, 1);

# --- a counter whose durable state is lost: floored or refused, never at 0 ---
my $b = $servers[1];
$b->safe_psql('postgres', q{DELETE FROM idgen_counter_state WHERE name = 'tickets'});
ok($b->poll_query_until('postgres', q{SELECT count(*) = 1 FROM idgen_counter_state WHERE name = 'tickets'}),
	'while the server runs, the keeper writes a missing counter state again');
# Lost while stopped (the keeper may write the row again between the
# DELETE and the stop, it checks every 2 s: then the test tries again).
# The keeper recorded in the data directory how far the counter had got,
# so it resumes above that, never at 0.
my $b_max = $b->safe_psql('postgres', q{SELECT max(id) FROM tickets});
my $tries = 0;
my $log_from;
while (1)
{
	$b->safe_psql('postgres', q{DELETE FROM idgen_counter_state WHERE name = 'tickets'});
	$b->stop('immediate');
	$log_from = -s $b->logfile;
	$b->start;
	wait_for_keeper($b);
	last if ++$tries == 5
	  || slurp_file($b->logfile, $log_from) =~ /counter "tickets" lost its durable state/;
}
like(slurp_file($b->logfile, $log_from), qr/WARNING:.*counter "tickets" lost its durable state; it resumes above \d+/,
	'after a restart without its row, the keeper floors the counter from its own record');
is($b->safe_psql('postgres', "SELECT idgen_next('tickets') > $b_max"), 't',
	'and it continues above every value it handed out, never at 0');

# Lost with the data directory's record too: refused (55000)
$tries = 0;
while (1)
{
	$b->safe_psql('postgres', q{DELETE FROM idgen_counter_state WHERE name = 'tickets'});
	$b->stop('immediate');
	unlink $b->data_dir . '/idgen_counters';
	$b->start;
	wait_for_keeper($b);
	last if ++$tries == 5
	  || $b->safe_psql('postgres',
		q{SELECT count(*) FROM idgen_counter_state WHERE name = 'tickets'}) eq '0';
}
my $err = error_report_of($b, "SELECT idgen_next('tickets')");
like($err, qr/ERROR:\s+55000: generator "tickets" cannot issue IDs on this server\nDETAIL:\s+its durable counter state is missing/,
	'with its record gone too, the counter is refused (55000), never started again at 0');

# --- idgen.database changed: a re-created counter resumes above the old one --
my $moved = idgen_node('moved', conf => "idgen.node_id = 9\n");
$moved->start;
wait_for_keeper($moved);
$moved->safe_psql('postgres', q{SELECT idgen_create_generator('m', 'zone:4=1 seq:40')});
my $m_max = $moved->safe_psql('postgres',
	q{SELECT max(idgen_next('m')) FROM generate_series(1, 5000)});
$moved->safe_psql('postgres', 'CREATE DATABASE other');
$moved->append_conf('postgresql.conf', "idgen.database = 'other'\n");
$moved->restart;
wait_for_keeper_in($moved, 'other');
$moved->safe_psql('other', q{SELECT idgen_create_generator('m', 'zone:4=1 seq:40')});
is($moved->safe_psql('other', "SELECT min(idgen_next('m')) > $m_max FROM generate_series(1, 100)"), 't',
	'a counter re-created after idgen.database changed continues above the values of its old definition');
$moved->stop;

# --- a restored, higher durable state is taken, not overwritten ---------------
# As if idgen_counter_state came back from a backup of a server that went
# further: values below it may exist.
# (On the promoted standby, whose counter "seq" runs.)
my $restored = $standby->safe_psql('postgres', q{
	UPDATE idgen_counter_state SET reserved = reserved + 1000000 WHERE name = 'seq'
	RETURNING reserved});
ok($standby->poll_query_until('postgres',
		"SELECT (idgen_decode('seq', idgen_next('seq')) ->> 'seq')::bigint >= $restored"),
	'a running counter continues above a restored, higher durable state');
cmp_ok($standby->safe_psql('postgres',
		q{SELECT reserved FROM idgen_counter_state WHERE name = 'seq'}),
	'>=', $restored, 'and the keeper never writes it back lower');

$standby->stop;
$servers[1]->stop;
$merge->stop;
done_testing();
