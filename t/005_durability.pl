# Never a duplicate across clock steps, crashes and restarts.
#
# The server runs under libfaketime with its own clock file, so the test
# can move the backends' wall clock while it runs and across restarts.
# After an immediate stop or a killed backend, shared memory starts afresh:
# only the durable reservation (the keeper's idgen_hwm sequence) can keep
# new IDs above the old ones, and these tests give the clock every chance
# to make them collide.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use Time::HiRes;

my $node = idgen_node('durable', conf => q{
idgen.node_id = 4
idgen.max_wait = 1s
restart_after_crash = on
});
my ($set_clock, $start) = fake_clock($node, '+0');
$start->('start');
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	CREATE TABLE ids (round int, sf bigint, ig bigint);
});

my $round = 0;
sub generate
{
	my ($n) = @_;
	$round++;
	$node->safe_psql('postgres',
		"INSERT INTO ids SELECT $round, snowflake_id(), instagram_id(21) FROM generate_series(1, $n)");
}
# every round's IDs above every earlier round's, per generator; no duplicate
sub all_rounds_above_earlier
{
	return rounds_not_above($node, q{
		SELECT round, 'snowflake' AS kind, sf AS id, NULL::uuid AS u FROM ids
		UNION ALL
		SELECT round, 'instagram', ig, NULL FROM ids}, $round);
}

generate(2000);
is($node->safe_psql('postgres',
		"SELECT keeper_state, reserved_until > now(), reservation_writes > 0 FROM idgen_status()"),
	'ready|t|t', 'the keeper holds a durable reservation ahead of the clock');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_extension WHERE extname = 'idgen'}),
	'1', 'the keeper created the extension in idgen.database by itself');

# --- small clock steps ----------------------------------------------------
# 500 ms behind the last IDs, frozen there: behind every clock reading the
# generators have made, however long the statements above took
my $last_issued = $node->safe_psql('postgres', q{
	SELECT extract(epoch FROM greatest(snowflake_last_time, instagram_last_time))
	  FROM idgen_status()});
$set_clock->(utc_clock_spec($last_issued - 0.5));
generate(2000);
is(all_rounds_above_earlier(), '',
	'clock 500 ms back: IDs continue above the earlier ones, no error');
is($node->safe_psql('postgres', 'SELECT borrowed > 0, clock_regressions > 0 FROM idgen_status()'),
	't|t', 'the step was seen and bridged with borrowed timestamps');

$set_clock->('-1h');
like(error_of($node, 'SELECT snowflake_id()'), qr/^55P03: wall clock is behind the snowflake IDs already issued/,
	'clock an hour back: 55P03 at once');
$set_clock->('+0');
generate(2000);
is(all_rounds_above_earlier(), '', 'clock back to now: IDs continue above all earlier ones');

# --- immediate stop, clock 10 s back, start ---------------------------------
# A generous max_lead lets the server issue at once, 10 s ahead of its
# clock; without the durable reservation it would reissue the last 10 s.
set_and_reload($node, 'idgen.max_lead' => '30s');
generate(2000);
# frozen 10 s before the moment of the stop, so that the lead checked below
# does not shrink with the time the restart takes
my $stopped_at = Time::HiRes::time();
$node->stop('immediate');
$set_clock->(utc_clock_spec($stopped_at - 10));
$start->('start');
generate(2000);
is(all_rounds_above_earlier(), '',
	'immediate stop, clock 10 s back, start: first IDs above all earlier ones (both generators)');
is($node->safe_psql('postgres', 'SELECT snowflake_lead_ms > 9000, instagram_lead_ms > 9000 FROM idgen_status()'),
	't|t', 'they were issued about 10 s ahead of the wall clock');
$set_clock->('-10s');

# --- a killed backend: the postmaster resets shared memory ----------------
my $victim = sleeping_backend($node);
# counted IDs before the kill, so that a count of 0 after it shows new shared memory
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_issued FROM idgen_status()'), '>', 0,
	'before the kill, idgen_status() counts the IDs issued');
kill_backend($victim);
like($victim->{err}, qr/server closed the connection unexpectedly/,
	'the killed backend\'s session ended with it');
