# Under idgen.lease_endpoints, a server issues IDs that embed its node id
# only once it holds a lease on that id in etcd.  Here etcd is never
# reached (the endpoint is a closed port on loopback), so the claim never
# succeeds: every generator that embeds the node id refuses with 55P03,
# "not claimed yet", naming the last etcd error to pg_monitor members only,
# while generators without the node id go on.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# a loopback port nothing listens on: bind one, note it, close it
use IO::Socket::INET;
my $probe = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0)
  or die "cannot bind a loopback port: $!";
my $closed_port = $probe->sockport;
close $probe;

my $node = idgen_node('unclaimed', conf => qq{
idgen.node_id = 12
idgen.lease_endpoints = 'http://127.0.0.1:$closed_port'
});
$node->start;
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_extension WHERE extname = 'idgen'")
  or die 'the keeper did not create the extension';
ok($node->poll_query_until('postgres', q{
	SELECT lease_state = 'claiming' AND lease_error IS NOT NULL FROM idgen_lease_status()}),
	'the keeper tries to claim the node id and records why it cannot');
keeper_ready($node)
  or die 'the keeper did not become ready';
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('with_node', 'time:41 tag:3=1 node:10 seq:9');
	SELECT idgen_create_generator('no_node', 'time:41 tag:13=77 seq:9');
	CREATE ROLE regress_app LOGIN;
	SELECT idgen_grant_generator('with_node', 'regress_app');
});

for my $call ('snowflake_id()', 'snowflake_id_batch(3)', 'idgen_uuidv7()',
	'idgen_flake128()', q{idgen_next('with_node')}, q{idgen_next_batch('with_node', 3)})
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT $call", timeout => scaled(60));
	like($err, qr/ERROR:\s+55P03: this server has not claimed its node id in etcd yet/,
		"$call: 55P03, not claimed yet");
	like($err, qr/DETAIL:\s+.*Last etcd error: \S/,
		"$call: a superuser is told the last etcd error");
}
my ($ret, $out, $err) = $node->psql('postgres',
	"SET ROLE regress_app;\n\\set VERBOSITY verbose\nSELECT idgen_next('with_node')", timeout => scaled(60));
like($err, qr/ERROR:\s+55P03: this server has not claimed its node id in etcd yet/,
	'a role outside pg_monitor gets the same 55P03');
unlike($err, qr/Last etcd error/, 'but not the etcd error, only where to find it');
like($err, qr/Members of pg_monitor see the last etcd error/, '(which it is told)');

is($node->safe_psql('postgres', q{
	SELECT instagram_id_shard(instagram_id(3)) = 3, idgen_next('no_node') > 0}),
	't|t', 'generators without the node id issue all the same');
is($node->safe_psql('postgres', q{SELECT snowflake_issued, lease_state FROM idgen_status(), idgen_lease_status()}),
	'0|claiming', 'no snowflake ID was issued; still claiming');

# The keeper, which claims the node id, fails for a reason someone has to
# fix: every generator says 55000 then, the ones that embed the node id too,
# although etcd itself is only out of reach.
$node->append_conf('postgresql.conf', "idgen.database = 'no_such_database'\n");
$node->restart;
$node->poll_query_until('postgres', q{
	SELECT keeper_state = 'failed' FROM idgen_status()})
  or die 'the keeper did not fail on a missing database';
like(error_of($node, 'SELECT snowflake_id()'),
	qr/^55000: this server has not claimed its node id in etcd yet/,
	'keeper failed for a reason to fix: snowflake_id() says 55000, not 55P03');
like(error_of($node, 'SELECT instagram_id(3)'), qr/^55000: /,
	'as instagram_id() does');

$node->stop;

# With idgen.node_id = 'auto' the keeper waits for its first claim before it
# reserves anything, in state "starting" with no failure of its own.  A
# wrong etcd setting (a password file that does not exist, read before
# etcd is asked) makes that wait one for someone to fix: every generator
# says 55000, those that wait for the keeper as well as those that embed
# the node id.
my $auto = idgen_node('auto_wrong', conf => qq{
idgen.node_id = 'auto'
idgen.lease_endpoints = 'http://127.0.0.1:$closed_port'
idgen.lease_user = 'idgen'
idgen.lease_password_file = '/nonexistent/pw'
});
$auto->start;
$auto->safe_psql('postgres', 'CREATE EXTENSION idgen');
ok($auto->poll_query_until('postgres', q{
	SELECT lease_error LIKE '%idgen.lease_password_file%' FROM idgen_lease_status()}),
	"'auto' with a password file that does not exist: the lease's error names it");
like(error_of($auto, 'SELECT snowflake_id()'),
	qr/^55000: this server has not claimed its node id in etcd yet/,
	'snowflake_id() says 55000');
like(error_of($auto, 'SELECT instagram_id(3)'),
	qr/^55000: no durable ID reservation is available/,
	'instagram_id(), waiting for the keeper, says 55000 too, not 55P03');
like(detail_of($auto, 'SELECT instagram_id(3)'),
	qr/waits to claim a node id in etcd .* and etcd refuses a setting; idgen_lease_status\(\) and the server log say which/,
	'and its detail says what the keeper waits for, and where to read why');
$auto->stop;
done_testing();
