# An etcd that is away for a moment costs no caller an error.  Under a
# node-id lease the keeper has etcd record each reservation before it
# publishes it; when etcd does not answer, it publishes nothing new and
# tries again after its pause, while callers go on within the reservation
# published before and the lease, whose deadline still holds.  (Until
# now a record that etcd did not take stopped generation under the node
# id at once.)  Here the reservation is 8 s, so the keeper extends it once
# 4 s are left; etcd is stopped until such an extension has failed, then
# started again, and a caller draws all along.  The lease's TTL of 24 s
# (renewed every 8 s, its deadline 18 s after a renewal) outlasts that.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenEtcd;

# (without etcd this skips, or fails with IDGEN_ETCD_REQUIRED: IdgenEtcd)
start_etcd();
my $node = lease_node('blip', 21, ttl => 24, extra => "idgen.reservation = 8s\n");
$node->start;
wait_for_keeper($node);
wait_for_lease($node, 'held');
wait_until_generating($node);

my ($calls, @errors) = (0);
my $draw = sub {
	my ($ret, $out, $err) = $node->psql('postgres', 'SELECT snowflake_id() > 0');
	$calls++;
	push @errors, $err if $ret != 0 || $out ne 't';
};

my $offset = -s $node->logfile;
stop_etcd();
ok(wait_until(sub {
	$draw->();
	return substr(slurp_file($node->logfile), $offset) =~ /could not record the reservation in etcd/;
}), 'with etcd stopped, the keeper cannot record its next reservation');
like(substr(slurp_file($node->logfile), $offset), qr/idgen keeper: recovering from the error above/,
	'and recovers from that in the same process');
$draw->();
start_etcd();
ok(wait_until(sub {
	$draw->();
	my $state = $node->safe_psql('postgres', q{
		SELECT keeper_message = 'the reservation is durable' AND reserved_until > now() + interval '5 s'
		  FROM idgen_status()});
	return $state eq 't';
}), 'with etcd back, the keeper records and publishes the next reservation');
is(scalar(@errors), 0, "no caller got an error, in $calls calls")
  or diag(join("\n", @errors[ 0 .. ($#errors < 4 ? $#errors : 4) ]));
is($node->safe_psql('postgres', 'SELECT lease_state FROM idgen_lease_status()'), 'held',
	'the lease was held all along');

$node->stop;

# A slow etcd: a write of the record that etcd applies but whose answer
# never comes (a proxy in front of etcd passes the write on and drops the
# answer).  The keeper's next write finds the record changed behind its
# back, and reads it: it is the keeper's own write, tagged with its lease,
# system identifier and process, so it takes it in as recorded, quietly.
# Taken as a previous holder's, it would raise every generator that embeds
# the node id above it (a counter would skip its values), and say that the
# record "holds more than this server knew".
my $proxy = start_etcd_proxy();
my $slow = lease_node('slow', 22, ttl => 24,
	extra => "idgen.lease_endpoints = '$proxy'\nidgen.reservation = 4s\n");
$slow->start;
wait_for_keeper($slow);
wait_for_lease($slow, 'held');
$slow->safe_psql('postgres',
	"SELECT idgen_create_generator('orders', 'worker:16 seq:40', prefetch => 1000)");
wait_until_generating($slow);
$slow->safe_psql('postgres', q{
	CREATE TABLE drawn (id bigint NOT NULL);
	INSERT INTO drawn SELECT idgen_next('orders') FROM generate_series(1, 50);});
my $lease_id = $slow->safe_psql('postgres', 'SELECT lease_id FROM idgen_lease_status()');
# (the counter's reservation recorded, so that the next write is for time:
# the keeper extends the time reservation every 2 s)
sleep 1;

$offset = -s $slow->logfile;
drop_next_record_answer();
ok(wait_until(sub {
	substr(slurp_file($slow->logfile), $offset) =~ /could not record the reservation in etcd/;
}), 'a write of the record whose answer never came fails in the keeper');
ok(wait_until(sub {
	$slow->safe_psql('postgres', q{
		SELECT keeper_message = 'the reservation is durable' FROM idgen_status()}) eq 't';
}), 'the keeper records and publishes again');
$slow->safe_psql('postgres',
	q{INSERT INTO drawn SELECT idgen_next('orders') FROM generate_series(1, 50)});
my $log = substr(slurp_file($slow->logfile), $offset);
unlike($log, qr/holds more than this server knew/,
	'the keeper takes its own unanswered write for its own, not for a previous holder\'s');
unlike($log, qr/is behind what this server reserved/, 'and warns of nothing');
is($slow->safe_psql('postgres', q{
	SELECT count(*) = count(DISTINCT id) AND max(id) - min(id) = count(*) - 1 FROM drawn}),
	't', 'the counter that embeds the node id skipped no value');
is($slow->safe_psql('postgres', 'SELECT lease_state, lease_id FROM idgen_lease_status()'),
	"held|$lease_id", 'the lease was held all along');
$slow->stop;

done_testing();
