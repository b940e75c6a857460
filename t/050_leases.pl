# Node-id leases in etcd (idgen.lease_endpoints): two live servers never
# issue under the same node id, and the next holder of an id starts above
# everything the previous one issued.
#
# The test starts its own etcd on loopback (Debian's etcd-server) and
# stops it; every server uses idgen.lease_ttl = 6 s, so a lease left
# behind by a killed server expires within 6 s.  Nothing here depends on
# the machine's speed except one bound in the etcd-outage part, which
# only asks that the keeper acts at a deadline it set itself 1.5 s ahead
# (see there).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util ();
use Time::HiRes qw(time sleep);
use Sys::Hostname;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenEtcd;

my $ttl = 6;

# ---- etcd, started by us on loopback, stopped by us by its PID ----
start_etcd();

# ---- servers ----

# Issue $n snowflake IDs; return the highest.
sub max_of
{
	my ($node, $n) = @_;
	return $node->safe_psql('postgres',
		"SELECT max(snowflake_id()) FROM generate_series(1, $n)");
}

# ---- 0. Settings ----

# 'auto' needs leases; without them no node id is picked, and generators say so
my $noauto = idgen_node('noauto', conf => qq{
idgen.node_id = 'auto'
});
$noauto->start;
wait_for_keeper($noauto);
like(error_of($noauto, 'SELECT snowflake_id()'),
	qr/^55000: "idgen.node_id" is "auto" but "idgen.lease_endpoints" is empty/,
	"node_id = 'auto' without leases: 55000");
is($noauto->safe_psql('postgres', 'SELECT node_id IS NULL, lease_state FROM idgen_status(), idgen_lease_status()'),
	't|off', 'idgen_status() shows no node id, idgen_lease_status() leases off');
$noauto->stop;

# leases on, node id unset: no claim, and generators say the id is not set
my $unset = lease_node('unset', '-1');
$unset->start;
wait_for_keeper($unset);
like(error_of($unset, 'SELECT snowflake_id()'), qr/^55000: "idgen.node_id" is not set/,
	'with leases on but no node id, snowflake_id() says the node id is not set');
is($unset->safe_psql('postgres', 'SELECT lease_state FROM idgen_lease_status()'), 'off',
	'and no lease is claimed');
$unset->stop;

# a bad endpoint or prefix must not quietly switch leases off: no start
for my $bad ("idgen.lease_endpoints = '127.0.0.1:2379'",
	"idgen.lease_endpoints = 'http://127.0.0.1:2379, ftp://x'",
	"idgen.lease_prefix = 'idgen'")
{
	open my $fh, '>>', $noauto->data_dir . '/postgresql.conf' or die $!;
	print $fh "$bad\n";
	close $fh;
	my $log_from = -s $noauto->logfile // 0;
	ok(!$noauto->start(fail_ok => 1), "server refuses to start with $bad");
	like(slurp_file($noauto->logfile, $log_from),
		qr/FATAL:\s+invalid value for parameter "idgen\.lease_\w+"/,
		"log names the refused setting for $bad");
	# take the line back out
	my $conf = slurp_file($noauto->data_dir . '/postgresql.conf');
	$conf =~ s/\Q$bad\E\n//;
	open $fh, '>', $noauto->data_dir . '/postgresql.conf' or die $!;
	print $fh $conf;
	close $fh;
}

# ---- 1. Two servers configured with the same node id ----

# a's clock runs 30 s ahead (as c's below): b, on the real clock, is
# above a's IDs only through the record a leaves in etcd, not because the
# lease took its TTL to expire.
my $na = lease_node('a', 5);
my (undef, $start_a) = fake_clock($na, '+30');
$start_a->('start');
wait_for_keeper($na);
wait_for_lease($na, 'held');
like(etcd_get('/idgen/node/5'), qr/"port": ${\ $na->port}\b/,
	'a holds the key of node id 5 in etcd, and the key names it');
