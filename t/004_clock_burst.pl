# The clock policy, made deterministic with libfaketime: the server's
# backends read a wall clock frozen at a moment we choose in a file, while
# CLOCK_MONOTONIC (which times waits) runs for real.
#
# With the clock frozen, every ID has to come from sequence space: exactly
# 4,096 snowflake IDs (1,024 per instagram shard) per millisecond, rolling
# into later milliseconds until idgen.max_lead is used up; then a call waits
# idgen.max_wait for the clock and fails with 53400, as does a batch
# larger than that space.  A clock stepped far back fails at once with
# 55P03 saying how long to wait; a waiting call continues as soon as the
# clock moves on.  Neither failure consumes or
# counts anything: the next good ID takes the very next position.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util ();
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IPC::Run;
use Time::HiRes ();

my $max_lead = 10;      # ms
my $max_wait = 2000;    # ms
my $node = idgen_node('clock', conf => qq{
idgen.node_id = 3
idgen.max_lead = ${max_lead}ms
idgen.max_wait = ${max_wait}ms
timezone = 'UTC'
log_timezone = 'UTC'
});
my ($set_clock, $start) = fake_clock($node, '2026-06-01 12:00:00');
$start->('start');
wait_for_keeper($node);
is($node->safe_psql('postgres', "SELECT now() = '2026-06-01 12:00:00+00'"),
	't', 'backends see the frozen clock');

my $frozen = "'2026-06-01 12:00:00+00'::timestamptz";
my $per_ms_ok = q{
	SELECT count(*) AS ids, count(DISTINCT id) = count(*) AS distinct_ids,
	       bool_and(id > prev) AS increasing,
	       count(DISTINCT t) AS ms_used,
	       min(t) = %s AND max(t) = %s + interval '%d ms' AS ms_from_clock_to_max_lead,
	       bool_and(per_ms = %d) AS full_ms
	  FROM (SELECT id, t, lag(id, 1, -1::bigint) OVER (ORDER BY n) AS prev,
	               count(*) OVER (PARTITION BY t) AS per_ms
	          FROM (SELECT n, id, %s(id) AS t FROM %s) x) y};

# --- a batch larger than what max_lead leaves: 53400, nothing taken -------
# With the clock frozen, 1 + max_lead ms of sequence space is all there is:
# a batch one ID larger cannot be issued however long it waits, and fails
# with 53400 after max_wait.  It takes nothing: the IDs below still start
# at the frozen millisecond's first position and fill every millisecond.
my $sf_capacity = 4096 * ($max_lead + 1);
my $ig_capacity = 1024 * ($max_lead + 1);
like(error_of($node, "SELECT snowflake_id_batch($sf_capacity + 1)"),
	qr/^53400: snowflake ID capacity exceeded/,
	'snowflake_id_batch() one ID beyond max_lead: 53400');
like(error_of($node, "SELECT instagram_id_batch(5, $ig_capacity + 1)"),
	qr/^53400: instagram ID capacity exceeded/,
	'instagram_id_batch() one ID beyond max_lead: 53400');
is($node->safe_psql('postgres', 'SELECT snowflake_issued, instagram_issued, borrowed FROM idgen_status()'),
	'0|0|0', 'the failed batches issued and borrowed nothing');
is($node->safe_psql('postgres', qq{
	SELECT cardinality(b), min(instagram_id_time(id)) = $frozen,
	       max(instagram_id_time(id)) = $frozen + interval '$max_lead ms'
	  FROM (SELECT instagram_id_batch(9, $ig_capacity) AS b) s, unnest(b) id GROUP BY b}),
	"$ig_capacity|t|t", 'a batch of exactly that space is issued, up to max_lead');

# --- snowflake: 4,096 per ms for 1 + max_lead ms, then capacity exceeded ----
$node->safe_psql('postgres',
	"CREATE TABLE sf AS SELECT n, snowflake_id() AS id FROM generate_series(1, $sf_capacity) n");
is($node->safe_psql('postgres',
		sprintf($per_ms_ok, $frozen, $frozen, $max_lead, 4096, 'snowflake_id_time', 'sf')),
	"$sf_capacity|t|t|" . ($max_lead + 1) . "|t|t",
	'snowflake: exactly 4,096 IDs per ms from the frozen ms up to max_lead, distinct and increasing');
