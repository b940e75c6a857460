# What the keeper publishes is durable, whatever reloads, cancels and lost
# state do; and when it cannot run, it backs off and says why.
#
# Each check here failed on idgen 1.0: a reload to synchronous_commit = off
# made reservations asynchronous; a cancelled synchronous-replication wait
# published a reservation no standby had; lost state was adopted without a
# floor; idgen.max_wait = 0 failed the first call after an idle period; a
# missing database meant a FATAL every second.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('durability', allows_streaming => 1, conf => q{
idgen.node_id = 11
});
$node->start;
need_test_clock($node);
wait_for_keeper($node);
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION idgen');

# Errors are read in database app: while a synchronous standby is missing,
# every commit hangs, and "postgres" may hold the keeper's uncommitted work.

# --- a synchronous standby that never answers --------------------------------
# Once the reservation in hand has run out (idle for 2 s), the keeper's next
# commit waits for "ghost" forever.  Cancelling or terminating that wait
# lets the commit return with a warning only; the reservation must still not
# be published.
alter_system_and_reload($node, { synchronous_standby_names => 'ghost' }, db => 'app');

# The keeper writes when a generator needs more than it has reserved; wait
# until it is inside a synchronous-replication wait, calling a generator
# (which fails after idgen.max_wait) while it is not.
sub keeper_in_syncrep
{
	return wait_until(sub {
		return 1 if $node->safe_psql('app', q{
			SELECT count(*) = 1 FROM pg_stat_activity
			 WHERE backend_type = 'idgen keeper' AND wait_event = 'SyncRep'}) eq 't';
		error_of($node, 'SELECT snowflake_id()', 'app');
		return 0;
	});
}
ok(keeper_in_syncrep(), 'the keeper waits for the synchronous standby "ghost"');
# what was reserved before is used up first (the keeper extends with half
# of it left); then the generators must stop
ok(wait_until(sub {
		error_of($node, 'SELECT snowflake_id()', 'app') =~ /^55P03: no durable ID reservation is available/;
	}),
	'waiting for a synchronous standby that is gone: generators fail closed');

# Each signal is sent only once the keeper is seen in that wait, and each
# must end it: the keeper then refuses to publish what was not confirmed,
# fails, and is started again.
for my $round (1 .. 2)
{
	ok(keeper_in_syncrep(), "cancel $round: the keeper waits for the standby");
	my $offset = -s $node->logfile;
	$node->safe_psql('app', 'SELECT pg_cancel_backend(' . keeper_pid($node, 'app') . ')');
	ok(eval {
			$node->wait_for_log(
				qr/canceling wait for synchronous replication due to user request/s, $offset);
			$node->wait_for_log(
				qr/was not confirmed by the synchronous standbys/,
				$offset);
			1;
		},
		"cancel $round: it ended the wait, and the keeper refused the unconfirmed commit");
}
like(error_of($node, 'SELECT snowflake_id()', 'app'),
	qr/^55P03: no durable ID reservation is available/,
	'after pg_cancel_backend on the keeper: still fail closed');
for my $round (1 .. 2)
{
	ok(keeper_in_syncrep(), "terminate $round: the keeper waits for the standby");
	my $pid = keeper_pid($node, 'app');
	my $offset = -s $node->logfile;
	$node->safe_psql('app', "SELECT pg_terminate_backend($pid)");
	ok(eval {
			$node->wait_for_log(
				qr/canceling the wait for synchronous replication and terminating connection due to administrator command/,
				$offset);
			1;
		},
		"terminate $round: it ended the wait");
	ok($node->poll_query_until('app', qq{
		SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid}),
		"terminate $round: that keeper exited");
}
like(error_of($node, 'SELECT snowflake_id()', 'app'),
	qr/^55P03: no durable ID reservation is available/,
	'after pg_terminate_backend on the keeper: still fail closed');
is($node->safe_psql('app', 'SELECT reserved_until < clock_timestamp() FROM idgen_status()'),
	't', 'and no new reservation was published as durable');

alter_system_and_reload($node, { synchronous_standby_names => '' }, db => 'app');
ok(keeper_ready($node, 'app'),
	'without the synchronous standby the keeper becomes ready');
is($node->safe_psql('app', 'SELECT count(snowflake_id()) FROM generate_series(1, 1000)'),
	'1000', 'and generation works');

# --- a reload to synchronous_commit = off ------------------------------------
# The keeper started with synchronous_commit = on.  After a reload to off
# (with a synchronous standby that never answers), its commits must still
# wait: once the reservation in hand runs out, generation stops.
alter_system_and_reload($node,
	{ synchronous_commit => 'off', synchronous_standby_names => 'ghost' }, db => 'app');
like(error_of($node, q{
	DO $$ BEGIN
		FOR i IN 1 .. 200 LOOP
			PERFORM snowflake_id();
			PERFORM pg_sleep(0.05);
		END LOOP;
	END $$}, 'app'),
	qr/^55P03: no durable ID reservation is available/,
	'synchronous_commit = off by reload: reservations still wait for the standby, generation stops');
alter_system_and_reload($node,
	{ synchronous_commit => undef, synchronous_standby_names => undef }, db => 'app');
ok(keeper_ready($node, 'app'),
	'ready again');

# --- idgen.max_wait = 0 ----------------------------------------------------
# The reservation falls behind the clock while the server is idle; the
# first call after that waits for the keeper (a WAL flush), not the clock.
alter_system_and_reload($node, { 'idgen.max_wait' => 0, 'idgen.reservation' => '100ms' },
	db => 'app');
ok($node->poll_query_until('app', "SELECT max_wait_ms = 0 FROM idgen_status()"),
	'idgen.max_wait = 0 is in effect');
