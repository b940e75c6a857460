# A synchronous standby that answers late, once, costs callers nothing
# as long as the reservation outlasts it; beyond that they fail closed
# with 55P03, and go on once it answers, without a keeper restart.
#
# The primary has synchronous_standby_names = '*' and one streaming
# standby.  The keeper's commits wait for that standby's confirmation
# before it publishes a reservation; callers issue within the
# reservation published before and never wait for a commit of their
# own (they only SELECT).  Sessions draw snowflake_id() and a named
# counter without pause while the standby's WAL receiver is stopped
# with SIGSTOP and later continued with SIGCONT:
#
#  1. a short stall.  idgen.reservation is 20 s, so the keeper extends
#     it when less than 10 s are left, looking every 5 s: when its
#     commit starts to wait, at least 5 s are left.  The receiver is
#     continued 2 s after the keeper has been seen waiting for the
#     standby (wait event SyncRep), well within that, and within
#     idgen.reservation from the stop.  (A counter's reservation is
#     counted in values, not time: its prefetch of 1,000,000 outlasts
#     the draws here.)  No call fails, the IDs of each session are
#     unique and increasing, the keeper is the same process, and once a
#     round has gone by idgen_status() says the reservation is durable.
#  2. a stall longer than the reservation.  Calls run out of it and
#     fail with 55P03 only ("no durable ID reservation is available",
#     naming the wait for the synchronous standbys), and succeed again
#     once the receiver is continued; the keeper is the same process.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $primary = idgen_node('late_primary', allows_streaming => 1, conf => q{
idgen.node_id = 1
idgen.reservation = '20s'
log_line_prefix = '%m [%p] %e %q%a '
});
$primary->start;
wait_for_keeper($primary);
$primary->safe_psql('postgres',
	q{SELECT idgen_create_generator('late_ctr', 'seq:40', prefetch => 1000000)});

my $standby = standby_from_backup($primary, 'late_standby',
	conf => "idgen.node_id = 2\n");
$primary->wait_for_catchup($standby);
set_and_reload($primary, synchronous_standby_names => '*');
ok($primary->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'"),
	'the standby is synchronous');
ok($primary->poll_query_until('postgres', q{
		SELECT keeper_state = 'ready' AND keeper_message = 'the reservation is durable'
		  FROM idgen_status()}),
	'the keeper has made a reservation durable with it');

my $keeper = keeper_pid($primary);
my @sessions = map { psql_session($primary, 'postgres', application_name => "drawer$_") } 1 .. 3;
my (%errors, %last, %seen, $calls, $dups, @disorder, $streak);
my $draw_sql = q{SELECT snowflake_id(), idgen_next('late_ctr')};

# One call in each session, in turn: errors by SQLSTATE, and every ID
# checked for repeats (over all sessions) and order (within its session).
sub draw_round
{
	for my $i (0 .. $#sessions)
	{
		my $r = session_run($sessions[$i], $draw_sql);
		$calls++;
		die "session $i was lost: $r->{lost}" if $r->{lost};
		if ($r->{sqlstate})
		{
			$errors{ $r->{sqlstate} }{count}++;
			$errors{ $r->{sqlstate} }{message} //= $r->{message};
			$streak = 0;
			next;
		}
		$streak++;
		my ($sf, $ctr) = split /\|/, $r->{stdout};
		chomp $ctr;
		for ([ sf => $sf ], [ ctr => $ctr ])
		{
			my ($g, $id) = @$_;
			$dups++ if $seen{$g}{$id}++;
			push @disorder, "$g: $id after $last{$i}{$g} in session $i"
			  if defined $last{$i}{$g} && $id <= $last{$i}{$g};
			$last{$i}{$g} = $id;
		}
	}
}

sub error_summary
{
	return join(', ', map { "$_ x$errors{$_}{count} ($errors{$_}{message})" } sort keys %errors)
	  || 'none';
}

# Draw until $done returns true, at most the suite's timeout; return
# whether it did.
sub draw_until
{
	my ($done) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		draw_round();
		return 1 if $done->();
	}
	return 0;
}

