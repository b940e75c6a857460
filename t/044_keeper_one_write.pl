# One durable write per keeper tick: a shard floor asked for by
# instagram_id_advance(), a counter that needs a new reservation and a
# time reservation that must be extended, all pending at once, are made
# durable by one commit (one WAL flush, one wait for the synchronous
# standbys), and every caller gets its value.  Restarts asked for round
# after round do not starve the other counters.  After an immediate stop,
# nothing handed out is issued again.
#
# The keeper's ticks are held by idgen_test_hold_keeper_ticks(n) while the
# callers queue (they wait for the keeper), then exactly one tick is let
# run; idgen_test_durable_commits() counts the keeper's durable commits.
# Both are in a test build only ("make WITH_TEST_HOOKS=yes"), and no
# install script declares them: the test creates them.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# idgen.max_wait at its most: the callers wait while the ticks are held.
my $node = idgen_node('one_write',
	conf => "idgen.node_id = 1\nidgen.shards = '0-7'\nidgen.max_wait = '60s'\n"
	  . "idgen.reservation = '1s'\n");
$node->start;
wait_for_keeper($node);
need_test_clock($node);
$node->safe_psql('postgres', q{
	CREATE FUNCTION idgen_test_hold_keeper_ticks(int) RETURNS void
	LANGUAGE C STRICT AS '$libdir/idgen', 'idgen_test_hold_keeper_ticks';
	CREATE FUNCTION idgen_test_durable_commits() RETURNS bigint
	LANGUAGE C STRICT AS '$libdir/idgen', 'idgen_test_durable_commits';
	SELECT idgen_create_generator('c', 'seq:40', prefetch => 100, refill => 1);});

# the counter's first reservation, and IDs issued before the hold
my $first = $node->safe_psql('postgres', q{SELECT idgen_next('c')});
my $shard_id = $node->safe_psql('postgres', 'SELECT instagram_id(5)');
my $snowflake_before = $node->safe_psql('postgres', 'SELECT snowflake_id()');

$node->safe_psql('postgres', 'SELECT idgen_test_hold_keeper_ticks(0)');

# The reservation runs out while the ticks are held: a call then waits.
ok($node->poll_query_until('postgres',
		'SELECT reserved_until < clock_timestamp() FROM idgen_status()'),
	'the time reservation ran out while the keeper\'s ticks are held');

# 101 values: the reservation reaches at most prefetch (100) beyond the
# next one, so the call waits once, and one new reservation serves it.
my %callers = (
	advance => psql_background($node, 'postgres',
		"SELECT count(*) FROM (SELECT instagram_id_advance(5, $shard_id)) s",
		application_name => 'advance', on_error_stop => 1),
	counter => psql_background($node, 'postgres',
		q{SELECT max(v) FROM (SELECT idgen_next('c') AS v FROM generate_series(1, 101)) s},
		application_name => 'counter', on_error_stop => 1),
	snowflake => psql_background($node, 'postgres', 'SELECT snowflake_id()',
		application_name => 'snowflake', on_error_stop => 1));

foreach my $who (sort keys %callers)
{
	ok($node->poll_query_until('postgres',
			"SELECT wait_event_type = 'Extension' FROM pg_stat_activity WHERE application_name = '$who'"),
		"$who waits for the keeper");
}

# one tick serves them all
my $commits = $node->safe_psql('postgres', 'SELECT idgen_test_durable_commits()');
$node->safe_psql('postgres', 'SELECT idgen_test_hold_keeper_ticks(1)');
$_->{h}->finish for values %callers;

is($callers{advance}{out}, "1\n", 'instagram_id_advance() returned')
  or diag $callers{advance}{err};
like($callers{counter}{out}, qr/^\d+\n$/, 'the counter handed out its values')
  or diag $callers{counter}{err};
like($callers{snowflake}{out}, qr/^\d+\n$/, 'snowflake_id() returned')
  or diag $callers{snowflake}{err};
my $counter_max = $callers{counter}{out} + 0;
my $snowflake = $callers{snowflake}{out} + 0;
is($counter_max, $first + 101, 'the counter handed out 101 values after its first');
cmp_ok($snowflake, '>', $snowflake_before, 'snowflake_id() went on above its last ID');

is($node->safe_psql('postgres', 'SELECT idgen_test_durable_commits()') - $commits,
	1, 'the floor, the counter and the time reservation took one durable commit');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM idgen_shard_floor WHERE shard = 5 AND id >= $shard_id AND NOT released"),
	'1', 'the shard floor is in its table');

# Restarts asked for round after round do not starve the other counters:
# a round after one with restarts extends first.  A caller of "c" waits
# for a new reservation while "r" is restarted, and restarted again before
# the next round; that next round serves the caller.
$node->safe_psql('postgres', q{
	SELECT idgen_test_hold_keeper_ticks(-1);
	SELECT idgen_create_generator('r', 'seq:40', prefetch => 100);});
$node->poll_query_until('postgres', q{SELECT idgen_next('r') >= 0})
  or die 'r did not issue';
$node->safe_psql('postgres', q{
	SELECT count(idgen_next('c')) FROM generate_series(1, 50);
	SELECT idgen_test_hold_keeper_ticks(0);
	SELECT idgen_restart_generator('r', 1);});
my $starved = psql_background($node, 'postgres',
	q{SELECT count(*) FROM (SELECT idgen_next('c') FROM generate_series(1, 101)) s},
	application_name => 'starved', on_error_stop => 1);
ok($node->poll_query_until('postgres',
		"SELECT wait_event_type = 'Extension' FROM pg_stat_activity WHERE application_name = 'starved'"),
	'a caller of another counter waits for its reservation');
$commits = $node->safe_psql('postgres', 'SELECT idgen_test_durable_commits()');
$node->safe_psql('postgres', 'SELECT idgen_test_hold_keeper_ticks(1)');
ok($node->poll_query_until('postgres',
		"SELECT idgen_test_durable_commits() > $commits"),
	'one round restarted "r"');
$node->safe_psql('postgres', q{SELECT idgen_restart_generator('r', 1)});
$node->safe_psql('postgres', 'SELECT idgen_test_hold_keeper_ticks(1)');
$starved->{h}->finish;
is($starved->{out}, "101\n",
	'the next round served it, though "r" asked for another restart')
  or diag $starved->{err};

# Nothing handed out is issued again after an immediate stop.
$node->safe_psql('postgres', 'SELECT idgen_test_hold_keeper_ticks(-1)');
$node->stop('immediate');
$node->start;
wait_for_keeper($node);
cmp_ok($node->safe_psql('postgres', q{SELECT idgen_next('c')}), '>', $counter_max,
	'after an immediate stop the counter resumes above its values');
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_id()'), '>', $snowflake,
	'after an immediate stop snowflake_id() resumes above its IDs');
cmp_ok($node->safe_psql('postgres', 'SELECT instagram_id(5)'), '>', $shard_id,
	'after an immediate stop the shard resumes above its floor');

$node->stop;
done_testing();