ok(wait_after_crash($node, 'SELECT snowflake_issued = 0 FROM idgen_status()'),
	'after SIGKILL of a backend the server restarted with fresh shared memory');
generate(2000);
is(all_rounds_above_earlier(), '', 'killed backend: IDs after the crash restart are above all earlier ones');

# --- configuration drift: epoch changed across a restart -------------------
$node->append_conf('postgresql.conf', "idgen.epoch = '2025-01-01 00:00:00+00'\n");
$node->stop('fast');
$start->('start');
my $err = error_report_of($node, 'SELECT instagram_id(21)');
like($err, qr/ERROR:\s+55000: "idgen.epoch" changed since IDs were issued/,
	'a changed epoch is refused with 55000');
like($err, qr/DETAIL:\s+IDs were issued under the epoch 2024-01-01 00:00:00\+00; "idgen.epoch" is now 2025-01-01 00:00:00\+00/,
	'the error names both epochs');
is($node->safe_psql('postgres', 'SELECT keeper_state FROM idgen_status()'),
	'epoch changed', 'idgen_status() shows why');
$node->append_conf('postgresql.conf', "idgen.epoch = '2024-01-01 00:00:00+00'\n");
$node->stop('fast');
$start->('start');
generate(2000);
is(all_rounds_above_earlier(), '', 'epoch restored: generation resumes above all earlier IDs');

# an idle server writes no reservations (no WAL for idgen): once the last
# IDs are well inside the reservation, the keeper stops extending it.  The
# restarts floored the IDs ahead of the clock, so the keeper extends while
# the clock catches up with them; wait until the reservation is more than
# two reservations beyond the IDs, where it stops.
ok($node->poll_query_until('postgres', q{
	SELECT reserved_until >= greatest(snowflake_last_time, instagram_last_time)
	                         + 2 * reservation_ms * interval '1 ms'
	  FROM idgen_status()}),
	'the clock caught up with the IDs and the keeper reserved beyond them');
# From here no ID is issued: the clock must overtake the reservation
# without the keeper writing again.  A keeper that kept extending would
# keep the reservation ahead of the clock, and the poll would run out.
my ($writes, $until) = split /\|/, $node->safe_psql('postgres',
	'SELECT reservation_writes, reserved_until FROM idgen_status()');
ok($node->poll_query_until('postgres',
		'SELECT reserved_until < clock_timestamp() FROM idgen_status()'),
	'idle: the clock overtook the reservation');
is($node->safe_psql('postgres', 'SELECT reservation_writes, reserved_until FROM idgen_status()'),
	"$writes|$until", 'idle: no reservation was written meanwhile');

# --- the extension dropped in the keeper's database ------------------------
# The keeper notices at its next load or write, re-creates the extension
# and writes the durable reservation again: at once at a load ("restoring"
# in the log), or as the reservation it was about to write.  IDs keep
# increasing; calls that need a reservation meanwhile may fail.
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION idgen');
my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', 'DROP EXTENSION idgen');
ok($node->poll_query_until('app', 'SELECT snowflake_id() > 0'),
	'after DROP EXTENSION in idgen.database, generation resumes');
wait_for_keeper($node);
ok(eval {
		$node->wait_for_log(
			qr/creating extension idgen in database "postgres" to hold the ID reservation/,
			$log_offset);
		1;
	},
	'the keeper re-created the extension');
# idgen_hwm holds Unix ms, reserved_until the keeper's last durable write:
# the new sequence reads NULL until the keeper has written it again
ok($node->poll_query_until('postgres', q{
	SELECT pg_sequence_last_value('idgen_hwm') >= extract(epoch FROM reserved_until) * 1000
	       AND reserved_until > snowflake_last_time FROM idgen_status()}),
	'the reservation is durable again and covers every issued ID');
# written with it, whichever of the keeper's paths re-created the
# extension: a stop now must not find a reservation without its epoch
is($node->safe_psql('postgres', q{
	SELECT pg_sequence_last_value('idgen_epoch') = extract(epoch FROM epoch) * 1000
	  FROM idgen_status()}),
	't', 'and so is the epoch record');
generate(2000);
is(all_rounds_above_earlier(), '', 'IDs after the drop are above all earlier ones');