is($na->safe_psql('postgres',
		'SELECT snowflake_id_node(snowflake_id()) = lease_node_id FROM idgen_lease_status()'),
	't', 'a issues under node id 5');
is($na->safe_psql('postgres', 'SELECT node_id, lease_node_id FROM idgen_status(), idgen_lease_status()'),
	'5|5', 'idgen_status() and idgen_lease_status() show node id 5, never the lease word\'s claim count');
is(error_of($na, q{SELECT idgen_create_generator('ten_bits', 'time:41 node:10 seq:12',
		epoch => '2022-06-01+00')}),
	'no error', 'node id 5 fits a 10-bit node field under a lease');

my $nb = lease_node('b', 5);
$nb->start;
wait_for_keeper($nb);
wait_for_lease($nb, 'taken');
my $err = error_of($nb, 'SELECT snowflake_id()');
like($err, qr/^55000: node id 5 is held by another server in etcd/,
	'b, configured with the same node id, refuses with 55000');
# the holder is named to members of pg_monitor only, and in the server log
$nb->safe_psql('postgres', 'CREATE ROLE watcher; CREATE ROLE monitor IN ROLE pg_monitor');
my $log_from = -s $nb->logfile;
my $plain = detail_of($nb, "SET ROLE watcher;\nSELECT snowflake_id()");
unlike($plain, qr/host|port|system identifier/,
	'a role without pg_monitor is not told who holds the node id');
like($plain, qr/Members of pg_monitor see the holder in idgen_lease_status\(\)/,
	'but where to look');
my (undef, undef, $show_err) = $nb->psql('postgres',
	"SET ROLE watcher;\nSHOW idgen.lease_endpoints", on_error_stop => 1);
like($show_err, qr/permission denied|must be superuser|privileges of pg_read_all_settings/,
	"nor can it read etcd's addresses from the setting");
is($nb->safe_psql('postgres', "SET ROLE monitor; SHOW idgen.lease_endpoints") ne '', 1,
	'which members of pg_monitor can');
like(slurp_file($nb->logfile, $log_from),
	qr/DETAIL:.*the holder is host "[^"]*", port ${\ $na->port}, system identifier \d+/,
	'the server log names the holder whoever asked');
like(detail_of($nb, "SET ROLE monitor;\nSELECT snowflake_id()"),
	qr/the holder is host "[^"]*", port ${\ $na->port}, system identifier \d+/,
	'a member of pg_monitor is told the holder: host, port and system identifier');
my $detail = $nb->safe_psql('postgres', 'SELECT lease_holder FROM idgen_lease_status()');
like($detail, qr/port ${\ $na->port}, system identifier \d+, since /,
	'the holder is named: host, port, system identifier and since when');
like(error_of($nb, "SELECT idgen_uuidv7()"), qr/^55000: node id 5 is held by another server in etcd/,
	'so does every other generator that embeds the node id');
is($nb->safe_psql('postgres', 'SELECT instagram_id(1) > 0'), 't',
	'generators without the node id go on working');

my $a_max = max_of($na, 200000);

# a dies without giving its lease back: b works once the lease expired
$na->stop('immediate');
wait_until_generating($nb);
my $b_min = $nb->safe_psql('postgres', 'SELECT snowflake_id()');
cmp_ok($b_min, '>', $a_max,
	"b's IDs lie above every ID a issued under node id 5, although its clock is 30 s behind a's");
is($nb->safe_psql('postgres', 'SELECT snowflake_id_node(snowflake_id())'), '5',
	'b now issues under node id 5');

# a shut down cleanly gives its lease back at once (keeper revokes it)
$nb->stop('fast');
is(etcd_get('/idgen/node/5'), '', 'a clean shutdown deletes the node key at once');
like(etcd_get('/idgen/reservation/5'), qr/"reserved_unix_ms": \d+/,
	'the reservation record stays for the next holder');

# ---- 2. A killed server's id is free after the TTL; the next holder is above ----

