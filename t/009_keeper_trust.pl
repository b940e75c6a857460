# The keeper runs as superuser: nothing a non-superuser owns or renames in
# its database may run as superuser or feed it a forged reservation.
#
# A control database owned by a non-superuser is refused outright (its
# owner can rename and replace anything in it); the attacks of 1.0's
# keeper, which pasted schema names into SQL, are tried anyway.  Once a
# superuser owns the database, the keeper finds its sequences by OID and
# ignores look-alikes that the former owner left behind.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# (%e: the log shows the SQLSTATE of the keeper's errors)
my $node = idgen_node('trust', conf => q{
idgen.node_id = 9
idgen.database = 'ctl'
log_line_prefix = '%m [%p] %e %q%a '
});
$node->start;

# the database belongs to mallory, a non-superuser; a superuser installs
# idgen there (CREATE EXTENSION needs one), in public, which mallory owns
# through pg_database_owner
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE ROLE mallory LOGIN;
	CREATE DATABASE ctl OWNER mallory;
});
$node->safe_psql('ctl', 'CREATE EXTENSION idgen');

# The ERROR lines of $node's log that contain $text (so that a failed match
# shows those, not the whole log).
sub error_lines
{
	my ($node, $text) = @_;
	return join("\n", grep { /\bERROR:/ && index($_, $text) >= 0 }
		split /\n/, slurp_file($node->logfile));
}

sub mallory_is_superuser
{
	return $node->safe_psql('postgres',
		"SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'");
}

ok($node->poll_query_until('postgres',
		"SELECT keeper_message ~ 'database \"ctl\" is owned by role \"mallory\", which is not a superuser' FROM idgen_status()"),
	'a control database owned by a non-superuser is refused, and the status says why');
like(error_of($node, 'SELECT snowflake_id()'),
	qr/^55000: no durable ID reservation is available/,
	'generators fail closed');

# Attack 1: a schema name that closes a string literal and calls a function.
# Attack 2: swap the schema for one with views named like the keeper's
# sequences, whose columns call mallory's function and forge a reservation
# far in the future.
my $mallory = $node->connstr('ctl') . ' user=mallory';
my $forged_ms = 9000000000000;    # the year 2255
$node->safe_psql('ctl', qq{
	CREATE SCHEMA evil;
	CREATE FUNCTION evil.pwn() RETURNS SETOF bigint LANGUAGE plpgsql AS \$\$
	BEGIN
		EXECUTE 'ALTER ROLE mallory SUPERUSER';
		RETURN NEXT $forged_ms;
	END \$\$;
	ALTER SCHEMA public RENAME TO "x', 1) FROM evil.pwn() --";
}, extra_params => [ '-U', 'mallory' ]);
$node->safe_psql('ctl', qq{
	ALTER SCHEMA "x', 1) FROM evil.pwn() --" RENAME TO old_public;
	CREATE SCHEMA public;
	CREATE VIEW public.idgen_hwm AS
		SELECT (SELECT p FROM evil.pwn() p) AS last_value, true AS is_called;
	CREATE VIEW public.idgen_epoch AS
		SELECT (SELECT p FROM evil.pwn() p) AS last_value, true AS is_called;
}, extra_params => [ '-U', 'mallory' ]);

# give a keeper that would fall for it two complete attempts with both
# attacks in place (it backs off between failures, so a fixed sleep may
# cover none): each attempt ends in the refusal, logged as an error
my $log_offset = -s $node->logfile;
ok(wait_until(sub {
		my $n = () = substr(slurp_file($node->logfile), $log_offset) =~
		  /ERROR:\s+database "ctl" is owned by role "mallory", which is not a superuser/g;
		return $n >= 2;
	}),
	'the keeper ran twice more with the attacks in place');
is(mallory_is_superuser(), 'f', 'nothing of mallory\'s ran as superuser');
is($node->safe_psql('postgres',
		"SELECT coalesce(reserved_until < now() + interval '1 day', true) FROM idgen_status()"),
	't', 'no forged reservation was published');
like(error_of($node, 'SELECT snowflake_id()'), qr/^55000: /,
	'generators still fail closed');

# A superuser takes the database over.  The extension (now in old_public)
# is trusted again; mallory's look-alikes in the new public are ignored.
$node->safe_psql('postgres', 'ALTER DATABASE ctl OWNER TO CURRENT_USER');
ok(keeper_ready($node),
	'with a superuser owning the database, the keeper is ready');
is($node->safe_psql('postgres', q{
	SELECT count(DISTINCT id) FROM (SELECT snowflake_id() AS id FROM generate_series(1, 10000)) s}),
	'10000', 'generation resumes');
