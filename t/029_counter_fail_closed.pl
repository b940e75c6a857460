# A counter generator has no clock to fall back on: no transaction commits
# a value beyond the keeper's durable reservation.  A caller may run up to
# a lead (at most 2^20 values) beyond it, pending the end of its
# statement.  When the keeper cannot make a new reservation durable (here
# a synchronous standby that is not there, with synchronous_commit off for
# everyone else), a counter that has used up what it holds and its lead
# waits max_wait and fails closed with 55P03, and so does the end of a
# statement whose values are not durable.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('counter_closed', conf => q{
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
set_and_reload($node, synchronous_standby_names => 'nobody');

# More values than the reservation and the lead hold (prefetch 1,000,
# lead 2^20).
my ($ret, $out, $err) = $node->psql('postgres', q{
	\set VERBOSITY verbose
	CREATE TABLE drawn AS SELECT idgen_next('tickets') AS v FROM generate_series(1, 3000000)},
	timeout => scaled(120));
like($err, qr/ERROR:\s+55P03: no durable reservation is available for counter generator "tickets"/,
	'a counter that has used up its reservation fails closed with 55P03');
like($err, qr/HINT:\s+idgen hands out no counter value that is not durably reserved/,
	'the hint says why');
is($node->safe_psql('postgres', q{
	SELECT counter_value - counter_reserved < 1048576
	  FROM idgen_generator_status WHERE name = 'tickets'}),
	't', 'no value was handed out beyond the lead (2^20 values past the reservation)');
is($node->psql('postgres', 'SELECT 1 FROM drawn'), 3,
	'and the statement that drew them rolled back');
like(error_of($node, q{SELECT idgen_next('tickets')}),
	qr/^55P03: no durable reservation is available for counter generator "tickets"/,
	'and the next call fails the same way');


# A statement that takes values beyond the reservation within the lead
# gets them, but cannot end with them: a dropped and re-created counter
# would start a new reservation, so a fresh one is used.
set_and_reload($node, synchronous_standby_names => '');
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('tickets2', 'tag:4=5 seq:40');
	CREATE TABLE kept (v bigint)});
$node->poll_query_until('postgres',
	"SELECT counter_reserved = 1000 FROM idgen_generator_status WHERE name = 'tickets2'")
  or die 'the keeper did not reserve tickets2';
set_and_reload($node, synchronous_standby_names => 'nobody');
($ret, $out, $err) = $node->psql('postgres', q{
	\set VERBOSITY verbose
	INSERT INTO kept SELECT idgen_next('tickets2') FROM generate_series(1, 5000)},
	timeout => scaled(120));
like($err, qr/ERROR:\s+55P03: no durable reservation is available for counter generator "tickets2"\nDETAIL:\s+This session drew values of it beyond the durable reservation, and the keeper has not reserved them within idgen\.max_wait; the statement fails\./,
	'a statement holding values beyond the reservation fails closed with 55P03 at its end');
is($node->safe_psql('postgres', 'SELECT count(*) FROM kept'), '0',
	'and no row holds them');

$node->stop('immediate');
done_testing();
