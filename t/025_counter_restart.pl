# Counters behave like sequences across restarts.  A clean stop records
# each counter's exact position, so a clean restart skips nothing, three
# times over; a crash skips at most prefetch.  A keeper stopped by
# pg_terminate_backend() parks the counters (55P03 meanwhile), and its
# successor switches them on again where they stopped.  A state row
# replaced by an older copy never lowers the floor: the data directory's
# record wins at the next start, also right after a crash.  A superuser's
# idgen_restart_generator() sets a counter back on purpose, and that holds
# through a restart and a crash.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('counter_restart',
	conf => "idgen.node_id = 4\nmax_prepared_transactions = 2\n");
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('c', 'seq:40');
	SELECT idgen_create_generator('p', 'seq:40', prefetch => 1000, refill => 1);
	CREATE TABLE ids (id bigint NOT NULL);
	CREATE TABLE p_ids (id bigint NOT NULL);});

# Until the keeper sleeps in its loop (its wait event: "Extension" before
# PostgreSQL 17, its own name after), so that a stop finds it between its
# transactions.
sub wait_keeper_idle
{
	$node->poll_query_until('postgres', q{
		SELECT wait_event IN ('IdgenKeeperMain', 'Extension') FROM pg_stat_activity
		 WHERE backend_type = 'idgen keeper'})
	  or die 'the keeper did not become idle';
}

# Draw $n values into ids; returns the last.
sub draw
{
	my ($n) = @_;
	return $node->safe_psql('postgres', qq{
		INSERT INTO ids SELECT idgen_next('c') FROM generate_series(1, $n) RETURNING id}) =~ s/.*\n//sr;
}

# The next value, once the counter issues again (a parked or restarting one
# answers 55P03, and a failed call takes nothing).
sub next_value
{
	my $value;
	wait_until(sub {
		my ($ret, $out, $err) = $node->psql('postgres',
			q{INSERT INTO ids SELECT idgen_next('c') RETURNING id});
		if ($ret == 0)
		{
			$value = $out;
			return 1;
		}
		die "unexpected error: $err" unless $err =~ /55P03|idgen keeper|is being restarted/;
		return 0;
	}) or die 'the counter did not issue again';
	return $value;
}

# A stop that finds the keeper inside one of its transactions (a few ms of
# each second) ends it at once, as any backend, and the counter resumes at
# its reservation, as after a crash: such a restart is tried again, up to
# three times, and the round must see a clean stop.
my $last = draw(5);
for my $round (1 .. 3)
{
	my $clean = 0;
	for my $attempt (1 .. 3)
	{
		wait_keeper_idle();
		my $offset = -s $node->logfile;
		$node->restart;
		wait_for_keeper($node);
		$clean = $node->log_contains(
			qr/idgen keeper: stopping; the counters resume where they stopped/, $offset);
		last if $clean;
		diag("clean restart $round: the stop found the keeper in a transaction; again");
		$last = next_value();
	}
	ok($clean, "clean restart $round: the keeper recorded where the counter stopped");
	my $next = next_value();
	is($next - $last, 1, "clean restart $round: the counter resumes right after its last value");
	$last = $next;
}

# a crash: above every value, at most prefetch (1,000) skipped
$last = draw(2500);
$node->stop('immediate');
$node->start;
wait_for_keeper($node);
my $next = next_value();
cmp_ok($next, '>', $last, 'after a crash the counter resumes above its values');
cmp_ok($next - $last - 1, '<=', 1000, 'skipping at most prefetch: ' . ($next - $last - 1));
$last = $next;

# An administrator stops the keeper: it parks the counters, lowering each
# durable state to its next value; its successor makes the reservation in
# memory durable again before it switches a counter on.  "p" refills only
# when a single value is left: the 10 values drawn after the successor
# switched it on lie within the reservation it had, so only the
# successor's write covers them (its load's rewrite of a row below the
# reservation would too, a moment later: this checks the outcome, not the
# order), and a crash right after must not repeat them.
$node->safe_psql('postgres', q{INSERT INTO p_ids SELECT idgen_next('p') FROM generate_series(1, 10)});
wait_keeper_idle();
restart_keeper($node);
$next = next_value();
is($next - $last, 1, 'after pg_terminate_backend on the keeper: right after its last value');
my ($p_ret, $p_err) = (1, '');
wait_until(sub {
	($p_ret, undef, $p_err) = $node->psql('postgres',
		q{INSERT INTO p_ids SELECT idgen_next('p') FROM generate_series(1, 10)});
	return $p_ret == 0;
});
is($p_ret, 0, 'the parked counter p issues again') or diag($p_err);
$node->stop('immediate');
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres', q{INSERT INTO p_ids SELECT idgen_next('p') FROM generate_series(1, 10)});
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM p_ids'), '30|30',
	'and a crash right after repeats none of its values');
$last = draw(3000);

