# Named generators at the edges of their definitions: two creations at
# once cannot both define generators that issue the same IDs, and a time
# field that has run out refuses for good, before and after a restart,
# however far past its range the clock goes.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('edges', conf => q{
idgen.node_id = 37
});
$node->start;
wait_for_keeper($node);

# --- two creations at once --------------------------------------------------
# Session 1 creates $first in ID space "race" and keeps its transaction
# open; session 2 runs $second_sql, creating $second with the same layout
# and epoch in the same space.  Session 2 must wait for session 1 and then
# see $first, whatever its own snapshot.
# Returns session 2's stderr.
sub race
{
	my ($first, $first_layout, $second, $second_sql, $what) = @_;
	my $s1 = psql_session($node, 'postgres');
	session_safe($s1, 'BEGIN');
	is(session_run($s1, "SELECT idgen_create_generator('$first', '$first_layout', space => 'race')")->{stderr}, '',
		"session 1 created $first and holds its transaction open");

	my $s2 = psql_background($node, 'postgres', $second_sql, verbose => 1,
		timeout => $PostgreSQL::Test::Utils::timeout_default);
	ok($node->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM pg_stat_activity
		 WHERE query LIKE '%$second%' AND wait_event_type = 'Lock'
		   AND pid <> pg_backend_pid()}),
		"$what waits for session 1 to end");
	session_safe($s1, 'COMMIT');
	session_end($s1);
	$s2->{h}->finish;
	return $s2->{err};
}

like(race('race_a', 'time:41 tag:3=5 node:10 seq:9', 'race_b',
		"SELECT idgen_create_generator('race_b', 'time:41 tag:3=5 worker:10 seq:9', space => 'race')",
		'session 2'),
	qr/ERROR:\s+42710: generator "race_b" would issue the same IDs as generator "race_a" in ID space "race"/,
	'then it is refused: race_a has committed');
is($node->safe_psql('postgres',
		q{SELECT string_agg(name, ',' ORDER BY name) FROM idgen_generator WHERE name LIKE 'race%'}),
	'race_a', 'only race_a is defined');

# The same in a repeatable-read transaction, whose snapshot is older than
# the creation it waited for.
like(race('race_c', 'time:41 tag:3=6 node:10 seq:9', 'race_d',
		"BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class; SELECT idgen_create_generator('race_d', 'time:41 tag:3=6 worker:10 seq:9', space => 'race'); COMMIT;",
		'a repeatable-read creation'),
	qr/ERROR:\s+42710: generator "race_d" would issue the same IDs as generator "race_c" in ID space "race"/,
	'and is refused, though its snapshot predates race_c');

# --- a time field that has run out --------------------------------------------
# 12 bits of 3 ms ticks: 12.3 s.  Its ticks shifted past the sequence's 51
# bits would wrap once the clock passes 2^13 ticks (24.6 s), and IDs would
# start again from the bottom: for the next 12.3 s a wrapped tick lies
# within the range again, the window the checks below (and the restart
# between them) fall into.
my $epoch = $node->safe_psql('postgres', q{SELECT clock_timestamp() - interval '10 s'});
$node->safe_psql('postgres', qq{
	SELECT idgen_create_generator('brief', 'time:12 seq:51', epoch => '$epoch', unit => '3 ms')});
my $last = $node->safe_psql('postgres', q{
	SELECT max(id) FROM (SELECT idgen_next('brief') AS id FROM generate_series(1, 1000)) s});
like($last, qr/^\d+$/, 'the generator issues within its range');
ok($node->poll_query_until('postgres',
		"SELECT clock_timestamp() > '$epoch'::timestamptz + interval '25 s'"),
	'the clock is past twice the range');
like(error_of($node, q{SELECT idgen_next('brief')}),
	qr/^22008: brief ID range is exhausted/, 'the exhausted generator refuses with 22008');
like(error_of($node, q{SELECT idgen_next_batch('brief', 10)}),
	qr/^22008: brief ID range is exhausted/, 'so does a batch');

$node->stop('immediate');
$node->start;
wait_for_keeper($node);
like(error_of($node, q{SELECT idgen_next('brief')}),
	qr/^22008: brief ID range is exhausted/, 'and after an immediate restart');
like(error_of($node, q{SELECT idgen_next_batch('brief', 100000)}),
	qr/^22008: brief ID range is exhausted/, 'for batches too');