# --- adopting a new epoch, as the hint says, without a restart -------------
# (only right when no ID of the old epoch is in use: IDs from here on are
# not comparable with the earlier rounds)
$node->append_conf('postgresql.conf', "idgen.epoch = '2025-01-01 00:00:00+00'\n");
$node->stop('fast');
# the real clock again: adopting the epoch floors IDs at the keeper's clock
# plus max_lead, and on PostgreSQL 15 the keeper does not see libfaketime's
$set_clock->('+0');
$start->('start');
like(error_of($node, 'SELECT instagram_id(21)'), qr/^55000: "idgen.epoch" changed/,
	'the new epoch is refused first');
$err = error_report_of($node, 'SELECT instagram_id(21)');
like($err, qr/HINT:.*"ALTER SEQUENCE idgen_epoch RESTART; ALTER SEQUENCE idgen_hwm RESTART" in database "postgres"/,
	'the hint names the commands and the database');
# Resetting the epoch record alone leaves a reservation without the epoch it
# was made under: never adopted silently, refused as incomplete.
$node->safe_psql('postgres', 'ALTER SEQUENCE idgen_epoch RESTART');
ok($node->poll_query_until('postgres',
		"SELECT keeper_message ~ 'incomplete: the epoch record idgen_epoch is missing' FROM idgen_status()"),
	'the epoch record alone reset: the state is refused as incomplete');
like(error_of($node, 'SELECT instagram_id(21)'), qr/^55000: no durable ID reservation is available/,
	'and generators fail closed, with 55000: someone has to restore or reset the state');
$node->safe_psql('postgres', 'ALTER SEQUENCE idgen_hwm RESTART');
ok(keeper_ready($node),
	'after resetting both, as the hint says, the keeper adopts the new epoch');
like(slurp_file($node->logfile), qr/durable ID reservation in database "postgres" is missing; IDs resume \d+ ms ahead of the clock/,
	'and says in the log that IDs resume ahead of the clock');
is($node->safe_psql('postgres', q{
	SELECT epoch = '2025-01-01 00:00:00+00',
	       abs(extract(epoch FROM instagram_id_time(instagram_id(21)) - clock_timestamp())) < 60
	  FROM idgen_status()}),
	't|t', 'IDs under the new epoch decode to the present');

# --- fail closed: no reservation, no IDs -------------------------------------
$node->append_conf('postgresql.conf', "idgen.database = 'no_such_database'\n");
$node->stop('fast');
$start->('start');
$err = error_report_of($node, 'SELECT snowflake_id()');
like($err, qr/ERROR:\s+55000: no durable ID reservation is available/,
	'the keeper cannot reach its database: generators fail with 55000, a misconfiguration');
like($err, qr/DETAIL:\s+The idgen keeper.s state is "failed": the keeper could not connect to database "no_such_database"/,
	'the error says what is wrong');
like(slurp_file($node->logfile), qr/FATAL:\s+database "no_such_database" does not exist/,
	'and the server log has the cause');
like($err, qr/HINT:.*"idgen.database"/, 'the hint names the setting');
is($node->safe_psql('postgres', 'SELECT snowflake_issued, instagram_issued FROM idgen_status()'),
	'0|0', 'nothing was issued from the bare clock');

# --- a synchronous standby that is not there ---------------------------------
# The keeper commits with synchronous_commit at least "on" even when the
# server says "off", so its reservation waits for the standby, and the
# generators fail closed saying what they wait for.
# (a server that can replicate at all: the test default has no WAL senders)
$node->append_conf('postgresql.conf', q{
idgen.database = 'postgres'
wal_level = replica
max_wal_senders = 2
synchronous_commit = off
synchronous_standby_names = 'nobody'
});
$node->stop('fast');
$start->('start');
$err = error_report_of($node, 'SELECT snowflake_id()');
like($err, qr/ERROR:\s+55P03: no durable ID reservation is available/,
	'synchronous standby missing: generators fail with 55P03 (retry), although synchronous_commit is off');
like($err, qr/waiting to become durable .*synchronous_standby_names/,
	'the error says what the reservation waits for');
is($node->safe_psql('postgres', 'SELECT snowflake_issued FROM idgen_status()'),
	'0', 'nothing was issued');

$node->stop;
done_testing();
