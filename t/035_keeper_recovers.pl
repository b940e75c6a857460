# The keeper rides out an error that passes by itself, in the same
# process, as PostgreSQL's own long-lived processes do: a query of its
# cancelled (pg_cancel_backend()), idle or while it waits for a lock, is
# recovered from without a restart, so the published reservation and the
# node-id lease stay, no caller gets an error from the cancel, and
# idgen_status() tells the error until a whole round has gone by, and a
# request for shard floors or releases taken before the error is looked
# at again.  (An error someone has to fix still makes its state
# "failed": t/009.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# (%e: the log shows the SQLSTATE of the keeper's errors)
my $node = idgen_node('recovers', conf => q{
idgen.node_id = 3
log_line_prefix = '%m [%p] %e %q%a '
});
$node->start;
wait_for_keeper($node);
my $pid = keeper_pid($node);
my $ids = 'SELECT count(DISTINCT id) FROM (SELECT snowflake_id() AS id FROM generate_series(1, 10000)) s';

# --- 1. cancelled while idle -------------------------------------------------
my $offset = -s $node->logfile;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
ok(wait_until(sub { substr(slurp_file($node->logfile), $offset) =~ /idgen keeper: recovering from the error above/ }),
	'a keeper cancelled while idle recovers from the error');
like(substr(slurp_file($node->logfile), $offset), qr/ 57014 ERROR:\s+canceling statement due to user request/,
	'which was the cancel (57014)');
ok(keeper_ready($node), 'the keeper is ready');
is(keeper_pid($node), $pid, 'in the same process: it was not restarted');
is($node->safe_psql('postgres', $ids), '10000', 'and IDs are issued');

# --- 2. cancelled in a transaction, waiting for a lock ---------------------------
# A session holds idgen_generator, which each load of the keeper reads,
# in ACCESS EXCLUSIVE mode; the keeper waits for it, is cancelled, and
# waits again after its pause, until the session lets go.
my $holder = psql_background($node, 'postgres',
	'BEGIN; LOCK TABLE idgen_generator IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600)',
	application_name => 'lock_holder');
ok($node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_locks WHERE pid = $pid AND NOT granted"),
	'the keeper waits for the lock');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
ok($node->poll_query_until('postgres', q{
		SELECT keeper_state = 'ready'
		   AND keeper_message ~ 'last round failed and is retried \(57014: canceling statement due to user request\)'
		  FROM idgen_status()}),
	'cancelled in a transaction: the state stays ready, and idgen_status() tells the error');
is(keeper_pid($node), $pid, 'in the same process');
# The keeper extends the reservation in the rounds that the lock holds up,
# so callers run out of it after "idgen.reservation" (1 s): they are told
# to retry (55P03), not that someone has to fix something (55000).
ok($node->poll_query_until('postgres', 'SELECT reserved_until < now() FROM idgen_status()'),
	'the reservation runs out while the lock holds the keeper up');
like(error_of($node, 'SELECT snowflake_id() FROM generate_series(1, 100000)'),
	qr/^55P03: no durable ID reservation is available/,
	'callers that outrun the reservation meanwhile are told to retry (55P03)');
ok($node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_locks WHERE pid = $pid AND NOT granted"),
	'after its pause the keeper waits for the lock again');
$node->safe_psql('postgres',
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lock_holder'");
$holder->{h}->finish;
ok($node->poll_query_until('postgres',
		q{SELECT keeper_state = 'ready' AND keeper_message = 'the reservation is durable' FROM idgen_status()}),
	'once the lock is free and a round has gone by, idgen_status() no longer tells the error');
is(keeper_pid($node), $pid, 'still the same process');
is($node->safe_psql('postgres', $ids), '10000', 'and IDs are issued');

$node->stop;

# --- 3. a shard release across the recovery -----------------------------------
# The keeper takes a request for shard floors and releases before it
# writes them; cancelled while it waits to write, it must look at the
# request again, or the caller waits out max_wait and the release is not
# durable.  A session holds idgen_shard_floor meanwhile.
my $floors = idgen_node('floors', conf => q{
idgen.node_id = 4
idgen.max_wait = '60s'
});
$floors->start;
wait_for_keeper($floors);
my $fpid = keeper_pid($floors);
$floors->safe_psql('postgres', 'SELECT instagram_id(5)');
my $table_holder = psql_background($floors, 'postgres',
	'BEGIN; LOCK TABLE idgen_shard_floor IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600)',
	application_name => 'lock_holder');
ok($floors->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		 WHERE a.application_name = 'lock_holder' AND l.granted AND l.mode = 'AccessExclusiveLock'}),
	'a session holds idgen_shard_floor');
my $release = psql_background($floors, 'postgres', 'SELECT instagram_id_release(5) > 0',
	timeout => scaled(120));
ok($floors->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_locks WHERE pid = $fpid AND NOT granted"),
	'the keeper waits to write the release');
$offset = -s $floors->logfile;
$floors->safe_psql('postgres', "SELECT pg_cancel_backend($fpid)");
ok(wait_until(sub { substr(slurp_file($floors->logfile), $offset) =~ /idgen keeper: recovering from the error above/ }),
	'cancelled there, the keeper recovers');
$floors->safe_psql('postgres',
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lock_holder'");
$table_holder->{h}->finish;
$release->{h}->finish;
is($release->{out}, "t\n",
	'the release waiting meanwhile completes once the table is free: the keeper took the request up again');
unlike($release->{err}, qr/ERROR/, '(without an error)');
is(keeper_pid($floors), $fpid, 'in the same process');
$floors->restart;
wait_for_keeper($floors);
like(error_of($floors, 'SELECT instagram_id(5)'), qr/^\w{5}: shard 5 is not owned by this server/,
	'the release is durable: after a restart the shard is still released here');
$floors->stop;
done_testing();