# --- DROP EXTENSION idgen keeps no generator's definition silently ----------------
# The definitions and grants live in the extension's tables in
# idgen.database: a plain DROP EXTENSION there is refused while a
# generator is defined, and loses nothing; CASCADE says what goes with it.
$node->safe_psql('postgres', q{
	CREATE ROLE keepdrawer LOGIN;
	SELECT idgen_create_generator('kept', 'time:41 zone:10=4 seq:12', space => 'zones');
	SELECT idgen_grant_generator('kept', 'keepdrawer');
	CREATE DATABASE elsewhere});
wait_until(sub {
	(undef, my $out) = $node->psql('postgres', "SET ROLE keepdrawer; SELECT idgen_next('kept') > 0");
	return $out eq 't';
}) or die 'the grant on "kept" did not take effect';
for my $drop ('DROP EXTENSION idgen', 'DROP EXTENSION idgen RESTRICT', 'DROP EXTENSION IF EXISTS idgen, plpgsql')
{
	like(error_of($node, $drop),
		qr/^2BP01: cannot drop extension idgen because \d+ named generator\(s\) are defined in it: /,
		"$drop with generators defined: 2BP01");
}
like(detail_of($node, 'DROP EXTENSION idgen'), qr/dropping it would lose them/,
	'the detail says what would be lost');
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM idgen_generator WHERE name = 'kept');
	SET ROLE keepdrawer;
	SELECT idgen_next('kept') > 0}),
	"1\nt", 'and nothing was lost: the definition is there and the grant still draws');
# in another database the extension holds no definitions: dropped as usual
$node->safe_psql('elsewhere', 'CREATE EXTENSION idgen');
is(error_of($node, 'DROP EXTENSION idgen', 'elsewhere'), 'no error',
	'in a database other than idgen.database, DROP EXTENSION idgen drops it');
# Other statements drop the extension too: DROP SCHEMA ... CASCADE of its
# schema, and DROP OWNED BY its owner.  They are held to the same rule,
# each in a transaction the test then rolls back.  The owner must not be
# the bootstrap superuser, whose objects DROP OWNED refuses to touch: the
# extension is created again by another superuser, with one generator.
my $by_dba = q{
	BEGIN;
	CREATE ROLE dba SUPERUSER;
	DROP EXTENSION idgen CASCADE;
	SET ROLE dba;
	CREATE EXTENSION idgen SCHEMA public;
	SELECT idgen_create_generator('dba_kept', 'seq:20');
	RESET ROLE;
};
like(error_of($node, "$by_dba DROP OWNED BY dba;"),
	qr/^2BP01: cannot drop extension idgen because 1 named generator\(s\) are defined in it: dba_kept/,
	'DROP OWNED BY the extension\'s owner with generators defined: 2BP01');
like(error_report_of($node, "$by_dba DROP OWNED BY dba CASCADE; SELECT 1/0;"),
	qr/NOTICE:\s+(?:\w{5}: )?drop cascades to 1 named generator\(s\): dba_kept/,
	'DROP OWNED BY ... CASCADE drops it, saying which generators go with it');
like(error_report_of($node, q{BEGIN; DROP SCHEMA public CASCADE; SELECT 1/0;}),
	qr/NOTICE:\s+(?:\w{5}: )?drop cascades to \d+ named generator\(s\): .*kept/,
	'DROP SCHEMA ... CASCADE of its schema says which generators go with it');
# The owner of the extension's schema need not be a superuser (public's
# is pg_database_owner), yet may drop what the schema holds: only a
# superuser drops generators' definitions, by cascade too.
like(error_of($node, q{
	BEGIN;
	CREATE ROLE schema_owner;
	ALTER SCHEMA public OWNER TO schema_owner;
	SET ROLE schema_owner;
	DROP SCHEMA public CASCADE;}),
	qr/^42501: permission denied to drop extension idgen with its \d+ named generator\(s\)/,
	'DROP SCHEMA ... CASCADE by its non-superuser owner: 42501');
# With no generator defined the reservation, shard floors and counters'
# states are still there: the same refusal.
like(error_of($node, q{
	BEGIN;
	SELECT count(idgen_drop_generator(name, force => true))
	  FROM idgen_generator WHERE dropped IS NULL;
	CREATE ROLE schema_owner;
	ALTER SCHEMA public OWNER TO schema_owner;
	SET ROLE schema_owner;
	DROP SCHEMA public CASCADE;}),
	qr/^42501: permission denied to drop extension idgen in database "postgres"/,
	'and with no generator defined: 42501 all the same');

