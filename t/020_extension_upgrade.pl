# ALTER EXTENSION idgen UPDATE from 1.0 to the current version on a server
# holding live state: the keeper's database and an application database
# both have idgen 1.0, a session keeps inserting generated IDs while both
# are updated, and the keeper keeps its reservation throughout.
#
# Afterwards: the version is the current one; IDs issued after the update
# are above all issued before it, for both generators; the durable
# reservation did not go backwards and the recorded epoch is unchanged; and
# the extension's member objects, with their definitions, are exactly those
# of a fresh CREATE EXTENSION.  The test knows nothing of what the update
# script adds, so it holds whatever later versions add.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', q{
idgen.node_id = 12
idgen.database = 'ctl'
});

# Install 1.0 before the keeper runs: without the preload the keeper does
# not exist, so it cannot create the extension in ctl at the current
# version first.
$node->start;
$node->safe_psql('postgres', "CREATE DATABASE $_") for qw(ctl app fresh);
$node->safe_psql($_, "CREATE EXTENSION idgen VERSION '1.0'") for qw(ctl app);
is($node->safe_psql('ctl', "SELECT extversion FROM pg_extension WHERE extname = 'idgen'")
	  . ' ' . $node->safe_psql('app', "SELECT extversion FROM pg_extension WHERE extname = 'idgen'"),
	'1.0 1.0', 'idgen 1.0 is installed in the keeper\'s database and in an application database');
my $current = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'idgen'");
isnt($current, '1.0', "the current version is $current");

# Now preload it: the keeper finds 1.0 in ctl and keeps its reservation there.
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'idgen'\n");
$node->restart;
wait_for_keeper_in($node, 'ctl');
is($node->safe_psql('ctl', 'SELECT is_called FROM idgen_hwm')
	  . ' ' . $node->safe_psql('app', 'SELECT is_called FROM idgen_hwm'),
	't f', 'the keeper keeps its reservation in ctl (idgen.database), not in app');

$node->safe_psql('app', q{
	CREATE TABLE load (n bigserial, sf bigint NOT NULL, ig bigint NOT NULL);
	CREATE TABLE stop_load ();
});

