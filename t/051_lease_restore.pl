# Node-id leases survive an etcd restored from a snapshot.
#
# A restored etcd goes back in time: the reservation record of a node id
# may hold less than its holder has reserved since, and a lease granted
# since is gone.  Two cases, each with a holder whose clock runs 10 minutes
# ahead, so that the next holder, on the real clock, is above the
# holder's IDs only through the record:
#
# 1. The holder's lease is in the snapshot: it keeps its node id, and its
#    next renewal finds the record behind what it reserved, says so and
#    rewrites it.  The next holder of the id (after a clean stop) starts
#    above everything the holder issued, time IDs and counters alike.
# 2. The holder's lease is not in the snapshot (taken before its claim):
#    another server can claim the id at once.  It issues nothing under it
#    before the holder must have stopped (the TTL from its claim), and then
#    starts above what the holder reserved, which the holder wrote back
#    into the record when it found its lease gone.
# 3. As 1, but the holder stops cleanly before it renews: it writes the
#    record on its way out.
# 4. Not a restore: the record carries each counter's ID space.  The next
#    holder of a node id defines a counter under another name in the
#    holder's shared space, with the holder's counter's layout: nothing on
#    it knows the holder's counter, the record does, and it starts above
#    the values the holder handed out.  One whose seq field lies elsewhere
#    is refused: the record does not say the holder's other fields, so
#    it cannot tell whether their IDs meet.
# 5. Not a restore: the next holder defines the holder's counter again in
#    other stripes; a new member in the holder's stripe starts above it.
# 6. Not a restore: the next holder defines it again with its seq field
#    elsewhere, kept apart by a constant bit: not refused.
#
# The test runs its own etcd (Debian's etcd-server) on loopback and
# restores it with etcdctl (Debian's etcd-client; etcd 3.4 has no
# etcdutl) into the same data directory and port.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use POSIX ();
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenEtcd;

my $ttl = 6;

# ---- etcd, started by us on loopback, stopped by us by its PID ----
my $etcd_dir = etcd_dir();

