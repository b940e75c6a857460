# A counter generator keeps the contract of its design: the keeper
# reserves "prefetch" values ahead (1,000 by default) and extends when
# fewer than "refill" remain (500), so a crash skips at most prefetch
# values, also in a tight loop; and a session calling it in a tight loop
# never waits for a durable commit every prefetch values.  A caller that
# outruns the durable reservation takes its values at once, and the end
# of the statement that took them waits until the keeper has made them
# durable (as a sequence's WAL record is flushed by the commit of the
# transaction that called nextval, but before any extension's commit work
# can ship them elsewhere): no transaction commits a value the counter
# could hand out again.  Properties only: uniqueness, density,
# the view's reservation, what a crash skips, SQLSTATEs; no timing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('demand', conf => "idgen.node_id = 5\n");
$node->start;
wait_for_keeper($node);
$node->append_conf('postgresql.conf', "max_prepared_transactions = 2\n");
$node->restart;
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('burst', 'zone:7=3 worker:16 seq:40');
	SELECT idgen_create_generator('narrow', 'tag:12=2048 seq:20');
	SELECT idgen_create_generator('striped', 'seq:31', stripes => 3, owned => '0,2', segment => 7);
	SELECT idgen_create_generator('stalled', 'tag:8=77 seq:40');
	SELECT idgen_create_generator('stalled2', 'tag:8=78 seq:40');
	CREATE TABLE s (n bigint, id bigint);
	CREATE TABLE kept (id bigint)});

sub view
{
	my ($name, $cols) = @_;
	return $node->safe_psql('postgres',
		"SELECT $cols FROM idgen_generator_status WHERE name = '$name'");
}

# No extension is due: at least refill values remain, so the view's
# reservation is the durable one and stays put while nobody calls.
sub settle
{
	my ($name) = @_;
	$node->poll_query_until('postgres', qq{
		SELECT counter_reserved - counter_value - 1 >= refill
		  FROM idgen_generator_status WHERE name = '$name'})
	  or die "the keeper did not extend counter $name";
}

sub reserved_for
{
	my ($name, $n) = @_;
	$node->poll_query_until('postgres',
		"SELECT counter_reserved = $n FROM idgen_generator_status WHERE name = '$name'")
	  or die "the keeper did not reserve counter $name";
}

# --- a quiet counter reserves prefetch at a time -----------------------------
# once the keeper has loaded the new definition and made its first
# reservation; a call before that waits for it
ok($node->poll_query_until('postgres',
		"SELECT counter_reserved = 1000 FROM idgen_generator_status WHERE name = 'burst'"),
	'the keeper reserves a new counter ahead of its first call');
$node->safe_psql('postgres', "SELECT idgen_next('burst')") for 1 .. 10;
is(view('burst', 'waits, prefetch, refill, counter_reserved'), '0|1000|500|1000',
	'a quiet counter reserves the defined prefetch (1,000) and refill (500)');

# --- a tight loop: no wait per prefetch values, every value durable at commit
# With values handed out only below the durable reservation, 2,000,000
# calls at prefetch 1,000 waited 1,998 times for 1,998 durable commits.
my $n = 2_000_000;
is($node->safe_psql('postgres', qq{
	SELECT count(DISTINCT id), max(id) - min(id) + 1
	  FROM (SELECT idgen_next('burst') AS id FROM generate_series(1, $n)) s}),
	"$n|$n", "$n values from one statement: distinct and dense");
# a wait only if the keeper fell 2^20 values behind, or at the commit
cmp_ok(view('burst', 'waits'), '<=', 10,
	'the loop and its commit waited for the keeper a few times at most, not every prefetch values');
is(view('burst', 'counter_reserved > counter_value'), 't',
	'its commit returned only once every value it drew was durably reserved');
settle('burst');
is(view('burst', 'counter_reserved - counter_value - 1 <= prefetch'), 't',
	'the reservation reaches at most prefetch beyond the last value handed out');

# --- a narrow counter: at most 1/1024 of its range pending commit ------------
# seq:20 holds 1,048,576 values: a caller runs at most
# max(prefetch, 2^20 / 1024) = 1,024 values beyond the durable reservation
is($node->safe_psql('postgres', q{
	SELECT count(DISTINCT id), max(id) - min(id) + 1
	  FROM (SELECT idgen_next('narrow') AS id FROM generate_series(1, 300000)) s}),
	'300000|300000', 'a narrow counter: 300,000 values, distinct and dense');