# c's clock runs 30 s ahead of the real one: without the record in etcd, a
# next holder on the real clock would issue below c's IDs, however long it
# takes to claim (the lease expires within 6 s).
my $c = lease_node('c', 7);
my (undef, $start_c) = fake_clock($c, '+30');
$start_c->('start');
wait_for_keeper($c);
wait_for_lease($c, 'held');
my $c_max = max_of($c, 100000);
# a counter generator embedding the node id (seed 000's layout), on
# stripe 0 of 2: seq values 0, 2, 4, ...
$c->safe_psql('postgres',
	"SELECT idgen_create_generator('tickets', 'zone:7=3 worker:16 seq:40', stripes => 2, owned => '0')");
my $c_tickets = $c->safe_psql('postgres',
	"SELECT max(idgen_next('tickets')) FROM generate_series(1, 5000)");
$c->kill9;

my $d = lease_node('d', 7);
$d->start;
wait_for_keeper($d);
wait_until_generating($d);
my $d_min = $d->safe_psql('postgres', 'SELECT min(snowflake_id()) FROM generate_series(1, 1000)');
cmp_ok($d_min, '>', $c_max,
	"after c's SIGKILL, d claims node id 7 and issues above c's IDs, although its clock is 30 s behind c's");
is($d->safe_psql('postgres', 'SELECT count(DISTINCT id) FROM (SELECT snowflake_id() id FROM generate_series(1, 100000)) s'),
	'100000', 'd issues unique IDs');
# d defines it with one stripe: the record's bound, in seq values, is
# above all of c's values in d's counting too (in c's local values it
# would be about half of them)
$d->safe_psql('postgres', "SELECT idgen_create_generator('tickets', 'zone:7=3 worker:16 seq:40')");
cmp_ok($d->safe_psql('postgres', "SELECT min(idgen_next('tickets')) FROM generate_series(1, 1000)"),
	'>', $c_tickets,
	"a counter generator of the same name, with other stripes, resumes above c's values: the record carries counters too, in seq values");

# the node key deleted behind d's back: d notices at its next renewal
# (each renewal checks that its lease still holds the key; d writes no
# record meanwhile), and claims it again, above its record
my $d_before = max_of($d, 1000);
etcdctl('del', '/idgen/node/7');
$d->poll_query_until('postgres',
	"SELECT lease_state = 'held' AND lease_error LIKE '%no longer held%' FROM idgen_lease_status()")
  or die 'd did not claim its deleted node key again';
like(etcd_get('/idgen/node/7'), qr/"port": ${\ $d->port}\b/, 'd holds the node key again');
# (d's generators keep their state in its shared memory: this holds
# without the record, and checks only that the new claim goes on from it)
cmp_ok($d->safe_psql('postgres', 'SELECT snowflake_id()'), '>', $d_before,
	'and its IDs go on rising under the new claim');

# a reservation record that cannot be believed is refused, not thrown
etcdctl('put', '/idgen/reservation/13', '{"reserved_unix_ms": 1e30}');
my $e = lease_node('e', 13);
$e->start;
wait_for_keeper($e);
$e->poll_query_until('postgres',
	"SELECT lease_error LIKE '%reservation key of node id 13 cannot be read%' FROM idgen_lease_status()")
  or die 'e did not report the bad record';
like(error_of($e, 'SELECT snowflake_id()'), qr/^55000: this server has not claimed its node id in etcd yet/,
	'a bad record: no IDs under node id 13, and 55000: it needs correcting');
is(etcd_get('/idgen/node/13'), '', 'and the node key is given back');
etcdctl('del', '/idgen/reservation/13');
wait_until_generating($e);
is($e->safe_psql('postgres', 'SELECT snowflake_id_node(snowflake_id())'), '13',
	'once the record is removed, e claims node id 13');
$e->stop;

# ---- 3. etcd stopped: generation stops within the TTL, resumes after ----