like(error_of($node, 'SELECT snowflake_id()'),
	qr/^53400: snowflake ID capacity exceeded/,
	'snowflake: past max_lead, waits max_wait for the frozen clock, then 53400');

# --- instagram: 1,024 per ms per shard, shards independent ---------------
$node->safe_psql('postgres',
	"CREATE TABLE ig AS SELECT n, instagram_id(5) AS id FROM generate_series(1, $ig_capacity) n");
is($node->safe_psql('postgres',
		sprintf($per_ms_ok, $frozen, $frozen, $max_lead, 1024, 'instagram_id_time', 'ig')),
	"$ig_capacity|t|t|" . ($max_lead + 1) . "|t|t",
	'instagram: exactly 1,024 IDs per ms of shard 5, up to max_lead');
like(error_of($node, 'SELECT instagram_id(5)'),
	qr/^53400: instagram ID capacity exceeded/,
	'instagram: shard 5 exhausted gives 53400');
is($node->safe_psql('postgres',
		"SELECT instagram_id_time(instagram_id(6)) = $frozen"),
	't', 'another shard still issues from the current millisecond');

my ($ret, $out, $err) = $node->psql('postgres', 'SELECT snowflake_id()');
like($err, qr/HINT:\s+Spread the load over more shards or node ids/,
	'the capacity error says what to do');

# --- failures inside the issuing path change nothing shared ---------------
# Unlike a bad argument, these calls get as far as examining the
# generator's state under its lock, and only then fail: with 53400 after
# waiting max_wait for the frozen clock, or at once with 55P03 when the
# clock is stepped back beyond what waiting could cure.  However often
# they fail, the issued and borrowed counts stay put, and once the clock
# allows, the next IDs take the very positions after the last good one, as
# if the failures had never happened.
my $counts = 'SELECT snowflake_issued, instagram_issued, borrowed FROM idgen_status()';
my $counts_before = $node->safe_psql('postgres', $counts);
like(error_of($node, 'SELECT snowflake_id() FROM generate_series(1, 3)'),
	qr/^53400: snowflake ID capacity exceeded/,
	'snowflake still saturated: 53400 after waiting');
like(error_of($node, 'SELECT instagram_id(5)'),
	qr/^53400: instagram ID capacity exceeded/,
	'shard 5 still saturated: 53400 after waiting');
is($node->safe_psql('postgres', $counts), $counts_before,
	'calls failing with 53400 issued and borrowed nothing');

my $regressions_before =
  $node->safe_psql('postgres', 'SELECT clock_regressions FROM idgen_status()');
$set_clock->('2026-06-01 11:59:50');
for (1 .. 3)
{
	like(error_of($node, 'SELECT snowflake_id()'),
		qr/^55P03: wall clock is behind the snowflake IDs already issued/,
		'clock 10 s back: snowflake_id() fails at once with 55P03');
	like(error_of($node, 'SELECT instagram_id(5)'),
		qr/^55P03: wall clock is behind the instagram IDs already issued/,
		'clock 10 s back: instagram_id(5) fails at once with 55P03');
}
is($node->safe_psql('postgres', $counts), $counts_before,
	'calls failing with 55P03 issued and borrowed nothing');
is($node->safe_psql('postgres',
		"SELECT clock_regressions > $regressions_before FROM idgen_status()"),
	't', 'those calls did examine the generators: they saw the clock go back');

# 1 ms after the frozen moment, the IDs up to max_lead ahead of it are one
# more millisecond: exactly one millisecond's sequence space per generator,
# starting right after the last good ID, all borrowed
# (queried so that a failure fails a test rather than ending the script)
my $query = sub {
	my ($ret, $out, $err) = $node->psql('postgres', shift, timeout => scaled(60));
	return $ret == 0 ? $out : "error: $err";
};
$set_clock->('2026-06-01 12:00:00.001');
is($query->('CREATE TABLE sf_next AS SELECT n, snowflake_id() AS id FROM generate_series(1, 4096) n'),
	'', 'snowflake: 4,096 more IDs once the clock moves on 1 ms');