# --- a striped counter: the reservation counts this server's own values -----
# stripes 0 and 2 of 3, segments of 7: the n-th value (from 0) is
# (n / 14) * 21 + {0, 14}[(n / 7) % 2] + n % 7
$node->safe_psql('postgres', q{
	INSERT INTO s SELECT n - 1, idgen_next('striped') FROM generate_series(1, 500000) n});
is($node->safe_psql('postgres', q{
	SELECT count(*), bool_and(id = (n / 14) * 21 + ((n / 7) % 2) * 14 + n % 7)
	  FROM s}),
	'500000|t', 'a striped counter under demand hands out exactly its own stripes, in order, none skipped');

# --- values taken ahead are durable by the end of their statement ----------
# With the keeper stopped, a statement draws 5,000 values beyond the
# reservation of 1,000: they are handed out at once, but at its end it
# waits for the keeper and, after max_wait, fails with 55P03, which rolls
# back its transaction: no row holds a value that is not durably
# reserved.
reserved_for('stalled', 1000);
reserved_for('stalled2', 1000);
my $keeper = keeper_pid($node);
like($keeper, qr/^\d+$/, 'the keeper runs');
kill 'STOP', $keeper;
my ($ret, $out, $err) = $node->psql('postgres', q{
	\set VERBOSITY verbose
	BEGIN;
	INSERT INTO kept SELECT idgen_next('stalled') FROM generate_series(1, 5000);
	\echo after the insert
	COMMIT;}, timeout => scaled(120));
like($err, qr/ERROR:\s+55P03: no durable reservation is available for counter generator "stalled"/,
	'the statement fails closed with 55P03 (retry) while the keeper cannot reserve');
like($err, qr/DETAIL:\s+This session drew values of it beyond the durable reservation, and the keeper has not reserved them within idgen\.max_wait; the statement fails\./,
	'the detail says the statement fails');
is($out, '', 'and the transaction goes no further');
is($node->safe_psql('postgres', q{
	SELECT counter_value - counter_reserved >= 3000, counter_reserved
	  FROM idgen_generator_status WHERE name = 'stalled'}),
	't|1000', 'beyond the reservation the values were handed out at once');
is($node->safe_psql('postgres', 'SELECT count(*) FROM kept'), '0',
	'no row holds a value that is not durably reserved');

# A foreign table on another database of this server (postgres_fdw, which
# commits its remote transaction in its own pre-commit callback): a
# refused statement leaves no remote row either.  The session took values
# ahead before it used postgres_fdw (so idgen's callback was registered
# first), as a pooled one may.
$node->safe_psql('postgres', 'CREATE DATABASE remote');
$node->safe_psql('remote', 'CREATE TABLE far (id bigint PRIMARY KEY)');
$node->safe_psql('postgres', qq{
	CREATE EXTENSION postgres_fdw;
	CREATE SERVER here FOREIGN DATA WRAPPER postgres_fdw
	  OPTIONS (host '${\ $node->host}', port '${\ $node->port}', dbname 'remote');
	CREATE USER MAPPING FOR CURRENT_USER SERVER here;
	CREATE FOREIGN TABLE far (id bigint) SERVER here});
($ret, $out, $err) = $node->psql('postgres', q{
	SELECT count(*) FROM far;
	BEGIN;
	INSERT INTO far SELECT idgen_next('stalled') FROM generate_series(1, 3000);
	\echo after the insert
	COMMIT;}, timeout => scaled(120));
like($err, qr/ERROR:\s+no durable reservation is available for counter generator "stalled"/,
	'a statement writing a foreign table fails closed');
is($out, '0', 'at its own end, before the transaction goes on');
is($node->safe_psql('remote', 'SELECT count(*) FROM far'), '0',
	'and the foreign table got no row');

# Regression: in a new session whose transaction took values ahead before
# it first opened the foreign table, postgres_fdw set up its commit work
# after idgen's, and committed the remote rows before idgen's commit
# wait refused the transaction (with a wait at the commit only, the first
# statement succeeded and "far" got 3,000 rows).  Now that first
# statement fails at its end, so the INSERT never runs: this fails again
# only if values taken ahead reach the commit without a statement's wait.
($ret, $out, $err) = $node->psql('postgres', q{
	\set VERBOSITY verbose
	BEGIN;
	SELECT count(idgen_next('stalled')) FROM generate_series(1, 10);
	INSERT INTO far SELECT idgen_next('stalled') FROM generate_series(1, 3000);
	COMMIT;}, timeout => scaled(120));
