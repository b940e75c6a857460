# The keeper's LWLock is named in pg_stat_activity: a session that waits
# for it, because another holds it, shows wait_event_type "LWLock" and
# wait_event "idgen" (the tranche shmem.c requests), not "extension" (an
# LWLock of a tranche no backend knows by name) and no wait at all (a
# spinlock).  instagram_id_advance() posts its floor under the lock
# exclusively; idgen_status() reads the keeper's state and message under
# it shared.  Both go on once it is free.
#
# The lock is held by idgen_test_hold_keeper_lock(ms), which only a test
# build has ("make WITH_TEST_HOOKS=yes"), and which no install script
# declares: the test creates it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# idgen.max_wait at its most: instagram_id_advance()'s wait for the keeper
# begins before it waits for the lock, and must outlast the hold.
my $node = idgen_node('main',
	conf => "idgen.node_id = 1\nidgen.shards = '0-7'\nidgen.max_wait = '60s'\n");
$node->start;
wait_for_keeper($node);
need_test_clock($node);
$node->safe_psql('postgres', q{
	CREATE FUNCTION idgen_test_hold_keeper_lock(int) RETURNS void
	LANGUAGE C STRICT AS '$libdir/idgen', 'idgen_test_hold_keeper_lock'});

# The ID to advance to, taken before the lock is held: a generator call
# under the hold waits for the keeper, which waits for the lock, once the
# published reservation no longer covers the clock; the advance would then
# start only after the hold and never be seen waiting.
my $id = $node->safe_psql('postgres', 'SELECT instagram_id(5)');

# Long enough for the others to start and be seen, short enough to wait
# for, and within idgen.max_wait: the holder cannot be cancelled
# (LWLockAcquire holds interrupts).
my $hold_ms = int(scaled(9) * 1000);
$hold_ms = 40000 if $hold_ms > 40000;
my $holder = psql_background($node, 'postgres',
	"SELECT idgen_test_hold_keeper_lock($hold_ms)",
	application_name => 'holder');
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'holder' AND state = 'active'"),
	'a session holds the keeper\'s LWLock');

my $advance = psql_background($node, 'postgres',
	"SELECT count(*) FROM (SELECT instagram_id_advance(5, $id)) s",
	application_name => 'advance', on_error_stop => 1);
my $status = psql_background($node, 'postgres',
	'SELECT keeper_state FROM idgen_status()',
	application_name => 'status', on_error_stop => 1);

foreach my $who ('advance', 'status')
{
	ok($node->poll_query_until('postgres',
			"SELECT wait_event_type || ':' || wait_event FROM pg_stat_activity WHERE application_name = '$who'",
			'LWLock:idgen'),
		"$who waits for it as wait_event \"idgen\" of type \"LWLock\"");
}

# and all of them finish once it is free
$_->{h}->finish for ($holder, $advance, $status);
is($holder->{err}, '', 'the holder let go without an error');
is($advance->{out}, "1\n", 'instagram_id_advance() went on') or diag $advance->{err};
is($status->{out}, "ready\n", 'idgen_status() went on') or diag $status->{err};

$node->stop;
done_testing();