my $keeper_waits_for_standby = sub {
	$primary->safe_psql('postgres', qq{
		SELECT count(*) = 1 FROM pg_stat_activity WHERE pid = $keeper AND wait_event = 'SyncRep'})
	  eq 't';
};
my $receiver = $standby->safe_psql('postgres', 'SELECT pid FROM pg_stat_wal_receiver');
like($receiver, qr/^\d+$/, 'the standby has a WAL receiver');
# if the test dies while the receiver is stopped, it goes on, so that its
# server can stop
END { kill 'CONT', $receiver if $receiver && $receiver =~ /^\d+$/; }

draw_until(sub { $calls >= 30 });

# The keeper's ERROR and FATAL lines in the primary's log since $offset.
sub keeper_errors
{
	my ($offset) = @_;
	return join("\n", grep { /\[$keeper\] \S+ \S*\s*(?:ERROR|FATAL):/ }
		split /\n/, substr(slurp_file($primary->logfile), $offset));
}

# --- 1. a stall shorter than the reservation ----------------------------------
my $offset = -s $primary->logfile;
%errors = ();
$calls = 0;
my $stopped = time;
kill 'STOP', $receiver or die "cannot stop the WAL receiver $receiver: $!";
my $waited = draw_until($keeper_waits_for_standby);
my $seen_waiting = time;
draw_until(sub { time > $seen_waiting + 2 });
kill 'CONT', $receiver;
my $stall = time - $stopped;
ok($waited, 'with the WAL receiver stopped, the keeper waits for the synchronous standby');
note(sprintf('short stall: %.1f s, of which %.1f s with the keeper waiting; %d calls',
	$stall, time - $seen_waiting, $calls));
cmp_ok($stall, '<', 20, 'the stall was shorter than idgen.reservation (20 s)');
ok(draw_until(sub { !$keeper_waits_for_standby->() }),
	'once the receiver goes on, the keeper stops waiting');
draw_until(sub { $calls >= 30 });
is(error_summary(), 'none', "no call failed during the short stall ($calls calls)");
ok(!$dups, 'no ID was issued twice');
is(scalar(@disorder), 0, 'the IDs of each session increase')
  or diag(join("\n", @disorder[ 0 .. ($#disorder < 9 ? $#disorder : 9) ]));
is(keeper_pid($primary), $keeper, 'the keeper is the same process');
is(keeper_errors($offset), '', 'and it logged no error');
ok($primary->poll_query_until('postgres', q{
		SELECT keeper_state = 'ready' AND keeper_message = 'the reservation is durable'
		   AND reserved_until > now() FROM idgen_status()}),
	'idgen_status() shows no lasting error');

# --- 2. a stall longer than the reservation -----------------------------------
$offset = -s $primary->logfile;
%errors = ();
$calls = 0;
$stopped = time;
kill 'STOP', $receiver or die "cannot stop the WAL receiver $receiver: $!";
ok(draw_until(sub { $errors{'55P03'} }),
	'with the receiver stopped beyond the reservation, calls fail');
like($primary->safe_psql('postgres', 'SELECT keeper_state, keeper_message FROM idgen_status()'),
	qr/^ready\|a new reservation is waiting to become durable \(WAL flush, and the synchronous standbys/,
	'idgen_status() says the reservation waits for the synchronous standbys');
my $failed_at = time;
draw_until(sub { time > $failed_at + 2 });
kill 'CONT', $receiver;
note(sprintf('long stall: %.1f s; %d calls', time - $stopped, $calls));
ok(draw_until(sub { $streak >= 30 }), 'once the receiver goes on, calls succeed again');
is(join(' ', sort keys %errors), '55P03', 'the calls failed with 55P03 only (safe to retry): ' . error_summary());
like($errors{'55P03'}{message}, qr/^no durable ID reservation is available/,
	'saying that no durable reservation is available');
ok(!$dups, 'no ID was issued twice');
is(scalar(@disorder), 0, 'the IDs of each session increase');
is(keeper_pid($primary), $keeper, 'the keeper is the same process: it did not exit');
is(keeper_errors($offset), '', 'and it logged no error: it waited');
ok($primary->poll_query_until('postgres', q{
		SELECT keeper_state = 'ready' AND keeper_message = 'the reservation is durable'
		   AND reserved_until > now() FROM idgen_status()}),
	'idgen_status() shows the reservation durable again');

session_end($_) for @sessions;
$standby->stop;
$primary->stop;
done_testing();
