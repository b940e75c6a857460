# Dropping a named generator in a prepared transaction: nothing changes
# until COMMIT PREPARED, however often the keeper looks meanwhile; then the
# generator stops everywhere, in every database and at every call site,
# including call sites that had already looked it up: a prepared statement
# executed before the drop, and a PL/pgSQL loop whose expression keeps its
# lookup from one call to the next.  Each then fails with 42704.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('prepared_drop', conf => q{
idgen.node_id = 3
max_prepared_transactions = 2
});
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	CREATE DATABASE app;
	SELECT idgen_create_generator('doomed', 'time:41 tag:3=5 node:10 seq:9');
	SELECT idgen_create_generator('bystander', 'time:41 tag:3=6 node:10 seq:9');
});
$node->safe_psql('app', 'CREATE EXTENSION idgen');
$node->poll_query_until('app', q{SELECT idgen_next('doomed') > 0})
  or die 'app does not see generator "doomed"';

# The SQLSTATE of a statement in a background session, or "ok".
sub state_of
{
	my ($session, $sql) = @_;
	my $r = session_run($session, $sql);
	return $r->{lost} ? "lost: $r->{lost}" : $r->{sqlstate} // 'ok';
}

# Call sites that look "doomed" up before the drop: a prepared statement
# in each database, and a loop in app that draws until it fails.
my %session;
for my $db ('postgres', 'app')
{
	$session{$db} = psql_session($node, $db);
	session_safe($session{$db}, q{PREPARE draw AS SELECT idgen_next('doomed') > 0});
	is(session_safe($session{$db}, 'EXECUTE draw'), 't', "$db: the prepared statement draws");
}
my $loop = psql_background($node, 'app', q{
		DO $$
		DECLARE
			prev bigint := 0;
			id bigint;
		BEGIN
			LOOP
				id := idgen_next('doomed');
				IF id <= prev THEN
					RAISE EXCEPTION 'not increasing';
				END IF;
				prev := id;
				PERFORM pg_sleep(0.01);
			END LOOP;
		END $$}, verbose => 1, timeout => 3 * $PostgreSQL::Test::Utils::timeout_default);
ok($node->poll_query_until('app', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE state = 'active' AND query LIKE '%LOOP%idgen_next(''doomed'')%'}),
	'a loop in app draws from "doomed"');

# --- prepared: nothing changes, even after the keeper has looked --------
$node->safe_psql('postgres', q{
	BEGIN;
	SELECT idgen_drop_generator('doomed', force => true);
	PREPARE TRANSACTION 'drop_doomed'});
# A name no server knows makes the lookup ask the keeper to load the
# definitions, and fail with 42704 only once a load begun after the ask
# has served it: then the keeper has looked since the PREPARE.
like(error_of($node, q{SELECT idgen_next('no_such_generator')}), qr/^42704: /,
	'the keeper has loaded the definitions since the PREPARE');
for my $db ('postgres', 'app')
{
	is(state_of($session{$db}, 'EXECUTE draw'), 'ok',
		"$db: the prepared statement still draws while the drop is only prepared");
}
is($node->safe_psql('app', q{SELECT idgen_next('doomed') > 0}), 't',
	'a new call in app still draws');
is($node->safe_psql('app', q{
	SELECT count(*) FROM pg_stat_activity
	 WHERE state = 'active' AND query LIKE '%LOOP%idgen_next(''doomed'')%'}),
	'1', 'the loop in app still draws');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM idgen_generator_status WHERE name = 'doomed'}),
	'1', 'idgen_generator_status still lists it');

# --- COMMIT PREPARED: gone everywhere ------------------------------------
$node->safe_psql('postgres', q{COMMIT PREPARED 'drop_doomed'});
my $stopped = $node->poll_query_until('app', q{
	SELECT count(*) = 0 FROM pg_stat_activity
	 WHERE state = 'active' AND query LIKE '%LOOP%idgen_next(''doomed'')%'});
ok($stopped, 'the loop in app stops after COMMIT PREPARED');
# (a loop that drew on would run until its client's timeout)
$loop->{h}->kill_kill unless $stopped;
$loop->{h}->finish;
like($loop->{err}, qr/ERROR:\s+42704: generator "doomed" does not exist/,
	'the loop in app fails with 42704 at its next call');
for my $db ('postgres', 'app')
{
	is(state_of($session{$db}, 'EXECUTE draw'), '42704',
		"$db: the prepared statement that drew before now fails with 42704");
}
is(error_of($node, q{SELECT idgen_next('doomed')}) =~ s/:.*//sr, '42704',
	'a new call in postgres fails with 42704');
my ($ret, $out, $err) = $node->psql('app',
	"\\set VERBOSITY verbose\nSELECT idgen_next('doomed')");
like($err, qr/ERROR:\s+42704:/, 'a new call in app fails with 42704');
is(state_of($session{app}, q{SELECT idgen_next('bystander') > 0}), 'ok',
	'other generators go on');

session_end($_) for values %session;
$node->stop;
done_testing();