like($err, qr/ERROR:\s+55P03: no durable reservation is available for counter generator "stalled"\nDETAIL:\s+This session drew values of it beyond the durable reservation, and the keeper has not reserved them within idgen\.max_wait; the statement fails\./,
	'a statement that took values ahead fails at its end when they cannot be made durable');
is($node->safe_psql('remote', 'SELECT count(*) FROM far'), '0',
	'and a foreign table first opened after values were taken ahead got no row');

# The extended protocol leaves a portal that returned its rows open after
# it reported the statement complete, until the next one or the
# transaction's end: the values are made durable before the completion is
# reported, so a client never holds a completed statement's value that is
# not durable.  pgbench's extended mode, with a shell command that runs
# only if the statement completed.
my $completed = "${\ $node->basedir}/completed";
my $script = "${\ $node->basedir}/extended.sql";
open(my $fh, '>', $script) or die "$script: $!";
print $fh "BEGIN;\n",
  "SELECT max(idgen_next('stalled')) AS v FROM generate_series(1, 3000) \\gset\n",
  "\\shell echo :v > $completed\n",
  "ROLLBACK;\n";
close $fh;
my ($pgb_out, $pgb_err) = ('', '');
IPC::Run::run([ 'pgbench', '-n', '-M', 'extended', '-t', '1', '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$pgb_out, '2>', \$pgb_err, IPC::Run::timeout(120));
like($pgb_err, qr/no durable reservation is available for counter generator "stalled"/,
	'an extended-protocol statement that took values ahead fails before it reports completion');
ok(!-e $completed, 'and the client never saw it complete');

# A refusal because the keeper is late keeps the values pending: after
# ROLLBACK TO SAVEPOINT the transaction's next statement waits for them
# again (and goes on once the keeper has caught up).
($ret, $out, $err) = $node->psql('postgres', q{
	BEGIN;
	SAVEPOINT a;
	SELECT count(idgen_next('stalled')) FROM generate_series(1, 3000);
	ROLLBACK TO a;
	SELECT 'after rollback to';
	COMMIT;}, timeout => scaled(120), on_error_stop => 0);
my @refusals = $err =~ /ERROR:\s+no durable reservation is available for counter generator "stalled"/g;
is(scalar(@refusals), 2,
	'a statement in a subtransaction is refused at its end, and after ROLLBACK TO the next one waits again');
is($out, '', 'so nothing after it completes while the keeper is stopped');
# A value taken in an exception block that rolls back can leave it in a
# variable: it is still waited for where it is used.
($ret, $out, $err) = $node->psql('postgres', q{
	DO $$
	DECLARE x bigint;
	BEGIN
		BEGIN
			x := idgen_next('stalled');
			RAISE EXCEPTION 'boom';
		EXCEPTION WHEN raise_exception THEN
			NULL;
		END;
		INSERT INTO kept VALUES (x);
	END $$;}, timeout => scaled(120));
like($err, qr/ERROR:\s+no durable reservation is available for counter generator "stalled"/,
	'a value kept from a rolled-back exception block is still made durable before it is used');
is($node->safe_psql('postgres', 'SELECT count(*) FROM kept'), '0',
	'and no row holds it before it is');

# A refusal that an exception block catches leaves every value pending,
# of that generator and of the others: the keeper has not made them
# durable, and the code around may still hold one.
($ret, $out, $err) = $node->psql('postgres', q{
	DO $$
	DECLARE b bigint;
	BEGIN
		FOR i IN 1..2000 LOOP b := idgen_next('stalled2'); END LOOP;
		BEGIN
			PERFORM idgen_next('stalled') FROM generate_series(1, 10);
		EXCEPTION WHEN object_not_in_prerequisite_state THEN
			RAISE NOTICE 'caught';
		END;
		INSERT INTO kept VALUES (b);
	END $$;}, timeout => scaled(120));
like($err, qr/NOTICE:\s+caught.*ERROR:\s+no durable reservation is available for counter generator "stalled2"/s,
	'after a caught refusal, a value of another generator is still made durable before it is used');
is($node->safe_psql('postgres', 'SELECT count(*) FROM kept'), '0',
	'and no row holds it before it is');

# Values pending for a counter that is dropped meanwhile can never be
# made durable: the next statement refuses them once, saying so, and the
# session goes on.  (The value here is pending from a statement that
# failed for another reason; the drop runs in another session.)
my $drop = "psql -XAtq -h ${\ $node->host} -p ${\ $node->port} -d postgres"
  . " -c \"SELECT idgen_drop_generator('stalled2', force => true)\"";
($ret, $out, $err) = $node->psql('postgres', qq{
	\\set VERBOSITY verbose
	SELECT idgen_next('stalled2'), 1 / (g - g) FROM generate_series(1, 1) g;
	\\! $drop
	SELECT 'first';
	SELECT 'second';}, timeout => scaled(120), on_error_stop => 0);
like($err, qr/ERROR:\s+55P03: no durable reservation is available for counter generator "stalled2"\nDETAIL:\s+This session drew values of it beyond the durable reservation, and the counter was dropped or refused meanwhile; the statement fails\./,
	'values of a counter dropped meanwhile are refused, saying so');
unlike($out, qr/first/, 'once');
like($out, qr/(?:^|\n)second$/, 'and then the session goes on');

# The same across a procedure's ROLLBACK: a rollback keeps what is
# pending, for the variable that may still hold it.
$node->safe_psql('postgres', q{
	CREATE PROCEDURE keep_after_rollback() LANGUAGE plpgsql AS $$
	DECLARE v bigint;
	BEGIN
		FOR i IN 1..2000 LOOP v := idgen_next('stalled'); END LOOP;
		ROLLBACK;
		INSERT INTO kept VALUES (v);
		COMMIT;
	END $$});
($ret, $out, $err) = $node->psql('postgres', 'CALL keep_after_rollback()', timeout => scaled(120));
like($err, qr/ERROR:\s+no durable reservation is available for counter generator "stalled"/,
	'a value kept across a procedure\'s ROLLBACK is still made durable before it is used');
is($node->safe_psql('postgres', 'SELECT count(*) FROM kept'), '0',
	'and no row holds it before it is');

# A function call over the fastpath protocol (libpq's PQfn) runs in no
# statement: it gets no value ahead of the reservation, only a durable
# one, so with the keeper stopped it waits and fails closed.
my $fp_src = "${\ $node->basedir}/fastpath.c";
open(my $fp, '>', $fp_src) or die "$fp_src: $!";
print $fp <<'EOC';
#include <stdio.h>
#include <stdlib.h>
#include <libpq-fe.h>
int
main(int argc, char **argv)
{
	PGconn	   *conn = PQconnectdb(argv[1]);
	PGresult   *res;
	PQArgBlock	arg;
	char		buf[8];
	int			len = 0;

	if (PQstatus(conn) != CONNECTION_OK)
	{
		printf("connect: %s", PQerrorMessage(conn));
		return 1;
	}
	res = PQexec(conn, "SELECT 'idgen_next(text)'::regprocedure::oid");
	arg.len = 7;
	arg.isint = 0;
	arg.u.ptr = (int *) "stalled";
	PQclear(PQexec(conn, "BEGIN"));
	res = PQfn(conn, atoi(PQgetvalue(res, 0, 0)), (int *) buf, &len, 0, &arg, 1);
	if (PQresultStatus(res) == PGRES_COMMAND_OK && len == 8)
		printf("got a value\n");
	else
		printf("error: %s", PQresultErrorMessage(res));
	PQclear(PQexec(conn, "ROLLBACK"));
	PQfinish(conn);
	return 0;
}
EOC
close $fp;
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
chomp(my $incdir = `$pg_config --includedir`);
chomp(my $libdir = `$pg_config --libdir`);
my $fp_bin = "${\ $node->basedir}/fastpath";
system('cc', '-o', $fp_bin, $fp_src, "-I$incdir", "-L$libdir", "-Wl,-rpath,$libdir", '-lpq') == 0
  or die 'could not build the fastpath client';
my $fp_out = `$fp_bin "host=${\ $node->host} port=${\ $node->port} dbname=postgres"`;
like($fp_out, qr/^error: .*no durable reservation is available for counter generator "stalled"/,
	'a fastpath call gets no value ahead of the reservation, and fails closed');

# A utility statement that took values ahead, here COPY into a foreign
# table with the values from a column default, fails at its end the same
# way, before the transaction goes on.
$node->safe_psql('remote', 'CREATE TABLE far_copy (id bigint PRIMARY KEY, v int)');
$node->safe_psql('postgres', q{
	CREATE FOREIGN TABLE far_copy (id bigint DEFAULT idgen_next('stalled'), v int)
	  SERVER here});
($ret, $out, $err) = $node->psql('postgres', q{
	BEGIN;
	COPY far_copy (v) FROM PROGRAM 'seq 1 3000';
	\echo after the copy
	COMMIT;}, timeout => scaled(120));
like($err, qr/ERROR:\s+no durable reservation is available for counter generator "stalled"/,
	'COPY of values taken ahead fails closed');
is($out, '', 'at its own end, not at the commit');
is($node->safe_psql('remote', 'SELECT count(*) FROM far_copy'), '0',
	'and leaves no remote row');

# Values a deferred trigger takes while the transaction commits are
# taken in no statement: only durable ones, so the commit waits for the
# keeper and fails closed.
$node->safe_psql('postgres', q{
	CREATE TABLE late (v int);
	CREATE FUNCTION late_draw() RETURNS trigger LANGUAGE plpgsql AS $$
	DECLARE x bigint;
	BEGIN
		FOR i IN 1..3000 LOOP x := idgen_next('stalled'); END LOOP;
		RETURN NULL;
	END $$;
	CREATE CONSTRAINT TRIGGER late_draw AFTER INSERT ON late
	  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION late_draw()});
($ret, $out, $err) = $node->psql('postgres', q{
	\set VERBOSITY verbose
	BEGIN;
	INSERT INTO late VALUES (1);
	\echo before the commit
	COMMIT;}, timeout => scaled(120));
is($out, 'before the commit', 'a deferred trigger draws values at the commit');
like($err, qr/ERROR:\s+55P03: no durable reservation is available for counter generator "stalled"/,
	'and the commit fails closed');
is($node->safe_psql('postgres', 'SELECT count(*) FROM late'), '0',
	'rolling the transaction back');

# Values taken ahead where no statement ends before the commit (a
# procedure assigning them in PL/pgSQL, then COMMIT): the commit waits for
# them, and fails closed.
$node->safe_psql('postgres', q{
	CREATE PROCEDURE draw_then_commit() LANGUAGE plpgsql AS $$
	DECLARE v bigint;
	BEGIN
		INSERT INTO late VALUES (2);
		FOR i IN 1..3000 LOOP v := idgen_next('stalled'); END LOOP;
		COMMIT;
	END $$});
($ret, $out, $err) = $node->psql('postgres', q{
	\set VERBOSITY verbose
	CALL draw_then_commit();}, timeout => scaled(120));
like($err, qr/ERROR:\s+55P03: no durable reservation is available for counter generator "stalled"\nDETAIL:\s+This session drew values of it beyond the durable reservation, and the keeper has not reserved them within idgen\.max_wait; the transaction is rolled back\./,
	'a commit waits for values taken ahead that no statement end covered, and fails closed');
is($node->safe_psql('postgres', 'SELECT count(*) FROM late'), '0',
	'rolling the transaction back');

# PREPARE TRANSACTION waits the same way, here for a value a failed
# statement took ahead in an earlier transaction of the session (a
# rollback keeps it pending), and fails closed.
($ret, $out, $err) = $node->psql('postgres', q{
	\set VERBOSITY verbose
	BEGIN;
	SELECT idgen_next('stalled'), 1 / (g - g) FROM generate_series(1, 1) g;
	ROLLBACK;
	BEGIN;
	PREPARE TRANSACTION 'late';}, timeout => scaled(120), on_error_stop => 0);
like($err, qr/ERROR:\s+55P03: no durable reservation is available for counter generator "stalled"\nDETAIL:\s+This session drew values of it beyond the durable reservation, and the keeper has not reserved them within idgen\.max_wait; the transaction is rolled back\./,
	'PREPARE TRANSACTION of a value beyond the reservation fails closed too');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_prepared_xacts'), '0',
	'and leaves no prepared transaction');

# idgen.counter_lead = off: nothing beyond the reservation, even pending
# commit; the call itself waits for the keeper and fails closed
($ret, $out, $err) = $node->psql('postgres', q{
	SET idgen.counter_lead = off;
	SELECT idgen_next('stalled');}, timeout => scaled(120));
like($err, qr/ERROR:\s+no durable reservation is available for counter generator "stalled"\nDETAIL:\s+The idgen keeper has not extended it/,
	'with idgen.counter_lead off a call beyond the reservation fails at once, not at its commit');
is($out, '', 'and returns no value');

is($node->safe_psql('postgres', q{
	SELECT counter_reserved FROM idgen_generator_status WHERE name = 'stalled'}),
	'1000', 'the reservation did not move while the keeper was stopped');
kill 'CONT', $keeper;
$node->safe_psql('postgres', q{
	INSERT INTO kept SELECT idgen_next('stalled') FROM generate_series(1, 10)});
is($node->safe_psql('postgres', q{
	SELECT min(id & ((1::bigint << 40) - 1)) >= 5000, count(DISTINCT id) FROM kept}),
	't|10', 'once the keeper is back the counter continues above the values the failed commit drew');
is($node->safe_psql('postgres', q{
	SET idgen.counter_lead = off;
	SELECT count(DISTINCT id) FROM (SELECT idgen_next('stalled') AS id FROM generate_series(1, 20000)) s}),
	'20000', 'with idgen.counter_lead off, a loop waits for the keeper instead, and works');

# --- values that can never be made durable ----------------------------------
# A counter raised to a floor from outside (its state row restored higher)
# while a session holds values taken ahead: those can never be made
# durable.  Every statement end refuses them, saying why, also after an
# exception block caught the refusal, until the client's statement has
# failed; then the session goes on.
$node->safe_psql('postgres', "SELECT idgen_create_generator('raised', 'tag:8=79 seq:40')");
reserved_for('raised', 1000);
$keeper = keeper_pid($node);
kill 'STOP', $keeper;
my $connect = "psql -XAtq -h ${\ $node->host} -p ${\ $node->port} -d postgres";
($ret, $out, $err) = $node->psql('postgres', qq{
	\\set VERBOSITY verbose
	SELECT count(idgen_next('raised')) FROM generate_series(1, 1500);
	\\! $connect -c "UPDATE idgen_counter_state SET reserved = 100000 WHERE name = 'raised'"
	\\! kill -CONT $keeper
	\\! for i in \$(seq 1 600); do $connect -c "SELECT counter_reserved >= 100000 FROM idgen_generator_status WHERE name = 'raised'" | grep -q t && break; sleep 0.1; done; $connect -c "SELECT counter_reserved >= 100000 FROM idgen_generator_status WHERE name = 'raised'" | grep -q t || echo 'the keeper never took the raised state'
	DO \$\$
	BEGIN
		BEGIN
			PERFORM 1;
		EXCEPTION WHEN object_not_in_prerequisite_state THEN
			RAISE NOTICE 'caught';
		END;
		PERFORM 2;
	END \$\$;
	SELECT 'after';}, timeout => scaled(180), on_error_stop => 0);
like($err, qr/NOTICE:\s+(?:00000: )?caught.*ERROR:\s+55P03: no durable reservation is available for counter generator "raised"\nDETAIL:\s+This session drew values of it beyond the durable reservation, and the counter was raised to a floor from outside meanwhile/s,
	'values below a floor raised from outside are refused again after a caught refusal');
like($out, qr/(?:^|\n)after$/, 'and once the client\'s statement has failed, the session goes on');
unlike($out, qr/the keeper never took the raised state/,
	'(the keeper took the raised state before the block ran: the wait did not time out)');

# --- what a crash skips: at most prefetch ------------------------------------
# After an immediate stop a counter resumes at its durable reservation:
# above every value a committed transaction holds, and at most prefetch
# values beyond the last value handed out, also when stopped in a tight
# loop.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('quiet', 'zone:7=5 worker:16 seq:40')});
reserved_for('quiet', 1000);
my $quiet_last = $node->safe_psql('postgres',
	"SELECT max(idgen_next('quiet')) FROM generate_series(1, 10)");
my $burst_last = $node->safe_psql('postgres',
	"SELECT max(idgen_next('burst')) FROM generate_series(1, 2000000)");
$node->stop('immediate');
$node->start;
wait_for_keeper($node);
my ($quiet_next, $burst_next) = split /\|/, $node->safe_psql('postgres',
	"SELECT idgen_next('quiet'), idgen_next('burst')");
cmp_ok($quiet_next, '>', $quiet_last, 'a quiet counter resumes above its values after a crash');
cmp_ok($quiet_next - $quiet_last - 1, '<=', 1000,
	'skipping at most prefetch (1,000): ' . ($quiet_next - $quiet_last - 1));
cmp_ok($burst_next, '>', $burst_last, 'a counter stopped after a tight loop resumes above its values');
cmp_ok($burst_next - $burst_last - 1, '<=', 1000,
	'skipping at most prefetch (1,000): ' . ($burst_next - $burst_last - 1));

$node->stop;
done_testing();