$d->safe_psql('postgres', 'CREATE ROLE watcher; CREATE ROLE monitor IN ROLE pg_monitor');
my $stopped_at = time;
stop_etcd();
# d's last renewal was sent before the stop, so its deadline lies at most
# TTL - margin (4.5 s) after it: by TTL (6 s) it must have stopped.
sleep($ttl - (time - $stopped_at)) if time - $stopped_at < $ttl;
like(error_of($d, 'SELECT snowflake_id()'),
	qr/^55P03: this server's lease on node id 7 in etcd is not current/,
	'with etcd stopped, generation stops within the TTL (55P03: retry)');
# (the deadline above is the generators' own, so a sleep to it is the
# check; the keeper's view of etcd comes when its renewal fails, at its
# own pace)
ok($d->poll_query_until('postgres', q{
	SELECT lease_state = 'lost'
	       AND lease_error ~ '(could not renew|Couldn''t connect|Timeout)'
	  FROM idgen_lease_status()}),
	'idgen_lease_status() shows the lease lost and the last etcd error');
unlike(detail_of($d, "SET ROLE watcher;\nSELECT snowflake_id()"), qr{http://|127\.0\.0\.1},
	"a role without pg_monitor is not told etcd's addresses");
like(detail_of($d, "SET ROLE monitor;\nSELECT snowflake_id()"), qr{Last etcd error: .*http://127\.0\.0\.1},
	'a member of pg_monitor is told the last etcd error');
is($d->safe_psql('postgres', 'SELECT instagram_id(2) > 0'), 't',
	'instagram_id() does not depend on etcd');
start_etcd();
wait_until_generating($d);
is($d->safe_psql('postgres', 'SELECT snowflake_id_node(snowflake_id())'), '7',
	'with etcd back, d generates under node id 7 again');

# ---- 4. Three servers with 'auto' get distinct node ids ----

my @auto;
for my $i (1 .. 3)
{
	my $n = lease_node("auto$i", 'auto', prefix => '/idgen/auto/');

	# auto1's clock runs 30 s ahead: its id's next holder (below) is above
	# its IDs only through the record
	if ($i == 1)
	{
		my (undef, $start) = fake_clock($n, '+30');
		$start->('start');
	}
	else
	{
		$n->start;
	}
	push @auto, $n;
}
my %ids;
for my $n (@auto)
{
	wait_for_keeper($n);
	wait_for_lease($n, 'held');
	my $id = $n->safe_psql('postgres',
		'SELECT lease_node_id FROM idgen_lease_status() WHERE lease_node_id = snowflake_id_node(snowflake_id())');
	isnt($id, '', $n->name . ' issues under the node id it claimed');
	$ids{$id}++;
}
is(scalar(keys %ids), 3, "three servers with node_id = 'auto' claimed three distinct node ids");
is(join(',', sort { $a <=> $b } keys %ids), '0,1,2', 'the lowest free ones');

# a keeper that exits (here: terminated) hands over to the next keeper,
# which takes over the live lease (with 'auto' it is not given back), the
# node id it claimed and the record
my $k = $auto[1];
my $k_id = $k->safe_psql('postgres', 'SELECT lease_node_id FROM idgen_lease_status()');
my $k_max = max_of($k, 10000);
restart_keeper($k);
wait_until_generating($k);
is($k->safe_psql('postgres', 'SELECT lease_node_id = snowflake_id_node(snowflake_id()) FROM idgen_lease_status()'),
	't', 'after its keeper was terminated, an auto server issues again');
is($k->safe_psql('postgres', 'SELECT lease_node_id FROM idgen_lease_status()'), $k_id,
	'under the node id it had claimed');
cmp_ok($k->safe_psql('postgres', 'SELECT snowflake_id()'), '>', $k_max, 'above its earlier IDs');
like(slurp_file($k->logfile), qr/claimed node id $k_id in etcd/, '(claimed once)');
unlike(slurp_file($k->logfile), qr/claimed node id $k_id in etcd.*claimed node id/s,
	'the new keeper renewed the lease it found, and claimed nothing');

# an id whose lease expired is free again, and its next holder is above
my $gone = $auto[0];
my $gone_id = $gone->safe_psql('postgres', 'SELECT lease_node_id FROM idgen_lease_status()');
my $gone_max = max_of($gone, 100000);
$gone->stop('immediate');
# its key goes when etcd expires the lease, within the TTL
ok(wait_for_key_gone("/idgen/auto/node/$gone_id"), 'the lease of a stopped server expires in etcd');
my $again = lease_node('auto4', 'auto', prefix => '/idgen/auto/');
$again->start;
wait_for_keeper($again);
wait_for_lease($again, 'held');
is($again->safe_psql('postgres', 'SELECT lease_node_id FROM idgen_lease_status()'), $gone_id,
	"a new 'auto' server reuses the id whose lease expired");
cmp_ok($again->safe_psql('postgres', 'SELECT snowflake_id()'), '>', $gone_max,
	'and issues above its previous holder, whose clock ran 30 s ahead');

# ---- 5. A standby never claims while in recovery, and claims on promotion ----

# p's clock runs 30 s ahead: after the promotion the standby, on the real
# clock, is above p's IDs only through what p made durable.  The standby
# is cut off from p's WAL before p's last IDs, which come more than one
# idgen.reservation later: only the record in etcd reaches beyond them.
my $p = lease_node('p', 9);
my (undef, $start_p) = fake_clock($p, '+30');
$start_p->('start');
wait_for_keeper($p);
wait_for_lease($p, 'held');
# a clone: the same node id in its configuration
my $s = standby_from_backup($p, 's');
$p->safe_psql('postgres', 'CREATE TABLE t AS SELECT snowflake_id() id FROM generate_series(1, 1000)');
$p->wait_for_catchup($s);
is($s->safe_psql('postgres', 'SELECT lease_state, lease_id IS NULL FROM idgen_lease_status()'),
	'claiming|t', 'the standby in recovery has no lease');
like(etcd_get('/idgen/node/9'), qr/"port": ${\ $p->port}\b/,
	'and the key of node id 9 still names the primary');
$s->append_conf('postgresql.conf', "primary_conninfo = ''");
$s->reload;
$s->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
  or die 'the standby kept receiving WAL';
# wall-clock time, not speed: a slower machine only widens the gap
sleep 3;
my $p_max = max_of($p, 100000);
$p->stop('immediate');
$s->promote;
wait_for_keeper($s);
wait_until_generating($s);
like(etcd_get('/idgen/node/9'), qr/"port": ${\ $s->port}\b/,
	'once promoted (and the old lease expired), it claims node id 9');
cmp_ok($s->safe_psql('postgres', 'SELECT snowflake_id()'), '>', $p_max,
	'and issues above the old primary, whose clock ran 30 s ahead, through the etcd record alone');

for my $n ($d, $p, $s, $again, @auto[1 .. 2])
{
	$n->stop('fast');
}

# ---- 6. A restarted keeper floors counters from the record, whenever they come ----

# ra issues a counter that embeds the node id, and dies; rb claims the id.
my $ra = lease_node('ra', 'auto', prefix => '/idgen/restart/');
$ra->start;
wait_for_keeper($ra);
wait_for_lease($ra, 'held');
my $r_id = $ra->safe_psql('postgres', 'SELECT lease_node_id FROM idgen_lease_status()');
$ra->safe_psql('postgres', "SELECT idgen_create_generator('tickets', 'zone:7=3 worker:16 seq:40')");
my $ra_tickets = $ra->safe_psql('postgres',
	"SELECT max(idgen_next('tickets')) FROM generate_series(1, 5000)");
$ra->stop('immediate');
wait_for_key_gone("/idgen/restart/node/$r_id") or die "the lease of ra did not expire";
my $rb = lease_node('rb', 'auto', prefix => '/idgen/restart/');
$rb->start;
wait_for_keeper($rb);
wait_for_lease($rb, 'held');
is($rb->safe_psql('postgres', 'SELECT lease_node_id FROM idgen_lease_status()'), $r_id,
	'rb claims the node id ra held');

# rb's keeper restarts (with 'auto' it keeps the lease) while etcd is
# down, so the new keeper cannot read the record yet; the counter is
# defined on rb only then, so it is installed before the record is read.
stop_etcd();
restart_keeper($rb);
$rb->safe_psql('postgres', "SELECT idgen_create_generator('tickets', 'zone:7=3 worker:16 seq:40')");
# installed (the keeper knows the name) but not usable: the lease is not current
my $installed = '';
wait_until(sub {
	$installed = error_of($rb, "SELECT idgen_next('tickets')");
	return $installed =~ /^55P03: this server.s lease/;
});
like($installed, qr/^55P03: this server's lease on node id $r_id in etcd is not current/,
	'with etcd down, the restarted keeper installs the counter but refuses to issue');
start_etcd();
wait_until_generating($rb);
cmp_ok($rb->safe_psql('postgres', "SELECT min(idgen_next('tickets')) FROM generate_series(1, 1000)"),
	'>', $ra_tickets,
	"a counter installed before the restarted keeper read the record resumes above ra's values");
my $rb_log = slurp_file($rb->logfile);
unlike($rb_log, qr/claimed node id \d+ in etcd.*claimed node id \d+ in etcd/s,
	'(the restarted keeper renewed the lease it found, and claimed nothing)');
$rb->stop('fast');

# ---- A keeper that stalls: the generators enforce the lease's deadline ----
# stall's clock runs 30 s ahead and its reservation is 60 s long, so a
# stopped keeper leaves its generators reserved IDs to run on, and
# sessions keep calling; the lease is renewed by nobody, and etcd frees
# the node id after the TTL.  The generators must stop before that by
# themselves.  Then another server, on the real clock, claims the id: its
# IDs lie above every ID stall issued, through the etcd record alone.
# Once stall's keeper runs again, stall refuses: the id is taken.
my $stall = lease_node('stall', 41, extra => "idgen.reservation = 60s\n");
my (undef, $start_stall) = fake_clock($stall, '+30');
$start_stall->('start');
wait_for_keeper($stall);
wait_for_lease($stall, 'held');
wait_until_generating($stall);
$stall->safe_psql('postgres', 'CREATE TABLE issued (id bigint)');
my $stall_keeper = keeper_pid($stall);
kill 'STOP', $stall_keeper;
my $stalled = '';
my $stalled_rounds = 0;
wait_until(sub {
	$stalled = error_of($stall,
		'INSERT INTO issued SELECT snowflake_id() FROM generate_series(1, 1000)');
	return 1 if $stalled ne 'no error';
	$stalled_rounds++;
	return 0;
});
like($stalled, qr/^55P03: this server's lease on its node id in etcd was not renewed in time/,
	'with its keeper stopped, the generators stop at the lease deadline by themselves');
cmp_ok($stalled_rounds, '>', 0, "($stalled_rounds rounds of 1,000 IDs were issued while the keeper was stopped)");
ok(wait_for_key_gone('/idgen/node/41'), 'and etcd then drops the node key');
like(error_of($stall, "SELECT idgen_uuidv7()"), qr/^55P03: this server's lease on its node id in etcd was not renewed in time/,
	'every generator that embeds the node id refuses');

my $taker = lease_node('taker', 41, max_lead => '5min');
$taker->start;
wait_for_keeper($taker);
wait_for_lease($taker, 'held');
wait_until_generating($taker);
my $stall_max = $stall->safe_psql('postgres', 'SELECT max(id) FROM issued');
is($taker->safe_psql('postgres', qq{
	SELECT min(id) > $stall_max, bool_and(snowflake_id_node(id) = 41)
	  FROM (SELECT snowflake_id() AS id FROM generate_series(1, 100000)) s}),
	't|t', "the next holder of node id 41 issues above every ID the stalled server issued, although its clock is 30 s behind");

kill 'CONT', $stall_keeper;
$stall->poll_query_until('postgres',
	"SELECT lease_state = 'taken' FROM idgen_lease_status()")
  or die 'the stalled keeper did not find its node id taken';
like(error_of($stall, 'SELECT snowflake_id()'), qr/^55000: node id 41 is held by another server in etcd/,
	'once its keeper runs again, the stalled server refuses: node id 41 is taken');
like(etcd_get('/idgen/node/41'), qr/"port": ${\ $taker->port}\b/,
	'and the key still names the new holder');
$taker->stop('fast');
$stall->stop('fast');

# ---- A crash restart finds its own lease in etcd ----
# The keeper killed with SIGKILL makes the postmaster restart the server in
# place (same host name, port and system identifier); the lease of its
# previous life is never revoked and holds the node id until it expires.
# That passes by itself: 55P03, not 55000.  A long TTL so that the test sees
# the "taken" state before the lease expires.
my $crashy = lease_node('crashy', '43', ttl => 60,
	extra => "restart_after_crash = on\n");
$crashy->start;
wait_for_keeper($crashy);
wait_for_lease($crashy, 'held');
kill 'KILL', keeper_pid($crashy);
wait_after_crash($crashy, "SELECT lease_state = 'taken' FROM idgen_lease_status()")
  or die 'after the crash restart, the keeper did not find its node id taken by its previous life';
my ($cret, $cout, $cerr) = $crashy->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT snowflake_id()", timeout => scaled(60));
like($cerr, qr/ERROR:\s+55P03: node id 43 is still held in etcd by this server's lease from before a restart/,
	'held by this server before a crash restart: 55P03, it passes within the TTL');
like($cerr, qr/this server, before a restart/,
	'and the detail says the holder is this server before its restart');
$crashy->stop('immediate');

# ---- A lease that only looks like ours ----
# Another live server with this server's host name, port and system
# identifier (a copy made from a base backup, given the same node id)
# holds the node id and renews it.  At first that looks like our own
# lease from before a restart (55P03); a lease of ours would have expired
# within the TTL, so once it has held twice the TTL it is another
# server's: 55000, which someone has to stop or renumber.
# A TTL of 15 s (longer where PG_TEST_TIMEOUT_DEFAULT is) leaves 30 s for the server to start and answer while
# the lease still looks like ours, on a loaded machine too.
my $alike = lease_node('alike', '44', ttl => List::Util::max(15, int(scaled(15))));
my ($controldata) = run_command([ 'pg_controldata', $alike->data_dir ]);
my ($sysid) = $controldata =~ /Database system identifier:\s+(\d+)/
  or die "no system identifier in: $controldata";
my ($other_lease) = etcdctl('lease', 'grant', '600') =~ /lease ([0-9a-f]+) granted/
  or die 'etcd granted no lease';
etcdctl('put', "--lease=$other_lease", '/idgen/node/44',
	sprintf('{"host": "%s", "port": %d, "system_identifier": "%s", "since": "a copy of this server"}',
		hostname(), $alike->port, $sysid));
$alike->start;
wait_for_lease($alike, 'taken');
like(error_of($alike, 'SELECT snowflake_id()'),
	qr/^55P03: node id 44 is still held in etcd by this server's lease from before a restart/,
	'a holder that looks like this server before a restart: 55P03 at first');
my $other_server;
wait_until(sub {
	$other_server = error_of($alike, 'SELECT snowflake_id()');
	return $other_server =~ /^55000/;
});
like($other_server, qr/^55000: node id 44 is held by another server in etcd/,
	'once it has held the node id for twice the TTL, it is another server: 55000');
my $alike_detail = detail_of($alike, 'SELECT snowflake_id()');
like($alike_detail,
	qr/like this server, but holding the node id for over twice "idgen.lease_ttl": another server/,
	'and the detail says why it is taken for another server');
unlike($alike_detail, qr/before a restart/,
	'and no longer that it is this server before a restart');
etcdctl('lease', 'revoke', $other_lease);
$alike->stop('fast');

done_testing();