is($query->('CREATE TABLE ig_next AS SELECT n, instagram_id(5) AS id FROM generate_series(1, 1024) n'),
	'', 'instagram: 1,024 more IDs of shard 5 once the clock moves on 1 ms');
is($query->(qq{
	SELECT bool_and(snowflake_id_time(x.id) = snowflake_id_time(last.id) + interval '1 ms'
	                AND snowflake_id_seq(x.id) = x.n - 1
	                AND snowflake_id_node(x.id) = 3),
	       min(snowflake_id_seq(last.id))
	  FROM sf_next x, (SELECT id FROM sf WHERE n = $sf_capacity) last}),
	't|4095',
	'snowflake: the next IDs continue at the position after the last good one');
is($query->(qq{
	SELECT bool_and(instagram_id_time(x.id) = instagram_id_time(last.id) + interval '1 ms'
	                AND instagram_id_seq(x.id) = x.n - 1
	                AND instagram_id_shard(x.id) = 5),
	       min(instagram_id_seq(last.id))
	  FROM ig_next x, (SELECT id FROM ig WHERE n = $ig_capacity) last}),
	't|1023',
	'instagram: the next IDs of shard 5 continue at the position after the last good one');
my ($sf_before, $ig_before, $borrowed_before) = split /\|/, $counts_before;
is($query->($counts),
	join('|', $sf_before + 4096, $ig_before + 1024, $borrowed_before + 4096 + 1024),
	'only the new IDs were counted, every one of them borrowed');

# --- a waiting call can be cancelled ----------------------------------------
# The waits below must outlast everything this script does while they sleep
# (starting psql twice on a loaded machine can take longer than 2 s), so
# max_wait is raised for them; a new backend sees it once the postmaster has
# reloaded.  The sleeping backend is found by its query, not by its wait
# event: between two sleeps of the wait loop it briefly reports none.
my $set_max_wait = sub {
	my ($ms, $reset) = @_;
	alter_system_and_reload($node, { 'idgen.max_wait' => ($reset ? undef : $ms) });
	$node->safe_psql('postgres', "SELECT setting FROM pg_settings WHERE name = 'idgen.max_wait'") eq $ms
	  or die "idgen.max_wait did not become $ms ms";
};
$set_max_wait->(60 * 1000);
my $cancelled = psql_background($node, 'postgres', 'SELECT snowflake_id()');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM pg_stat_activity
	 WHERE wait_event_type = 'Extension' AND query = 'SELECT snowflake_id()'}),
	'a call past max_lead sleeps for the frozen clock');
is($node->safe_psql('postgres', q{
	SELECT pg_cancel_backend(pid) FROM pg_stat_activity
	 WHERE state = 'active' AND query = 'SELECT snowflake_id()'}),
	't', 'cancel it');
$cancelled->{h}->finish;
like($cancelled->{err}, qr/canceling statement due to user request/,
	'the waiting call is interruptible: it ends with the cancel');

# --- a waiting call continues as soon as the clock moves ------------------
my $bg = psql_background($node, 'postgres', 'SELECT snowflake_id_time(snowflake_id())');
# wait until it sleeps in idgen's wait (wait event "Extension"), then move
# the clock on by one second
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM pg_stat_activity
	 WHERE wait_event_type = 'Extension' AND query LIKE '%snowflake_id()%'}),
	'a call past max_lead sleeps for the clock');
# it holds no lock while it sleeps: idgen_status() takes the snowflake
# generator's own spinlock to copy its state, and returns while the call
# still sleeps (had the sleeper held that lock, idgen_status() could only
# return once the call had stopped waiting: got its ID or failed)
is($node->safe_psql('postgres', q{
	SELECT snowflake_issued > 0 FROM idgen_status();
	SELECT count(*) FROM pg_stat_activity
	 WHERE state = 'active' AND query = 'SELECT snowflake_id_time(snowflake_id())'}),
	"t\n1", 'while a snowflake_id() call sleeps, idgen_status() takes the snowflake lock at once');
is($node->safe_psql('postgres', "SELECT instagram_id_shard(instagram_id(78))"), '78',
	'and other generators issue at once');
