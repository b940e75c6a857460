# A counter generator has no clock to fall back on: a value is handed out
# only below the keeper's durable reservation.  When the keeper cannot make
# a new reservation durable (here a synchronous standby that is not there,
# with synchronous_commit off for everyone else), a counter that has used
# up what it holds waits max_wait and fails closed with 55000; it never
# hands out a value beyond the reservation.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = PostgreSQL::Test::Cluster->new('counter_closed');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'idgen'
idgen.node_id = 4
wal_level = replica
max_wal_senders = 2
synchronous_commit = off
});
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('tickets', 'seq:40');
	SELECT idgen_next('tickets')});

# From now on every durable commit of the keeper waits for a standby that
# never comes.
$node->append_conf('postgresql.conf', "synchronous_standby_names = 'nobody'\n");
$node->reload;
$node->poll_query_until('postgres', 'SHOW synchronous_standby_names', 'nobody')
  or die 'synchronous_standby_names was not applied';

# More values than any reservation holds (a step never exceeds 2^20).
my ($ret, $out, $err) = $node->psql('postgres', q{
	\set VERBOSITY verbose
	CREATE TABLE drawn AS SELECT idgen_next('tickets') AS v FROM generate_series(1, 3000000)},
	timeout => 120);
like($err, qr/ERROR:\s+55000: no durable reservation is available for counter generator "tickets"/,
	'a counter that has used up its reservation fails closed with 55000');
like($err, qr/HINT:\s+idgen hands out no counter value that is not durably reserved/,
	'the hint says why');
is($node->safe_psql('postgres', q{
	SELECT counter_value <= counter_reserved FROM idgen_generators WHERE name = 'tickets'}),
	't', 'no value was handed out beyond the durable reservation');
like(error_of($node, q{SELECT idgen_next('tickets')}),
	qr/^55000: no durable reservation is available for counter generator "tickets"/,
	'and the next call fails the same way');

$node->stop;
done_testing();