is($node->safe_psql('ctl', q{
	SELECT last_value > 0 AND last_value < 9000000000000 FROM old_public.idgen_hwm}),
	't', 'the keeper wrote its own sequence, found by OID, not the view in public');
is($node->safe_psql('postgres',
		"SELECT reserved_until < now() + interval '1 day' FROM idgen_status()"),
	't', 'the reservation is the real one');
is(mallory_is_superuser(), 'f', 'still nothing of mallory\'s ran as superuser');

# The extension in a schema a non-superuser owns is refused too, even in a
# database a superuser owns.
$node->safe_psql('ctl', q{
	CREATE SCHEMA mallorys AUTHORIZATION mallory;
	ALTER EXTENSION idgen SET SCHEMA mallorys;
});
ok($node->poll_query_until('postgres',
		"SELECT keeper_message ~ 'extension idgen in database \"ctl\" is in a schema, or has an owner, that is not a superuser' FROM idgen_status()"),
	'an extension in a schema owned by a non-superuser is refused');
like(error_lines($node, 'extension idgen in database "ctl" is in a schema'),
	qr/ 42501 ERROR:\s+extension idgen in database "ctl" is in a schema, or has an owner, that is not a superuser/,
	'the keeper\'s error for it is 42501');
$node->safe_psql('ctl', 'ALTER EXTENSION idgen SET SCHEMA old_public');
ok(keeper_ready($node),
	'moved back to a superuser\'s schema, the keeper is ready again');
is(mallory_is_superuser(), 'f', 'and mallory never became superuser');

# A database owner's defaults do not reach the keeper: settings that would
# make its commits asynchronous or read-only, or time them out, are pinned.
$node->safe_psql('postgres', q{
	ALTER DATABASE ctl SET default_transaction_read_only = on;
	ALTER DATABASE ctl SET synchronous_commit = off;
	ALTER DATABASE ctl SET statement_timeout = '1ms';
	ALTER DATABASE ctl SET search_path = evil;
});
$node->restart;
ok(keeper_ready($node),
	'the keeper ignores the database\'s defaults');
is($node->safe_psql('postgres', 'SELECT count(snowflake_id()) FROM generate_series(1, 1000)'),
	'1000', 'and generation works');

# The keeper creates the extension only in a public schema that only
# superusers control, and fails closed when something blocks it.
my $fresh = PostgreSQL::Test::Cluster->new('fresh');
$fresh->init;
$fresh->start;
$fresh->safe_psql('postgres', q{
	CREATE ROLE mallory LOGIN;
	GRANT CREATE ON SCHEMA public TO mallory;
	CREATE DATABASE app;
});
$fresh->safe_psql('app', 'CREATE EXTENSION idgen');
$fresh->safe_psql('postgres', 'CREATE TABLE public.idgen_hwm (x int)',
	extra_params => [ '-U', 'mallory' ]);
# (%e: the log shows the SQLSTATE of the keeper's errors)
$fresh->append_conf('postgresql.conf', q{
shared_preload_libraries = 'idgen'
idgen.node_id = 10
log_line_prefix = '%m [%p] %e %q%a '
});
$fresh->restart;
ok($fresh->poll_query_until('app',
		q{SELECT keeper_message = 'extension idgen cannot be created in database "postgres": schema "public" has a relation "idgen_hwm" owned by role "mallory"' FROM idgen_status()}),
	'a pre-created idgen_hwm blocks CREATE EXTENSION: the keeper names it and its owner');
like(error_lines($fresh, 'extension idgen cannot be created'), qr/ 42P07 ERROR:/,
	'with the SQLSTATE of CREATE EXTENSION\'s own error (42P07)');
like(slurp_file($fresh->logfile),
	qr/DETAIL:\s+Role "mallory" may create objects in schema "public".*CREATE EXTENSION said: relation "idgen_hwm" already exists/,
	'the detail gives the original error');
like(error_of($fresh, 'SELECT snowflake_id()', 'app'), qr/^55000: no durable ID reservation/,
	'and generators fail closed');
# a function of the extension's, squatted in place of the table
$fresh->safe_psql('postgres', q{
	DROP TABLE public.idgen_hwm;
	CREATE FUNCTION public.snowflake_id() RETURNS bigint LANGUAGE sql AS 'SELECT 1'},
	extra_params => [ '-U', 'mallory' ]);