# The call must return once the clock has moved, not once max_wait (60 s)
# has run out: within a quarter of it, a margin no loaded machine needs
# for a call that only has to read the clock again, and well below the
# 45 s or more a call sleeping to its deadline would still take (it has
# slept only for the checks above, a few seconds at most).
my $moved_at = Time::HiRes::time();
$set_clock->('2026-06-01 12:00:01');
$bg->{h}->finish;
my $took = Time::HiRes::time() - $moved_at;
cmp_ok($took, '<', List::Util::min(scaled(15), 40),
	'the waiting call returned as soon as the clock moved, long before max_wait ran out')
  or diag(sprintf('it took %.1f s after the clock moved', $took));
is($bg->{err}, '', 'the waiting call did not fail');
is($bg->{out}, "2026-06-01 12:00:01+00\n",
	'the waiting call got an ID of the new current millisecond');
is($node->safe_psql('postgres', 'SELECT waits >= 1 FROM idgen_status()'), 't',
	'idgen_status() counted the wait');
$set_max_wait->($max_wait, 'reset');

# --- clock stepped back an hour: immediate 55P03, nothing issued ----------
my $issued_before = $node->safe_psql('postgres', 'SELECT snowflake_issued FROM idgen_status()');
$set_clock->('2026-06-01 11:00:01');
my $e = error_of($node, 'SELECT snowflake_id()');
like($e, qr/^55P03: wall clock is behind the snowflake IDs already issued/,
	'clock one hour back: 55P03, safe to retry');
($ret, $out, $err) = $node->psql('postgres', 'SELECT snowflake_id()');
# the last ID is of 12:00:01.000, so the next fits once the clock is within
# max_lead of it: one hour less max_lead from now
my $gap = 3600 * 1000 - $max_lead;
like($err, qr/DETAIL:\s+The clock must advance $gap ms before the next ID/,
	'the error says exactly how far the clock must advance');
like($err, qr/HINT:\s+Retry in $gap ms/, 'the hint says when to retry');
is($node->safe_psql('postgres', 'SELECT snowflake_issued, clock_regressions >= 1 FROM idgen_status()'),
	"$issued_before|t", 'the failed calls issued nothing, and the regression was counted');
like(error_of($node, 'SELECT instagram_id(6)'), qr/^55P03: wall clock is behind the instagram IDs/,
	'instagram shards see the step too');
is($node->safe_psql('postgres', "SELECT instagram_id_time(instagram_id(77)) = '2026-06-01 11:00:01+00'"),
	't', 'a shard never used before has nothing to be behind of');

# --- clock back to normal: IDs continue above everything issued ----------
$set_clock->('2026-06-01 12:00:02');
$node->safe_psql('postgres',
	'INSERT INTO sf SELECT 100000 + n, snowflake_id() FROM generate_series(1, 1000) n');
$node->safe_psql('postgres',
	'INSERT INTO ig SELECT 100000 + n, instagram_id(5) FROM generate_series(1, 1000) n');
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(*) - count(DISTINCT id) FROM sf),
	       (SELECT min(id) FROM sf WHERE n > 100000) > (SELECT max(id) FROM sf WHERE n <= 100000),
	       (SELECT count(*) - count(DISTINCT id) FROM ig),
	       (SELECT min(id) FROM ig WHERE n > 100000) > (SELECT max(id) FROM ig WHERE n <= 100000)}),
	'0|t|0|t', 'after the clock recovers, IDs continue above all earlier ones');

# --- a clock stepped back before the epoch: 22008 ------------------------
# The server does not start with an epoch in the future; a clock stepped
# back past the epoch afterwards is refused with 22008 by a generator that
# has nothing issued to be behind of.
$set_clock->('1999-12-31 00:00:00');
is($node->safe_psql('postgres', "SELECT now() < epoch FROM idgen_status()"), 't',
	'the clock now reads before the epoch');
my $before_epoch = error_of($node, 'SELECT instagram_id(4000)');
like($before_epoch, qr/^22008: wall clock is before "idgen.epoch"/,
	'a shard never used before: 22008, the clock is before the epoch');

$node->stop;
done_testing();