# A statement's CASCADE is its own: one said by a statement nested in a
# plain DROP EXTENSION, whose error is caught, does not carry over to it.
like(error_of($node, q{
	BEGIN;
	CREATE FUNCTION catching() RETURNS event_trigger LANGUAGE plpgsql AS $$
	BEGIN
		BEGIN
			DROP TABLE no_such_table CASCADE;
		EXCEPTION WHEN undefined_table THEN
			NULL;
		END;
	END $$;
	CREATE EVENT TRIGGER catching ON ddl_command_start
		WHEN TAG IN ('DROP EXTENSION') EXECUTE FUNCTION catching();
	DROP EXTENSION idgen;}),
	qr/^2BP01: cannot drop extension idgen because/,
	'a nested CASCADE whose error was caught does not make a plain drop cascade');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM idgen_generator WHERE name = 'kept';
	SELECT count(*) FROM pg_roles WHERE rolname IN ('dba', 'schema_owner');
	SELECT count(*) FROM pg_event_trigger}),
	"1\n0\n0", 'and all of it was rolled back');

# a dropped generator holds nothing back
$node->safe_psql('postgres', q{SELECT idgen_drop_generator('kept', force => true)});

# --- definitions that run though their rows are gone ---------------------------
# A generator whose row went with a dropped extension still runs until the
# next restart: a new definition must not collide with it either.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('orphan', 'time:41 zone:10=5 seq:12', space => 'zones')});
$node->safe_psql('postgres', 'SELECT max(idgen_next(\'orphan\')) FROM generate_series(1, 100)');
my ($cascade_ret, $cascade_out, $cascade_err) = $node->psql('postgres', 'DROP EXTENSION idgen CASCADE');
like($cascade_err, qr/NOTICE:\s+drop cascades to \d+ named generator\(s\): /,
	'DROP EXTENSION idgen CASCADE drops it, saying which generators go with it');
wait_for_keeper($node);
is($node->safe_psql('postgres', "SELECT count(*) FROM idgen_generator WHERE name = 'orphan'"),
	'0', 'the dropped extension took the row of "orphan" with it');
like(error_of($node, q{SELECT idgen_create_generator('orphan_twin', 'time:41 zone:10=5 seq:12', space => 'zones')}),
	qr/^42710: generator "orphan_twin" would issue the same IDs as generator "orphan"/,
	'a definition that collides with the running "orphan" is refused');

# --- grants are in place before a granted role's first call ----------------------
$node->safe_psql('postgres', q{
	CREATE ROLE app LOGIN;
	SELECT idgen_create_generator('granted', 'time:41 zone:10=6 seq:12', space => 'snowflake_id');
	SELECT idgen_grant_generator('granted', 'app')});
# (the keeper applies a grant right after its commit)
my $drew = '';
wait_until(sub {
	(undef, $drew) = $node->psql('postgres', "SET ROLE app; SELECT idgen_next('granted') > 0");
	return $drew eq 't';
});
is($drew, 't', 'the granted role draws');
$node->stop('immediate');
$node->start;
my ($ret, $out, $err) = $node->psql('postgres',
	"SET ROLE app; SELECT idgen_next('granted') > 0", timeout => scaled(60));
is("$ret|$out", '0|t', 'right after a restart too: no 42501 before the keeper loaded the grants')
  or diag($err);

# --- a node id that changed since a definition was created ----------------------
# "zone:10=6", in the space of snowflake_id(), differs from node id 37 in
# its node bits, so it was accepted; under node id 6 the two would issue
# the same IDs.  So do the counters "worker" (the node id above its
# values) and "fixed6" (constant 6 there), of one space, once "fixed6",
# which handed out values, is dropped: under node id 6, "worker" would
# repeat them.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('fixed6', 'w:10=6 seq:40', space => 'workers');
	SELECT idgen_create_generator('worker', 'node:10 seq:40', space => 'workers');
	SELECT idgen_grant_generator('worker', 'PUBLIC');
	SELECT count(idgen_next('fixed6')) FROM generate_series(1, 100);
	SELECT idgen_drop_generator('fixed6', force => true);});
$node->append_conf('postgresql.conf', "idgen.node_id = 6\n");
$node->restart;
wait_for_keeper($node);
$err = error_report_of($node, "SELECT idgen_next('worker')");
like($err, qr/ERROR:\s+55000: generator "worker" cannot issue IDs on this server\s+DETAIL:\s+under node id 6 it would issue the same IDs as generator "fixed6"/,
	'under the new node id a counter that meets a dropped one\'s values is refused');
$err = error_report_of($node, "SELECT idgen_next('granted')");
like($err, qr/ERROR:\s+55000: generator "granted" cannot issue IDs on this server\s+DETAIL:\s+under node id 6 it would issue the same IDs as snowflake_id\(\)/,
	'under the new node id the colliding generator is refused');
is(error_of($node, 'SELECT snowflake_id()'), 'no error', 'while snowflake_id() works');

$node->stop;
done_testing();
