# A named generator is usable from the first call after the transaction
# that created it commits, whatever the keeper is doing.
#
# A call for a name not loaded yet asks the keeper to load the definitions
# and waits for it.  Here another session keeps asking the keeper to load
# (each call for an unknown name asks for a load), and each new definition
# commits while a load that began before it is running: that load must not
# answer the call.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IPC::Run;

my $generators = 10;
my $node = idgen_node('lookup', conf => qq{
idgen.node_id = 1
idgen.max_generators = @{[ $generators + 10 ]}
});
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres', 'CREATE TABLE stop_loading (done boolean)');

# the session that keeps the keeper loading, until told to stop
my $bg = psql_background($node, 'postgres', q{
DO $$
DECLARE
	unknown int := 0;
BEGIN
	WHILE NOT EXISTS (SELECT FROM stop_loading) LOOP
		BEGIN
			PERFORM idgen_next('no_such_generator');
		EXCEPTION WHEN undefined_object THEN
			unknown := unknown + 1;
		END;
	END LOOP;
	RAISE NOTICE 'unknown: %', unknown;
END $$}, timeout => $PostgreSQL::Test::Utils::timeout_default);
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE state = 'active' AND query LIKE '%no_such_generator%'
	   AND pid <> pg_backend_pid()}),
	'a session keeps asking the keeper to load definitions');

# Each definition is committed while a load that began before the commit
# waits for the table (locked by the creating transaction until it
# commits: the only process that waits for it is the keeper, which took
# its snapshot first), then used at once, with no round trip to the client
# in between.  That load finishes just after the commit and has not seen
# the new row.  (A constant field tells the generators' IDs apart, as
# creation requires.)
my ($ret, $out, $err) = $node->psql('postgres', qq{
DO \$\$
DECLARE
	issued int := 0;
BEGIN
	FOR i IN 1 .. $generators LOOP
		LOCK TABLE idgen_generator IN ACCESS EXCLUSIVE MODE;
		PERFORM idgen_create_generator('race_' || i, format('time:41 tag:7=%s node:10 seq:5', i));
		FOR w IN 1 .. 3000 LOOP
			EXIT WHEN EXISTS (SELECT FROM pg_locks
			                   WHERE relation = 'idgen_generator'::regclass AND NOT granted);
			IF w = 3000 THEN
				RAISE EXCEPTION 'no keeper load waited for idgen_generator';
			END IF;
			PERFORM pg_sleep(0.01);
		END LOOP;
		COMMIT;
		IF idgen_next('race_' || i) > 0 THEN
			issued := issued + 1;
		END IF;
	END LOOP;
	RAISE NOTICE 'issued: %', issued;
END \$\$});
unlike($err, qr/ERROR/, 'no call for a just-created generator failed');
like($err, qr/NOTICE:\s+issued: $generators\b/,
	"each of the $generators generators issued an ID at its first call");

# in the creating transaction itself no load can see it: said at once
like(error_of($node, q{
	BEGIN;
	SELECT idgen_create_generator('uncommitted', 'time:41 tag:7=120 node:10 seq:5');
	SELECT idgen_next('uncommitted');}),
	qr/^55000: generator "uncommitted" is not usable before the transaction that creates it commits/,
	'a generator used in the transaction that creates it: 55000');
$node->safe_psql('postgres',
	q{SELECT idgen_create_generator('uncommitted', 'time:41 tag:7=120 node:10 seq:5')});
is($node->safe_psql('postgres', q{SELECT idgen_next('uncommitted') > 0}),
	't', 'and usable once that transaction commits');

$node->safe_psql('postgres', 'INSERT INTO stop_loading VALUES (true)');
$bg->{h}->finish;
like($bg->{err}, qr/NOTICE:\s+unknown: [1-9]\d*/,
	'the unknown name was refused with 42704 meanwhile');

# --- a name this server still runs is not reused for another definition ------
# Dropping the extension in idgen.database drops the definitions' table, not
# the generators in shared memory (IDs of them exist).
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('kept', 'time:41 tag:7=121 node:10 seq:5');
	SELECT idgen_next('kept') > 0;
	SELECT idgen_create_generator('gone', 'time:41 tag:7=124 node:10 seq:5');
	SELECT idgen_next('gone') > 0;
	SELECT idgen_drop_generator('gone', force => true);});
