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
done_testing();