# The state row replaced by an older copy, then a crash before the keeper
# looks again: the data directory's record wins.  The keeper looks every
# 2 s and would write the row back from memory, so it is stopped (SIGSTOP,
# while idle between its transactions) from before the row is lowered
# until the crash, whatever the machine's speed; the immediate stop kills
# it (the postmaster sends SIGKILL to children that do not exit).
my $lowered_at = -s $node->logfile;
wait_keeper_idle();
my $keeper = keeper_pid($node);
kill 'STOP', $keeper or die "cannot stop the keeper ($keeper): $!";
$node->safe_psql('postgres',
	q{UPDATE idgen_counter_state SET reserved = 0 WHERE name = 'c'});
$node->stop('immediate');
$node->start;
wait_for_keeper($node);
$next = next_value();
cmp_ok($next, '>', $last, 'a state row lowered by hand does not lower the floor');
ok($node->log_contains(qr/counter "c" resumes above \d+, where this server reserved it before/,
		$lowered_at),
	'and the keeper says so, after this start');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'), 't',
	'no value was handed out twice');

# --- a restart below what was handed out: the superuser's explicit choice --
# idgen_restart_generator() sets the counter back, as ALTER SEQUENCE ...
# RESTART.  Until the keeper has recorded it, callers are told to retry
# (55P03), never given a value of the old line; then it issues from its
# new start, and a clean restart or a crash of the server resumes on the
# new line (the data directory's record is lowered with the row), not
# above the old one.
my $high = draw(2000);
cmp_ok($high, '>', 5000, 'the old line runs high');
$node->safe_psql('postgres', q{SELECT idgen_restart_generator('c', 10)});
is(next_value(), 10, 'after the restart the counter issues its new start first');
$last = draw(99);
$node->stop('immediate');
$node->start;
wait_for_keeper($node);
$next = next_value();
ok($next > $last && $next < $high,
	'a crash right after resumes above the new line, below the old one (' . $next . ')');
$last = draw(10);
$node->restart;
wait_for_keeper($node);
$next = next_value();
ok($next > $last && $next < $high, 'so does a restart of the server');

# A name defined again in other stripes keeps a record of each definition
# in the data directory; the superuser's restart sets back the name's own
# number line, and a restart of the server does not raise it above the
# values the earlier definition handed out.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('r', 'seq:40', stripes => 2, owned => '0');
	SELECT count(idgen_next('r')) FROM generate_series(1, 2000);
	SELECT idgen_drop_generator('r', force => true);
	SELECT idgen_create_generator('r', 'seq:40', stripes => 2, owned => '1');});
my $r_high = $node->safe_psql('postgres', q{SELECT idgen_next('r')});
cmp_ok($r_high, '>', 4000, 'the name defined again continues above its earlier definition');
$node->safe_psql('postgres', q{SELECT idgen_restart_generator('r', 1)});
wait_until(sub { error_of($node, q{SELECT idgen_next('r')}) !~ /^55P03/ })
  or die 'r did not issue again';
$node->restart;
wait_for_keeper($node);
my $r_next;
wait_until(sub {
	my ($ret, $out) = $node->psql('postgres', q{SELECT idgen_next('r')});
	$r_next = $out if $ret == 0;
	return $ret == 0;
}) or die 'r did not issue after the restart';
ok($r_next < $r_high,
	"a restart of the server resumes on the restarted line, not above the earlier definition's ($r_next)");

$node->safe_psql('postgres', q{
	CREATE ROLE plain LOGIN;
	GRANT EXECUTE ON FUNCTION idgen_restart_generator(text, bigint) TO plain;
	SELECT idgen_create_generator('t', 'time:41 node:10 seq:12');});
like(error_of($node, q{SET ROLE plain; SELECT idgen_restart_generator('c', 0)}),
	qr/^42501:/, 'a plain role may not restart a counter, even with EXECUTE');
like(error_of($node, q{SELECT idgen_restart_generator('t')}),
	qr/^42809: generator "t" is not a counter generator/, 'a time generator has nothing to restart');
$node->safe_psql('postgres', q{SELECT idgen_create_generator('shared', 'seq:40', space => 'pool')});
like(error_of($node, q{SELECT idgen_restart_generator('shared', 0)}),
	qr/^0A000: generator "shared" of the shared ID space "pool" cannot be restarted/,
	'a member of a shared ID space cannot restart (the space would forget its values)');
like(error_of($node, q{SELECT idgen_restart_generator('nope')}),
	qr/^42704:/, 'an unknown name: 42704');
like(error_of($node, q{SELECT idgen_restart_generator('c', 1099511627776)}),
	qr/^22003:/, 'a start beyond its seq field: 22003');
like(error_of($node, q{BEGIN; SELECT idgen_restart_generator('c', 0); PREPARE TRANSACTION 'restart'}),
	qr/^0A000: cannot PREPARE a transaction that has restarted a counter generator/,
	'a restart cannot be prepared (another session would commit it unknowing)');
$next = next_value();
ok($next > $last, 'refused restarts change nothing');

$node->stop;
done_testing();