$node->safe_psql('app', 'SELECT snowflake_id()');
for my $round (1 .. 3)
{
	ok($node->poll_query_until('app',
			"SELECT reserved_until < clock_timestamp() FROM idgen_status()"),
		"round $round: idle, the reservation falls behind the clock");
	is(error_of($node, 'SELECT snowflake_id()', 'app'), 'no error',
		"round $round: with idgen.max_wait = 0 the first call after idling succeeds");
}
like(slurp_file($node->logfile),
	qr/"idgen.reservation" \(100 ms\) is longer than "idgen.max_wait" \(0 ms\)/,
	'a reservation longer than max_wait is warned about');
alter_system_and_reload($node, { 'idgen.max_wait' => undef, 'idgen.reservation' => undef },
	db => 'app');

# --- wait events (PostgreSQL 17 and later name them) ------------------------
my $named = $node->safe_psql('app', 'SHOW server_version_num') >= 170000;
ok($node->poll_query_until('app', q{
	SELECT wait_event FROM pg_stat_activity WHERE backend_type = 'idgen keeper'},
		$named ? 'IdgenKeeperMain' : 'Extension'),
	'the keeper\'s idle sleep shows as its own wait event');

# --- lost state across a restart -------------------------------------------
# With the clock frozen, a burst runs IDs exactly 1.5 s ahead of it.  Then
# idgen.database is pointed at a new database (one way of losing the
# durable state) and the server is stopped at once and started with the
# same clock: the new keeper finds no reservation, and must floor every
# generator above what a burst could have issued.
#
# The floor is the keeper's reading of the clock, so backends and keeper
# must read the same frozen clock, a minute ahead of the real one: a
# keeper that floored at the real clock would leave the IDs after the loss
# below the burst's.  The test-only setting idgen.test_clock freezes the
# clock that idgen reads in every process.  libfaketime would not do here:
# on PostgreSQL 15 it does not reach the keeper (see fake_clock in
# IdgenTest.pm).
sub set_test_clock
{
	my ($ms) = @_;
	$node->append_conf('postgresql.conf', "idgen.test_clock = '$ms'\n");
}
my $frozen = (time() + 60) * 1000;
set_test_clock($frozen);
$node->stop('fast');
$node->start;
ok(keeper_ready($node, 'app'),
	'restarted with a frozen clock');
$node->safe_psql('app', q{
	CREATE TABLE burst AS SELECT 1 AS round, instagram_id(7) AS id FROM generate_series(1, 1536000)});
is($node->safe_psql('app', q{
	SELECT instagram_lead_ms BETWEEN 1400 AND max_lead_ms FROM idgen_status()}),
	't', 'the burst ran 1.5 s ahead of the frozen clock');
$node->safe_psql('app', 'CREATE DATABASE other');
$node->append_conf('postgresql.conf', "idgen.database = 'other'\n");
$node->stop('immediate');
$node->start;
ok(keeper_ready($node, 'app'),
	'the keeper is ready in the new database');
like(slurp_file($node->logfile),
	qr/WARNING:.*durable ID reservation in database "other" is missing; IDs resume 2001 ms ahead of the clock/,
	'it warns that the durable state is missing');
# one second on, still frozen: the floor, 2,001 ms ahead, is within max_lead
ok(eval { set_and_reload($node, 'idgen.test_clock' => $frozen + 1000); 1 },
	'the frozen clock moved one second on');
$node->safe_psql('app', q{
	INSERT INTO burst SELECT 2, instagram_id(7) FROM generate_series(1, 1000)});
is($node->safe_psql('app', q{
	SELECT (SELECT min(id) FROM burst WHERE round = 2) > (SELECT max(id) FROM burst WHERE round = 1)}),
	't', 'IDs after the loss are above every ID of the burst');

# --- back-off, and a keeper that can never start -----------------------------
set_test_clock('');
$node->append_conf('postgresql.conf', "idgen.database = 'no_such_database'\n");
$node->stop('fast');
my $log_offset = -s $node->logfile;
$node->start;
# The postmaster restarts a failed keeper after 1 s; the keeper itself
# waits 2 s, 4 s, ... (up to 30 s) after consecutive failures.  Wait for
# four attempts and read their times from the log.
my @attempts;
ok(wait_until(sub {
		@attempts = substr(slurp_file($node->logfile), $log_offset) =~
		  /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) \S+ \[\d+\] FATAL:\s+database "no_such_database" does not exist/mg;
		return @attempts >= 4;
	}),
	'a missing database: the keeper keeps trying');
use Time::Local qw(timegm);
my @at = map {
	my ($y, $mo, $d, $h, $mi, $sec) = /^(\d+)-(\d+)-(\d+) (\d+):(\d+):([\d.]+)$/;
	timegm(0, $mi, $h, $d, $mo - 1, $y) + $sec;
} @attempts[0 .. 3];
my @gaps = map { sprintf('%.1f', $at[$_] - $at[ $_ - 1 ]) } 1 .. 3;
cmp_ok($gaps[1], '>=', 1.5, "the keeper backs off: the third attempt waited $gaps[1] s, not one");
cmp_ok($gaps[2], '>', $gaps[1], "and the fourth longer ($gaps[2] s)");
like(error_of($node, 'SELECT snowflake_id()', 'app'),
	qr/^55000: no durable ID reservation is available/,
	'generators fail closed meanwhile, with 55000: the setting needs fixing');

$node->append_conf('postgresql.conf', "idgen.database = 'postgres'\nmax_worker_processes = 0\n");
$node->restart;
my (undef, undef, $err) = $node->psql('app', 'SELECT snowflake_id()');
like($err, qr/"max_worker_processes"/,
	'no worker slot for the keeper: the error says which setting to raise');

$node->stop;
done_testing();