# A field of the reservation record of node id $id (a JSON number).
sub record_field
{
	my ($id, $field) = @_;
	my $record = etcd_get("/idgen/reservation/$id");
	# a counter's bound, in seq values: {"name": ..., "seq": N, "bits": B}
	return $1 if $record =~ /\{"name": "\Q$field\E", "seq": (\d+)/;
	return $record =~ /"\Q$field\E": (\d+)/ ? $1 : 0;
}

start_etcd();

# ---- servers ----

# Poll the server log of $node from $from for $re; true once it is there.
sub wait_for_log
{
	my ($node, $re, $from) = @_;
	return wait_until(sub { slurp_file($node->logfile, $from) =~ $re });
}

my $tickets = "idgen_create_generator('tickets', 'zone:7=3 worker:16 seq:40')";
# a ticket's counter value, as the record carries it: its 40 low bits
my $seq_mask = '((1::bigint << 40) - 1)';

# Wait until the record of node id $id has not changed for 2 s: its
# holder is idle.
sub wait_for_quiet_record
{
	my ($id) = @_;
	my ($last, $since) = ('', time);
	wait_until(sub {
		my $now = etcd_get("/idgen/reservation/$id");
		($last, $since) = ($now, time) if $now ne $last;
		return time - $since >= 2;
	}) or die "the record of node id $id kept changing";
}

# ---- 1. The holder's lease is in the snapshot: the record went back ----

my $a = lease_node('a', 5, max_lead => '1h');
my (undef, $start_a) = fake_clock($a, '+600');
$start_a->('start');
wait_for_keeper($a);
wait_for_lease($a, 'held');
$a->safe_psql('postgres', "SELECT $tickets");
$a->safe_psql('postgres',
	"SELECT max(idgen_next('tickets')), max(snowflake_id()) FROM generate_series(1, 100)");
etcdctl('put', '/idgen-test/marker', 'before');
etcdctl('snapshot', 'save', "$etcd_dir/with-lease.db");
etcdctl('put', '/idgen-test/marker', 'after');
my $recorded_then = record_field(5, 'tickets');
# the record reaches a couple of seconds past the clock: issue later than
# that, so that a's time IDs pass what the snapshot holds too (wall-clock
# time, not speed: a slower machine only widens the gap)
sleep 3;

my $a_tickets = $a->safe_psql('postgres',
	"SELECT max(idgen_next('tickets')) FROM generate_series(1, 5000)");
my $a_local = $a->safe_psql('postgres', "SELECT ${a_tickets}::bigint & $seq_mask");
my $a_max = $a->safe_psql('postgres',
	'SELECT max(snowflake_id()) FROM generate_series(1, 100000)');
# idle now: a's keeper writes the record again only when a reservation
# passes it, so a restored record would stay behind
wait_for_quiet_record(5);
my $a_reserved = record_field(5, 'reserved_unix_ms');
cmp_ok(record_field(5, 'tickets'), '>', $a_local,
	'the record of node id 5 covers the counter values issued after the snapshot');

my $a_lease = $a->safe_psql('postgres', 'SELECT lease_id FROM idgen_lease_status()');
my $log_from = -s $a->logfile;
restore_etcd("$etcd_dir/with-lease.db");
is(etcd_get('/idgen-test/marker'), 'before', 'etcd is restored from the snapshot');

# a's lease was in the snapshot: a keeps node id 5, and its next renewal
# finds the record behind what it reserved, and rewrites it
ok(wait_for_log($a,
		qr/WARNING:\s+idgen keeper: the reservation record of node id 5 in etcd is behind what this server reserved/,
		$log_from),
	'the holder notices that the record of its node id went back');
like(slurp_file($a->logfile, $log_from),
	qr{DETAIL:\s+The key "/idgen/reservation/5" holds [^;]*counter "tickets" $recorded_then\b[^;]*; it should hold [^\n]*counter "tickets" \d+},
	'the warning names the key, what it held and what it should hold');
cmp_ok(record_field(5, 'tickets'), '>', $a_local,
	'the record covers the counter values the holder issued again');
cmp_ok(record_field(5, 'reserved_unix_ms'), '>=', $a_reserved,
	'and its time reservation');
is($a->safe_psql('postgres', 'SELECT lease_state, lease_id FROM idgen_lease_status()'),
	"held|$a_lease", 'the holder keeps node id 5 under the same lease');
# (a issues nothing more: that would have it write the record anyway)
$a->stop('fast');
is(etcd_get('/idgen/node/5'), '', 'a clean stop gives node id 5 back');

my $b = lease_node('b', 5, max_lead => '1h');
$b->start;
wait_for_keeper($b);
$b->safe_psql('postgres', "SELECT $tickets");
wait_until_generating($b);
cmp_ok($b->safe_psql('postgres',
		"SELECT min(idgen_next('tickets')) FROM generate_series(1, 5000)"),
	'>', $a_tickets,
	"the next holder's first 5,000 counter values are all above the holder's");
cmp_ok($b->safe_psql('postgres',
		'SELECT min(snowflake_id()) FROM generate_series(1, 5000)'),
	'>', $a_max,
	"and its time IDs above the holder's, whose clock ran 10 minutes ahead");
$b->stop('fast');

# ---- 2. The holder's lease is not in the snapshot ----

# x holds node id 6 first and stops cleanly: the snapshot shows the id
# free, with x's record, as it was before a2 claimed it.
my $x = lease_node('x', 6, max_lead => '1h');
$x->start;
wait_for_keeper($x);
wait_until_generating($x);
$x->safe_psql('postgres', "SELECT $tickets");
$x->safe_psql('postgres', "SELECT max(idgen_next('tickets')) FROM generate_series(1, 100)");
$x->stop('fast');
etcdctl('snapshot', 'save', "$etcd_dir/before-claim.db");

# a2 and b2 have a TTL of 20 s, and a2's reservation reaches 20 s ahead,
# so that a2's generators still run well after b2's claim however long
# the restore takes: the worst case is then tested on any machine.
my $a2 = lease_node('a2', 6, ttl => 20, max_lead => '1h', extra => "idgen.reservation = 20s\n");
my (undef, $start_a2) = fake_clock($a2, '+600');
$start_a2->('start');
wait_for_keeper($a2);
wait_for_lease($a2, 'held');
wait_until_generating($a2);
$a2->safe_psql('postgres', "SELECT $tickets");
my $a2_tickets = $a2->safe_psql('postgres',
	"SELECT max(idgen_next('tickets')) FROM generate_series(1, 5000)");
my $a2_max = $a2->safe_psql('postgres',
	'SELECT max(snowflake_id()) FROM generate_series(1, 100000)');

my $b2 = lease_node('b2', 6, ttl => 20, max_lead => '1h');
$b2->start;
wait_for_keeper($b2);
$b2->safe_psql('postgres', "SELECT $tickets");
wait_for_lease($b2, 'taken');

# a2's keeper is stopped, so that b2 claims the id before a2 renews: the
# worst case, which otherwise depends on where a2's renewal falls.  a2's
# generators go on until its lease's deadline (TTL less a quarter after
# its last renewal), or until their reservation ends.  It runs again a
# second after b2's claim, well within the 20 s b2 then waits: a holder
# whose keeper stays stopped longer cannot write its reservation back,
# which the guarantee leaves out (docs: etcd restored from a snapshot).
# So b2's keeper is stopped too until etcd is back, and its claim is read
# from its log at once: on a loaded machine the restore and etcdctl take
# seconds, and b2 would claim while the test still waited for them.
my $a2_keeper = keeper_pid($a2);
my $b2_keeper = keeper_pid($b2);
$log_from = -s $a2->logfile;
# just after a renewal, so that a2 believes it holds the id for 14 s more
$a2->poll_query_until('postgres',
	"SELECT lease_expires_in_ms > 14000 FROM idgen_lease_status()")
  or die 'a2 did not renew';
kill 'STOP', $a2_keeper;
kill 'STOP', $b2_keeper;
restore_etcd("$etcd_dir/before-claim.db");
my $b2_log_from = -s $b2->logfile;
kill 'CONT', $b2_keeper;
ok(wait_until(sub { slurp_file($b2->logfile, $b2_log_from) =~ /claimed node id 6 in etcd/ }),
	'in the restored etcd node id 6 is free, and b2 claims it');
my $until = time + $PostgreSQL::Test::Utils::timeout_default;

# Both servers asked in turn until b2 issues and a2 refuses: b2 must
# issue nothing while a2 still does.  a2's keeper runs again a second
# after b2's claim.
my $claimed_at = time;
my ($a2_last_ok, $a2_refused, $b2_first_ok, $b2_first, $resumed, $fencing) =
  (0, 0, 0, 0, 0, '');
while (time < $until && !($b2_first_ok && $a2_refused))
{
	if (!$resumed && time > $claimed_at + 1)
	{
		kill 'CONT', $a2_keeper;
		$resumed = 1;
	}
	my ($ret, $out, $err) = $a2->psql('postgres', 'SELECT snowflake_id()');
	if ($ret == 0 && $out ne '')
	{
		$a2_last_ok = time;
		$a2_max = $out if $out > $a2_max;
		$a2_refused = 0;
	}
	else
	{
		$a2_refused = 1;
	}
	next if $b2_first_ok;
	($ret, $out, $err) = $b2->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake_id()");
	if ($ret == 0 && $out ne '')
	{
		$b2_first_ok = time;
		$b2_first = $out;
	}
	elsif ($err =~ /ERROR:\s+(\w{5}: this server claimed node id 6 in etcd[^\n]*)/)
	{
		$fencing = $1;
	}
}
kill 'CONT', $a2_keeper unless $resumed;
like(etcd_get('/idgen/node/6'), qr/"port": ${\ $b2->port}\b/,
	'the key of node id 6 names b2');
ok($b2_first_ok, 'b2 issues under node id 6 in the end');
cmp_ok($a2_last_ok, '>', $claimed_at,
	'a2 still issued after b2 claimed the id (the worst case was tested)');
cmp_ok($b2_first_ok, '>', $a2_last_ok,
	'but only after a2, whose lease etcd forgot, has stopped issuing under it');
like($fencing, qr/^55P03: this server claimed node id 6 in etcd and does not issue under it yet$/,
	'until then b2 says it waits for a previous holder to stop (55P03: it passes by itself)');
cmp_ok($b2_first, '>', $a2_max,
	"b2's first ID is above every ID a2 issued, although a2's clock runs 10 minutes ahead");
cmp_ok($b2->safe_psql('postgres',
		"SELECT min(idgen_next('tickets')) FROM generate_series(1, 5000)"),
	'>', $a2_tickets,
	"b2's first 5,000 counter values are all above a2's");
cmp_ok($b2->safe_psql('postgres',
		'SELECT min(snowflake_id()) FROM generate_series(1, 5000)'),
	'>', $a2_max, "and so are b2's next 5,000 time IDs");

# a2 found its lease gone, wrote what it had reserved back into the
# record, and now finds the id taken
ok(wait_for_log($a2,
		qr/WARNING:\s+idgen keeper: the reservation record of node id 6 in etcd is behind what this server reserved/,
		$log_from),
	'a2 notices that the record of node id 6 went back, and says so');
wait_for_lease($a2, 'taken');
like(error_of($a2, 'SELECT snowflake_id()'), qr/^55000: node id 6 is held by another server/,
	'a2 no longer issues under node id 6: b2 holds it');

$a2->stop('fast');
$b2->stop('fast');

# ---- 3. A clean stop right after a restore, before any renewal ----

# a3's keeper is stopped from before the restore until the server shuts
# down, so that it never renews in the restored etcd: its last write on
# the way out, before it gives the id back, makes the record whole.
my $a3 = lease_node('a3', 7, max_lead => '1h');
my (undef, $start_a3) = fake_clock($a3, '+600');
$start_a3->('start');
wait_for_keeper($a3);
wait_for_lease($a3, 'held');
$a3->safe_psql('postgres', "SELECT $tickets");
$a3->safe_psql('postgres',
	"SELECT max(idgen_next('tickets')), max(snowflake_id()) FROM generate_series(1, 100)");
etcdctl('snapshot', 'save', "$etcd_dir/a3.db");
sleep 3;
my $a3_tickets = $a3->safe_psql('postgres',
	"SELECT max(idgen_next('tickets')) FROM generate_series(1, 5000)");
my $a3_local = $a3->safe_psql('postgres', "SELECT ${a3_tickets}::bigint & $seq_mask");
my $a3_max = $a3->safe_psql('postgres',
	'SELECT max(snowflake_id()) FROM generate_series(1, 100000)');
wait_for_quiet_record(7);
my $a3_keeper = keeper_pid($a3);
kill 'STOP', $a3_keeper;
restore_etcd("$etcd_dir/a3.db");
cmp_ok(record_field(7, 'tickets'), '<=', $a3_local,
	'the restored record of node id 7 lacks counter values a3 issued');
# The shutdown's SIGTERM reaches the stopped keeper and waits there, as
# a pending signal; only then does the keeper run again (continued from a
# child process, while this one waits for the stop), so that what it
# writes next is its way out, not an ordinary renewal.  The kernel shows
# a stopped process's pending signals in /proc/PID/status (SIGTERM is
# signal 15: bit 14 of SigPnd or ShdPnd).
my $child = fork() // die "fork: $!";
if ($child == 0)
{
	my $pending = 0;
	wait_until(sub {
		# (the keeper gone: nothing to wait for)
		open my $fh, '<', "/proc/$a3_keeper/status" or return 1;
		while (my $line = <$fh>)
		{
			$pending = 1 if $line =~ /^(?:SigPnd|ShdPnd):\s+([0-9a-f]+)/ && (hex(substr($1, -8)) & (1 << 14));
		}
		close $fh;
		return $pending;
	});
	kill 'CONT', $a3_keeper;
	POSIX::_exit($pending ? 0 : 1);
}
$a3->stop('fast');
waitpid($child, 0);
is($? >> 8, 0, 'the shutdown\'s SIGTERM was pending at the stopped keeper before it ran again');
is(etcd_get('/idgen/node/7'), '', 'a3 stopped cleanly and gave node id 7 back');
cmp_ok(record_field(7, 'tickets'), '>', $a3_local,
	'and wrote the record whole again on its way out');

my $b3 = lease_node('b3', 7, max_lead => '1h');
$b3->start;
wait_for_keeper($b3);
$b3->safe_psql('postgres', "SELECT $tickets");
wait_until_generating($b3);
cmp_ok($b3->safe_psql('postgres',
		"SELECT min(idgen_next('tickets')) FROM generate_series(1, 5000)"),
	'>', $a3_tickets,
	"the next holder's counter values are all above a3's");
cmp_ok($b3->safe_psql('postgres',
		'SELECT min(snowflake_id()) FROM generate_series(1, 5000)'),
	'>', $a3_max, "and its time IDs above a3's");
$b3->stop('fast');

# ---- 4. A shared ID space, from one holder of the node id to the next ----

my $a4 = lease_node('a4', 8);
$a4->start;
wait_for_keeper($a4);
wait_for_lease($a4, 'held');
$a4->safe_psql('postgres',
	"SELECT idgen_create_generator('placed', 'zone:7=3 worker:16 seq:40', space => 'orders')");
wait_until_generating($a4);
my $a4_max = $a4->safe_psql('postgres',
	"SELECT max(idgen_next('placed')) FROM generate_series(1, 5000)");
$a4->stop('fast');
like(etcd_get('/idgen/reservation/8'), qr/\{"name": "placed", "seq": \d+, "bits": 40, "shift": 0, "space": "orders", "fixed": \d+, "form": "[1-9]\d*"\}/,
	'the record of node id 8 carries the counter\'s ID space, seq position, fixed bits and form');

my $b4 = lease_node('b4', 8);
$b4->start;
wait_for_keeper($b4);
$b4->safe_psql('postgres',
	"SELECT idgen_create_generator('shipped', 'zone:7=3 worker:16 seq:40', space => 'orders')");
wait_until_generating($b4);
cmp_ok($b4->safe_psql('postgres',
		"SELECT min(idgen_next('shipped')) FROM generate_series(1, 5000)"),
	'>', $a4_max,
	"a new member of the holder's shared space starts above the holder's counter");
$b4->stop('fast');

# On the next holder, a member with its seq field elsewhere whose IDs
# could meet the earlier holders' (no fixed bit outside both seq fields
# tells them apart) cannot be floored above them: refused.
my $c4 = lease_node('c4', 8);
$c4->start;
wait_for_keeper($c4);
$c4->safe_psql('postgres',
	"SELECT idgen_create_generator('returned', 'seq:40 zone:7=3 worker:16', space => 'orders')");
wait_until(sub { error_of($c4, "SELECT idgen_next('returned')") !~ /^55P03/ });
like(error_report_of($c4, "SELECT idgen_next('returned')"),
	qr/ERROR:\s+55000: generator "returned" cannot issue IDs on this server\s+DETAIL:\s+IDs were issued in ID space "orders" by "(?:placed|shipped)"/,
	'a member with its seq field elsewhere is refused, naming the space and the member');
$c4->stop('fast');

# ---- 5. A member defined again in other stripes, on the next holder ----

# The next holder of node id 9 defines the holder's counter again under
# its name, in the other stripe, and a new member in the stripe the holder
# used.  The record keeps the holder's definition apart from the new one,
# so the new member starts above the values the holder handed out.
my $a5 = lease_node('a5', 9);
$a5->start;
wait_for_keeper($a5);
wait_for_lease($a5, 'held');
$a5->safe_psql('postgres',
	"SELECT idgen_create_generator('sx', 'zone:7=3 worker:16 seq:40', space => 'parcels', stripes => 2, owned => '0')");
wait_until_generating($a5);
my $a5_max = $a5->safe_psql('postgres',
	"SELECT max(idgen_next('sx')) FROM generate_series(1, 5000)");
$a5->stop('fast');

my $b5 = lease_node('b5', 9);
$b5->start;
wait_for_keeper($b5);
$b5->safe_psql('postgres', q{
	SELECT idgen_create_generator('sx', 'zone:7=3 worker:16 seq:40', space => 'parcels', stripes => 2, owned => '1');
	SELECT idgen_create_generator('sy', 'zone:7=3 worker:16 seq:40', space => 'parcels', stripes => 2, owned => '0');});
wait_until_generating($b5);
cmp_ok($b5->safe_psql('postgres',
		"SELECT min(idgen_next('sy')) FROM generate_series(1, 5000)"),
	'>', $a5_max,
	'a member in the stripe an earlier definition used starts above its values');
$b5->stop('fast');

# ---- 6. A name's old IDs that a constant bit keeps apart, from the record ----

# The next holder of node id 10 defines the holder's counter again with
# its seq field elsewhere and another constant: no ID can meet the
# holder's, so the record's entry does not refuse it (as the data
# directory's file does not).
my $a6 = lease_node('a6', 10);
$a6->start;
wait_for_keeper($a6);
wait_for_lease($a6, 'held');
$a6->safe_psql('postgres',
	"SELECT idgen_create_generator('dcx', 'dc:2=1 worker:16 seq:20', prefetch => 10)");
wait_until_generating($a6);
$a6->safe_psql('postgres', "SELECT count(idgen_next('dcx')) FROM generate_series(1, 50)");
$a6->stop('fast');

my $b6 = lease_node('b6', 10);
$b6->start;
wait_for_keeper($b6);
$b6->safe_psql('postgres',
	"SELECT idgen_create_generator('dcx', 'dc:2=2 worker:16 seq:20 low:2=0', prefetch => 10)");
wait_until_generating($b6);
wait_until(sub { error_of($b6, "SELECT idgen_next('dcx')") !~ /^55P03/ });
is(error_of($b6, "SELECT idgen_next('dcx')"), 'no error',
	'a name whose recorded IDs a constant bit keeps apart runs with its seq field moved');
$b6->stop('fast');

done_testing();
