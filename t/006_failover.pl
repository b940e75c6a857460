# Failover: the reservation is WAL-logged, so it reaches the standby; with
# synchronous replication every reservation the primary used is on the
# standby before any ID under it was returned.  A standby refuses to
# generate; once promoted, it continues above every ID the old primary
# issued, even though its own clock is 5 s behind.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
shared_preload_libraries = 'idgen'
idgen.node_id = 1
});
$primary->start;
wait_for_keeper($primary);
$primary->safe_psql('postgres', 'CREATE TABLE ids (sf bigint, ig bigint, at timestamptz)');
$primary->backup('b');

# The standby: its own node id (as recommended) and its own clock, 5 s slow.
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{
idgen.node_id = 2
idgen.max_lead = 15s
});
my (undef, $start_standby) = fake_clock($standby, '-5s');
$start_standby->('start');
$primary->wait_for_catchup($standby);

# Synchronous from here on: the keeper's commits wait for the standby.
$primary->append_conf('postgresql.conf', "synchronous_standby_names = 'standby'\n");
$primary->reload;
ok($primary->poll_query_until('postgres',
		"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'standby'"),
	'the standby is synchronous');

# A burst, so the primary's last IDs run ahead of its clock, as far as
# its reservation reaches.
$primary->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_id(), instagram_id(300), clock_timestamp() FROM generate_series(1, 3000000)');
my ($old_sf, $old_ig, $lead) = split /\|/, $primary->safe_psql('postgres',
	'SELECT (SELECT max(sf) FROM ids), (SELECT max(ig) FROM ids), instagram_lead_ms FROM idgen_status()');
cmp_ok($lead, '>', 0, "the old primary's last instagram IDs are $lead ms ahead of its clock");

my ($ret, $out, $err) = $standby->psql('postgres', "\\set VERBOSITY verbose\nSELECT instagram_id(300)");
like($err, qr/ERROR:\s+25006:/, 'the standby refuses to generate (25006)');

# Lose the primary without a clean shutdown and promote the standby.
$primary->stop('immediate');
$standby->promote;
ok($standby->poll_query_until('postgres', "SELECT keeper_state = 'ready' FROM idgen_status()"),
	'the promoted standby loaded the replicated reservation');

$standby->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_id(), instagram_id(300), clock_timestamp() FROM generate_series(1, 2000)');
is($standby->safe_psql('postgres', qq{
	SELECT min(instagram_id_time(ig)) > instagram_id_time($old_ig),
	       bool_and(ig > $old_ig), bool_and(snowflake_id_time(sf) >= snowflake_id_time($old_sf))
	  FROM ids WHERE snowflake_id_node(sf) = 2}),
	't|t|t', 'the new primary continues above every ID of the old one, its slow clock notwithstanding');
is($standby->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT ig), count(*) - count(DISTINCT sf) FROM ids'),
	'0|0', 'no duplicate across the failover');
is($standby->safe_psql('postgres',
		"SELECT bool_and(instagram_id_time(ig) > at) FROM ids WHERE snowflake_id_node(sf) = 2"),
	't', 'it bridged its slower clock with timestamps ahead of it');

$standby->stop;
done_testing();