# What users build on 1.0 must survive the update: a grant on every 1.0
# function, and views over idgen_status() and the decoders, in a database
# of their own (grants leave explicit ACLs, which the comparison with a
# fresh install below would count).
$node->safe_psql('postgres', 'CREATE DATABASE users');
$node->safe_psql('users', q{
	CREATE EXTENSION idgen VERSION '1.0';
	CREATE ROLE upgrade_user;
	DO $$
	DECLARE f regprocedure;
	BEGIN
		FOR f IN SELECT objid::regprocedure FROM pg_depend
		          WHERE classid = 'pg_proc'::regclass AND deptype = 'e'
		            AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
		LOOP
			EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO upgrade_user', f);
		END LOOP;
	END $$;
	CREATE VIEW status_view AS SELECT node_id, keeper_state, reserved_until FROM idgen_status();
	CREATE VIEW decode_view AS
		SELECT (snowflake_id_decode(4096)).node AS sf_node, (instagram_id_decode(1024)).shard AS ig_shard;
	GRANT SELECT ON status_view, decode_view TO upgrade_user;
});
my $granted_1_0 = $node->safe_psql('users', q{
	SELECT count(*) FROM pg_proc p
	 WHERE has_function_privilege('upgrade_user', p.oid, 'EXECUTE')
	   AND p.oid IN (SELECT objid FROM pg_depend WHERE classid = 'pg_proc'::regclass AND deptype = 'e'
	                   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen'))});
cmp_ok($granted_1_0, '>', 10, "1.0's $granted_1_0 functions granted to a role");

# The load: one session inserting 1,000 rows per transaction until told
# to stop (or after 20,000,000 rows).
my $loader = psql_background($node, 'app', q{
DO $$
BEGIN
    FOR i IN 1 .. 20000 LOOP
        INSERT INTO load (sf, ig) SELECT snowflake_id(), instagram_id(5) FROM generate_series(1, 1000);
        COMMIT;
        EXIT WHEN EXISTS (SELECT FROM stop_load);
    END LOOP;
END $$}, on_error_stop => 1, timeout => scaled(600));
ok($node->poll_query_until('app', 'SELECT count(*) > 0 FROM load'), 'the load is running');

my $loader_running = q{
	SELECT count(*) FROM pg_stat_activity
	 WHERE datname = 'app' AND state = 'active' AND query LIKE '%INSERT INTO load%'
	   AND pid <> pg_backend_pid()};
my $hwm = q{SELECT format('%s %s', last_value, is_called) FROM idgen_hwm};
my $epoch = q{SELECT format('%s %s', last_value, is_called) FROM idgen_epoch};
my $hwm_before = $node->safe_psql('ctl', $hwm);
my $epoch_before = $node->safe_psql('ctl', $epoch);
like($epoch_before, qr/^\d+ t$/, 'the keeper has recorded the epoch');
my ($b_sf, $b_ig) = split /\|/,
  $node->safe_psql('app', 'SELECT snowflake_id(), instagram_id(5)');

# --- the update, in both databases, while the load runs ---------------------
$node->safe_psql('ctl', 'ALTER EXTENSION idgen UPDATE');
$node->safe_psql('app', 'ALTER EXTENSION idgen UPDATE');
is($node->safe_psql('app', $loader_running), '1', 'the load ran on across the update');

my ($a_sf, $a_ig) = split /\|/,
  $node->safe_psql('app', 'SELECT snowflake_id(), instagram_id(5)');
my ($c_sf, $c_ig) = split /\|/,
  $node->safe_psql('ctl', 'SELECT snowflake_id(), instagram_id(5)');
# keep generating: wait for load rows issued after the update
ok($node->poll_query_until('app', "SELECT count(*) > 0 FROM load WHERE sf > $a_sf"),
	'the load keeps generating after the update');
$node->safe_psql('app', 'INSERT INTO stop_load DEFAULT VALUES');
$loader->{h}->finish;
is($loader->{err}, '', 'the load session, which lived through the update, saw no error');

is($node->safe_psql('ctl', "SELECT extversion FROM pg_extension WHERE extname = 'idgen'")
	  . ' ' . $node->safe_psql('app', "SELECT extversion FROM pg_extension WHERE extname = 'idgen'"),
	"$current $current", "both databases are at $current");

# --- IDs: above everything before the update, one order throughout ----------
ok($a_sf > $b_sf && $c_sf > $a_sf, 'snowflake IDs after the update are above those before (app, then ctl)');
ok($a_ig > $b_ig && $c_ig > $a_ig, 'instagram IDs after the update are above those before (app, then ctl)');
is($node->safe_psql('app', qq{
	SELECT count(*) FILTER (WHERE sf < $b_sf) > 0, count(*) FILTER (WHERE sf > $a_sf) > 0,
	       count(DISTINCT sf) = count(*), count(DISTINCT ig) = count(*),
	       bool_and(sf > prev_sf AND ig > prev_ig),
	       count(*) FILTER (WHERE sf IN ($b_sf, $a_sf, $c_sf) OR ig IN ($b_ig, $a_ig, $c_ig))
	  FROM (SELECT sf, ig, lag(sf, 1, 0::bigint) OVER (ORDER BY n) AS prev_sf,
	               lag(ig, 1, 0::bigint) OVER (ORDER BY n) AS prev_ig FROM load) s}),
	't|t|t|t|t|0',
	'the load has rows from before and after the update, all distinct and increasing, none shared with other sessions');

# --- the keeper's durable state ---------------------------------------------
my $hwm_after = $node->safe_psql('ctl', $hwm);
my ($hb) = split / /, $hwm_before;
is($node->safe_psql('ctl', "SELECT last_value >= $hb AND is_called FROM idgen_hwm"), 't',
	"idgen_hwm did not go backwards ($hwm_before, then $hwm_after)");
is($node->safe_psql('ctl', $epoch), $epoch_before, 'the idgen_epoch record is unchanged');
is($node->safe_psql('ctl', q{
	SELECT keeper_state, reserved_until > snowflake_last_time AND reserved_until > instagram_last_time
	  FROM idgen_status()}),
	'ready|t', 'the keeper is ready and its reservation covers every issued ID');

# --- what users built on 1.0 ---------------------------------------------------
$node->safe_psql('users', 'ALTER EXTENSION idgen UPDATE');
is($node->safe_psql('users', q{
	SELECT count(*) FROM pg_proc p
	 WHERE p.proacl::text LIKE '%upgrade_user=X%'
	   AND p.oid IN (SELECT objid FROM pg_depend WHERE classid = 'pg_proc'::regclass AND deptype = 'e'
	                   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen'))}),
	$granted_1_0, 'every grant on a 1.0 function survived the update');
is($node->safe_psql('users', q{
	SET ROLE upgrade_user;
	SELECT keeper_state IS NOT NULL FROM status_view;
	SELECT sf_node, ig_shard FROM decode_view}),
	"t\n1|1", 'the views over idgen_status() and the decoders work after the update, for the granted role');

# --- the same objects as a fresh install ------------------------------------
$node->safe_psql('fresh', 'CREATE EXTENSION idgen');
my $fresh = extension_members($node, 'fresh');
like($fresh, qr/function snowflake_id\(\)/, 'the member list is read (it has snowflake_id())');
is(extension_members($node, 'app'), $fresh,
	'app: after the update, the member objects and their definitions equal a fresh CREATE EXTENSION');
is(extension_members($node, 'ctl'), $fresh,
	'ctl (the keeper\'s database): the same');

$node->stop;
done_testing();