$node->safe_psql('postgres', 'DROP EXTENSION idgen CASCADE');
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_proc WHERE proname = 'idgen_create_generator'"),
	'the keeper re-creates the extension');
like(error_of($node,
		q{SELECT idgen_create_generator('kept', 'time:41 tag:7=122 node:10 seq:5')}),
	qr/^42710: generator "kept" already exists on this server with another definition/,
	're-creating a running name with another layout: 42710');
is(error_of($node,
		q{SELECT idgen_create_generator('kept', 'time:41 tag:7=121 node:10 seq:5')}),
	'no error', 'with its own definition it is accepted');
$node->safe_psql('postgres',
	q{SELECT idgen_create_generator('gone', 'time:41 tag:7=124 node:10 seq:5')});
is(error_of($node, q{SELECT idgen_next('gone')}), 'no error',
	'a dropped name whose row went with the extension works from the first call after its re-creation');

# --- a keeper that loads nothing: 55000, not "does not exist" ---------------
# A changed epoch stops the keeper before it loads any definition.
$node->safe_psql('postgres',
	q{SELECT idgen_create_generator('late', 'time:41 tag:7=123 node:10 seq:5')});
$node->append_conf('postgresql.conf', "idgen.epoch = '2025-01-01 00:00:00+00'\n");
$node->restart;
ok($node->poll_query_until('postgres',
		"SELECT keeper_state = 'epoch changed' FROM idgen_status()"),
	'the keeper refuses the changed epoch');
like(error_of($node, q{SELECT idgen_next('late')}),
	qr/^55000: the definition of generator "late" is not loaded/,
	'a generator the keeper has not loaded: 55000, not 42704');
$node->append_conf('postgresql.conf', "idgen.epoch = '2024-01-01 00:00:00+00'\n");
$node->restart;
wait_for_keeper($node);
is($node->safe_psql('postgres', q{SELECT idgen_next('late') > 0}), 't',
	'with the epoch restored it issues');

# A keeper that is only late (stopped here) is worth waiting for: the
# lookup of a name it has not loaded fails with 55P03, and the same call
# works once it has.
my $keeper = keeper_pid($node);
kill 'STOP', $keeper;
$node->safe_psql('postgres',
	q{SELECT idgen_create_generator('later', 'time:41 tag:7=125 node:10 seq:5')});
like(error_of($node, q{SELECT idgen_next('later')}),
	qr/^55P03: the definition of generator "later" is not loaded/,
	'a keeper that is late to load: 55P03, safe to retry');
kill 'CONT', $keeper;
is($node->safe_psql('postgres', q{SELECT idgen_next('later') > 0}), 't',
	'and the retry issues once the keeper has loaded it');

# --- the durable state reset while running, as the hint says -----------------
# A recorded epoch changed under the running keeper is refused; resetting
# both sequences makes it restore them from shared memory, and be ready.
$node->safe_psql('postgres', "SELECT setval('idgen_epoch', 1000)");
ok($node->poll_query_until('postgres',
		"SELECT keeper_state = 'epoch changed' FROM idgen_status()"),
	'a recorded epoch changed while running is refused');
$node->safe_psql('postgres',
	'ALTER SEQUENCE idgen_epoch RESTART; ALTER SEQUENCE idgen_hwm RESTART');
ok($node->poll_query_until('postgres', q{
	SELECT keeper_state = 'ready'
	       AND pg_sequence_last_value('idgen_epoch') = extract(epoch FROM epoch) * 1000
	       AND pg_sequence_last_value('idgen_hwm') >= extract(epoch FROM reserved_until) * 1000
	  FROM idgen_status()}),
	'after resetting both the keeper restores them and is ready again');
is($node->safe_psql('postgres', q{SELECT idgen_next('late') > 0 AND snowflake_id() > 0}), 't',
	'and the generators issue');

$node->stop;
done_testing();
