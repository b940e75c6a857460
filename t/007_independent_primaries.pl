# Independent primaries whose rows meet later: three servers with node ids
# 1, 2 and 3 insert concurrently into tables keyed by DEFAULT snowflake_id()
# and publish them; a fourth subscribes to all three into one table with
# the same primary key.  Every row arrives, every ID decodes to the node it
# came from, and replication reports no conflict.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $ddl = q{
	CREATE TABLE events (
		id      bigint PRIMARY KEY DEFAULT snowflake_id(),
		origin  int NOT NULL,
		payload text
	)};

my @primaries;
for my $n (1 .. 3)
{
	my $node = idgen_node("primary$n", allows_streaming => 'logical',
		conf => "idgen.node_id = $n\nmax_connections = 20\n");
	$node->start;
	wait_for_keeper($node);
	$node->safe_psql('postgres', "$ddl; CREATE PUBLICATION events_pub FOR TABLE events;");
	# rows from before the subscription: they arrive by the initial copy
	$node->safe_psql('postgres',
		"INSERT INTO events (origin, payload) SELECT $n, 'before' FROM generate_series(1, 1000)");
	push @primaries, $node;
}

my $sub = idgen_node('subscriber', conf => q{
idgen.node_id = 9
max_worker_processes = 16
max_logical_replication_workers = 8
});
$sub->start;
wait_for_keeper($sub);
$sub->safe_psql('postgres', $ddl);
for my $n (1 .. 3)
{
	my $connstr = $primaries[ $n - 1 ]->connstr . ' dbname=postgres';
	$sub->safe_psql('postgres',
		"CREATE SUBSCRIPTION events_sub$n CONNECTION '$connstr' PUBLICATION events_pub");
}
$sub->wait_for_subscription_sync;

# All three primaries insert at the same time, two clients each.
concurrent_pgbench(4, map {
	[ $primaries[ $_ - 1 ],
	  "INSERT INTO events (origin, payload) SELECT $_, 'during' FROM generate_series(1, 10);\n" ]
} 1 .. 3);

my $expected = 0;
for my $n (1 .. 3)
{
	$primaries[ $n - 1 ]->wait_for_catchup("events_sub$n");
	$expected += $primaries[ $n - 1 ]->safe_psql('postgres', 'SELECT count(*) FROM events');
}
# on any machine: every primary inserted during the run, and the three
# runs overlapped in time (each one's first ID is older than every other's
# last)
is(join(' ', map { $primaries[ $_ - 1 ]->safe_psql('postgres',
			"SELECT count(*) > 0 FROM events WHERE payload = 'during'") } 1 .. 3),
	't t t', "every primary inserted while the others did ($expected rows in all)");
my @spans = map { [ split /\|/, $primaries[ $_ - 1 ]->safe_psql('postgres', q{
	SELECT extract(epoch FROM min(snowflake_id_time(id))), extract(epoch FROM max(snowflake_id_time(id)))
	  FROM events WHERE payload = 'during'}) ] } 1 .. 3;
my @first = sort { $a <=> $b } map { $_->[0] } @spans;
my @last = sort { $a <=> $b } map { $_->[1] } @spans;
cmp_ok($first[-1], '<=', $last[0], 'the three runs overlapped in time');

is($sub->safe_psql('postgres', 'SELECT count(*) FROM events'), $expected,
	'the subscriber has every row of every primary');
is($sub->safe_psql('postgres', q{
	SELECT string_agg(format('%s:%s', origin, n), ' ' ORDER BY origin)
	  FROM (SELECT origin, count(*) AS n FROM events GROUP BY origin) s}),
	join(' ', map { "$_:" . $primaries[ $_ - 1 ]->safe_psql('postgres', 'SELECT count(*) FROM events') } 1 .. 3),
	'per primary, the same number of rows');
is($sub->safe_psql('postgres', 'SELECT bool_and(snowflake_id_node(id) = origin) FROM events'),
	't', 'every ID decodes to the node it came from');
is($sub->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_subscription_stats
	 WHERE apply_error_count > 0 OR sync_error_count > 0}),
	'0', 'no apply or sync errors in pg_stat_subscription_stats');
my $log = slurp_file($sub->logfile);
unlike($log, qr/duplicate key|conflict|ERROR:/, 'the subscriber log shows no conflict or error');

$sub->stop;
$_->stop for @primaries;
done_testing();