ok($fresh->poll_query_until('app',
		q{SELECT keeper_message ~ '^extension idgen cannot be created in database "postgres": schema "public" has a function "snowflake_id" owned by role "mallory"$' FROM idgen_status()}),
	'so does a squatted function: the keeper names it and its owner');
$fresh->safe_psql('postgres', 'DROP FUNCTION public.snowflake_id()');
ok(keeper_ready($fresh, 'app'),
	'once it is gone, the keeper creates the extension and is ready');
is($fresh->safe_psql('postgres', q{
	SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	 WHERE e.extname = 'idgen'}),
	'public', 'in schema public');

# The keeper reads and writes its tables directly, so it refuses them once
# they no longer have the shape it knows: with each one altered (as a
# superuser can), the keeper fails, saying which, with 55000.  Dropping
# and re-creating the extension, as the hint says, mends it.
sub refuses_altered
{
	my ($table, $alter) = @_;
	my $message = qq{idgen's table $table in database "postgres" has been altered};
	$fresh->safe_psql('postgres', $alter);
	ok($fresh->poll_query_until('postgres',
			"SELECT keeper_state = 'failed' AND keeper_message = \$\$$message\$\$ FROM idgen_status()"),
		"$table altered: the keeper refuses it");
	like(error_lines($fresh, "idgen's table $table "), qr/ 55000 ERROR:\s+\Q$message\E/,
		"$table altered: the keeper's error is 55000");
	like(slurp_file($fresh->logfile),
		qr/ERROR:\s+\Q$message\E\n[^\n]*HINT:\s+Drop and re-create the extension in database "postgres" as a superuser/,
		"$table altered: the hint says how to mend it");
}

sub mend
{
	my ($what) = @_;
	$fresh->safe_psql('postgres', 'DROP EXTENSION idgen CASCADE');
	ok(keeper_ready($fresh), "$what: once the extension is re-created, the keeper is ready");
}

$fresh->safe_psql('postgres', q{
	CREATE ROLE drawer;
	SELECT idgen_create_generator('guarded', 'time:41 tag:3=2 node:10 seq:9');
	SELECT idgen_grant_generator('guarded', 'drawer');
});
is(error_of($fresh, "SET ROLE drawer; SELECT idgen_next('guarded')"), 'no error',
	'a granted role draws from its generator');
refuses_altered('idgen_generator_grant',
	'ALTER TABLE public.idgen_generator_grant ADD COLUMN note text');
# After a restart the keeper loads the definitions but not their grants: a
# granted role waits for them, and is told, rather than refused with 42501.
$fresh->restart;
like(error_of($fresh, "SET ROLE drawer; SELECT idgen_next('guarded')"),
	qr/^55000: the grants of generator "guarded" are not loaded/,
	'grants the keeper cannot load: 55000, not 42501');
mend('idgen_generator_grant');

refuses_altered('idgen_generator',
	'ALTER TABLE public.idgen_generator ADD COLUMN note text');
mend('idgen_generator');

# A column of another type: defining a generator reads the rows too, and
# refuses them as the keeper does, rather than read an integer as text.
$fresh->safe_psql('postgres',
	q{SELECT idgen_create_generator('tally', 'zone:4=3 seq:27')});
refuses_altered('idgen_generator',
	'ALTER TABLE public.idgen_generator ALTER owned TYPE integer USING 7');
like(error_of($fresh, q{SELECT idgen_create_generator('tally2', 'zone:4=4 seq:27')}),
	qr/^55000: idgen's table idgen_generator in database "postgres" has been altered/,
	'defining a generator refuses a column of another type (55000)');
like(error_of($fresh, q{SELECT idgen_create_generator('tally', 'zone:4=3 seq:27')}),
	qr/^55000: idgen's table idgen_generator in database "postgres" has been altered/,
	'and so does re-creating one');
mend('idgen_generator');

# the floors are read once IDs of a shard have been reserved
$fresh->safe_psql('postgres', 'SELECT instagram_id(4)');
refuses_altered('idgen_shard_floor',
	'CREATE INDEX ON public.idgen_shard_floor (shard)');
mend('idgen_shard_floor');

# a counter's state is written when the keeper takes values ahead for it:
# at once for a new counter
$fresh->safe_psql('postgres', q{
	SELECT idgen_create_generator('tickets', 'zone:4=1 seq:27');
	SELECT idgen_next('tickets');
});
refuses_altered('idgen_counter_state', q{
	CREATE INDEX ON public.idgen_counter_state (name);
	SELECT idgen_create_generator('tickets2', 'zone:4=2 seq:27');
});
mend('idgen_counter_state');

$fresh->stop;
$node->stop;
done_testing();
